#include "engine/core/Process.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <poll.h>
#include <spawn.h>

#include <algorithm>
#include <string_view>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

#ifndef KF_CUDA_TOOLKIT_ROOT
#define KF_CUDA_TOOLKIT_ROOT "/usr/local/cuda"
#endif

namespace kf {

Result<ProcessOutput> runProcess(const std::vector<std::string>& argv, int timeoutMs, const std::vector<std::string>& env,
                                 const std::function<bool()>& stop, const std::string& cwd)
{
    if (argv.empty())
        return Error{"run a process", "no program given", "", {}, {}};
    int outPipe[2], errPipe[2];
    if (::pipe2(outPipe, O_CLOEXEC) != 0)
        return Error{"run " + argv[0], std::strerror(errno), "", {}, {}};
    if (::pipe2(errPipe, O_CLOEXEC) != 0) {
        ::close(outPipe[0]);
        ::close(outPipe[1]);
        return Error{"run " + argv[0], std::strerror(errno), "", {}, {}};
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, outPipe[1], 1);
    posix_spawn_file_actions_adddup2(&fa, errPipe[1], 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (!cwd.empty())
        posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    // This process's environment with `env`'s NAME=value entries in place of (or beside) its own.
    std::vector<char*> envp;
    for (char** e = environ; e && *e; ++e) {
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
    pid_t pid = 0;
    int rc = ::posix_spawnp(&pid, argv[0].c_str(), &fa, &attr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    ::close(outPipe[1]);
    ::close(errPipe[1]);
    if (rc != 0) {
        ::close(outPipe[0]);
        ::close(errPipe[0]);
        return Error{"run " + argv[0], std::strerror(rc), "check that the program exists and is executable", {}, {}};
    }
    ProcessOutput result;
    pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {errPipe[0], POLLIN, 0}};
    int open = 2;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    bool timedOut = false, stopped = false;
    char buf[65536];
    while (open > 0) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) {
            timedOut = true;
            break;
        }
        if (stop && stop()) {
            stopped = true;
            break;
        }
        int n = ::poll(fds, 2, static_cast<int>(stop ? std::min<long long>(left, 200) : left));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            continue;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t r = ::read(fds[i].fd, buf, sizeof buf);
            if (r > 0) {
                (i == 0 ? result.out : result.err).append(buf, static_cast<size_t>(r));
            } else if (r == 0 || errno != EINTR) {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open;
            }
        }
    }
    for (auto& f : fds)
        if (f.fd >= 0)
            ::close(f.fd);
    if (timedOut || stopped)
        ::kill(-pid, SIGKILL);   // the whole group: workers the program started go with it
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (stopped)
        return Error{"run " + argv[0], "it was stopped (cancelled)", "", {}, {}};
    if (timedOut)
        return Error{"run " + argv[0], "it did not finish within " + std::to_string(timeoutMs / 1000) + " s and was stopped", "", {}, {}};
    result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
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
