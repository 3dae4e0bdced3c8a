// The requests the CLI and the workbench send to the runner: what a GPU run receives must not
// depend on which front end started it.
#include "engine/compile/Compiler.h"
#include "engine/compile/TaskCompile.h"
#include "engine/runner/RunRequest.h"
#include "testutil.h"

#include <QTest>

#include <set>

using namespace kf;
using nlohmann::json;

class TestRunRequest : public QObject {
    Q_OBJECT
private slots:
    void archFromHello_data()
    {
        QTest::addColumn<QString>("hello");
        QTest::addColumn<QString>("arch");
        QTest::newRow("runner names the arch") << R"({"device":{"arch":"sm_90"}})" << "sm_90";
        QTest::newRow("compute capability") << R"({"device":{"compute_capability":"8.6"}})" << "sm_86";
        QTest::newRow("major/minor integers") << R"({"device":{"major":12,"minor":0}})" << "sm_120";
        QTest::newRow("no device (no GPU)") << R"({"device_error":"no CUDA device"})" << "";
        QTest::newRow("garbage arch ignored") << R"({"device":{"arch":"gpu"}})" << "";
    }
    void archFromHello()
    {
        QFETCH(QString, hello);
        QFETCH(QString, arch);
        QCOMPARE(qs(kf::archFromHello(json::parse(hello.toStdString()))), arch);
    }

    void seeds_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<qulonglong>("value");
        QTest::newRow("0x prefix") << "0x9f3a" << true << 0x9f3aull;
        QTest::newRow("upper case") << "9F3A" << true << 0x9f3aull;
        QTest::newRow("64-bit") << "0xffffffffffffffff" << true << ~0ull;
        QTest::newRow("17 digits") << "0x1ffffffffffffffff" << false << 0ull;
        QTest::newRow("not hex") << "0xzz" << false << 0ull;
        QTest::newRow("empty") << "" << false << 0ull;
    }
    void seeds()
    {
        QFETCH(QString, text);
        QFETCH(bool, valid);
        QFETCH(qulonglong, value);
        auto v = parseSeed(text.toStdString());
        QCOMPARE(v.has_value(), valid);
        if (valid) {
            QCOMPARE(qulonglong(*v), value);
            QCOMPARE(parseSeed(seedText(*v)), v);
        }
    }

    void fixedSeedsReplayConsecutively()
    {
        auto s = freshSeeds(3, 0x10ull);
        QCOMPARE(s, (std::vector<std::string>{"0x10", "0x11", "0x12"}));
        auto fresh = freshSeeds(8, std::nullopt);
        QCOMPARE(std::set<std::string>(fresh.begin(), fresh.end()).size(), size_t(8));
    }

    void requestFields_data()
    {
        QTest::addColumn<bool>("bench");
        QTest::newRow("verify") << false;
        QTest::newRow("bench") << true;
    }
    void requestFields()
    {
        QFETCH(bool, bench);
        auto task = loadTask(KF_SOURCE_DIR "/resources/examples/vector_add");
        KF_VERIFY_OK(task);
        const Candidate& c = task->candidates.front();
        auto req = compileRequestFor(*task, c, "sm_90");
        KF_VERIFY_OK(req);
        CompileResult r; // the request copies what a build produced; no NVRTC needed here
        r.cubin = std::string("\x7f" "ELF", 4);
        r.loweredNames = {{"vector_add", "_Z10vector_addPKfS0_Pfi"}};
        RunSettings s;
        s.trials = 4;
        s.seed = 0x100;
        const TaskPayload payload = taskPayload(*task);
        json j = buildRunRequest(bench ? RunKind::Bench : RunKind::Verify, payload, c, *req, r, "13.0", s);
        QCOMPARE(qs(j["type"].get<std::string>()), bench ? QString("bench") : QString("verify"));
        QCOMPARE(qs(j["task_hash"].get<std::string>()), qs(payload.hash));
        QCOMPARE(qs(j["cubin"].get<std::string>()), QString("f0VMRg=="));
        QCOMPARE(j["seeds"].size(), size_t(bench ? 1 : 4));
        QCOMPARE(j["trials"].get<int>(), bench ? 1 : 4);
        QCOMPARE(j.contains("time_cap_ms"), bench);
        QCOMPARE(j["lowered_names"]["vector_add"].get<std::string>(), std::string("_Z10vector_addPKfS0_Pfi"));
        // The same task and candidate give the same hashes every time: promotion compares them.
        QCOMPARE(taskPayload(*task).hash, payload.hash);
        QCOMPARE(candidateHeader(c, *req, r)["source_hash"].get<std::string>(), j["source_hash"].get<std::string>());
    }
};

QTEST_GUILESS_MAIN(TestRunRequest)
#include "tst_runrequest.moc"
