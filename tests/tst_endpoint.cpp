// Runner endpoints (engine/runner/Endpoint.h): the exact argv each kind starts, shellQuote through
// a real sh, and the ssh and srun command lines carried through the stand-ins for ssh and srun
// (tests/fixtures/endpoints/fake-ssh, fake-srun) to a runner that prints what it received.
#include "testutil.h"

#include "engine/runner/Endpoint.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

using namespace kf;

Q_DECLARE_METATYPE(kf::Endpoint)

namespace {

const QString kFixtures = QString(KF_SOURCE_DIR) + "/tests/fixtures/endpoints";

QStringList toList(const std::vector<std::string>& v)
{
    QStringList out;
    for (const std::string& s : v)
        out << qs(s);
    return out;
}

Endpoint make(Endpoint::Kind kind, const char* name)
{
    Endpoint e;
    e.kind = kind;
    e.name = name;
    return e;
}

struct Ran {
    int exitCode = -1;
    QString out, err;
    qint64 ms = 0;
};

/// Runs argv with our environment less CUDA_VISIBLE_DEVICES, plus `extra` ("NAME=value").
Ran run(const QStringList& argv, const QStringList& extra = {})
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("CUDA_VISIBLE_DEVICES");
    for (const QString& kv : extra)
        env.insert(kv.section('=', 0, 0), kv.section('=', 1));
    p.setProcessEnvironment(env);
    QElapsedTimer t;
    t.start();
    p.start(argv.front(), argv.mid(1));
    p.closeWriteChannel();
    if (!p.waitForFinished(30000))
        p.kill();
    p.waitForFinished();
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError()), t.elapsed()};
}

/// A stand-in runner at a path that needs quoting: prints the variables it was given and its argc.
std::string writePrinter(const QTemporaryDir& dir, const char* body = nullptr)
{
    const QString folder = dir.path() + "/it's a $folder";
    QDir().mkpath(folder);
    const QString path = folder + "/print env";
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write(body ? body
                 : "#!/bin/sh\n"
                   "printf 'A=[%s]\\n' \"${KF_A-unset}\"\n"
                   "printf 'B=[%s]\\n' \"${KF_B-unset}\"\n"
                   "printf 'SLURM=[%s] CVD=[%s] argc=%s\\n' \"${SLURM_JOB_ID-unset}\" \"${CUDA_VISIBLE_DEVICES-unset}\" \"$#\"\n");
    f.close();
    f.setPermissions(f.permissions() | QFile::ExeOwner);
    return path.toStdString();
}

const char* kHardValue = "it's \"x\" $HOME `id` \\ * ~ #";
const QString kPrinted = QString("A=[%1]\nB=[]\n").arg(kHardValue);

} // namespace

class TestEndpoint : public QObject {
    Q_OBJECT
private slots:
    void argvPerKind_data()
    {
        QTest::addColumn<Endpoint>("endpoint");
        QTest::addColumn<QStringList>("argv");
        const QStringList ssh = {"ssh", "-T", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=2", "-o", "ServerAliveCountMax=2",
                                 "-o", "ConnectTimeout=10", "-o", "ControlMaster=no"};
        QTest::newRow("local") << Endpoint{} << QStringList{"/build/kforge-runner"};
        Endpoint own = make(Endpoint::Kind::Local, "h100-0");
        own.runner = "/opt/kf/runner";
        own.env = {{"CUDA_VISIBLE_DEVICES", "0"}};
        QTest::newRow("local, own runner, env apart") << own << QStringList{"/opt/kf/runner"};

        Endpoint box = make(Endpoint::Kind::Ssh, "box");
        box.host = "gpu-box.lan";
        QTest::newRow("ssh") << box << ssh + QStringList{"--", "gpu-box.lan", "exec kforge-runner"};
        box.user = "me";
        box.port = 2222;
        box.identityFile = "/home/me/.ssh/id kf";
        box.sshOptions = {"-o", "ProxyJump=bastion"};
        box.runner = "/opt/kf bin/kforge-runner";
        box.env = {{"CUDA_VISIBLE_DEVICES", "1"}, {"KF_A", "a b"}};
        box.sanitizer = "/usr/local/cuda/bin/compute-sanitizer";
        QTest::newRow("ssh, everything")
            << box
            << ssh + QStringList{"-p", "2222", "-l", "me", "-i", "/home/me/.ssh/id kf", "-o", "ProxyJump=bastion", "--", "gpu-box.lan",
                                 "exec env 'CUDA_VISIBLE_DEVICES=1' 'KF_A=a b' 'KF_COMPUTE_SANITIZER=/usr/local/cuda/bin/compute-sanitizer' "
                                 "'/opt/kf bin/kforge-runner'"};

        Endpoint cluster = make(Endpoint::Kind::Srun, "cluster");
        cluster.srunArgs = {"--gres=gpu:1", "--time=10", "--partition=gpu"};
        QTest::newRow("srun") << cluster
                              << QStringList{"srun", "--ntasks=1", "--nodes=1", "--kill-on-bad-exit=1", "-u", "--gres=gpu:1", "--time=10",
                                             "--partition=gpu", "/build/kforge-runner"};
        cluster.env = {{"KF_A", "a b"}, {"KF_B", ""}};
        cluster.runner = "/shared/kforge-runner";
        QTest::newRow("srun, env") << cluster
                                   << QStringList{"srun", "--ntasks=1", "--nodes=1", "--kill-on-bad-exit=1", "-u", "--gres=gpu:1", "--time=10",
                                                  "--partition=gpu", "env", "KF_A=a b", "KF_B=", "/shared/kforge-runner"};

        Endpoint wrapped = make(Endpoint::Kind::Command, "wrapped");
        wrapped.command = {"sh", "-c", "exec \"$0\"", "{runner}"};
        wrapped.env = {{"KF_A", "1"}};
        QTest::newRow("command") << wrapped << QStringList{"sh", "-c", "exec \"$0\"", "/build/kforge-runner"};
        wrapped.runner = "/opt/r";
        wrapped.command = {"{runner}", "--flag"};
        QTest::newRow("command, runner first") << wrapped << QStringList{"/opt/r", "--flag"};
    }
    void argvPerKind()
    {
        QFETCH(Endpoint, endpoint);
        QFETCH(QStringList, argv);
        QCOMPARE(toList(endpoint.argv("/build/kforge-runner")), argv);
    }

    void childEnvOnlyForProcessesStartedHere()
    {
        Endpoint e;
        e.env = {{"B", "2"}, {"A", "x y"}};
        e.sanitizer = "/cs";
        const QStringList expected = {"A=x y", "B=2", "KF_COMPUTE_SANITIZER=/cs"};
        QCOMPARE(toList(e.childEnv()), expected);
        e.kind = Endpoint::Kind::Command;
        QCOMPARE(toList(e.childEnv()), expected);
        e.kind = Endpoint::Kind::Ssh;
        QVERIFY(e.childEnv().empty());
        e.kind = Endpoint::Kind::Srun;
        QVERIFY(e.childEnv().empty());
        QVERIFY(e.remote() && !Endpoint{}.remote());
    }

    void describeAndKindName()
    {
        QCOMPARE(Endpoint{}.describe(), std::string("local"));
        QCOMPARE(make(Endpoint::Kind::Local, "h100/1").describe(), std::string("h100/1 (local)"));
        Endpoint box = make(Endpoint::Kind::Ssh, "box");
        box.host = "gpu-box.lan";
        QCOMPARE(box.describe(), std::string("box (ssh gpu-box.lan)"));
        box.user = "me";
        box.port = 2222;
        QCOMPARE(box.describe(), std::string("box (ssh me@gpu-box.lan:2222)"));
        QCOMPARE(make(Endpoint::Kind::Srun, "cluster").describe(), std::string("cluster (srun)"));
        Endpoint wrapped = make(Endpoint::Kind::Command, "wrapped");
        wrapped.command = {"/bin/sh", "-c", "exec \"$0\"", "{runner}"};
        QCOMPARE(wrapped.describe(), std::string("wrapped (command sh)"));
        QCOMPARE(std::string(Endpoint::kindName(Endpoint::Kind::Srun)), std::string("srun"));
        QCOMPARE(std::string(Endpoint::kindName(Endpoint::Kind::Command)), std::string("command"));
    }

    void shellQuoteSurvivesSh_data()
    {
        QTest::addColumn<QString>("word");
        for (const char* w : {"plain", "two words", "it's", "\"double\"", "$HOME", "${X:-y}", "back\\slash", "line\nbreak", "", "*",
                              "~", "#not a comment", "A=b", "'", "''", "a'b'c", "`id`", "$(id)", "tab\there", ";&|<>()", "-n", "ünï"})
            QTest::newRow(*w ? qPrintable(QString(w).replace('\n', "\\n")) : "(empty)") << QString::fromUtf8(w);
    }
    void shellQuoteSurvivesSh()
    {
        QFETCH(QString, word);
        const std::string quoted = shellQuote(word.toStdString());
        const Ran r = run({"sh", "-c", "printf '%s' " + qs(quoted)});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.out, word);
        // As a command's first word too (an assignment or a comment would print nothing). The
        // leading space keeps sh from reading a script "-n …" as its own options.
        const Ran first = run({"sh", "-c", " " + qs(quoted) + " 2>/dev/null || printf 'ran'"});
        QCOMPARE(first.out, QString("ran"));
    }

    void sshRemoteCommandRunsAsShSplitsIt()
    {
        QTemporaryDir dir;
        Endpoint box = make(Endpoint::Kind::Ssh, "box");
        box.host = "gpu-box.lan";
        box.runner = writePrinter(dir);
        box.env = {{"KF_A", kHardValue}, {"KF_B", ""}};
        const std::vector<std::string> argv = box.argv("/unused");
        // What sshd does with the one word: the user's shell runs it with -c.
        const Ran r = run({"sh", "-c", qs(argv.back())});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(r.out, kPrinted + "SLURM=[unset] CVD=[unset] argc=0\n");
        // No env: just exec.
        box.env.clear();
        QCOMPARE(run({"sh", "-c", qs(box.argv("/unused").back())}).out, QString("A=[unset]\nB=[unset]\nSLURM=[unset] CVD=[unset] argc=0\n"));
    }

    void sshArgvThroughFakeSsh()
    {
        QTemporaryDir dir;
        Endpoint box = make(Endpoint::Kind::Ssh, "box");
        box.host = "gpu-box.lan";
        box.user = "me";
        box.port = 2222;
        box.identityFile = dir.path().toStdString() + "/id";
        box.sshOptions = {"-o", "ProxyJump=bastion", "-v"};
        box.runner = writePrinter(dir);
        box.env = {{"KF_A", kHardValue}, {"KF_B", ""}};
        QStringList argv = toList(box.argv("/unused"));
        argv[0] = kFixtures + "/fake-ssh";
        const Ran r = run(argv);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(r.out, kPrinted + "SLURM=[unset] CVD=[unset] argc=0\n");

        const Ran noisy = run(argv, {"FAKE_SSH_NOISE=1"});
        QVERIFY(noisy.out.startsWith("Welcome to gpu-box.lan"));
        QVERIFY(noisy.out.endsWith(kPrinted + "SLURM=[unset] CVD=[unset] argc=0\n"));
    }

    void fakeSshDropsTheConnection()
    {
        QTemporaryDir dir;
        Endpoint box = make(Endpoint::Kind::Ssh, "box");
        box.host = "gpu-box.lan";
        box.runner = writePrinter(dir, "#!/bin/sh\necho started\nexec sleep 30\n");
        QStringList argv = toList(box.argv("/unused"));
        argv[0] = kFixtures + "/fake-ssh";
        const Ran r = run(argv, {"FAKE_SSH_DROP_AFTER_S=1"});
        QCOMPARE(r.exitCode, 255);
        QCOMPARE(r.out, QString("started\n"));
        QVERIFY2(r.err.contains("Connection to gpu-box.lan closed by remote host."), qPrintable(r.err));
        QVERIFY2(r.ms < 10000, qPrintable(QString::number(r.ms)));
    }

    void fixturesRefuse_data()
    {
        QTest::addColumn<QStringList>("argv");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("words");
        const QString ssh = kFixtures + "/fake-ssh";
        QTest::newRow("ssh without -T") << QStringList{ssh, "-o", "BatchMode=yes", "--", "h", "true"} << 255 << "no -T";
        QTest::newRow("ssh without BatchMode") << QStringList{ssh, "-T", "--", "h", "true"} << 255 << "BatchMode";
        QTest::newRow("ssh without --") << QStringList{ssh, "-T", "-o", "BatchMode=yes", "h", "true"} << 255 << "no --";
        QTest::newRow("ssh -t") << QStringList{ssh, "-T", "-t", "-o", "BatchMode=yes", "--", "h", "true"} << 255 << "pseudo-terminal";
        QTest::newRow("ssh RequestTTY") << QStringList{ssh, "-T", "-oRequestTTY=yes", "-o", "BatchMode=yes", "--", "h", "true"} << 255
                                        << "pseudo-terminal";
        QTest::newRow("srun --pty") << QStringList{kFixtures + "/fake-srun", "-u", "--pty", "bash"} << 1 << "srun: error: --pty";
    }
    void fixturesRefuse()
    {
        QFETCH(QStringList, argv);
        QFETCH(int, exitCode);
        QFETCH(QString, words);
        const Ran r = run(argv);
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2(r.err.contains(words), qPrintable(r.err));
    }

    void srunArgvThroughFakeSrun()
    {
        QTemporaryDir dir;
        Endpoint cluster = make(Endpoint::Kind::Srun, "cluster");
        cluster.srunArgs = {"--gres=gpu:1", "-p", "gpu", "--time=10"};
        cluster.env = {{"KF_A", kHardValue}, {"KF_B", ""}};
        const std::string printer = writePrinter(dir);
        QStringList argv = toList(cluster.argv(printer));
        argv[0] = kFixtures + "/fake-srun";
        const QString log = dir.path() + "/srun.log";
        const Ran r = run(argv, {"FAKE_SRUN_LOG=" + log, "FAKE_SRUN_QUEUE_S=0.2"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(r.out, kPrinted + "SLURM=[42] CVD=[0] argc=0\n");
        QVERIFY(r.err.contains("srun: job 42 queued and waiting for resources"));
        QFile f(log);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(f.readAll()), argv.join('\n') + "\n\n");
    }

    void commandThroughSh()
    {
        QTemporaryDir dir;
        Endpoint wrapped = make(Endpoint::Kind::Command, "wrapped");
        wrapped.command = {"sh", "-c", "exec \"$0\" \"$@\"", "{runner}", "one", "two words"};
        wrapped.env = {{"KF_A", kHardValue}, {"KF_B", ""}};
        const Ran r = run(toList(wrapped.argv(writePrinter(dir))), toList(wrapped.childEnv()));
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(r.out, kPrinted + "SLURM=[unset] CVD=[unset] argc=2\n");
    }
};

QTEST_GUILESS_MAIN(TestEndpoint)
#include "tst_endpoint.moc"
