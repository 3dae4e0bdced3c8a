#include "engine/runner/Supervisor.h"

#include "engine/runner/ChildIo.h"
#include "engine/core/InstallLayout.h"
#include "engine/core/Process.h"
#include "engine/runner/SupervisorInternal.h"
#include "engine/protocol/Messages.h"
#include "engine/protocol/Protocol.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <spawn.h>
#include <string_view>
#include <unistd.h>

extern char** environ;

// Starting the runner: where it is, the argv of an endpoint, the spawn, and the wait for its
// hello (a remote shell's banner tolerated, a queued job's stderr relayed).

namespace fs = std::filesystem;
using nlohmann::json;

namespace kf {

using namespace childio;
using namespace supervisor_detail;

std::string RunnerSupervisor::defaultRunnerPath()
{
    if (const char* env = std::getenv("KF_RUNNER"); env && *env)
        return env;
    if (const fs::path exeDir = executableDir(); !exeDir.empty()) {
        // Installed: <prefix>/libexec/kernelforge (its launcher, docs/packaging.md). Else beside
        // this program (kforge), or where a build tree puts it when this program is the workbench
        // (build/<preset>/app/gui next to app/cli).
        const fs::path installed = installedPath(InstallDir::Libexec, kRunnerName, "", exeDir);
        if (!installed.empty())
            return installed.string(); // start() says so when it is missing: no other build's runner
        for (const fs::path& dir : {exeDir, exeDir / ".." / "cli", exeDir / ".." / ".." / "app" / "cli"}) {
            const fs::path candidate = dir / kRunnerName;
            if (::access(candidate.c_str(), X_OK) == 0)
                return candidate.lexically_normal().string();
        }
    }
    if (std::string onPath = findOnPath(kRunnerName); !onPath.empty())
        return onPath;
    return kRunnerName; // start() turns this into "not found next to … nor on PATH"
}

RunnerSupervisor::Options RunnerSupervisor::forEndpoint(const Endpoint& endpoint, const std::string& runnerPath)
{
    Options o;
    const std::string local = runnerPath.empty() ? defaultRunnerPath() : runnerPath;
    o.runnerPath = endpoint.kind == Endpoint::Kind::Local && !endpoint.runner.empty() ? endpoint.runner : local;
    if (endpoint.kind != Endpoint::Kind::Local)
        o.command = endpoint.argv(local);
    o.extraEnv = endpoint.childEnv();
    o.endpointName = endpoint.name;
    o.endpointDescription = endpoint.describe();
    o.remote = endpoint.remote();
    o.killGraceMs = endpoint.remote() ? 2000 : 0;
    o.launchLatencyMs = endpoint.launchLatencyMs;
    o.startTimeoutMs = endpoint.startTimeoutS * 1000;
    o.idleTimeoutMs = endpoint.idleTimeoutS * 1000;
    o.heartbeatTimeoutMs = endpoint.heartbeatTimeoutS * 1000;
    return o;
}

namespace {

/// The environment a child gets: ours, with `extra` overriding variables of the same name.
std::vector<std::string> childEnvironment(const std::vector<std::string>& extra)
{
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        std::string_view kv(*e);
        std::string_view name = kv.substr(0, kv.find('='));
        bool overridden = std::any_of(extra.begin(), extra.end(), [&](const std::string& x) {
            return std::string_view(x).substr(0, x.find('=')) == name;
        });
        if (!overridden)
            env.emplace_back(kv);
    }
    env.insert(env.end(), extra.begin(), extra.end());
    return env;
}

/// Our ends of a spawned child's stdin, stdout and stderr (non-blocking).
struct Child {
    pid_t pid = -1;
    int in = -1, out = -1, err = -1;
};

/// Spawns `path` with `args` and `env` in its own process group (the watchdog's SIGKILL then also
/// takes anything it started), signals at their defaults, on three pipes. The error's why and
/// hint only (no hint: the caller's).
Result<Child> spawnChild(const std::string& path, const std::string& program, std::vector<std::string> args,
                         std::vector<std::string> env)
{
    int in[2], out[2], err[2];
    if (!makePipe(in))
        return Error::failed("", std::string("could not create a pipe: ") + std::strerror(errno), "the process may be out of file descriptors");
    if (!makePipe(out)) {
        const int saved = errno;
        ::close(in[0]);
        ::close(in[1]);
        return Error::failed("", std::string("could not create a pipe: ") + std::strerror(saved), "the process may be out of file descriptors");
    }
    if (!makePipe(err)) {
        const int saved = errno;
        for (int fd : {in[0], in[1], out[0], out[1]})
            ::close(fd);
        return Error::failed("", std::string("could not create a pipe: ") + std::strerror(saved), "the process may be out of file descriptors");
    }
    std::vector<char*> envp;
    for (auto& s : env)
        envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<char*> argv;
    for (std::string& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    const SpawnAttributes attr({SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM});
    Child c;
    int rc = ::posix_spawn(&c.pid, path.c_str(), &fa, attr.get(), argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    if (rc != 0) {
        ::close(in[1]);
        ::close(out[0]);
        ::close(err[0]);
        return Error::failed("", "could not start " + program + " " + path + ": " + std::strerror(rc));
    }
    for (int fd : {in[1], out[0], err[0]})
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    c.in = in[1];
    c.out = out[0];
    c.err = err[0];
    return c;
}

} // namespace

/// One start of the runner: where its program is, and the sentences its failures become.
struct RunnerSupervisor::Start {
    explicit Start(RunnerSupervisor& supervisor) : s(supervisor), wrapped(!s.m_options.command.empty())
    {
        args = wrapped ? s.m_options.command
                       : std::vector<std::string>{s.m_options.runnerPath.empty() ? defaultRunnerPath() : s.m_options.runnerPath};
        path = args.front();
        if (path.find('/') == std::string::npos)
            if (std::string onPath = findOnPath(path); !onPath.empty())
                path = onPath; // a bare name given by the caller means "on PATH", as in a shell
        program = wrapped ? "the endpoint's program" : "the runner program";
        hint = wrapped ? "install " + args.front() + " or correct the endpoint in runners.json (kforge runners list)"
                       : "build the kforge-runner target (it needs LibTorch), or point $KF_RUNNER or --runner at it";
    }

    Error fail(std::string why, std::string h = {}) const
    {
        if (wrapped && !s.m_options.endpointDescription.empty())
            why = "endpoint " + s.m_options.endpointDescription + ": " + why;
        return Error::failed("start the runner", std::move(why), h.empty() ? hint : std::move(h)).withKind(kRunnerStart);
    }
    std::optional<Error> missingProgram() const;
    Result<json> awaitHello();
    Error helloFailed(const Error& e);

    RunnerSupervisor& s;
    const bool wrapped;   ///< an endpoint's command (ssh, srun, a wrapper), not the runner itself
    std::vector<std::string> args;
    std::string path, program, hint;
};

/// The program is not found, not there or not executable; none when it can be spawned.
std::optional<Error> RunnerSupervisor::Start::missingProgram() const
{
    if (path.find('/') == std::string::npos) {
        std::string self;
        std::error_code ec;
        if (fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec)
            self = exe.parent_path().string();
        if (wrapped)
            return fail(program + " " + path + " was not found on PATH");
        return fail("the runner program " + path + " was not found (not next to this program" +
                    (self.empty() ? std::string() : " in " + self) + " and not on PATH)");
    }
    if (::access(path.c_str(), F_OK) != 0)
        return fail(program + " " + path + " does not exist");
    if (::access(path.c_str(), X_OK) != 0 || fs::is_directory(path))
        return fail(program + " " + path + " is not an executable file");
    return std::nullopt;
}

/// The runner's first message, within the start timeout: a remote shell's banner is tolerated,
/// a queued job's stderr relayed, a cancel honoured; the error says why there is none.
Result<json> RunnerSupervisor::Start::awaitHello()
{
    const auto deadline = after(s.m_options.startTimeoutMs);
    Result<json> first = Error::failed(std::string(kQuiet), "");
    std::string lastStartLog;
    int noiseLines = 0;
    std::size_t noiseBytes = 0;
    while (true) {
        first = s.readMessage(std::min(msUntil(deadline), 200));
        if (s.m_options.onStartLog) {
            const std::string line = lastLine(s.m_stderrTail);
            if (!line.empty() && line != lastStartLog)
                s.m_options.onStartLog(lastStartLog = line);
        }
        // A login shell on the far side may print a banner before the runner starts: up to 20
        // lines (4 KiB) of it are log, not protocol.
        if (!first && first.error().what == kMalformed && s.m_options.remote && noiseLines < kMaxNoiseLines &&
            noiseBytes + s.m_lastBadLine.size() <= kMaxNoiseBytes) {
            ++noiseLines;
            noiseBytes += s.m_lastBadLine.size();
            if (s.m_startWarnings.empty())
                s.m_startWarnings.push_back("the remote shell printed \"" + excerpt(s.m_lastBadLine) +
                                            "\" before the runner started; make ~/.bashrc quiet for non-interactive shells");
            continue;
        }
        if (first)
            return first;
        if (first.error().what != kQuiet || msUntil(deadline) <= 0)
            return helloFailed(first.error());
        if (s.m_options.startCancel && s.m_options.startCancel->cancelled()) {
            s.kill(); // SIGTERM first for a remote endpoint: srun gives the queued job back
            return fail("cancelled before the runner said hello", "start it again when you want it");
        }
    }
}

/// No hello: silence until the deadline, an exit, a version mismatch or a malformed line.
Error RunnerSupervisor::Start::helloFailed(const Error& e)
{
    if (e.what == kQuiet) {
        s.kill();
        return fail("the runner did not say hello within " + secondsText(s.m_options.startTimeoutMs) + " s",
                    withLastWords(wrapped ? "the host may be unreachable or the job still queued; raise start_timeout_s in "
                                            "runners.json if the scheduler is slow, or run the endpoint's command by hand"
                                          : "LibTorch and CUDA start-up can be slow the first time; if it hangs, run " + path +
                                                " by hand to see why",
                                  s.m_stderrTail));
    }
    if (e.what == kEof) {
        std::string how = s.describeExit();
        return fail("the runner " + how + " before it said hello",
                    withLastWords("run " + (wrapped ? std::string("the endpoint's command") : path) + " by hand to see why",
                                  s.m_stderrTail));
    }
    s.kill();
    if (e.what == kVersionMismatch)
        return fail(e.why, e.hint);
    return fail("the runner's first message is malformed (" + e.why + ")", withLastWords(kRebuildHint, s.m_stderrTail));
}

Result<void> RunnerSupervisor::start()
{
    if (m_pid > 0)
        return {};
    const bool isRestart = m_started;
    Start st(*this);
    if (auto missing = st.missingProgram())
        return *missing;
    auto child = spawnChild(st.path, st.program, st.args, childEnvironment(m_options.extraEnv));
    if (!child)
        return st.fail(child.error().why, child.error().hint);
    m_pid = child->pid;
    m_toRunner = child->in;
    m_fromRunner = child->out;
    m_errFromRunner = child->err;
    m_buffer.clear();
    m_stderrTail.clear();
    m_currentLaunch.clear();
    m_hello = protocol::Hello();
    m_startWarnings.clear();

    auto first = st.awaitHello();
    if (!first)
        return first.error();
    auto decoded = protocol::RunnerMessage::decode(first.value());
    if (!decoded || decoded->type != protocol::RunnerMessage::Type::Hello) {
        kill();
        return st.fail(decoded ? "the runner's first message is \"" + first.value().value("type", std::string()) + "\", not \"hello\""
                               : "the runner's hello is malformed (" + decoded.error().why + " at " + decoded.error().pointer + ")",
                       kRebuildHint);
    }
    m_hello = decoded->hello;
    if (isRestart)
        ++m_restarts;
    m_started = true;
    return {};
}

} // namespace kf
