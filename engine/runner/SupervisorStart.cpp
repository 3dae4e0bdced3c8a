#include "engine/runner/Supervisor.h"

#include "engine/runner/ChildIo.h"
#include "engine/core/InstallLayout.h"
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

Result<void> RunnerSupervisor::start()
{
    if (m_pid > 0)
        return {};
    const bool isRestart = m_started;
    const bool wrapped = !m_options.command.empty();
    std::vector<std::string> args = wrapped ? m_options.command
                                            : std::vector<std::string>{m_options.runnerPath.empty() ? defaultRunnerPath() : m_options.runnerPath};
    std::string path = args.front();
    if (path.find('/') == std::string::npos)
        if (std::string onPath = findOnPath(path); !onPath.empty())
            path = onPath; // a bare name given by the caller means "on PATH", as in a shell
    const std::string program = wrapped ? "the endpoint's program" : "the runner program";
    const std::string hint = wrapped ? "install " + args.front() + " or correct the endpoint in runners.json (kforge runners list)"
                                     : "build the kforge-runner target (it needs LibTorch), or point $KF_RUNNER or --runner at it";
    auto fail = [&](std::string why, std::string h = {}) {
        if (wrapped && !m_options.endpointDescription.empty())
            why = "endpoint " + m_options.endpointDescription + ": " + why;
        return Error::failed("start the runner", std::move(why), h.empty() ? hint : std::move(h)).withKind(kRunnerStart);
    };

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

    int in[2], out[2], err[2];
    if (!makePipe(in))
        return fail(std::string("could not create a pipe: ") + std::strerror(errno), "the process may be out of file descriptors");
    if (!makePipe(out)) {
        ::close(in[0]);
        ::close(in[1]);
        return fail(std::string("could not create a pipe: ") + std::strerror(errno), "the process may be out of file descriptors");
    }
    if (!makePipe(err)) {
        for (int fd : {in[0], in[1], out[0], out[1]})
            ::close(fd);
        return fail(std::string("could not create a pipe: ") + std::strerror(errno), "the process may be out of file descriptors");
    }

    // Environment: ours, with extraEnv overriding variables of the same name.
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        std::string_view kv(*e);
        std::string_view name = kv.substr(0, kv.find('='));
        bool overridden = std::any_of(m_options.extraEnv.begin(), m_options.extraEnv.end(), [&](const std::string& x) {
            return std::string_view(x).substr(0, x.find('=')) == name;
        });
        if (!overridden)
            env.emplace_back(kv);
    }
    env.insert(env.end(), m_options.extraEnv.begin(), m_options.extraEnv.end());
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
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // Its own process group: the watchdog's SIGKILL then also takes anything the runner started.
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM})
        sigaddset(&defaults, s);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid = -1;
    int rc = ::posix_spawn(&pid, path.c_str(), &fa, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    if (rc != 0) {
        ::close(in[1]);
        ::close(out[0]);
        ::close(err[0]);
        return fail("could not start " + program + " " + path + ": " + std::strerror(rc));
    }
    for (int fd : {in[1], out[0], err[0]})
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    m_pid = pid;
    m_toRunner = in[1];
    m_fromRunner = out[0];
    m_errFromRunner = err[0];
    m_buffer.clear();
    m_stderrTail.clear();
    m_currentLaunch.clear();
    m_hello = protocol::Hello();

    m_startWarnings.clear();
    const auto deadline = after(m_options.startTimeoutMs);
    Result<json> first = Error::failed(std::string(kQuiet), "");
    std::string lastStartLog;
    int noiseLines = 0;
    std::size_t noiseBytes = 0;
    while (true) {
        first = readMessage(std::min(msUntil(deadline), 200));
        if (m_options.onStartLog) {
            const std::string line = lastLine(m_stderrTail);
            if (!line.empty() && line != lastStartLog)
                m_options.onStartLog(lastStartLog = line);
        }
        // A login shell on the far side may print a banner before the runner starts: up to 20
        // lines (4 KiB) of it are log, not protocol.
        if (!first && first.error().what == kMalformed && m_options.remote && noiseLines < kMaxNoiseLines &&
            noiseBytes + m_lastBadLine.size() <= kMaxNoiseBytes) {
            ++noiseLines;
            noiseBytes += m_lastBadLine.size();
            if (m_startWarnings.empty())
                m_startWarnings.push_back("the remote shell printed \"" + excerpt(m_lastBadLine) +
                                          "\" before the runner started; make ~/.bashrc quiet for non-interactive shells");
            continue;
        }
        if (first || first.error().what != kQuiet || msUntil(deadline) <= 0)
            break;
        if (m_options.startCancel && m_options.startCancel->cancelled()) {
            kill(); // SIGTERM first for a remote endpoint: srun gives the queued job back
            return fail("cancelled before the runner said hello", "start it again when you want it");
        }
    }
    if (!first) {
        const Error& e = first.error();
        if (e.what == kQuiet) {
            kill();
            return fail("the runner did not say hello within " + secondsText(m_options.startTimeoutMs) + " s",
                        withLastWords(wrapped ? "the host may be unreachable or the job still queued; raise start_timeout_s in "
                                                "runners.json if the scheduler is slow, or run the endpoint's command by hand"
                                              : "LibTorch and CUDA start-up can be slow the first time; if it hangs, run " + path +
                                                    " by hand to see why",
                                      m_stderrTail));
        }
        if (e.what == kEof) {
            std::string how = describeExit();
            return fail("the runner " + how + " before it said hello",
                        withLastWords("run " + (wrapped ? std::string("the endpoint's command") : path) + " by hand to see why", m_stderrTail));
        }
        kill();
        if (e.what == kVersionMismatch)
            return fail(e.why, e.hint);
        return fail("the runner's first message is malformed (" + e.why + ")", withLastWords(kRebuildHint, m_stderrTail));
    }
    auto decoded = protocol::RunnerMessage::decode(first.value());
    if (!decoded || decoded->type != protocol::RunnerMessage::Type::Hello) {
        kill();
        return fail(decoded ? "the runner's first message is \"" + first.value().value("type", std::string()) + "\", not \"hello\""
                            : "the runner's hello is malformed (" + decoded.error().why + " at " + decoded.error().pointer + ")",
                    kRebuildHint);
    }
    const protocol::Hello hello = decoded->hello;
    m_hello = hello;
    if (isRestart)
        ++m_restarts;
    m_started = true;
    return {};
}

} // namespace kf
