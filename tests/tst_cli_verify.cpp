// `kforge verify` and `kforge bench` where no GPU is needed: usage errors (exit 2) are found before
// the runner starts, and a machine without a GPU gets one clear line and exit 3.
#include "engine/core/Hash.h"
#include "engine/protocol/Protocol.h"
#include "engine/repro/Repro.h"
#include "engine/runner/RunSettings.h"
#include "engine/verify/CaseFiles.h"
#include "engine/verify/Compare.h"
#include "reprofixture.h"
#include "testutil.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

namespace {
struct Run {
    int exitCode = -1;
    QString out;
    QString err;
};

Run kforge(const QStringList& args)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("KF_RUNNER"); // the runner must be found beside kforge, as for a user
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(KF_KFORGE_BIN, args);
    if (!p.waitForFinished(300000))
        p.kill();
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

const QString kVectorAdd = QString(KF_SOURCE_DIR) + "/resources/examples/vector_add";
const QString kBrokenAdd = QString(KF_SOURCE_DIR) + "/tests/gpu/tasks/broken_add";

} // namespace

class TestCliVerify : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void noGpuIsOneLineAndExit3_data();
    void noGpuIsOneLineAndExit3();
    void usageErrorsExit2_data();
    void usageErrorsExit2();
    void missingRunnerIsAnEnvironmentError();
    void reproReachesTheRunnerAndLeavesTheBundle_data();
    void reproReachesTheRunnerAndLeavesTheBundle();
    void aBrokenCandidateDoesNotStopTheRun_data();
    void aBrokenCandidateDoesNotStopTheRun();
    void poolRunsInTaskOrder_data();
    void poolRunsInTaskOrder();
    void poolRunsSeveralTasks();
    void sharedFsFalseEndpointReachesTheRunner();
    void stagedEndpointReceivesTheTaskFiles();
    void runnersCheckSaysWhetherFilesCanBeSent();

private:
    QString m_pool;          // runners.json with two endpoints of the fixture runner and a pool "two"
    QTemporaryDir m_dir;
    QString m_bundle;        // a valid repro bundle of broken_add/writes_nan.cu
    QString m_editedBundle;  // the same, with its copy of writes_nan.cu edited afterwards
};

void TestCliVerify::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY(QDir().mkpath(m_dir.filePath("broken")));
    QFile f(m_dir.filePath("broken/task.json"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"schema_version": 1, "name": "broken", "inputs": "not a list"})");
    f.close();

    // Repro bundles, made by the engine as `--export-repro` makes them (no GPU needed).
    namespace fs = std::filesystem;
    const fs::path root = m_dir.path().toStdString();
    fs::copy(kBrokenAdd.toStdString(), root / "broken_add", fs::copy_options::recursive);
    auto task = kf::loadTask(root / "broken_add");
    KF_VERIFY_OK(task);
    const std::string written = kf::test::writeSyntheticCase(root / "case", *task, {}).error;
    QVERIFY2(written.empty(), written.c_str());
    m_bundle = m_dir.filePath("bundle");
    m_editedBundle = m_dir.filePath("bundle-edited");
    KF_VERIFY_OK(kf::exportRepro(root / "case", *task, m_bundle.toStdString()));
    KF_VERIFY_OK(kf::exportRepro(root / "case", *task, m_editedBundle.toStdString()));
    std::ofstream(root / "bundle-edited" / "task" / "writes_nan.cu", std::ios::app) << "// a fix in progress\n";
    KF_VERIFY_OK(kf::loadRepro(m_bundle.toStdString()));
    QVERIFY(!kf::loadRepro(m_editedBundle.toStdString()).ok());
    QFile fix(m_dir.filePath("fix.cu"));
    QVERIFY(fix.open(QIODevice::WriteOnly));
    fix.write("extern \"C\" __global__ void add_writes_nan(const float* a, const float* b, float* c, long long n) {}\n");

    // Two endpoints of the pool fixture runner (tests/fixtures/endpoints/fake-pool-runner), one
    // of them behind a command template, each on a GPU of its own.
    m_pool = m_dir.filePath("pool.json");
    QFile pool(m_pool);
    QVERIFY(pool.open(QIODevice::WriteOnly));
    const QString fixture = QString(KF_SOURCE_DIR) + "/tests/fixtures/endpoints/fake-pool-runner";
    pool.write(QString("{\"schema_version\": 1, \"endpoints\": ["
                       "{\"name\": \"a\", \"kind\": \"local\", \"runner\": \"%1\", \"env\": {\"FAKE_GPU_UUID\": \"GPU-a\"}},"
                       "{\"name\": \"b\", \"kind\": \"command\", \"runner\": \"%1\", \"shared_fs\": true,"
                       " \"command\": [\"sh\", \"-c\", \"exec \\\"$0\\\"\", \"{runner}\"], \"env\": {\"FAKE_GPU_UUID\": \"GPU-b\"}}],"
                       " \"pools\": {\"two\": [\"a\", \"b\"]}}")
                   .arg(fixture)
                   .toUtf8());
}

void TestCliVerify::noGpuIsOneLineAndExit3_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::newRow("verify") << QStringList{"verify", kVectorAdd};
    QTest::newRow("verify --json") << QStringList{"verify", kVectorAdd, "--json"};
    QTest::newRow("bench") << QStringList{"bench", kVectorAdd};
    QTest::newRow("profile") << QStringList{"profile", kVectorAdd};
    QTest::newRow("profile --shape --no-baseline") << QStringList{"profile", kVectorAdd, "--shape", "N=4099", "--no-baseline"};
}

void TestCliVerify::noGpuIsOneLineAndExit3()
{
    QFETCH(QStringList, args);
    const QString runner = QFileInfo(KF_KFORGE_BIN).absolutePath() + "/kforge-runner";
    if (!QFileInfo(runner).isExecutable())
        QSKIP(qPrintable("kforge-runner is not built (" + runner + " does not exist; it needs LibTorch)"));
    Run r = kforge(args);
    if (r.exitCode == 0 || r.exitCode == 1)
        QSKIP("this machine has a CUDA device; the row checks the message for machines without one");
    QCOMPARE(r.exitCode, 3);
    QVERIFY2(r.out.isEmpty(), qPrintable(r.out));
    QVERIFY2(r.err.startsWith("kforge: no GPU: "), qPrintable(r.err));
    QVERIFY2(r.err.endsWith("(verify, benchmark and profile need a CUDA device; compiling and the static analysis work without one)\n"), qPrintable(r.err));
    QCOMPARE(r.err.count('\n'), 1);
}

void TestCliVerify::usageErrorsExit2_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("bad task") << QStringList{"verify", m_dir.filePath("broken")} << m_dir.filePath("broken/task.json");
    QTest::newRow("no such task") << QStringList{"verify", m_dir.filePath("nowhere")} << "no such file or folder";
    // Issue 23: an unwritable --report is found before the run, not after it.
    QTest::newRow("--report into a missing folder")
        << QStringList{"verify", kVectorAdd, "--report", m_dir.filePath("no/such/folder/report.json")} << "does not exist";
    QTest::newRow("--report is a folder") << QStringList{"bench", kVectorAdd, "--report", m_dir.path()} << "is a folder";
    QTest::newRow("--shapes bogus") << QStringList{"verify", kVectorAdd, "--shapes", "bogus"} << "--shapes";
    QTest::newRow("bench --shapes bogus") << QStringList{"bench", kVectorAdd, "--shapes", "bogus"} << "--shapes";
    QTest::newRow("unknown candidate") << QStringList{"verify", kVectorAdd, "--candidate", "missing.cu"}
                                       << "missing.cu is not a candidate of task vector_add";
    // One file per --candidate: the task path after it must stay the task.
    QTest::newRow("candidate before task") << QStringList{"verify", "--candidate", "missing.cu", kVectorAdd}
                                           << "missing.cu is not a candidate of task vector_add";
    QTest::newRow("bad seed") << QStringList{"verify", kVectorAdd, "--seed", "0xnothex"} << "--seed 0xnothex";
    QTest::newRow("zero trials") << QStringList{"verify", kVectorAdd, "--trials", "0"} << "--trials";
    QTest::newRow("virtual arch") << QStringList{"verify", kVectorAdd, "--arch", "compute_90"} << "real architecture";
    QTest::newRow("samples inverted") << QStringList{"bench", kVectorAdd, "--min-samples", "50", "--max-samples", "10"}
                                      << "--max-samples 10 is below --min-samples 50";
    QTest::newRow("no task") << QStringList{"verify"} << "task";
    QTest::newRow("profile --shape not SYMBOL=VALUE") << QStringList{"profile", kVectorAdd, "--shape", "4099"}
                                                      << "--shape 4099: \"4099\" is not SYMBOL=VALUE";
    QTest::newRow("profile --shape outside the task") << QStringList{"profile", kVectorAdd, "--shape", "N=0"}
                                                      << "outside its range";
    QTest::newRow("profile of an unknown candidate") << QStringList{"profile", kVectorAdd, "--candidate", "missing.cu"}
                                                     << "missing.cu";

    // Repro bundles and the options that only make sense with (or without) one.
    QTest::newRow("--repro of no bundle") << QStringList{"verify", "--repro", "/nonexistent"} << "/nonexistent/repro.json";
    QTest::newRow("--repro with a task") << QStringList{"verify", kBrokenAdd, "--repro", m_bundle}
                                         << "--repro replays a bundle; give no task";
    QTest::newRow("--repro with --shrink") << QStringList{"verify", "--repro", m_bundle, "--shrink"} << "give no task, --shrink";
    QTest::newRow("--repro with --export-repro") << QStringList{"verify", "--repro", m_bundle, "--export-repro", m_dir.filePath("b2")}
                                                 << "--export-repro with it";
    QTest::newRow("no task names --repro") << QStringList{"verify"} << "verify needs a task folder (or --repro BUNDLE)";
    QTest::newRow("--shape without --shrink") << QStringList{"verify", kBrokenAdd, "--shape", "N=5"} << "--shape needs --shrink";
    QTest::newRow("--candidate-source without --repro")
        << QStringList{"verify", kBrokenAdd, "--candidate-source", "x.cu"} << "--candidate-source needs --repro";
    QTest::newRow("--shrink --shapes all") << QStringList{"verify", kBrokenAdd, "--shrink", "--shapes", "all"}
                                           << "--shrink starts from the test shapes (or --shape); it takes no --shapes";
    QTest::newRow("--export-repro of seven candidates")
        << QStringList{"verify", kBrokenAdd, "--export-repro", m_dir.filePath("never")}
        << "--export-repro exports one failing case: verify one candidate";
    QTest::newRow("--repro of an edited bundle") << QStringList{"verify", "--repro", m_editedBundle}
                                                 << "the bundle's copy of writes_nan.cu was edited";
    QTest::newRow("--candidate-source that does not exist")
        << QStringList{"verify", "--repro", m_bundle, "--candidate-source", m_dir.filePath("no-such-fix.cu")} << "no-such-fix.cu";

    // --pool fans a task out; the options that need one runner are refused with it.
    const QString pool = m_dir.filePath("pool.json");
    QTest::newRow("--pool --repeat") << QStringList{"verify", kVectorAdd, "--pool", pool, "--repeat", "2"}
                                     << "--pool runs each candidate once";
    QTest::newRow("--pool --shrink") << QStringList{"verify", kBrokenAdd, "--pool", pool, "--shrink"} << "--repro and --shrink run one";
    QTest::newRow("--pool --runner-endpoint") << QStringList{"verify", kVectorAdd, "--pool", pool, "--runner-endpoint", "a"}
                                              << "give --pool or --runner-endpoint, not both";
    QTest::newRow("--pool of no file") << QStringList{"bench", kVectorAdd, "--pool", m_dir.filePath("nope.json")} << "does not exist";
    QTest::newRow("--pool of no such pool") << QStringList{"verify", kVectorAdd, "--pool", pool + ":three"}
                                            << "no pool is named \"three\"";
    QTest::newRow("two tasks without --pool") << QStringList{"verify", kVectorAdd, kBrokenAdd} << "several with --pool FILE";
    QTest::newRow("two tasks, --candidate") << QStringList{"verify", kVectorAdd, kBrokenAdd, "--pool", pool, "--candidate", "naive.cu"}
                                            << "leave out --candidate";
}

void TestCliVerify::usageErrorsExit2()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    Run r = kforge(args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
    QVERIFY2(!QFileInfo::exists(m_dir.filePath("never")) && !QFileInfo::exists(m_dir.filePath("b2")),
             "a refused command wrote a bundle");
}

void TestCliVerify::reproReachesTheRunnerAndLeavesTheBundle_data()
{
    QTest::addColumn<QStringList>("extra");
    QTest::newRow("the bundle's source") << QStringList{};
    QTest::newRow("--candidate-source") << QStringList{"--candidate-source", m_dir.filePath("fix.cu")};
    QTest::newRow("--json") << QStringList{"--json"};
}

// A valid bundle passes every check kforge makes before the runner; here that ends in exit 3 (no
// runner or no GPU), and the bundle is exactly as it was: no reruns/ folder, nothing rewritten.
void TestCliVerify::reproReachesTheRunnerAndLeavesTheBundle()
{
    QFETCH(QStringList, extra);
    const auto before = kf::test::snapshot(m_bundle.toStdString());
    Run r = kforge(QStringList{"verify", "--repro", m_bundle} + extra);
    if (r.exitCode == 0 || r.exitCode == 1)
        QSKIP("this machine has a CUDA device and a runner; the row checks what happens without one");
    QCOMPARE(r.exitCode, 3);
    QVERIFY2(r.err.startsWith("kforge: "), qPrintable(r.err));
    QVERIFY2(r.err.contains("no GPU") || r.err.contains("kforge-runner"), qPrintable(r.err));
    QCOMPARE(r.err.count('\n'), 1);
    QVERIFY2(r.out.isEmpty(), qPrintable(r.out));
    QVERIFY2(kf::test::snapshot(m_bundle.toStdString()) == before, "the bundle changed");
}

void TestCliVerify::missingRunnerIsAnEnvironmentError()
{
    Run r = kforge({"verify", kVectorAdd, "--runner", m_dir.filePath("no-runner-here")});
    QCOMPARE(r.exitCode, 3);
    QVERIFY2(r.err.contains(m_dir.filePath("no-runner-here") + " does not exist"), qPrintable(r.err));
}

void TestCliVerify::aBrokenCandidateDoesNotStopTheRun_data()
{
    QTest::addColumn<QString>("failure"); // what the fake runner does on its first request
    QTest::addColumn<QString>("sentence");
    QTest::newRow("crash") << "kill -SEGV $$" << "the runner crashed (SIGSEGV) during launch 1 (vector_add); it was restarted.";
    QTest::newRow("hang") << "sleep 300"
                          << "the candidate did not finish within 0.3 s in launch 1 (vector_add) — an infinite loop or a "
                             "deadlock? The runner was restarted.";
}

// A stand-in runner with a "GPU": the first request breaks it, later runners answer with a
// passing report. The first candidate gets verdict "error", the second still runs.
void TestCliVerify::aBrokenCandidateDoesNotStopTheRun()
{
    QFETCH(QString, failure);
    QFETCH(QString, sentence);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString runner = dir.filePath("fake-runner");
    QFile f(runner);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QString(R"SH(#!/bin/sh
echo '{"type":"hello","protocol_version":%3,"device":{"gpu":"Fake GPU","arch":"sm_90","compute_capability":"9.0"},"device_error":"","versions":{}}'
while read -r line; do
  case "$line" in *'"type":"shutdown"'*) exit 0;; esac
  if [ ! -e '%1/broken-once' ]; then
    touch '%1/broken-once'
    echo '{"type":"launch_begin","label":"launch 1 (vector_add)","timeout_ms":300,"protocol_version":%3}'
    %2
  fi
  echo '{"type":"report","protocol_version":%3,"report":{"schema_version":1,"kind":"correctness","verdict":"pass","summary":"fake","task":{"name":"vector_add"},"candidate":{"file":"optimized.cu"},"shapes":[]}}'
done
)SH")
                .arg(dir.path(), failure, QString::number(kf::protocol::kVersion))
                .toUtf8());
    f.close();
    QVERIFY(f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));

    Run r = kforge({"verify", kVectorAdd, "--runner", runner, "--json", "--report", dir.filePath("report.json")});
    if (r.exitCode == 3 && (r.err.contains("NVRTC") || r.err.contains("nvrtc")))
        QSKIP(qPrintable("NVRTC unavailable: " + r.err));
    QCOMPARE(r.exitCode, 1);
    const QJsonObject all = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(all["command"].toString(), QString("verify"));
    QCOMPARE(all["ok"].toBool(), false);
    const QJsonArray reports = all["reports"].toArray();
    QCOMPARE(reports.size(), 2);
    const QJsonObject first = reports[0].toObject();
    QCOMPARE(first["verdict"].toString(), QString("error"));
    QCOMPARE(first["candidate"].toObject()["file"].toString(), QString("naive.cu"));
    QCOMPARE(first["error"].toObject()["why"].toString(), sentence);
    QCOMPARE(first["task"].toObject()["hash"].toString().size(), 32);
    QCOMPARE(reports[1].toObject()["verdict"].toString(), QString("pass"));
    QVERIFY2(r.err.contains("vector_add/naive.cu: " + sentence), qPrintable(r.err));
    // --report holds exactly what --json printed.
    QFile written(dir.filePath("report.json"));
    QVERIFY(written.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromUtf8(written.readAll()), r.out);
}

void TestCliVerify::poolRunsInTaskOrder_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<QString>("pool");
    QTest::newRow("verify, every endpoint") << "verify" << "";
    QTest::newRow("bench, the pool named two") << "bench" << ":two";
}

// `kforge verify|bench --pool`: the reports in task order, each naming where it ran, and the pool
// block beside them.
void TestCliVerify::poolRunsInTaskOrder()
{
    QFETCH(QString, command);
    QFETCH(QString, pool);
    QStringList args{command, kVectorAdd, "--pool", m_pool + pool, "--json"};
    if (command == "bench")
        args << "--baseline" << "eager";
    Run r = kforge(args);
    if (r.err.contains("NVRTC"))
        QSKIP(qPrintable("NVRTC unavailable: " + r.err));
    QVERIFY2(r.exitCode == 0, qPrintable(r.err + r.out));
    const QJsonObject all = QJsonDocument::fromJson(r.out.toUtf8()).object();
    const QJsonArray reports = all["reports"].toArray();
    QCOMPARE(reports.size(), 2);
    QCOMPARE(reports[0].toObject()["candidate"].toObject()["file"].toString(), QString("naive.cu"));
    QCOMPARE(reports[1].toObject()["candidate"].toObject()["file"].toString(), QString("optimized.cu"));
    const QJsonObject block = all["pool"].toObject();
    const QJsonArray endpoints = block["endpoints"].toArray();
    QCOMPARE(endpoints.size(), 2);
    QStringList names;
    int items = 0;
    for (const auto& e : endpoints) {
        names << e.toObject()["name"].toString();
        items += e.toObject()["items"].toInt();
        QCOMPARE(e.toObject()["lost"].toBool(), false);
    }
    QCOMPARE(names, (QStringList{"a", "b"}));
    QCOMPARE(items, 2);
    const QJsonArray list = block["items"].toArray();
    QCOMPARE(list.size(), 2);
    for (int i = 0; i < 2; ++i) {
        const QString ranOn = list[i].toObject()["endpoint"].toString();
        QVERIFY(ranOn == "a" || ranOn == "b");
        QCOMPARE(reports[i].toObject()["placement"].toObject()["endpoint"].toString(), ranOn);
    }
    // The human form ends with the pool's summary.
    Run text = kforge({command, kVectorAdd, "--pool", m_pool + pool});
    QCOMPARE(text.exitCode, 0);
    QVERIFY2(text.out.contains("pool: 2 candidates on 2 endpoints in "), qPrintable(text.out));
}

// `kforge verify TASK TASK --pool`: every candidate of both tasks, in task and candidate order.
void TestCliVerify::poolRunsSeveralTasks()
{
    Run r = kforge({"verify", kVectorAdd, kBrokenAdd, "--pool", m_pool, "--json", "--seed", "0x10"});
    if (r.err.contains("NVRTC"))
        QSKIP(qPrintable("NVRTC unavailable: " + r.err));
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    const QJsonObject all = QJsonDocument::fromJson(r.out.toUtf8()).object();
    const QJsonArray reports = all["reports"].toArray();
    QStringList order;
    for (const auto& rep : reports)
        order << rep.toObject()["task"].toObject()["name"].toString() + "/" + rep.toObject()["candidate"].toObject()["file"].toString();
    const QStringList expected{"vector_add/naive.cu", "vector_add/optimized.cu", "broken_add/correct.cu", "broken_add/oob_write.cu",
                               "broken_add/unwritten_tail.cu", "broken_add/writes_nan.cu", "broken_add/modifies_input.cu",
                               "broken_add/all_zeros.cu", "broken_add/stateful_global.cu"};
    QCOMPARE(order, expected);
    const QJsonArray items = all["pool"].toObject()["items"].toArray();
    QCOMPARE(items.size(), expected.size());
    QCOMPARE(items[2].toObject()["task"].toString(), QString("broken_add"));
    QCOMPARE(all["static_scan"].toArray().size(), expected.size());
}

namespace {

// A runners.json with one endpoint "staged" of kind command that does not share this machine's
// files: `runner` started through `sh -c`, with `env`.
QString writeStagedRunners(const QTemporaryDir& dir, const QString& runner, const QJsonObject& env)
{
    const QJsonObject endpoint{{"name", "staged"},
                               {"kind", "command"},
                               {"command", QJsonArray{"sh", "-c", "cd / && exec \"$0\"", "{runner}"}},
                               {"runner", runner},
                               {"env", env},
                               {"shared_fs", false}};
    const QJsonObject config{{"schema_version", 1}, {"default", "local"}, {"endpoints", QJsonArray{endpoint}}};
    const QString file = dir.filePath("runners.json");
    QFile f(file);
    if (f.open(QIODevice::WriteOnly))
        f.write(QJsonDocument(config).toJson());
    return file;
}

QList<QJsonObject> logLines(const QString& file)
{
    QList<QJsonObject> out;
    QFile f(file);
    if (f.open(QIODevice::ReadOnly))
        for (const QByteArray& line : f.readAll().split('\n'))
            if (!line.trimmed().isEmpty())
                out.push_back(QJsonDocument::fromJson(line).object());
    return out;
}

} // namespace

// An endpoint with shared_fs false was refused until staging existed; now kforge starts it and
// goes as far as the machine allows: the real runner in CPU mode says it has no GPU.
void TestCliVerify::sharedFsFalseEndpointReachesTheRunner()
{
    const QString runner = QFileInfo(KF_KFORGE_BIN).absolutePath() + "/kforge-runner";
    if (!QFileInfo(runner).isExecutable())
        QSKIP(qPrintable("kforge-runner is not built (" + runner + " does not exist; it needs LibTorch)"));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString runners = writeStagedRunners(dir, runner, QJsonObject{{"KF_RUNNER_FORCE_CPU", "1"}});
    Run r = kforge({"verify", kVectorAdd, "--runner-endpoint", "staged", "--runners", runners});
    QCOMPARE(r.exitCode, 3);
    QVERIFY2(!r.err.contains("shared_fs"), qPrintable(r.err));
    QVERIFY2(r.err.startsWith("kforge: no GPU: no CUDA device: CPU mode forced by KF_RUNNER_FORCE_CPU=1"), qPrintable(r.err));
}

// `kforge verify --runner-endpoint staged` with shared_fs false against a stand-in runner with a
// GPU (tests/fixtures/endpoints/staging-runner): every file of the task reaches it by content, the
// request names no task folder, a warm runner is sent nothing again, and a streamed dump lands
// in the client's --dump folder.
void TestCliVerify::stagedEndpointReceivesTheTaskFiles()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    namespace fs = std::filesystem;
    const fs::path task = fs::path(dir.path().toStdString()) / "vector_add";
    fs::copy(kVectorAdd.toStdString(), task, fs::copy_options::recursive);
    const QString runnerDir = dir.filePath("runner-side");
    QVERIFY(QDir().mkpath(runnerDir));
    const QString runners = writeStagedRunners(dir, QString(KF_SOURCE_DIR) + "/tests/fixtures/endpoints/staging-runner",
                                               QJsonObject{{"STAGING_RUNNER_DIR", runnerDir}});
    const QString log = runnerDir + "/log.jsonl";

    Run r = kforge({"verify", qs(task.string()), "--runner-endpoint", "staged", "--runners", runners, "--json"});
    if (r.exitCode == 3 && (r.err.contains("NVRTC") || r.err.contains("nvrtc")))
        QSKIP(qPrintable("NVRTC unavailable: " + r.err));
    QVERIFY2(r.exitCode == 0, qPrintable(r.err + r.out));
    const QJsonArray reports = QJsonDocument::fromJson(r.out.toUtf8()).object()["reports"].toArray();
    QCOMPARE(reports.size(), 2);   // naive.cu and optimized.cu, each its own request
    for (const QJsonValue& rep : reports)
        QVERIFY2(rep.toObject()["summary"].toString().startsWith("staging-runner fixture"), qPrintable(r.out));

    // Every file the task folder holds but task.json reaches the runner, byte for byte.
    const QList<QJsonObject> first = logLines(log);
    int puts = 0, requests = 0;
    for (const QJsonObject& e : first) {
        if (e["type"] == "put_file")
            ++puts;
        if (e["type"] == "verify") {
            ++requests;
            QVERIFY2(!e.contains("task_dir"), "a staged request named a task folder");
            const QJsonObject files = e["task_files"].toObject();
            QVERIFY(files.contains("naive.cu") && files.contains("optimized.cu"));
            for (auto it = files.begin(); it != files.end(); ++it) {
                QFile mine(qs((task / it.key().toStdString()).string()));
                QVERIFY(mine.open(QIODevice::ReadOnly));
                const QByteArray bytes = mine.readAll();
                QCOMPARE(QString(QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex()), it.value().toString());
                QFile theirs(runnerDir + "/task/" + it.key());
                QVERIFY2(theirs.open(QIODevice::ReadOnly), qPrintable(it.key()));
                QVERIFY(theirs.readAll() == bytes);
            }
        }
    }
    QCOMPARE(requests, 2);
    QVERIFY2(puts >= 2, "the files were not sent");

    // A warm runner holds them all: the next run asks and sends nothing.
    QFile::remove(log);
    r = kforge({"verify", qs(task.string()), "--candidate", "naive.cu", "--runner-endpoint", "staged", "--runners", runners,
                "--dump", dir.filePath("dumps")});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err + r.out));
    const QList<QJsonObject> second = logLines(log);
    QVERIFY(!second.isEmpty());
    for (const QJsonObject& e : second)
        QVERIFY2(e["type"] != "put_file", "a warm runner was sent a file again");
    QCOMPARE(second.front()["type"].toString(), QString("have_files"));
    // The dump came back into the client's folder, as the report says.
    QJsonObject request;
    for (const QJsonObject& e : second)
        if (e["type"] == "verify")
            request = e;
    QCOMPARE(request["dump"].toObject()["stream"].toBool(), true);
    QCOMPARE(request["dump"].toObject()["dir"].toString(), dir.filePath("dumps"));
    QFile notes(dir.filePath("dumps/fixture-case/notes.txt"));
    QVERIFY2(notes.open(QIODevice::ReadOnly), "the streamed file did not arrive");
    QCOMPARE(notes.readAll(), QByteArray("streamed by the staging-runner fixture\n"));
}

// `kforge runners check` on an endpoint with shared_fs false: the real runner takes files; one
// whose hello lacks "stage" is reported, and the check fails (exit 3).
void TestCliVerify::runnersCheckSaysWhetherFilesCanBeSent()
{
    const QString runner = QFileInfo(KF_KFORGE_BIN).absolutePath() + "/kforge-runner";
    if (!QFileInfo(runner).isExecutable())
        QSKIP(qPrintable("kforge-runner is not built (" + runner + " does not exist; it needs LibTorch)"));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    Run r = kforge({"runners", "check", "staged", "--json", "--runners",
                    writeStagedRunners(dir, runner, QJsonObject{{"KF_RUNNER_FORCE_CPU", "1"}})});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err + r.out));
    QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).array().at(0).toObject()["files"].toString(), QString("staged"));

    const QString old = dir.filePath("old-runner");
    QFile f(old);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QString("#!/bin/sh\necho '{\"type\":\"hello\",\"protocol_version\":%1,\"device\":null,\"features\":[\"dump\"],"
                    "\"versions\":{}}'\nwhile read -r line; do\n  case \"$line\" in *'\"type\":\"shutdown\"'*) exit 0;; esac\n"
                    "  echo '{\"type\":\"pong\",\"protocol_version\":%1}'\ndone\n")
                .arg(kf::protocol::kVersion)
                .toUtf8());
    f.close();
    QVERIFY(f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));
    r = kforge({"runners", "check", "staged", "--json", "--runners", writeStagedRunners(dir, old, QJsonObject{})});
    QCOMPARE(r.exitCode, 3);
    const QJsonObject row = QJsonDocument::fromJson(r.out.toUtf8()).array().at(0).toObject();
    QCOMPARE(row["files"].toString(), QString("refused"));
    QVERIFY2(row["error"].toString().startsWith("the runner there is too old to be sent the task's files"), qPrintable(r.out));
}

QTEST_GUILESS_MAIN(TestCliVerify)
#include "tst_cli_verify.moc"
