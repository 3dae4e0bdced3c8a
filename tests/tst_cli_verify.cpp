// `kforge verify` and `kforge bench` where no GPU is needed: usage errors (exit 2) are found before
// the runner starts, and a machine without a GPU gets one clear line and exit 3.
#include "testutil.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

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

const QString kVectorAdd = KF_SOURCE_DIR "/resources/examples/vector_add";
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
    void aBrokenCandidateDoesNotStopTheRun_data();
    void aBrokenCandidateDoesNotStopTheRun();

private:
    QTemporaryDir m_dir;
};

void TestCliVerify::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY(QDir().mkpath(m_dir.filePath("broken")));
    QFile f(m_dir.filePath("broken/task.json"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"schema_version": 1, "name": "broken", "inputs": "not a list"})");
}

void TestCliVerify::noGpuIsOneLineAndExit3_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::newRow("verify") << QStringList{"verify", kVectorAdd};
    QTest::newRow("verify --json") << QStringList{"verify", kVectorAdd, "--json"};
    QTest::newRow("bench") << QStringList{"bench", kVectorAdd};
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
    QVERIFY2(r.err.endsWith("; verify and bench need a CUDA device (compile works without one)\n"), qPrintable(r.err));
    QCOMPARE(r.err.count('\n'), 1);
}

void TestCliVerify::usageErrorsExit2_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("bad task") << QStringList{"verify", m_dir.filePath("broken")} << m_dir.filePath("broken/task.json");
    QTest::newRow("no such task") << QStringList{"verify", m_dir.filePath("nowhere")} << "no such file or folder";
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
}

void TestCliVerify::usageErrorsExit2()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    Run r = kforge(args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
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
echo '{"type":"hello","protocol":1,"device":{"gpu":"Fake GPU","arch":"sm_90","compute_capability":"9.0"},"device_error":"","versions":{}}'
while read -r line; do
  case "$line" in *'"type":"shutdown"'*) exit 0;; esac
  if [ ! -e '%1/broken-once' ]; then
    touch '%1/broken-once'
    echo '{"type":"launch_begin","label":"launch 1 (vector_add)","timeout_ms":300}'
    %2
  fi
  echo '{"type":"report","report":{"schema_version":1,"kind":"correctness","verdict":"pass","summary":"fake","task":{"name":"vector_add"},"candidate":{"file":"optimized.cu"},"shapes":[]}}'
done
)SH")
                .arg(dir.path(), failure)
                .toUtf8());
    f.close();
    QVERIFY(f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));

    Run r = kforge({"verify", kVectorAdd, "--runner", runner, "--json", "--report", dir.filePath("report.json")});
    if (r.exitCode == 3)
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

QTEST_GUILESS_MAIN(TestCliVerify)
#include "tst_cli_verify.moc"
