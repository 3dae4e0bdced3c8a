#include "engine/core/Process.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <algorithm>
#include <string_view>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

#ifndef KF_CUDA_TOOLKIT_ROOT
#define KF_CUDA_TOOLKIT_ROOT "/usr/local/cuda"
#endif

namespace kf {
namespace {

void closeFd(int& fd)
{
    if (fd >= 0)
        ::close(fd);
    fd = -1;
}

// `fd` as the child's descriptor `target` (kept open across exec).
void placeFd(int fd, int target)
{
    if (fd == target)
        ::fcntl(fd, F_SETFD, 0);
    else
        ::dup2(fd, target);
}

struct ChildSetup {
    const char* file;
    char* const* argv;
    char* const* envp;
    const char* cwd;          // null: stay
    int out, err, fail;       // write ends: stdout, stderr, and where an exec failure's errno goes
    std::uint64_t dataBytes, cpuSeconds;
    pid_t parent;
};

// Between fork and exec, in a copy of a process that may have had other threads: only
// async-signal-safe calls, nothing that allocates.
[[noreturn]] void execChild(const ChildSetup& c)
{
    ::setsid();   // a session and group of its own: the group is killed whole at the end
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; ++s)
        if (s != SIGKILL && s != SIGSTOP)
            ::sigaction(s, &dfl, nullptr);
    if (c.dataBytes) {
        const rlimit r{c.dataBytes, c.dataBytes};
        ::setrlimit(RLIMIT_DATA, &r);
    }
    if (c.cpuSeconds) {
        const rlimit r{c.cpuSeconds, c.cpuSeconds + 5};   // SIGXCPU first, SIGKILL 5 s later
        ::setrlimit(RLIMIT_CPU, &r);
    }
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);   // kforge killed: the program goes too
    if (::getppid() != c.parent)
        ::_exit(127);
    const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    placeFd(devnull, 0);
    placeFd(c.out, 1);
    placeFd(c.err, 2);
    int e = 0;
    if (c.cwd && ::chdir(c.cwd) != 0) {
        e = errno;
    } else {
#ifdef SYS_close_range
        // Descriptors the caller left inheritable (another thread's files) stay here.
        if (c.fail > 3)
            ::syscall(SYS_close_range, 3u, unsigned(c.fail - 1), 0u);
        ::syscall(SYS_close_range, unsigned(c.fail + 1), ~0u, 0u);
#endif
        ::execvpe(c.file, c.argv, c.envp);
        e = errno;
    }
    [[maybe_unused]] auto w = ::write(c.fail, &e, sizeof e);
    ::_exit(127);
}

// This process's environment with `env`'s NAME=value entries in place of (or beside) its own.
std::vector<char*> environmentFor(const std::vector<std::string>& env, bool only)
{
    std::vector<char*> envp;
    for (char** e = environ; !only && e && *e; ++e) {
        const std::string_view entry(*e);
        const bool replaced = std::any_of(env.begin(), env.end(), [&](const std::string& x) {
            const auto eq = x.find('=');
            return eq != std::string::npos && entry.substr(0, eq + 1) == std::string_view(x).substr(0, eq + 1);
        });
        if (!replaced)
            envp.push_back(*e);
    }
    for (const auto& x : env)
        envp.push_back(const_cast<char*>(x.c_str()));
    envp.push_back(nullptr);
    return envp;
}

// Reads what is there now from each open pipe (non-blocking), at most `rounds` times 64 KiB each:
// a grandchild that writes on and on cannot keep the caller here.
void drain(int (&fds)[2], ProcessOutput& result, int rounds, std::size_t keep)
{
    char buf[65536];
    for (int i = 0; i < 2; ++i) {
        std::string& to = i == 0 ? result.out : result.err;
        for (int n = 0; fds[i] >= 0 && n < rounds; ++n) {
            const ssize_t r = ::read(fds[i], buf, sizeof buf);
            if (r > 0) {
                to.append(buf, static_cast<size_t>(r));
                if (keep && to.size() > 2 * keep)
                    to.erase(0, to.size() - keep);
                continue;
            }
            if (r < 0 && errno == EINTR)
                continue;
            if (r == 0 || errno != EAGAIN)
                closeFd(fds[i]);
            break;
        }
    }
}

bool hasExited(pid_t pid)
{
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

// Starts argv[0] as execChild sets it up; `fds` receive the read ends of its stdout and stderr.
Result<pid_t> spawnChild(const std::vector<std::string>& argv, const ProcessOptions& o, int (&fds)[2])
{
    int out[2] = {-1, -1}, err[2] = {-1, -1}, fail[2] = {-1, -1};
    auto closeAll = [&] {
        for (int* p : {out, err, fail})
            closeFd(p[0]), closeFd(p[1]);
    };
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 || ::pipe2(fail, O_CLOEXEC) != 0) {
        const int e = errno;
        closeAll();
        return Error::failed("run " + argv[0], std::strerror(e));
    }
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const std::vector<char*> envp = environmentFor(o.env, o.onlyEnv);
    const ChildSetup setup{argv[0].c_str(), args.data(), envp.data(), o.cwd.empty() ? nullptr : o.cwd.c_str(),
                           out[1], err[1], fail[1], o.dataBytes, o.cpuSeconds, ::getpid()};
    const pid_t pid = ::fork();
    if (pid == 0)
        execChild(setup);
    const int forkErrno = errno;
    closeFd(out[1]);
    closeFd(err[1]);
    closeFd(fail[1]);
    int execErrno = 0;
    ssize_t got = -1;
    while (pid > 0 && (got = ::read(fail[0], &execErrno, sizeof execErrno)) < 0 && errno == EINTR) {
    }
    if (pid < 0 || got == sizeof execErrno) {
        const int e = pid < 0 ? forkErrno : execErrno;
        int status = 0;
        while (pid > 0 && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        closeAll();
        return Error::failed("run " + argv[0], std::strerror(e), "check that the program exists and is executable");
    }
    closeFd(fail[0]);
    fds[0] = out[0];
    fds[1] = err[0];
    for (int fd : fds)
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    return pid;
}

} // namespace

Result<ProcessOutput> runProcess(const std::vector<std::string>& argv, int timeoutMs, const std::vector<std::string>& env,
                                 const std::function<bool()>& stop, const std::string& cwd)
{
    ProcessOptions o;
    o.timeoutMs = timeoutMs;
    o.env = env;
    o.stop = stop;
    o.cwd = cwd;
    return runProcess(argv, o);
}

Result<ProcessOutput> runProcess(const std::vector<std::string>& argv, const ProcessOptions& o)
{
    if (argv.empty())
        return Error::failed("run a process", "no program given");
    int fds[2] = {-1, -1};
    auto spawned = spawnChild(argv, o, fds);
    if (!spawned)
        return spawned.error();
    const pid_t pid = *spawned;
    ProcessOutput result;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(o.timeoutMs);
    bool timedOut = false, stopped = false;
    for (;;) {
        if (hasExited(pid)) {   // not reaped yet: its group cannot be reused before it is killed below
            drain(fds, result, 16, o.keepBytes);
            break;
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) {
            timedOut = true;
            break;
        }
        if (o.stop && o.stop()) {
            stopped = true;
            break;
        }
        pollfd p[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
        if (::poll(p, 2, static_cast<int>(std::min<long long>(left, 100))) > 0)
            drain(fds, result, 1, o.keepBytes);
    }
    ::kill(-pid, SIGKILL);   // the whole group: workers and daemons the program started go with it
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    closeFd(fds[0]);
    closeFd(fds[1]);
    for (std::string* s : {&result.out, &result.err})
        if (o.keepBytes && s->size() > o.keepBytes)
            s->erase(0, s->size() - o.keepBytes);
    if (stopped)
        return Error::failed("run " + argv[0], "it was stopped (cancelled)");
    if (timedOut)
        return Error::failed("run " + argv[0], "it did not finish within " + std::to_string(o.timeoutMs / 1000) + " s and was stopped");
    result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return result;
}

SpawnAttributes::SpawnAttributes(std::initializer_list<int> defaulted)
{
    posix_spawnattr_init(&m_attr);
    posix_spawnattr_setpgroup(&m_attr, 0);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (int s : defaulted)
        sigaddset(&defaults, s);
    posix_spawnattr_setsigmask(&m_attr, &none);
    posix_spawnattr_setsigdefault(&m_attr, &defaults);
    posix_spawnattr_setflags(&m_attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
}

SpawnAttributes::~SpawnAttributes()
{
    posix_spawnattr_destroy(&m_attr);
}

std::string signalName(int signal)
{
    const char* abbrev = ::sigabbrev_np(signal);
    return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

std::string findTool(const std::string& name, const std::string& envVar)
{
    namespace fs = std::filesystem;
    auto executable = [](const fs::path& p) { return ::access(p.c_str(), X_OK) == 0 && fs::is_regular_file(p); };
    if (const char* v = std::getenv(envVar.c_str()); v && *v && executable(v))
        return v;
    if (const char* path = std::getenv("PATH")) {
        std::string p = path;
        size_t start = 0;
        while (start <= p.size()) {
            size_t end = p.find(':', start);
            if (end == std::string::npos)
                end = p.size();
            fs::path cand = fs::path(p.substr(start, end - start)) / name;
            if (end > start && executable(cand))
                return cand.string();
            start = end + 1;
        }
    }
    std::vector<fs::path> dirs;
    for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
        if (const char* v = std::getenv(env); v && *v)
            dirs.push_back(fs::path(v) / "bin");
    dirs.push_back(fs::path(KF_CUDA_TOOLKIT_ROOT) / "bin");
    dirs.push_back("/usr/local/cuda/bin");
    for (const auto& d : dirs)
        if (executable(d / name))
            return (d / name).string();
    return {};
}

} // namespace kf
