// The runner supervisor against the real kforge-runner in CPU mode (no GPU needed): every way a
// runner can fail — crash, hang, sticky error, garbage, cancellation, a missing binary — becomes
// one sentence, and the next request gets a fresh runner. The failures are provoked through the
// runner's test-only requests, enabled by KF_RUNNER_TEST_HOOKS=1.
#include "testutil.h"

#include "engine/core/Base64.h"
#include "engine/core/Hash.h"
#include "engine/protocol/Protocol.h"
#include "engine/runner/Supervisor.h"
#include "engine/task/Task.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <future>
#include <thread>

using namespace kf;
using nlohmann::json;

namespace {

const char* kRunner = KF_RUNNER_BIN;

RunnerSupervisor::Options hookOptions(int idleTimeoutMs = 120000)
{
    RunnerSupervisor::Options o;
    o.runnerPath = kRunner;
    o.idleTimeoutMs = idleTimeoutMs;
    // CPU mode even on a machine with a GPU: these rows are about the supervisor, not the device.
    o.extraEnv = {"KF_RUNNER_TEST_HOOKS=1", "KF_RUNNER_FORCE_CPU=1"};
    return o;
}

bool processExists(pid_t pid)
{
    return pid > 0 && (::kill(pid, 0) == 0 || errno != ESRCH);
}

// For processes that are not our children: a zombie whose parent died waits for init to reap
// it, and some containers' init never does, so a zombie counts as gone.
bool processRunning(pid_t pid)
{
    if (!processExists(pid))
        return false;
    QFile stat(QString("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return false;
    const QByteArray text = stat.readAll();
    const int close = text.lastIndexOf(')');
    return close < 0 || close + 2 >= text.size() || text.at(close + 2) != 'Z';
}

QString why(const Result<json>& r)
{
    return r ? QString("(succeeded: %1)").arg(qs(r->dump())) : qs(r.error().why);
}

} // namespace

// Skips a row that needs the runner, saying why; the binary needs LibTorch, so it may be absent.
#define REQUIRE_RUNNER()                                                                                    \
    do {                                                                                                    \
        if (!QFileInfo(kRunner).isExecutable())                                                             \
            QSKIP(qPrintable(QString("kforge-runner is not built: %1 does not exist (it needs LibTorch)")     \
                                 .arg(kRunner)));                                                           \
    } while (0)

// The rows below expect CPU mode; on a machine with a GPU the runner would report a device.
#define REQUIRE_CPU_MODE(sup)                                                                               \
    do {                                                                                                    \
        auto h_ = (sup).hello();                                                                            \
        KF_VERIFY_OK(h_);                                                                                   \
        if (h_->device)                                                                                     \
            QSKIP("this machine has a CUDA device; the row checks the runner's CPU mode");                 \
    } while (0)

class TestSupervisor : public QObject {
    Q_OBJECT
private slots:
    void parseLineRejects_data();
    void parseLineRejects();
    void parseLineAcceptsAMessage();
    void toLineIsOneLine();
    void errorMessageRoundTrips();

    void missingRunnerNamesThePath();
    void startFailures_data();
    void startFailures();
    void aStartCanBeCancelled();
    void helloReportsNoDeviceWithAReason();
    void pingWorks();
    void verifyWithoutGpuIsNotFatal();
    void crashNamesTheSignalAndRestarts();
    void hangTripsTheWatchdog();
    void idleTimeoutGuardsEverything();
    void stuckMainThreadIsFoundDespiteHeartbeats();
    void fatalErrorRestarts();
    void garbageIsAProtocolError();
    void cancellationFromAnotherThread();
    void stopLeavesNoProcess();
    void crashTakesTheWholeProcessGroup();
};

void TestSupervisor::parseLineRejects_data()
{
    QTest::addColumn<QString>("line");
    QTest::addColumn<QString>("reason");
    QTest::newRow("not an object") << "[1, 2]" << "is an array, not an object";
    QTest::newRow("a bare string") << "\"report\"" << ", not an object";
    QTest::newRow("no type") << R"({"id": 3, "report": {}})" << "has no string \"type\"";
    QTest::newRow("type is not a string") << R"({"type": 7})" << "has no string \"type\"";
    QTest::newRow("no protocol version") << R"({"type": "report", "id": 1})" << "speaks no protocol version";
    QTest::newRow("protocol 1") << R"({"type": "hello", "protocol": 1})" << "speaks protocol 1 and this KernelForge speaks protocol 3";
    QTest::newRow("truncated") << R"({"type": "report", "id": 1, "rep)" << "malformed JSON line";
    QTest::newRow("not JSON at all") << "Segmentation fault (core dumped)" << "malformed JSON line";
    QTest::newRow("empty") << "" << "malformed JSON line";
}

void TestSupervisor::parseLineRejects()
{
    QFETCH(QString, line);
    QFETCH(QString, reason);
    auto r = protocol::parseLine(line.toStdString());
    QVERIFY(!r.ok());
    QVERIFY2(qs(r.error().why).contains(reason), qPrintable(qs(r.error().why)));
}

void TestSupervisor::parseLineAcceptsAMessage()
{
    auto r = protocol::parseLine(R"({"type":"progress","id":4,"permille":250,"stage":"reference","protocol_version":3})");
    KF_VERIFY_OK(r);
    QCOMPARE(r->at("permille").get<int>(), 250);
}

void TestSupervisor::toLineIsOneLine()
{
    const std::string line = protocol::toLine({{"type", "verify"}, {"text", "two\nlines\r and \xff invalid UTF-8"}});
    QCOMPARE(std::count(line.begin(), line.end(), '\n'), 1);
    QCOMPARE(line.back(), '\n');
    KF_VERIFY_OK(protocol::parseLine(line.substr(0, line.size() - 1)));
}

void TestSupervisor::errorMessageRoundTrips()
{
    Error e = Error::failed("launch softmax", "an illegal memory access was encountered", "check the indexing");
    json m = protocol::errorMessage(9, e, true);
    QCOMPARE(m["fatal"].get<bool>(), true);
    Error back = protocol::errorFromMessage(m);
    QCOMPARE(back.what, e.what);
    QCOMPARE(back.why, e.why);
    QCOMPARE(back.hint, e.hint);
    QVERIFY(!protocol::errorFromMessage(json{{"type", "error"}}).why.empty());
}

void TestSupervisor::missingRunnerNamesThePath()
{
    RunnerSupervisor::Options o;
    o.runnerPath = "/nonexistent/kf-test/kforge-runner";
    RunnerSupervisor sup(o);
    auto h = sup.hello();
    QVERIFY(!h.ok());
    QVERIFY2(qs(h.error().why).contains("/nonexistent/kf-test/kforge-runner does not exist"), qPrintable(qs(h.error().why)));
    QVERIFY(!h.error().hint.empty());
    auto r = sup.control({{"type", "ping"}});
    QVERIFY(!r.ok());
    QVERIFY(qs(r.error().why).contains("/nonexistent/kf-test/kforge-runner"));
    QCOMPARE(sup.pid(), -1);
}

// Programs that are not a working runner; none of these rows needs the real one.
void TestSupervisor::startFailures_data()
{
    QTest::addColumn<QString>("script");   // body of a shell script, or empty for `program`
    QTest::addColumn<QString>("program");
    QTest::addColumn<QString>("expected"); // the start of Error::why
    QTest::newRow("dies at once") << "" << "/bin/false" << "the runner exited unexpectedly (exit code 1) before it said hello";
    QTest::newRow("killed at start-up") << "kill -ABRT $$" << "" << "the runner crashed (SIGABRT) before it said hello";
    QTest::newRow("never says hello") << "" << "/bin/cat" << "the runner did not say hello within 0.5 s";
    QTest::newRow("a folder") << "" << "/tmp" << "the runner program /tmp is not an executable file";
    QTest::newRow("garbage first") << "echo 'Segmentation fault'; sleep 30" << ""
                                   << "the runner's first message is malformed (";
    QTest::newRow("wrong first message") << R"(echo '{"type":"pong","id":1,"protocol_version":3}'; sleep 30)" << ""
                                         << "the runner's first message is \"pong\", not \"hello\"";
    QTest::newRow("newer protocol") << R"(echo '{"type":"hello","protocol_version":4}'; sleep 30)" << ""
                                    << "the runner speaks protocol 4 and this KernelForge speaks protocol 3";
    QTest::newRow("protocol 1 runner") << R"(echo '{"type":"hello","protocol":1}'; sleep 30)" << ""
                                       << "the runner speaks protocol 1 and this KernelForge speaks protocol 3";
}

void TestSupervisor::startFailures()
{
    QFETCH(QString, script);
    QFETCH(QString, program);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    if (!script.isEmpty()) {
        program = dir.filePath("fake-runner");
        QFile f(program);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(("#!/bin/sh\n" + script + "\n").toUtf8());
        f.close();
        QVERIFY(f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));
    }
    RunnerSupervisor::Options o;
    o.runnerPath = program.toStdString();
    o.startTimeoutMs = 500;
    RunnerSupervisor sup(o);
    QElapsedTimer timer;
    timer.start();
    auto h = sup.hello();
    QVERIFY(!h.ok());
    QVERIFY2(qs(h.error().why).startsWith(expected), qPrintable(qs(h.error().message())));
    QCOMPARE(h.error().what, std::string("start the runner"));
    QVERIFY(!h.error().hint.empty());
    QCOMPARE(sup.pid(), -1); // nothing left running
    QVERIFY2(timer.elapsed() < 20000, "a failed start must not wait out the sleeping script");
}

// The workbench's endpoint check stops waiting for a runner that takes long to start (an srun job
// in the queue): the token is seen within the 200 ms the wait is sliced into, and nothing is left running.
void TestSupervisor::aStartCanBeCancelled()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString program = dir.filePath("slow-runner");
    QFile f(program);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("#!/bin/sh\nsleep 60\n");
    f.close();
    QVERIFY(f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));
    CancelToken cancel;
    RunnerSupervisor::Options o;
    o.runnerPath = program.toStdString();
    o.startTimeoutMs = 60000;
    o.startCancel = &cancel;
    RunnerSupervisor sup(o);
    QElapsedTimer timer;
    timer.start();
    cancel.cancel(); // before the start: the process is started, then the first slice of the wait sees it
    auto h = sup.hello();
    QVERIFY(!h.ok());
    QCOMPARE(h.error().kind, std::string(kRunnerStart));
    QVERIFY2(qs(h.error().why).startsWith("cancelled before the runner said hello"), qPrintable(qs(h.error().message())));
    QCOMPARE(sup.pid(), -1);
    QVERIFY2(timer.elapsed() < 20000, "the cancel did not stop the wait for the hello");
}

void TestSupervisor::helloReportsNoDeviceWithAReason()
{
    REQUIRE_RUNNER();
    RunnerSupervisor sup(hookOptions());
    auto h = sup.hello();
    KF_VERIFY_OK(h);
    // A hello of another protocol version would have been refused: this one is ours.
    if (h->device)
        QSKIP("this machine has a CUDA device; the row checks the runner's CPU mode");
    QVERIFY2(!h->deviceError.empty(), qPrintable(qs(h->toJson().dump())));
    QVERIFY(h->has("dump"));
    QVERIFY(sup.pid() > 0);
}

void TestSupervisor::pingWorks()
{
    REQUIRE_RUNNER();
    RunnerSupervisor sup(hookOptions());
    auto first = sup.control({{"type", "ping"}});
    QVERIFY2(first.ok(), qPrintable(why(first)));
    const pid_t pid = sup.pid();
    auto second = sup.control({{"type", "ping"}});
    QVERIFY2(second.ok(), qPrintable(why(second)));
    QCOMPARE(sup.pid(), pid); // kept warm between requests
    QCOMPARE(sup.restarts(), 0);
}

void TestSupervisor::verifyWithoutGpuIsNotFatal()
{
    REQUIRE_RUNNER();
    RunnerSupervisor sup(hookOptions());
    REQUIRE_CPU_MODE(sup);
    auto task = loadTask(std::string(KF_SOURCE_DIR) + "/resources/examples/vector_add");
    KF_VERIFY_OK(task);
    const json taskJson = taskToJson(*task);
    // A complete request, so the only thing wrong with it is the missing GPU.
    json req = {{"type", "verify"},
                {"task", taskJson},
                {"task_dir", task->directory.string()},
                {"candidate", "naive.cu"},
                {"cubin", base64Encode("not a cubin: the runner must refuse before loading it")},
                {"lowered_names", {{"vector_add", "vector_add"}}},
                {"arch", "sm_90"},
                {"source_hash", hashHex("x")},
                {"task_hash", hashHex(taskJson.dump())},
                {"compile_options", {"--gpu-architecture=sm_90"}},
                {"seeds", {"0x1", "0x2", "0x3"}},
                {"trials", 3},
                {"shapes", "tests"},
                {"launch_timeout_ms", 10000}};
    const pid_t pid = sup.pid();
    auto typed = protocol::RunRequest::fromJson(req);
    KF_VERIFY_OK(typed);
    auto r = sup.request(typed.value());
    QVERIFY(!r.ok());
    const QString w = qs(r.error().why);
    QVERIFY2(w.contains("GPU", Qt::CaseInsensitive) || w.contains("CUDA", Qt::CaseInsensitive), qPrintable(w));
    QVERIFY2(!w.contains("restarted"), qPrintable(w));
    QCOMPARE(sup.pid(), pid); // a non-fatal error keeps the runner
    QCOMPARE(sup.restarts(), 0);
    auto ping = sup.control({{"type", "ping"}});
    QVERIFY2(ping.ok(), qPrintable(why(ping)));
    QCOMPARE(sup.pid(), pid);
}

void TestSupervisor::crashNamesTheSignalAndRestarts()
{
    REQUIRE_RUNNER();
    RunnerSupervisor sup(hookOptions());
    KF_VERIFY_OK(sup.hello());
    const pid_t before = sup.pid();
    auto r = sup.control({{"type", "test_crash"}});
    QVERIFY(!r.ok());
    const QString w = qs(r.error().why);
    QVERIFY2(w.startsWith("the runner crashed (SIGSEGV) "), qPrintable(w));
    QVERIFY2(w.endsWith("; it was restarted."), qPrintable(w));
    QVERIFY(!processExists(before)); // reaped: no zombie left behind
    auto ping = sup.control({{"type", "ping"}});
    QVERIFY2(ping.ok(), qPrintable(why(ping)));
    QVERIFY(sup.pid() > 0);
    QVERIFY(sup.pid() != before);
    QCOMPARE(sup.restarts(), 1);
}

void TestSupervisor::hangTripsTheWatchdog()
{
    REQUIRE_RUNNER();
    RunnerSupervisor sup(hookOptions(120000));
    KF_VERIFY_OK(sup.hello());
    const pid_t before = sup.pid();
    QElapsedTimer timer;
    timer.start();
    auto r = sup.control({{"type", "test_hang"}, {"timeout_ms", 300}});
    const qint64 elapsed = timer.elapsed();
    QVERIFY(!r.ok());
    const QString w = qs(r.error().why);
    QVERIFY2(w.startsWith("the candidate did not finish within 0.3 s in "), qPrintable(w));
    QVERIFY2(w.endsWith(" — an infinite loop or a deadlock? The runner was restarted."), qPrintable(w));
    QVERIFY(!r.error().hint.empty());
    // Only that it did not sit out the idle timeout (120 s); the bound is generous for slow CI.
    QVERIFY2(elapsed < 30000, qPrintable(QString("took %1 ms").arg(elapsed)));
    QVERIFY(!processExists(before));
    auto ping = sup.control({{"type", "ping"}});
    QVERIFY2(ping.ok(), qPrintable(why(ping)));
    QCOMPARE(sup.restarts(), 1);
}

void TestSupervisor::idleTimeoutGuardsEverything()
{
    REQUIRE_RUNNER();
    // The launch's own budget is far away; the idle timeout (1 s) must still end it.
    RunnerSupervisor sup(hookOptions(1000));
    KF_VERIFY_OK(sup.hello());
    QElapsedTimer timer;
    timer.start();
    auto r = sup.control({{"type", "test_hang"}, {"timeout_ms", 600000}});
    QVERIFY(!r.ok());
    const QString w = qs(r.error().why);
    QVERIFY2(w.startsWith("the runner sent nothing for 1 s during "), qPrintable(w));
    QVERIFY2(w.endsWith(" and was presumed hung; it was restarted."), qPrintable(w));
    QVERIFY2(timer.elapsed() < 60000, qPrintable(QString("took %1 ms").arg(timer.elapsed())));
    auto ping = sup.control({{"type", "ping"}});
    QVERIFY2(ping.ok(), qPrintable(why(ping)));
    QCOMPARE(sup.restarts(), 1);
}

// Issue 23: a main thread stuck in a driver call while the heartbeat thread still beats is found
// by the stuck timeout, not at the idle timeout.
void TestSupervisor::stuckMainThreadIsFoundDespiteHeartbeats()
{
    REQUIRE_RUNNER();
    RunnerSupervisor::Options o = hookOptions();
    o.stuckTimeoutMs = 1500;
    RunnerSupervisor sup(o);
    KF_VERIFY_OK(sup.hello());
    const pid_t before = sup.pid();
    QElapsedTimer timer;
    timer.start();
    auto r = sup.control({{"type", "test_stuck"}});
    QVERIFY(!r.ok());
    const QString w = qs(r.error().why);
    QVERIFY2(w.startsWith("the runner's main thread did no work for 1.5 s "), qPrintable(w));
    QVERIFY2(w.contains("while its process kept sending heartbeats"), qPrintable(w));
    QVERIFY2(timer.elapsed() < 30000, qPrintable(QString("took %1 ms").arg(timer.elapsed())));
    QVERIFY(!processExists(before));
    auto ping = sup.control({{"type", "ping"}});
    QVERIFY2(ping.ok(), qPrintable(why(ping)));
    QCOMPARE(sup.restarts(), 1);
}

void TestSupervisor::fatalErrorRestarts()
{
    REQUIRE_RUNNER();
    RunnerSupervisor sup(hookOptions());
    KF_VERIFY_OK(sup.hello());
    const pid_t before = sup.pid();
    auto r = sup.control({{"type", "test_fatal"}});
    QVERIFY(!r.ok());
    const QString w = qs(r.error().why);
    QVERIFY2(w.endsWith(" The CUDA context was lost; the runner was restarted."), qPrintable(w));
    QVERIFY2(!w.startsWith(" The CUDA context"), "the runner's own reason comes first");
    QVERIFY(!processExists(before));
    auto ping = sup.control({{"type", "ping"}});
    QVERIFY2(ping.ok(), qPrintable(why(ping)));
    QVERIFY(sup.pid() != before);
    QCOMPARE(sup.restarts(), 1);
}

void TestSupervisor::garbageIsAProtocolError()
{
    REQUIRE_RUNNER();
    RunnerSupervisor sup(hookOptions());
    KF_VERIFY_OK(sup.hello());
    const pid_t before = sup.pid();
    auto r = sup.control({{"type", "test_garbage"}});
    QVERIFY(!r.ok());
    const QString w = qs(r.error().why);
    QVERIFY2(w.startsWith("the runner sent a malformed message ("), qPrintable(w));
    QVERIFY2(w.endsWith("; it was restarted."), qPrintable(w));
    QVERIFY(!processExists(before));
    auto ping = sup.control({{"type", "ping"}});
    QVERIFY2(ping.ok(), qPrintable(why(ping)));
    QCOMPARE(sup.restarts(), 1);
}

void TestSupervisor::cancellationFromAnotherThread()
{
    REQUIRE_RUNNER();
    RunnerSupervisor sup(hookOptions(120000));
    KF_VERIFY_OK(sup.hello());
    CancelToken token;
    std::promise<void> launched;
    // The canceller waits for the hang to begin, as a user's Cancel button would.
    std::thread canceller([&token, f = launched.get_future()]() mutable {
        f.wait();
        token.cancel();
    });
    bool signalled = false;
    QElapsedTimer timer;
    timer.start();
    auto r = sup.control({{"type", "test_hang"}, {"timeout_ms", 600000}},
                         [&](const protocol::Event& e) {
                             if (e.kind == protocol::Event::Kind::LaunchBegin && !signalled) {
                                 signalled = true;
                                 launched.set_value();
                             }
                         },
                         &token);
    if (!signalled)
        launched.set_value(); // never leave the thread waiting, even when the row fails
    canceller.join();
    QVERIFY(signalled);
    QVERIFY(!r.ok());
    QCOMPARE(qs(r.error().why), QString("cancelled"));
    QVERIFY2(timer.elapsed() < 30000, qPrintable(QString("took %1 ms").arg(timer.elapsed())));
    auto ping = sup.control({{"type", "ping"}});
    QVERIFY2(ping.ok(), qPrintable(why(ping)));
}

void TestSupervisor::stopLeavesNoProcess()
{
    REQUIRE_RUNNER();
    pid_t pid = -1;
    {
        RunnerSupervisor sup(hookOptions());
        KF_VERIFY_OK(sup.hello());
        pid = sup.pid();
        QVERIFY(processExists(pid));
    }
    QVERIFY2(!processExists(pid), "the destructor must stop and reap the runner");
}

// A crashed runner's child still holds the output pipe open, so no EOF ever comes: the death
// must be noticed anyway, and the child must go with the runner's process group.
void TestSupervisor::crashTakesTheWholeProcessGroup()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString program = dir.filePath("fake-runner");
    const QString childPidFile = dir.filePath("child.pid");
    QFile f(program);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QString("#!/bin/sh\n"
                    "sleep 300 &\n"
                    "echo $! > '%1'\n"
                    "echo '{\"type\":\"hello\",\"protocol_version\":3,\"device\":null,\"device_error\":\"fake\"}'\n"
                    "read line\n"
                    "kill -SEGV $$\n")
                .arg(childPidFile)
                .toUtf8());
    f.close();
    QVERIFY(f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));

    RunnerSupervisor::Options o;
    o.runnerPath = program.toStdString();
    RunnerSupervisor sup(o);
    KF_VERIFY_OK(sup.hello());
    QFile pidFile(childPidFile);
    QTRY_VERIFY(pidFile.exists() && pidFile.size() > 0);
    QVERIFY(pidFile.open(QIODevice::ReadOnly));
    const pid_t child = static_cast<pid_t>(pidFile.readAll().trimmed().toInt());
    QVERIFY(processRunning(child));

    QElapsedTimer timer;
    timer.start();
    auto r = sup.control({{"type", "ping"}});
    QVERIFY(!r.ok());
    QVERIFY2(qs(r.error().why).startsWith("the runner crashed (SIGSEGV) while handling the ping request"), qPrintable(qs(r.error().why)));
    QVERIFY2(timer.elapsed() < 20000, qPrintable(QString("took %1 ms").arg(timer.elapsed())));
    QTRY_VERIFY_WITH_TIMEOUT(!processRunning(child), 10000);
}

QTEST_GUILESS_MAIN(TestSupervisor)
#include "tst_supervisor.moc"
