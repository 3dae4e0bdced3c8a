// The models file (engine/synth/ModelsConfig.h) shared by `kforge synth` and the workbench: read
// strictly (every error names the file, the pointer and what to change), written atomically, and
// never holding a key, only the name of the variable that holds it.
#include "testutil.h"

#include "engine/core/Files.h"
#include "engine/synth/ModelsConfig.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace kf;
using namespace kf::synth;

namespace {
const char* kGood = "{\"schema_version\": 1, \"default\": \"local\", \"escalation\": \"claude\", \"models\": [\n"
    "  {\"name\": \"local\", \"provider\": \"openai\", \"base_url\": \"http://127.0.0.1:8000/v1\", \"model\": \"qwen2.5-coder\"},\n"
    "  {\"name\": \"claude\", \"provider\": \"anthropic\", \"base_url\": \"https://api.anthropic.com\", \"model\": \"claude-sonnet-4-5\",\n"
    "   \"api_key_env\": \"ANTHROPIC_API_KEY\", \"price_in_per_mtok\": 3, \"price_out_per_mtok\": 15, \"max_tokens\": 16000,\n"
    "   \"temperature\": 0}]}";
}

class TestModelsConfig : public QObject {
    Q_OBJECT
private slots:
    void readsAndRoundTrips()
    {
        auto c = parseModelsConfig(kGood, "models.json");
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().message().c_str());
        QCOMPARE(int(c->models.size()), 2);
        const NamedModel* claude = c->find("claude");
        QVERIFY(claude);
        QVERIFY(claude->config.provider == Provider::Anthropic);
        QCOMPARE(claude->config.apiKeyEnv, std::string("ANTHROPIC_API_KEY"));
        QCOMPARE(claude->config.priceOutPerMTok, 15.0);
        QCOMPARE(claude->config.maxTokens, 16000);
        QVERIFY(isKeyVariableName("ANTHROPIC_API_KEY") && isKeyVariableName("_K1"));
        QVERIFY(!isKeyVariableName("1KEY") && !isKeyVariableName("sk-ant-123") && !isKeyVariableName("hf_abcdef")
                && !isKeyVariableName(std::string(65, 'K')));
        QCOMPARE(c->find("local")->config.apiKeyEnv, std::string());

        QTemporaryDir dir;
        const auto file = std::filesystem::path(dir.path().toStdString()) / "sub" / "models.json";
        QVERIFY(writeModelsConfig(file, *c).ok());
        auto again = readModelsConfig(file);
        QVERIFY(again.ok());
        QCOMPARE(again->toJson(), c->toJson());
        // A missing file is an empty configuration, not an error.
        auto none = readModelsConfig(file.parent_path() / "absent.json");
        QVERIFY(none.ok() && none->models.empty());
    }

    void refusesWithAPointer_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("pointer");
        QTest::addColumn<QString>("words");
        const QString m = "{\"name\": \"a\", \"provider\": \"openai\", \"base_url\": \"http://x/v1\", \"model\": \"m\"%1}";
        auto doc = [&](const QString& extra, const QString& top = "") {
            return QString("{\"schema_version\": 1%1, \"models\": [%2]}").arg(top, m.arg(extra));
        };
        QTest::newRow("unknown key") << doc(", \"api_key\": \"sk-123\"") << "/models/0/api_key" << "api_key";
        QTest::newRow("key in the variable") << doc(", \"api_key_env\": \"sk-abc-123\"") << "/models/0/api_key_env" << "environment variable";
        QTest::newRow("a key of letters and _") << doc(", \"api_key_env\": \"gsk_abcDEF123\"") << "/models/0/api_key_env" << "never the key";
        QTest::newRow("a 32-character key") << doc(", \"api_key_env\": \"ABCDEFGHIJKLMNOPQRSTUVWXYZ012345abcdefghijklmnopqrstuvwxyz012345\"")
                                            << "/models/0/api_key_env" << "never the key";
        QTest::newRow("provider") << doc(", \"provider\": \"gemini\"").replace("\"provider\": \"openai\", ", "") << "/models/0/provider" << "anthropic";
        QTest::newRow("url") << doc("").replace("http://x/v1", "ftp://x") << "/models/0/base_url" << "http";
        QTest::newRow("negative price") << doc(", \"price_in_per_mtok\": -1") << "/models/0/price_in_per_mtok" << "0 or more";
        QTest::newRow("default names nothing") << doc("", ", \"default\": \"b\"") << "/default" << "\"b\"";
        QTest::newRow("duplicate name") << QString("{\"schema_version\": 1, \"models\": [%1, %1]}").arg(m.arg("")) << "/models/1/name" << "another model";
        QTest::newRow("schema version") << "{\"schema_version\": 2}" << "/schema_version" << "must be 1";
        QTest::newRow("not json") << "{" << "" << "";
    }
    void refusesWithAPointer()
    {
        QFETCH(QString, text);
        QFETCH(QString, pointer);
        QFETCH(QString, words);
        auto c = parseModelsConfig(text.toStdString(), "models.json");
        QVERIFY(!c.ok());
        QCOMPARE(c.error().file, std::string("models.json"));
        if (!pointer.isEmpty())
            QCOMPARE(QString::fromStdString(c.error().pointer), pointer);
        QVERIFY2(c.error().message().find(words.toStdString()) != std::string::npos, c.error().message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestModelsConfig)
#include "tst_modelsconfig.moc"
