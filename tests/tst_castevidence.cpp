// What `kforge cast inspect` says of a package's evidence: the numbers come from the signed
// promotion.json the package carries, its signature is checked now with this user's key, and
// whatever cannot be established here is marked, never shown as signed fact. Packages are
// exported from a test registry (one op promoted with signed reports, one with --allow-unsigned),
// then edited as a forger would: the manifest (which no hash covers), or promotion.json with the
// manifest's SHA-256 fixed up.
#include "registryfixture.h"
#include "testutil.h"

#include "engine/cast/CastArchive.h"
#include "engine/cast/CastExport.h"
#include "engine/compile/Compiler.h"
#include "engine/core/Files.h"
#include "engine/core/Hmac.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

#include <filesystem>
#include <functional>

namespace fs = std::filesystem;
using Json = nlohmann::json;
using namespace kf;

namespace {

using Entries = std::vector<cast::ArchiveEntry>;
using Edit = std::function<void(Entries&)>;

struct Run {
    int exitCode = -1;
    QString out, err;
};

/// `kforge args`, with KF_REPORT_KEY set to `key` when given (another user's key).
Run kforge(const QStringList& args, const QString& key = {})
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("KF_REGISTRY");
    if (!key.isEmpty())
        env.insert("KF_REPORT_KEY", key);
    p.setProcessEnvironment(env);
    p.start(KF_KFORGE_BIN, args);
    if (!p.waitForFinished(120000))
        p.kill();
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

cast::ArchiveEntry& entry(Entries& es, const std::string& suffix)
{
    for (auto& e : es)
        if (e.name.size() >= suffix.size() && e.name.compare(e.name.size() - suffix.size(), suffix.size(), suffix) == 0)
            return e;
    throw std::runtime_error("no entry ending in " + suffix);
}

/// The manifest's size and SHA-256 of `path` made to match its bytes again, as a forger would.
void rehash(Entries& es, const std::string& path)
{
    Json m = Json::parse(es.front().bytes);
    for (auto& f : m["files"])
        if (f["path"] == path) {
            f["sha256"] = sha256Hex(entry(es, path).bytes).value();
            f["bytes"] = entry(es, path).bytes.size();
        }
    es.front().bytes = m.dump(2);
}

/// The table row of op `name` in `inspect`'s output.
QString opLine(const QString& out, const QString& name)
{
    for (const QString& line : out.split('\n'))
        if (line.trimmed().startsWith("cast::" + name + " "))
            return line;
    return {};
}

} // namespace

class TestCastEvidence : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void inspectShowsWhatTheSignedRecordSays_data();
    void inspectShowsWhatTheSignedRecordSays();
    void unsignedEvidenceIsMarked();

private:
    QTemporaryDir m_tmp;
    Entries m_signed;          ///< vector_add, promoted with signed reports
    fs::path m_unsigned;       ///< vector_add, promoted with --allow-unsigned
    fs::path m_otherKey;       ///< another user's key file
};

void TestCastEvidence::initTestCase()
{
    QVERIFY(m_tmp.isValid());
    auto nvrtc = nvrtcVersion();
    if (!nvrtc)
        QSKIP(("export needs NVRTC: " + nvrtc.error().message()).c_str());
    const fs::path root = m_tmp.path().toStdString();
    const fs::path task = test::copyExample("vector_add", root / "tasks");
    for (const bool allowUnsigned : {false, true}) {
        const Registry reg(root / (allowUnsigned ? "unsigned-registry" : "registry"));
        PromotionInput in = test::passingInput(task, "optimized.cu", {1.25, 1.4});
        if (allowUnsigned) {   // the performance report as a hand-written file would be: no signature
            auto report = protocol::RunReport::fromJson(test::performanceFor(in.task, "optimized.cu", {1.25, 1.4}), "unsigned");
            KF_VERIFY_OK(report);
            in.performance = std::move(report.value());
            in.allowUnsigned = true;
        }
        auto out = reg.promote(in);
        KF_VERIFY_OK(out);
        QVERIFY2(out->entry, out->gates.sentence().c_str());
        cast::ExportOptions o;
        o.ids = {out->entry->id};
        o.kernelforgeVersion = "test";
        const fs::path file = root / (allowUnsigned ? "unsigned.cast" : "signed.cast");
        KF_VERIFY_OK(cast::exportPackage(reg, o, file));
        if (allowUnsigned) {
            m_unsigned = file;
        } else {
            auto archive = cast::readArchive(file);
            KF_VERIFY_OK(archive);
            m_signed = archive->entries;
        }
    }
    m_otherKey = root / "other-user" / "report-key";
    KF_VERIFY_OK(writeFileAtomic(m_otherKey, std::string(64, 'a') + "\n"));
    fs::permissions(m_otherKey, fs::perms::owner_read | fs::perms::owner_write);
}

void TestCastEvidence::inspectShowsWhatTheSignedRecordSays_data()
{
    QTest::addColumn<Edit>("edit");
    QTest::addColumn<bool>("otherKey");
    QTest::addColumn<QStringList>("rowHas");      // in the op's table row
    QTest::addColumn<QStringList>("outputHas");   // anywhere in stdout
    QTest::addColumn<QStringList>("outputLacks");

    QTest::newRow("as exported") << Edit([](Entries&) {}) << false
                                 << QStringList{"signature holds (this user's key)"} << QStringList{}
                                 << QStringList{"× unverified", "99.00", "NOT hold"};
    QTest::newRow("manifest's geomean edited to 99") << Edit([](Entries& es) {
        Json m = Json::parse(es.front().bytes);
        m["ops"][0]["evidence"]["geomean_speedup"] = 99.0;
        m["ops"][0]["evidence"]["min_speedup"] = 98.0;
        es.front().bytes = m.dump(2);
    }) << false << QStringList{"signature holds (this user's key)"}
       << QStringList{"differs from the signed record (geomean_speedup, min_speedup)"} << QStringList{"99.00×", "98.00×"};
    QTest::newRow("promotion.json's geomean edited, hash fixed up") << Edit([](Entries& es) {
        cast::ArchiveEntry& p = entry(es, "/registry/promotion.json");
        Json record = Json::parse(p.bytes);
        record["speedup"]["geomean"] = 99.0;
        p.bytes = record.dump(2);
        rehash(es, p.name);
    }) << false << QStringList{"99.00× unverified", "signature does NOT hold: edited after signing"} << QStringList{}
       << QStringList{"signature holds"};
    QTest::newRow("performance report swapped, hash fixed up") << Edit([](Entries& es) {
        cast::ArchiveEntry& p = entry(es, "/registry/performance.json");
        p.bytes += "\n";
        rehash(es, p.name);
    }) << false << QStringList{"unverified", "signature holds (this user's key)"}
       << QStringList{"performance.json differs from the file the record names"} << QStringList{};
    QTest::newRow("signed with another user's key") << Edit([](Entries&) {}) << true
                                                   << QStringList{"× unverified", "signed with another key: cannot be checked here"}
                                                   << QStringList{} << QStringList{"signature holds"};
}

void TestCastEvidence::inspectShowsWhatTheSignedRecordSays()
{
    QFETCH(Edit, edit);
    QFETCH(bool, otherKey);
    QFETCH(QStringList, rowHas);
    QFETCH(QStringList, outputHas);
    QFETCH(QStringList, outputLacks);
    Entries entries = m_signed;
    edit(entries);
    const fs::path file = fs::path(m_tmp.path().toStdString()) / "edited.cast";
    fs::remove(file);
    KF_VERIFY_OK(cast::writeArchive(file, entries));
    const Run r = kforge({"cast", "inspect", qs(file.string())}, otherKey ? qs(m_otherKey.string()) : QString());
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    const QString row = opLine(r.out, "vector_add");
    QVERIFY2(!row.isEmpty(), qPrintable(r.out));
    for (const QString& s : rowHas)
        QVERIFY2(row.contains(s), qPrintable("no \"" + s + "\" in: " + row));
    for (const QString& s : outputHas)
        QVERIFY2(r.out.contains(s), qPrintable("no \"" + s + "\" in:\n" + r.out));
    for (const QString& s : outputLacks)
        QVERIFY2(!r.out.contains(s), qPrintable("\"" + s + "\" in:\n" + r.out));

    // --json says the same, per op.
    const Run j = kforge({"cast", "inspect", "--json", qs(file.string())}, otherKey ? qs(m_otherKey.string()) : QString());
    QCOMPARE(j.exitCode, 0);
    const Json ev = Json::parse(j.out.toStdString())["ops"][0]["evidence"];
    QVERIFY2(ev["verified"] == Json(!row.contains("unverified")), ev.dump().c_str());
    QVERIFY2(ev["geomean_speedup"] != Json(99.0) || row.contains("99.00× unverified"), ev.dump().c_str());
}

void TestCastEvidence::unsignedEvidenceIsMarked()
{
    const Run r = kforge({"cast", "inspect", qs(m_unsigned.string())});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    const QString row = opLine(r.out, "vector_add");
    QVERIFY2(row.contains("signature holds (this user's key); ⚠ unsigned evidence"), qPrintable(r.out));
    const Run j = kforge({"cast", "inspect", "--json", qs(m_unsigned.string())});
    QCOMPARE(j.exitCode, 0);
    QVERIFY2(Json::parse(j.out.toStdString())["ops"][0]["evidence"]["unsigned_evidence"] == Json(true), qPrintable(j.out));
}

QTEST_GUILESS_MAIN(TestCastEvidence)
#include "tst_castevidence.moc"
