// Helper programs (engine/core/Process.h): a run ends when the program exits even though a child
// it left behind holds its output open, that child is killed with the program's group, the signal
// that ended a program is named, limits and a scrubbed environment reach the program, and a
// program that is not there is an Error. Driven with /bin/sh.
#include "testutil.h"

#include "engine/core/Process.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>
#include <filesystem>
#include <fstream>

using namespace kf;
namespace fs = std::filesystem;

class TestProcess : public QObject {
    Q_OBJECT
private slots:
    void endsWhenTheProgramExits();
    void signalIsNamed_data();
    void signalIsNamed();
    void scrubbedEnvironmentAndLimits();
    void missingProgram();
    void timeoutKillsTheGroup();
};

void TestProcess::endsWhenTheProgramExits()
{
    // The child keeps stdout and stderr open for 300 s and writes its pid first.
    QElapsedTimer clock;
    clock.start();
    auto r = runProcess({"/bin/sh", "-c", "sleep 300 & echo $!; echo done >&2"}, 60000);
    KF_VERIFY_OK(r);
    QVERIFY2(clock.elapsed() < 30000, qPrintable(QString("held for %1 ms").arg(clock.elapsed())));
    QCOMPARE(r->exitCode, 0);
    QCOMPARE(qs(r->err), QString("done\n"));
    const std::string child = r->out.substr(0, r->out.find('\n'));
    QVERIFY2(!child.empty(), r->out.c_str());
    // Killed with the group: gone, or a zombie waiting for init to reap it.
    auto gone = [&] {
        std::ifstream stat("/proc/" + child + "/stat");
        std::string line;
        return !std::getline(stat, line) || line.find(") Z") != std::string::npos;
    };
    QTRY_VERIFY2_WITH_TIMEOUT(gone(), child.c_str(), 10000);
}

void TestProcess::signalIsNamed_data()
{
    QTest::addColumn<int>("signal");
    QTest::addColumn<QString>("name");
    QTest::newRow("segmentation fault") << int(SIGSEGV) << "SIGSEGV";
    QTest::newRow("killed") << int(SIGKILL) << "SIGKILL";
    QTest::newRow("abort") << int(SIGABRT) << "SIGABRT";
}

void TestProcess::signalIsNamed()
{
    QFETCH(int, signal);
    QFETCH(QString, name);
    auto r = runProcess({"/bin/sh", "-c", "kill -" + std::to_string(signal) + " $$"});
    KF_VERIFY_OK(r);
    QCOMPARE(r->exitCode, -1);
    QCOMPARE(r->signal, signal);
    QCOMPARE(qs(signalName(r->signal)), name);
}

void TestProcess::scrubbedEnvironmentAndLimits()
{
    qputenv("KF_PROCESS_TEST_SECRET", "do not pass");
    QTemporaryDir tmp;
    ProcessOptions o;
    o.env = {"PATH=/usr/bin:/bin", "ONLY=this"};
    o.onlyEnv = true;
    o.cwd = tmp.path().toStdString();
    o.dataBytes = std::uint64_t(1) << 30;
    o.cpuSeconds = 77;
    auto r = runProcess({"/bin/sh", "-c", "env | grep -v '^PWD=' | sort; pwd; ulimit -d; ulimit -t"}, o);
    qunsetenv("KF_PROCESS_TEST_SECRET");
    KF_VERIFY_OK(r);
    QCOMPARE(qs(r->out), "ONLY=this\nPATH=/usr/bin:/bin\n" + tmp.path() + "\n1048576\n77\n");
}

void TestProcess::missingProgram()
{
    auto r = runProcess({"/nonexistent/program"});
    QVERIFY(!r);
    QVERIFY2(qs(r.error().message()).contains("No such file or directory"), r.error().message().c_str());
}

void TestProcess::timeoutKillsTheGroup()
{
    QElapsedTimer clock;
    clock.start();
    auto r = runProcess({"/bin/sh", "-c", "sleep 300"}, 500);
    QVERIFY(!r);
    QVERIFY2(qs(r.error().why).contains("did not finish within 0 s"), r.error().message().c_str());
    QVERIFY(clock.elapsed() < 10000);
}

QTEST_GUILESS_MAIN(TestProcess)
#include "tst_process.moc"
