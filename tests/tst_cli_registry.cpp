// `kforge promote` and `kforge registry` as separate processes, the way CI pipelines and two
// users on one machine use them: promotion from saved evidence, refusals with the failing gate,
// several promoters at once, promoters killed at every step and at random moments, tampering
// caught by `registry check`, and remove / deprecate / threshold / set-sanitizer-policy.
#include "registryfixture.h"
#include "testutil.h"

#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTimer>

#include <fstream>
#include <memory>
#include <unistd.h>

using namespace kf;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct Run {
    int exitCode = -1;
    bool crashed = false;
    QString out;
    QString err;
};

QProcessEnvironment cleanEnvironment()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("KF_REGISTRY");
    env.remove("KF_REGISTRY_KILL_AT");
    env.remove("KF_REGISTRY_FAIL_AT");
    return env;
}

Run kforge(const QStringList& args, const QProcessEnvironment& env = cleanEnvironment())
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(KF_KFORGE_BIN, args);
    if (!p.waitForFinished(120000))
        p.kill();
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.exitStatus() == QProcess::CrashExit,
            QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
}

void writeJson(const fs::path& file, const Json& j) { std::ofstream(file) << j.dump(2); }

} // namespace

class TestCliRegistry : public QObject {
    Q_OBJECT

private slots:
    void init();
    void promoteFromSavedEvidence();
    void refusalsAndUsageErrors_data();
    void refusalsAndUsageErrors();
    void concurrentPromotersAllLand();
    void promoterKilledAtEachStepLeavesAValidIndex_data();
    void promoterKilledAtEachStepLeavesAValidIndex();
    void promotersKilledAtRandomMomentsLeaveAValidIndex();
    void checkCatchesTamperingAndExitsOne();
    void removeDeprecateAndThreshold();
    void setSanitizerPolicy_data();
    void setSanitizerPolicy();
    void sanitizerNotRunIsShownAsNotRun();
    void allowUnsignedIsRecordedAndShown();
    void sameCauseSameExitCodeInEveryCommand();
    void readOnlyRegistryCanBeChecked();
    void repairThatCannotDeleteSaysSoAndExitsThree_data();
    void repairThatCannotDeleteSaysSoAndExitsThree();
    void reindexRestoresWhatTheLedgerKept();

private:
    QStringList promoteArgs() const;
    void expectValidIndex(const char* when);

    std::unique_ptr<QTemporaryDir> m_tmp;
    fs::path m_taskDir, m_regDir, m_correctness, m_performance;
};

void TestCliRegistry::init()
{
    m_tmp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_tmp->isValid());
    const fs::path root = m_tmp->path().toStdString();
    m_taskDir = test::copyExample("softmax_fp32", root);
    m_regDir = root / "registry";
    const PromotionInput in = test::passingInput(m_taskDir, "optimized.cu", {1.36, 1.40});
    m_correctness = root / "verify.json";
    m_performance = root / "bench.json";
    // As `kforge verify --report` writes it (a document), and a bare report.
    writeJson(m_correctness, {{"schema_version", 1}, {"command", "verify"}, {"ok", true}, {"reports", {in.correctness->document()}}});
    writeJson(m_performance, in.performance->document());
}

QStringList TestCliRegistry::promoteArgs() const
{
    return {"promote", qs(m_taskDir.string()), "--candidate", "optimized.cu", "--registry", qs(m_regDir.string()),
            "--evidence", qs(m_correctness.string()), "--evidence", qs(m_performance.string())};
}

void TestCliRegistry::expectValidIndex(const char* when)
{
    auto index = Registry(m_regDir).load();
    QVERIFY2(index.ok(), (std::string(when) + ": " + (index.ok() ? "" : index.error().message())).c_str());
    auto drift = Registry(m_regDir).check();
    KF_VERIFY_OK(drift);
    for (const RegistryDrift& d : drift.value())
        QVERIFY2(d.severity == RegistryDrift::Severity::Warning, (std::string(when) + ": " + d.problem).c_str());
}

void TestCliRegistry::promoteFromSavedEvidence()
{
    Run r = kforge(promoteArgs());
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("✓ Correct on held-out shapes: 2 of 2 held-out shapes passed"), qPrintable(r.out));
    QVERIFY(r.out.contains("promoted cuda_softmax_h100_fp32_b8192-d4096_v1"));
    QVERIFY(r.out.contains("not an end-to-end model speedup"));

    r = kforge(promoteArgs() << "--json");
    QCOMPARE(r.exitCode, 0);
    const Json j = Json::parse(r.out.toStdString());
    QVERIFY(j["ok"] == true);
    QCOMPARE(qs(j["id"].get<std::string>()), QString("cuda_softmax_h100_fp32_b8192-d4096_v2"));
    QCOMPARE(j["gates"].size(), size_t(9));
    QVERIFY(j["verdict"] == "all 9 gates passed");
    QVERIFY(fs::is_regular_file(fs::path(j["folder"].get<std::string>()) / "promotion.json"));

    r = kforge({"registry", "list", "--registry", qs(m_regDir.string())});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains("cuda_softmax_h100_fp32_b8192-d4096_v1"));
    QVERIFY(r.out.contains("1.38×")); // sqrt(1.36 * 1.40)
    r = kforge({"registry", "list", "--registry", qs(m_regDir.string()), "--json"});
    QCOMPARE(Json::parse(r.out.toStdString())["kernels"].size(), size_t(2));

    r = kforge({"registry", "show", "cuda_softmax_h100_fp32_b8192-d4096_v1", "--registry", qs(m_regDir.string())});
    QCOMPARE(r.exitCode, 0);
    for (const char* s : {"NVIDIA H100 80GB HBM3 (sm_90)", "LibTorch 2.11.0", "✓ At least 1.00× on every benchmark shape",
                          "B=8192 D=4096", "op-level microbenchmark"})
        QVERIFY2(r.out.contains(QString::fromUtf8(s)), s);

    r = kforge({"registry", "check", "--registry", qs(m_regDir.string())});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("2 kernel(s), every file matches its hash"), qPrintable(r.out));
}

void TestCliRegistry::refusalsAndUsageErrors_data()
{
    QTest::addColumn<QString>("change");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message");
    QTest::newRow("slower on one shape") << "slow" << 1 << "promotion refused: At least 1.00× on every benchmark shape";
    QTest::newRow("evidence not signed") << "unsigned" << 1 << "promotion refused: Evidence signed by this user's runner: the performance report is not signed";
    QTest::newRow("evidence edited after signing") << "edited" << 1 << "the correctness report is changed after it was signed";
    QTest::newRow("a malformed evidence field") << "malformed" << 2 << "/reports/0/trials_per_shape";
    QTest::newRow("edited after the runs") << "edit" << 1 << "promotion refused: Evidence matches the current kernel";
    QTest::newRow("no evidence for this candidate") << "naive" << 1 << "there is no correctness report for naive.cu";
    QTest::newRow("several candidates, none named") << "no-candidate" << 2 << "name the one to promote with --candidate (naive.cu, optimized.cu)";
    QTest::newRow("evidence file missing") << "missing-file" << 2 << "nope.json";
    QTest::newRow("unknown candidate") << "unknown" << 2 << "other.cu is not a candidate of task softmax_fp32";
}

void TestCliRegistry::refusalsAndUsageErrors()
{
    QFETCH(QString, change);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    QStringList args = promoteArgs();
    if (change == "slow") {
        auto t = loadTask(m_taskDir);
        writeJson(m_performance, test::signedAsByRunner(test::performanceFor(t.value(), "optimized.cu", {1.5, 0.97})));
    } else if (change == "unsigned") {
        auto t = loadTask(m_taskDir);
        writeJson(m_performance, test::performanceFor(t.value(), "optimized.cu", {1.36, 1.40}));
    } else if (change == "malformed") {
        Json doc = Json::parse(readFileBytes(m_correctness).value());
        doc["reports"][0]["trials_per_shape"] = "three";
        writeJson(m_correctness, doc);
    } else if (change == "edited") {
        Json doc = Json::parse(readFileBytes(m_correctness).value());
        doc["reports"][0]["duration_ms"] = 1.0;
        writeJson(m_correctness, doc);
    } else if (change == "edit") {
        std::ofstream(m_taskDir / "optimized.cu", std::ios::app) << "// one more tweak\n";
    } else if (change == "naive") {
        args[3] = "naive.cu";
    } else if (change == "no-candidate") {
        args.removeAt(2);
        args.removeAt(2);
    } else if (change == "missing-file") {
        args[7] = qs((m_taskDir / "nope.json").string());
    } else if (change == "unknown") {
        args[3] = "other.cu";
    }
    const Run r = kforge(args);
    QCOMPARE(r.exitCode, exitCode);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
    if (exitCode == 1)
        QVERIFY(r.err.contains("what to do:"));
    QVERIFY(!fs::exists(m_regDir / "cuda_softmax_h100_fp32_b8192-d4096_v1"));
}

void TestCliRegistry::concurrentPromotersAllLand()
{
    constexpr int kPromoters = 4;
    std::vector<std::unique_ptr<QProcess>> procs;
    for (int i = 0; i < kPromoters; ++i) {
        auto p = std::make_unique<QProcess>();
        p->setProcessEnvironment(cleanEnvironment());
        p->start(KF_KFORGE_BIN, promoteArgs());
        procs.push_back(std::move(p));
    }
    for (auto& p : procs) {
        QVERIFY(p->waitForFinished(120000));
        QVERIFY2(p->exitCode() == 0, p->readAllStandardError().constData());
    }
    auto index = Registry(m_regDir).load();
    KF_VERIFY_OK(index);
    QCOMPARE(int(index->kernels.size()), kPromoters);
    QStringList ids;
    for (const RegistryEntry& e : index->kernels)
        ids << qs(e.id);
    ids.sort();
    for (int i = 0; i < kPromoters; ++i)
        QCOMPARE(ids[i], QString("cuda_softmax_h100_fp32_b8192-d4096_v%1").arg(i + 1));
    auto drift = Registry(m_regDir).check();
    KF_VERIFY_OK(drift);
    QVERIFY(drift->empty());
}

void TestCliRegistry::promoterKilledAtEachStepLeavesAValidIndex_data()
{
    QTest::addColumn<QString>("step");
    QTest::addColumn<int>("entriesAfter");   // the killed promote's entry counts only once indexed
    QTest::addColumn<bool>("orphan");        // a version folder the index does not name
    QTest::newRow("holding the lock") << "locked" << 1 << false;
    QTest::newRow("first file staged") << "staging" << 1 << false;
    QTest::newRow("every file staged") << "staged" << 1 << false;
    QTest::newRow("folder renamed into place") << "renamed" << 1 << true;
    QTest::newRow("index written") << "indexed" << 2 << false;
}

void TestCliRegistry::promoterKilledAtEachStepLeavesAValidIndex()
{
    QFETCH(QString, step);
    QFETCH(int, entriesAfter);
    QFETCH(bool, orphan);
    QCOMPARE(kforge(promoteArgs()).exitCode, 0); // one entry that must survive
    QProcessEnvironment env = cleanEnvironment();
    env.insert("KF_REGISTRY_TEST_HOOKS", "1");
    env.insert("KF_REGISTRY_KILL_AT", step);
    const Run killed = kforge(promoteArgs(), env);
    QVERIFY2(killed.crashed, "the promoter was meant to die at this step");
    expectValidIndex(qPrintable(step));
    QCOMPARE(int(Registry(m_regDir).load()->kernels.size()), entriesAfter);
    QCOMPARE(fs::exists(m_regDir / "cuda_softmax_h100_fp32_b8192-d4096_v2") && entriesAfter == 1, orphan);
    // The lock died with the process: the next promote gets in, and never reuses a folder name.
    const Run next = kforge(promoteArgs());
    QVERIFY2(next.exitCode == 0, qPrintable(next.err));
    QVERIFY(!next.out.contains("_v1\n"));
    QCOMPARE(kforge({"registry", "check", "--prune", "--registry", qs(m_regDir.string())}).exitCode, 0);
    auto drift = Registry(m_regDir).check();
    KF_VERIFY_OK(drift);
    QVERIFY(drift->empty());
}

void TestCliRegistry::promotersKilledAtRandomMomentsLeaveAValidIndex()
{
    QCOMPARE(kforge(promoteArgs()).exitCode, 0);
    QRandomGenerator rng(QRandomGenerator::global()->generate());
    int killedEarly = 0;
    for (int round = 0; round < 12; ++round) {
        QProcess p;
        p.setProcessEnvironment(cleanEnvironment());
        p.start(KF_KFORGE_BIN, promoteArgs());
        QVERIFY(p.waitForStarted());
        // SIGKILL after a random delay across the promote's life (a few ms to a few tens).
        QTimer::singleShot(int(rng.bounded(40)), &p, [&p] { p.kill(); });
        QTRY_VERIFY_WITH_TIMEOUT(p.state() == QProcess::NotRunning, 60000);
        killedEarly += p.exitStatus() == QProcess::CrashExit;
        expectValidIndex(qPrintable(QString("round %1").arg(round)));
    }
    qInfo("%d of 12 promoters were killed before they finished", killedEarly);
    QCOMPARE(kforge({"registry", "check", "--prune", "--registry", qs(m_regDir.string())}).exitCode, 0);
    auto drift = Registry(m_regDir).check();
    KF_VERIFY_OK(drift);
    QVERIFY(drift->empty());
}

void TestCliRegistry::checkCatchesTamperingAndExitsOne()
{
    QCOMPARE(kforge(promoteArgs()).exitCode, 0);
    const fs::path perf = m_regDir / "cuda_softmax_h100_fp32_b8192-d4096_v1" / "performance.json";
    Json p = Json::parse(std::ifstream(perf));
    p["shapes"][1]["speedup"] = 4.0;
    writeJson(perf, p);
    Run r = kforge({"registry", "check", "--registry", qs(m_regDir.string())});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.out.contains("error: cuda_softmax_h100_fp32_b8192-d4096_v1/performance.json: the file changed since promotion"),
             qPrintable(r.out));
    r = kforge({"registry", "check", "--registry", qs(m_regDir.string()), "--json"});
    QCOMPARE(r.exitCode, 1);
    const Json j = Json::parse(r.out.toStdString());
    QVERIFY(j["ok"] == false);
    QVERIFY(j["drift"][0]["severity"] == "error");
}

void TestCliRegistry::removeDeprecateAndThreshold()
{
    const QString reg = qs(m_regDir.string());
    QCOMPARE(kforge(promoteArgs()).exitCode, 0);
    QCOMPARE(kforge(promoteArgs()).exitCode, 0);
    Run r = kforge({"registry", "deprecate", "cuda_softmax_h100_fp32_b8192-d4096_v1", "--reason", "v2 is faster", "--registry", reg});
    QCOMPARE(r.exitCode, 0);
    r = kforge({"registry", "list", "--registry", reg});
    QVERIFY(!r.out.contains("_v1 "));
    QVERIFY(r.out.contains("1 deprecated not shown"));
    r = kforge({"registry", "list", "--all", "--registry", reg});
    QVERIFY(r.out.contains("deprecated"));
    r = kforge({"registry", "remove", "cuda_softmax_h100_fp32_b8192-d4096_v2", "--registry", reg});
    QCOMPARE(r.exitCode, 0);
    r = kforge({"registry", "remove", "cuda_softmax_h100_fp32_b8192-d4096_v2", "--registry", reg});
    QCOMPARE(r.exitCode, 2);
    QVERIFY(r.err.contains("has no kernel cuda_softmax_h100_fp32_b8192-d4096_v2"));
    r = kforge({"registry", "threshold", "1.25", "--registry", reg, "--json"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(Json::parse(r.out.toStdString())["speedup_threshold"] == 1.25);
    r = kforge({"registry", "threshold", "0.5", "--registry", reg});
    QCOMPARE(r.exitCode, 2);
    // 1.38x passes 1.25 but not 1.5.
    QCOMPARE(kforge(promoteArgs()).exitCode, 0);
    QCOMPARE(kforge({"registry", "threshold", "1.5", "--registry", reg}).exitCode, 0);
    r = kforge(promoteArgs());
    QCOMPARE(r.exitCode, 1);
    QVERIFY(r.err.contains("below the threshold 1.50×"));
    QCOMPARE(kforge({"registry", "check", "--registry", reg}).exitCode, 0);
}

void TestCliRegistry::setSanitizerPolicy_data()
{
    QTest::addColumn<QString>("value");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message");   // stdout on success, stderr on a usage error
    QTest::newRow("required") << "required" << 0 << "sanitizer policy: required (clean under compute-sanitizer, always)";
    QTest::newRow("if_available") << "if_available" << 0 << "sanitizer policy: if_available (clean under compute-sanitizer where";
    QTest::newRow("off") << "off" << 0 << "sanitizer policy: off (compute-sanitizer not asked for; its findings still refuse";
    QTest::newRow("a word it does not know") << "sometimes" << 2
                                             << "\"sometimes\" is not a policy; use required, if_available or off";
    QTest::newRow("upper case") << "REQUIRED" << 2 << "use required, if_available or off";
    QTest::newRow("empty") << "" << 2 << "use required, if_available or off";
}

void TestCliRegistry::setSanitizerPolicy()
{
    QFETCH(QString, value);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    const QString reg = qs(m_regDir.string());
    Run r = kforge({"registry", "set-sanitizer-policy", value, "--registry", reg});
    QCOMPARE(r.exitCode, exitCode);
    QVERIFY2((exitCode == 0 ? r.out : r.err).contains(message), qPrintable(r.out + r.err));
    const QString shown = exitCode == 0 ? value : "if_available";   // a refused value changes nothing
    r = kforge({"registry", "list", "--registry", reg});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("sanitizer policy " + shown + ")"), qPrintable(r.out));
    r = kforge({"registry", "list", "--registry", reg, "--json"});
    QVERIFY(Json::parse(r.out.toStdString())["sanitizer_policy"] == shown.toStdString());
    r = kforge({"registry", "threshold", "--registry", reg, "--json"});
    QVERIFY(Json::parse(r.out.toStdString())["sanitizer_policy"] == shown.toStdString());
    r = kforge({"registry", "threshold", "--registry", reg});
    QVERIFY2(r.out.contains("sanitizer policy: " + shown + " ("), qPrintable(r.out));
    if (exitCode == 0) {
        r = kforge({"registry", "set-sanitizer-policy", value, "--registry", reg, "--json"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(Json::parse(r.out.toStdString())["sanitizer_policy"] == value.toStdString());
    }
}

// Evidence verified on a host without compute-sanitizer: refused under "required" with what to
// do; promoted under "if_available" with the gate shown as not run, never as passed.
void TestCliRegistry::sanitizerNotRunIsShownAsNotRun()
{
    const QString reg = qs(m_regDir.string());
    Json doc = Json::parse(readFileBytes(m_correctness).value());
    Json& c = doc["reports"][0];
    c.erase("signature");
    c["sanitizer"] = {{"ran", false}, {"requested", true}, {"reason", "no compute-sanitizer on gpu-7"}, {"tool_version", ""},
                      {"tool_path", ""}, {"shapes", Json::array()}, {"seed", ""}, {"duration_ms", 0},
                      {"tools", Json::array()}, {"findings", Json::array()}};
    c = test::signedAsByRunner(c);
    writeJson(m_correctness, doc);

    QCOMPARE(kforge({"registry", "set-sanitizer-policy", "required", "--registry", reg}).exitCode, 0);
    Run r = kforge(promoteArgs());
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("promotion refused: Clean under compute-sanitizer: not run: no compute-sanitizer on gpu-7"),
             qPrintable(r.err));
    QVERIFY2(r.err.contains("kforge registry set-sanitizer-policy if_available"), qPrintable(r.err));

    QCOMPARE(kforge({"registry", "set-sanitizer-policy", "if_available", "--registry", reg}).exitCode, 0);
    r = kforge(promoteArgs());
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("– Clean under compute-sanitizer (not run): no compute-sanitizer on gpu-7"), qPrintable(r.out));
    QVERIFY(!r.out.contains("✓ Clean under compute-sanitizer"));
    r = kforge(promoteArgs() << "--json");
    QCOMPARE(r.exitCode, 0);
    const Json j = Json::parse(r.out.toStdString());
    QVERIFY(j["gates"][3]["gate"] == "sanitizer" && j["gates"][3]["passed"] == false && j["gates"][3]["not_run"] == true);
    QVERIFY2(j["verdict"] == "8 gates passed; not run: Clean under compute-sanitizer (no compute-sanitizer on gpu-7)",
             j["verdict"].dump().c_str());

    r = kforge({"registry", "show", "cuda_softmax_h100_fp32_b8192-d4096_v1", "--registry", reg});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("sanitizer: not run: no compute-sanitizer on gpu-7 (policy if_available)"), qPrintable(r.out));
    QVERIFY2(r.out.contains("– Clean under compute-sanitizer (not run): no compute-sanitizer on gpu-7"), qPrintable(r.out));
    r = kforge({"registry", "show", "cuda_softmax_h100_fp32_b8192-d4096_v1", "--registry", reg, "--json"});
    const Json shown = Json::parse(r.out.toStdString());
    QVERIFY(shown["promotion"]["sanitizer"]["outcome"] == "not_run");
    QVERIFY(shown["promotion"]["sanitizer"]["policy"] == "if_available");
    // Judged again as promoted, though the registry asks for more today.
    QCOMPARE(kforge({"registry", "set-sanitizer-policy", "required", "--registry", reg}).exitCode, 0);
    r = kforge({"registry", "check", "--registry", reg});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
}

void TestCliRegistry::allowUnsignedIsRecordedAndShown()
{
    auto t = loadTask(m_taskDir);
    KF_VERIFY_OK(t);
    writeJson(m_performance, test::performanceFor(t.value(), "optimized.cu", {1.36, 1.40})); // not signed
    QCOMPARE(kforge(promoteArgs()).exitCode, 1);
    Run r = kforge(promoteArgs() << "--allow-unsigned");
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("✓ Evidence signed by this user's runner: accepted without a valid signature (--allow-unsigned)"),
             qPrintable(r.out));
    const QString reg = qs(m_regDir.string());
    r = kforge({"registry", "show", "cuda_softmax_h100_fp32_b8192-d4096_v1", "--registry", reg});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("evidence:  ⚠ accepted without a valid signature (--allow-unsigned)"), qPrintable(r.out));
    QVERIFY2(r.out.contains("record:    promotion.json signed with key"), qPrintable(r.out));
    // `list` says it too, read from the signed record, in text and JSON.
    r = kforge({"registry", "list", "--registry", reg});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("active, ⚠ unsigned evidence"), qPrintable(r.out));
    r = kforge({"registry", "list", "--json", "--registry", reg});
    QCOMPARE(r.exitCode, 0);
    const Json listed = Json::parse(r.out.toStdString());
    QVERIFY2(listed["kernels"][0]["unsigned_evidence"] == Json(true), qPrintable(r.out));
    QVERIFY2(listed["kernels"][0]["record_signature"] == Json("signed"), qPrintable(r.out));
    // The (signed) record says the user accepted it: check agrees, and says nothing else.
    r = kforge({"registry", "check", "--registry", reg});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
}

void TestCliRegistry::sameCauseSameExitCodeInEveryCommand()
{
    const QString reg = qs(m_regDir.string());
    QCOMPARE(kforge(promoteArgs()).exitCode, 0);
    const QString id = "cuda_softmax_h100_fp32_b8192-d4096_v1";
    // An unknown ID is the caller's mistake: 2 everywhere.
    for (const QStringList& args : {QStringList{"registry", "show", id + "9"}, QStringList{"registry", "remove", id + "9"},
                                    QStringList{"registry", "deprecate", id + "9", "--reason", "x"}}) {
        const Run r = kforge(QStringList(args) << "--registry" << reg);
        QVERIFY2(r.exitCode == 2, qPrintable(args.join(' ') + ": " + QString::number(r.exitCode) + " " + r.err));
        QVERIFY2(r.err.contains("has no kernel"), qPrintable(r.err));
    }
    // A registry that cannot be locked is the environment's fault: 3 everywhere. (A folder where
    // the lock file belongs stands for any lock failure, and works as root too.)
    fs::create_directory(m_regDir / ".lock.d");
    fs::rename(m_regDir / ".lock", m_regDir / ".lock.old");
    fs::rename(m_regDir / ".lock.d", m_regDir / ".lock");
    for (const QStringList& args :
         {promoteArgs(), QStringList{"registry", "remove", id, "--registry", reg},
          QStringList{"registry", "deprecate", id, "--reason", "x", "--registry", reg},
          QStringList{"registry", "threshold", "1.2", "--registry", reg}, QStringList{"registry", "check", "--registry", reg}}) {
        const Run r = kforge(args);
        QVERIFY2(r.exitCode == 3, qPrintable(args.join(' ') + ": " + QString::number(r.exitCode) + " " + r.err));
        QVERIFY2(r.err.contains(".lock"), qPrintable(r.err));
    }
}

void TestCliRegistry::readOnlyRegistryCanBeChecked()
{
    if (::geteuid() == 0)
        QSKIP("root can write any folder: a read-only registry needs an unprivileged user");
    const QString reg = qs(m_regDir.string());
    QCOMPARE(kforge(promoteArgs()).exitCode, 0);
    fs::remove(m_regDir / ".lock");
    fs::permissions(m_regDir, fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write, fs::perm_options::remove);
    const Run r = kforge({"registry", "check", "--registry", reg});
    fs::permissions(m_regDir, fs::perms::owner_write, fs::perm_options::add);
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("checked without its lock"), qPrintable(r.out));
}

void TestCliRegistry::repairThatCannotDeleteSaysSoAndExitsThree_data()
{
    QTest::addColumn<QString>("step");
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("says");
    const QString orphan = "cuda_softmax_h100_fp32_b8192-d4096_v7";
    QTest::newRow("check --prune, an orphan folder") << "prune" << QStringList{"registry", "check", "--prune"}
                                                     << "could not delete " + orphan + ": Read-only file system";
    QTest::newRow("remove, the version folder") << "remove"
                                                << QStringList{"registry", "remove", "cuda_softmax_h100_fp32_b8192-d4096_v1"}
                                                << "its folder could not be deleted: Read-only file system";
}

// A deletion that fails (a read-only file system, injected through the registry's test hook
// since root deletes anything else) is reported with its cause and exit 3, and what was to go
// is still there for a later repair. As an unprivileged user, a read-only folder is tried too.
void TestCliRegistry::repairThatCannotDeleteSaysSoAndExitsThree()
{
    QFETCH(QString, step);
    QFETCH(QStringList, args);
    QFETCH(QString, says);
    const QString reg = qs(m_regDir.string());
    QCOMPARE(kforge(promoteArgs()).exitCode, 0);
    const fs::path orphan = m_regDir / "cuda_softmax_h100_fp32_b8192-d4096_v7";
    fs::create_directories(orphan);
    std::ofstream(orphan / "optimized.cu") << "// left by an interrupted promote\n";
    QProcessEnvironment env = cleanEnvironment();
    env.insert("KF_REGISTRY_TEST_HOOKS", "1");
    env.insert("KF_REGISTRY_FAIL_AT", step);
    const Run failed = kforge(QStringList(args) << "--registry" << reg, env);
    QVERIFY2(failed.exitCode == 3, qPrintable(QString::number(failed.exitCode) + "\n" + failed.out + failed.err));
    QVERIFY2((failed.out + failed.err).contains(says), qPrintable(failed.out + failed.err));
    if (step == "prune") {
        QVERIFY(fs::exists(orphan / "optimized.cu"));
        const Run json = kforge({"registry", "check", "--prune", "--json", "--registry", reg}, env);
        QCOMPARE(json.exitCode, 3);
        const Json j = Json::parse(json.out.toStdString());
        QVERIFY(j["ok"] == false);
        QVERIFY2(j["drift"][0]["not_written"] == true, qPrintable(json.out));
        if (::geteuid() != 0) {   // the real thing: a registry folder its user may not write
            fs::permissions(m_regDir, fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                            fs::perm_options::remove);
            const Run ro = kforge({"registry", "check", "--prune", "--registry", reg});
            fs::permissions(m_regDir, fs::perms::owner_write, fs::perm_options::add);
            QVERIFY2(ro.exitCode == 3 && ro.out.contains("Permission denied"), qPrintable(ro.out + ro.err));
        }
    }
    // Once the registry can be written, the repair finishes and the registry is clean.
    QCOMPARE(kforge({"registry", "check", "--prune", "--registry", reg}).exitCode, 0);
    QVERIFY(!fs::exists(orphan));
    expectValidIndex("after the repair");
}

// The index lost: `check --reindex` brings back the threshold, the removed IDs and the
// deprecations from the ledger, so no removed ID is handed out again; without the ledger it says
// what it could not restore.
void TestCliRegistry::reindexRestoresWhatTheLedgerKept()
{
    const QString reg = qs(m_regDir.string());
    const QString v = "cuda_softmax_h100_fp32_b8192-d4096_v";
    for (int i = 0; i < 3; ++i)
        QCOMPARE(kforge(promoteArgs()).exitCode, 0);
    QCOMPARE(kforge({"registry", "remove", v + "3", "--registry", reg}).exitCode, 0);
    QCOMPARE(kforge({"registry", "deprecate", v + "1", "--reason", "slow on B=1", "--registry", reg}).exitCode, 0);
    QCOMPARE(kforge({"registry", "threshold", "1.3", "--registry", reg}).exitCode, 0);
    fs::remove(m_regDir / kRegistryIndexFile);

    Run r = kforge({"registry", "check", "--reindex", "--registry", reg});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.err.contains("threshold 1.30×") && r.err.contains("1 removed ID(s)") && r.err.contains("1 deprecation(s)"),
             qPrintable(r.err));
    auto index = Registry(m_regDir).load();
    KF_VERIFY_OK(index);
    QCOMPARE(index->threshold, 1.3);
    QCOMPARE(index->removed, std::vector<std::string>{(v + "3").toStdString()});
    QVERIFY(index->kernels.size() == 2 && index->kernels[0].deprecated() && index->kernels[0].deprecationReason == "slow on B=1");
    r = kforge(promoteArgs() << "--json");
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(qs(Json::parse(r.out.toStdString())["id"].get<std::string>()), v + "4");

    // The ledger lost as well: what comes back, and what does not, is said.
    fs::remove(m_regDir / kRegistryIndexFile);
    fs::remove(m_regDir / ".ledger.json");
    r = kforge({"registry", "check", "--reindex", "--registry", reg});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.err.contains("settings taken from the newest record (" + v + "4") && r.err.contains("threshold 1.30×") &&
                 r.err.contains("`kforge registry threshold"),
             qPrintable(r.err));
    QVERIFY2(r.err.contains("removed IDs and deprecation states could not be restored"), qPrintable(r.err));
}

QTEST_GUILESS_MAIN(TestCliRegistry)
#include "tst_cli_registry.moc"
