// Community problems are code of outside origin (engine/core/Sandbox.h): a problem file that goes
// for the user's report signing key finds nothing, one that phones home has no network (in the
// sandbox), a child it forks does not hold the import and does not outlive it, its crash is
// blamed on it and not on the importer, -o is checked before its code runs, and `kforge import
// --timeout` stops it. Each row runs the real importer on a fixture of tests/data/import/hostile
// with the build's Python and torch; rows that need bubblewrap say why they are skipped without it.
#include "testutil.h"

#include "engine/agent/Import.h"
#include "engine/core/Files.h"
#include "engine/core/Sandbox.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>

using namespace kf;
using namespace kf::agent;
namespace fs = std::filesystem;

namespace {

const std::string kFixtures = std::string(KF_TEST_DATA_DIR) + "/import";

bool haveTorchPython() { return std::string(KF_TORCH_PYTHON).size() > 0; }

// tests/data/import/hostile/<name>.py with its @NAME@ placeholders filled, written into `dir`.
fs::path hostileProblem(const fs::path& dir, const std::string& name, const std::vector<std::pair<std::string, std::string>>& fill)
{
    auto text = readFileBytes(kFixtures + "/hostile/" + name + ".py");
    if (!text)
        qFatal("cannot read the fixture %s", name.c_str());
    for (const auto& [key, value] : fill)
        for (std::size_t at; (at = text->find("@" + key + "@")) != std::string::npos;)
            text->replace(at, key.size() + 2, value);
    const fs::path file = dir / (name + ".py");
    if (!writeFileAtomic(file, *text))
        qFatal("cannot write %s", file.c_str());
    return file;
}

// Processes whose command line names `needle` (the forked children of a problem in a test folder).
QStringList processesNaming(const std::string& needle)
{
    QStringList found;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
        const std::string pid = e.path().filename().string();
        if (pid.find_first_not_of("0123456789") != std::string::npos || pid == std::to_string(::getpid()))
            continue;
        auto cmd = readFileBytes(e.path() / "cmdline");
        if (cmd && cmd->find(needle) != std::string::npos)
            found << qs(pid);
    }
    return found;
}

// A listening socket on 127.0.0.1 (port chosen by the system); closed on destruction.
struct Listener {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int port = 0;
    Listener()
    {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 4) != 0 ||
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
            qFatal("cannot listen on 127.0.0.1");
        port = ntohs(a.sin_port);
    }
    ~Listener() { ::close(fd); }
    Listener(const Listener&) = delete;
    Listener& operator=(const Listener&) = delete;
    bool connectionWaiting() const
    {
        pollfd p{fd, POLLIN, 0};
        return ::poll(&p, 1, 0) > 0;
    }
};

} // namespace

class TestImportConfined : public QObject {
    Q_OBJECT
private slots:
    void problemCannotReadTheKey_data();
    void problemCannotReadTheKey();
    void problemHasNoNetwork();
    void daemonDoesNotHoldTheImport_data();
    void daemonDoesNotHoldTheImport();
    void crashIsTheProblemsFault();
    void outputCheckedBeforeTheProblemRuns_data();
    void outputCheckedBeforeTheProblemRuns();
    void timeoutCanBeSet();
};

namespace {

// Sets environment variables for one test and puts the old values back.
struct EnvGuard {
    std::vector<std::pair<QByteArray, std::optional<QByteArray>>> saved;
    void set(const char* name, const std::string& value)
    {
        saved.emplace_back(name, qEnvironmentVariableIsSet(name) ? std::optional(qgetenv(name)) : std::nullopt);
        qputenv(name, QByteArray::fromStdString(value));
    }
    ~EnvGuard()
    {
        for (auto it = saved.rbegin(); it != saved.rend(); ++it)
            it->second ? (void)qputenv(it->first.constData(), *it->second) : (void)qunsetenv(it->first.constData());
    }
};

bool skipWithoutSandbox(bool sandbox)
{
    return sandbox && !sandboxSupport().available;
}

} // namespace

void TestImportConfined::problemCannotReadTheKey_data()
{
    QTest::addColumn<bool>("sandbox");
    QTest::newRow("in the sandbox: $XDG_CONFIG_HOME, ~/.config, $KF_REPORT_KEY and the key's own path") << true;
    QTest::newRow("without the sandbox: $XDG_CONFIG_HOME, ~/.config and $KF_REPORT_KEY") << false;
}

void TestImportConfined::problemCannotReadTheKey()
{
    if (!haveTorchPython())
        QSKIP("no Python that imports torch was found at configure time: the importer cannot run here");
    QFETCH(bool, sandbox);
    if (skipWithoutSandbox(sandbox))
        QSKIP(("no sandbox here: " + sandboxSupport().why).c_str());
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    const std::string key = "41e4f0c0ffee" + std::string(52, 'a');
    const fs::path xdgKey = dir / "config" / "KernelForge" / "report-key", homeKey = dir / "home" / ".config" / "KernelForge" / "report-key";
    for (const fs::path& f : {xdgKey, homeKey}) {
        KF_VERIFY_OK(writeFileAtomic(f, key + "\n"));
        fs::permissions(f, fs::perms::owner_read | fs::perms::owner_write);
    }
    EnvGuard env;
    env.set("HOME", (dir / "home").string());
    env.set("XDG_CONFIG_HOME", (dir / "config").string());
    env.set("KF_REPORT_KEY", xdgKey.string());
    fs::create_directories(dir / "problem");
    const fs::path leak = dir / "leak.txt";
    const fs::path problem =
        hostileProblem(dir / "problem", "reads_key", {{"LEAK_FILE", leak.string()}, {"KEY_FILE", sandbox ? xdgKey.string() : ""}});
    ImportOptions o;
    o.python = KF_TORCH_PYTHON;
    o.sandbox = sandbox;
    o.out = dir / "out";
    auto r = importKernelBench(problem, o);
    QVERIFY2(!r, "the probe raises, so the import is refused");
    const QString message = qs(r.error().message());
    QVERIFY2(message.contains("probe: {"), qPrintable(message));   // its code ran and said what it read
    QVERIFY2(!message.contains(qs(key)), qPrintable(message));
    for (const char* place : {"'xdg': 'unreadable", "'home': 'unreadable", "'env': 'unreadable"})
        QVERIFY2(message.contains(place), qPrintable(message));
    if (auto written = readFileBytes(leak); written)
        QVERIFY2(written->find(key) == std::string::npos, written->c_str());
    QVERIFY(!fs::exists(o.out));
}

void TestImportConfined::problemHasNoNetwork()
{
    if (!haveTorchPython())
        QSKIP("no Python that imports torch was found at configure time: the importer cannot run here");
    if (skipWithoutSandbox(true))
        QSKIP(("without the sandbox the problem's code has the network: " + sandboxSupport().why).c_str());
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    Listener listener;
    const fs::path problem = hostileProblem(dir, "connects", {{"PORT", std::to_string(listener.port)}});
    ImportOptions o;
    o.python = KF_TORCH_PYTHON;
    o.out = dir / "out";
    auto r = importKernelBench(problem, o);
    QVERIFY(!r);
    QVERIFY2(qs(r.error().message()).contains("probe: no connection"), r.error().message().c_str());
    QVERIFY2(!listener.connectionWaiting(), "the problem's code connected to 127.0.0.1");
}

void TestImportConfined::daemonDoesNotHoldTheImport_data()
{
    QTest::addColumn<bool>("sandbox");
    QTest::newRow("in the sandbox") << true;
    QTest::newRow("without the sandbox") << false;
}

void TestImportConfined::daemonDoesNotHoldTheImport()
{
    if (!haveTorchPython())
        QSKIP("no Python that imports torch was found at configure time: the importer cannot run here");
    QFETCH(bool, sandbox);
    if (skipWithoutSandbox(sandbox))
        QSKIP(("no sandbox here: " + sandboxSupport().why).c_str());
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    const fs::path problem = hostileProblem(dir, "daemon", {});
    ImportOptions o;
    o.python = KF_TORCH_PYTHON;
    o.sandbox = sandbox;
    o.out = dir / "out";
    o.timeoutMs = 90000;   // the bound: the child sleeps 300 s, so a held import fails here
    QElapsedTimer clock;
    clock.start();
    auto r = importKernelBench(problem, o);
    KF_VERIFY_OK(r);
    QVERIFY2(clock.elapsed() < 60000, qPrintable(QString("the import took %1 ms").arg(clock.elapsed())));
    QVERIFY(fs::is_regular_file(r->taskDir / "task.json"));
    // Without the sandbox the import says so, once, as its first note.
    const auto unconfined = std::count_if(r->notes.begin(), r->notes.end(),
                                          [](const std::string& n) { return n.rfind("no sandbox: ", 0) == 0; });
    QCOMPARE(int(unconfined), sandbox ? 0 : 1);
    if (!sandbox)
        QCOMPARE(qs(r->notes.front()), qs("no sandbox: it was turned off; the problem's code runs with a private home and a "
                                          "scrubbed environment, but can read your files"));
    // The forked child went with the importer (its command line names the problem's path).
    QTRY_VERIFY2_WITH_TIMEOUT(processesNaming(problem.string()).isEmpty(), qPrintable(processesNaming(problem.string()).join(' ')),
                              10000);
}

void TestImportConfined::crashIsTheProblemsFault()
{
    if (!haveTorchPython())
        QSKIP("no Python that imports torch was found at configure time: the importer cannot run here");
    QTemporaryDir tmp;
    ImportOptions o;
    o.python = KF_TORCH_PYTHON;
    o.out = fs::path(tmp.path().toStdString()) / "out";
    auto r = importKernelBench(kFixtures + "/hostile/segfault.py", o);
    QVERIFY(!r);
    const QString message = qs(r.error().message());
    QVERIFY2(message.contains("the problem's code crashed (SIGSEGV) while calling get_inputs()"), qPrintable(message));
    QVERIFY2(message.contains("this is the problem's fault, not KernelForge's"), qPrintable(message));
    QVERIFY2(!message.contains("importer's fault"), qPrintable(message));
}

void TestImportConfined::outputCheckedBeforeTheProblemRuns_data()
{
    QTest::addColumn<QString>("out");     // under the test's folder, which holds full/file.txt and a file
    QTest::addColumn<QString>("error");
    QTest::newRow("-o a folder with files") << "full" << "full already exists and is not empty";
    QTest::newRow("-o a file") << "a-file" << "a-file already exists and is not empty";
    QTest::newRow("-o inside a file") << "a-file/task" << "a-file is not a folder";
}

void TestImportConfined::outputCheckedBeforeTheProblemRuns()
{
    QFETCH(QString, out);
    QFETCH(QString, error);
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    KF_VERIFY_OK(writeFileAtomic(dir / "full" / "file.txt", "x"));
    KF_VERIFY_OK(writeFileAtomic(dir / "a-file", "x"));
    // A "Python" that leaves a mark when it runs: it must not be started at all.
    const fs::path python = dir / "python";
    KF_VERIFY_OK(writeFileAtomic(python, "#!/bin/sh\ntouch '" + (dir / "ran").string() + "'\nexit 0\n"));
    fs::permissions(python, fs::perms::owner_all);
    ImportOptions o;
    o.python = python.string();
    o.sandbox = false;   // the mark must be visible if it runs
    o.out = dir / out.toStdString();
    auto r = importKernelBench(kFixtures + "/kernelbench/row_sum.py", o);
    QVERIFY(!r);
    QVERIFY2(qs(r.error().message()).contains(error), r.error().message().c_str());
    QVERIFY2(!fs::exists(dir / "ran"), "the problem's code ran before -o was checked");
}

void TestImportConfined::timeoutCanBeSet()
{
    if (!haveTorchPython())
        QSKIP("no Python that imports torch was found at configure time: the importer cannot run here");
    QTemporaryDir tmp;
    QProcess kforge;
    kforge.start(KF_KFORGE_BIN, {"import", "kernelbench", qs(kFixtures + "/hostile/sleeps.py"), "--timeout", "3", "--python",
                                 KF_TORCH_PYTHON, "-o", tmp.path() + "/out"});
    QVERIFY2(kforge.waitForStarted(), qPrintable(QString(KF_KFORGE_BIN) + " does not start"));
    QVERIFY2(kforge.waitForFinished(60000), "kforge import --timeout 3 ran on for a minute");
    const QString err = QString::fromUtf8(kforge.readAllStandardError());
    QVERIFY2(kforge.exitCode() != 0, qPrintable(err));
    QVERIFY2(err.contains("did not finish within 3 s"), qPrintable(err));
    QVERIFY2(err.contains("--timeout SECONDS"), qPrintable(err));
}

QTEST_GUILESS_MAIN(TestImportConfined)
#include "tst_importconfined.moc"
