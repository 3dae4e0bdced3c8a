// The POSIX side of talking to a child process over pipes, for the runner supervisor: deadlines,
// non-blocking reads that keep a bounded tail, whole-line writes that keep draining the child's
// output, SIGPIPE kept from killing us, pipe ends above stdio, the PATH search, exit sentences.
#include "engine/runner/ChildIo.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <poll.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kf::childio {

namespace {

// Writing to a runner that just died raises SIGPIPE, which would kill the CLI or the workbench.
// Block it in this thread while writing, and swallow the one our write caused.
class SigpipeBlock {
public:
    SigpipeBlock()
    {
        sigemptyset(&m_set);
        sigaddset(&m_set, SIGPIPE);
        sigset_t pending;
        sigemptyset(&pending);
        ::sigpending(&pending);
        m_wasPending = sigismember(&pending, SIGPIPE) == 1;
        ::pthread_sigmask(SIG_BLOCK, &m_set, &m_old);
    }
    ~SigpipeBlock()
    {
        if (m_sawEpipe && !m_wasPending) {
            timespec zero{0, 0};
            while (::sigtimedwait(&m_set, nullptr, &zero) < 0 && errno == EINTR) {
            }
        }
        ::pthread_sigmask(SIG_SETMASK, &m_old, nullptr);
    }
    SigpipeBlock(const SigpipeBlock&) = delete;
    SigpipeBlock& operator=(const SigpipeBlock&) = delete;
    void sawEpipe() { m_sawEpipe = true; }

private:
    sigset_t m_set;
    sigset_t m_old;
    bool m_wasPending = false;
    bool m_sawEpipe = false;
};

} // namespace

int msUntil(Clock::time_point deadline)
{
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(left, 0, INT_MAX));
}

Clock::time_point after(std::int64_t ms)
{
    return Clock::now() + std::chrono::milliseconds(std::max<std::int64_t>(ms, 0));
}

void closeFd(int& fd)
{
    if (fd >= 0)
        ::close(fd);
    fd = -1;
}

// 300 -> "0.3", 10000 -> "10", 1500 -> "1.5".
std::string secondsText(std::int64_t ms)
{
    char b[32];
    std::snprintf(b, sizeof b, "%g", static_cast<double>(ms) / 1000.0);
    return b;
}

std::string signalName(int sig)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    if (const char* abbrev = ::sigabbrev_np(sig))
        return std::string("SIG") + abbrev;
#endif
    const char* text = ::strsignal(sig);
    return "signal " + std::to_string(sig) + (text ? std::string(" (") + text + ")" : std::string());
}

// Peeks whether the child has terminated without reaping it, so describeExit() can still read
// its status and its process group cannot be reused meanwhile.
bool processExited(pid_t pid)
{
    if (pid <= 0)
        return true;
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
        return errno == ECHILD;
    return info.si_pid != 0;
}

void appendTail(std::string& tail, const char* data, std::size_t n)
{
    tail.append(data, n);
    if (tail.size() > kStderrTailBytes)
        tail.erase(0, tail.size() - kStderrTailBytes);
}

// Reads everything available from a non-blocking fd. On EOF or a hard error closes it.
ReadEnd drain(int& fd, std::string& sink, bool tail)
{
    char buf[65536];
    while (fd >= 0) {
        ssize_t r = ::read(fd, buf, sizeof buf);
        if (r > 0) {
            if (tail)
                appendTail(sink, buf, static_cast<std::size_t>(r));
            else
                sink.append(buf, static_cast<std::size_t>(r));
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return ReadEnd::Again;
        closeFd(fd);
    }
    return ReadEnd::Eof;
}

// The runner's last stderr lines, for hints: a crash message from LibTorch or the driver is
// often the only clue to what happened.
std::string lastWords(const std::string& tail)
{
    std::vector<std::string> lines;
    std::size_t end = tail.size();
    while (end > 0 && lines.size() < 3) {
        std::size_t start = tail.rfind('\n', end - 1);
        std::size_t from = start == std::string::npos ? 0 : start + 1;
        std::string line = tail.substr(from, end - from);
        while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
            line.pop_back();
        if (!line.empty())
            lines.insert(lines.begin(), line);
        if (start == std::string::npos)
            break;
        end = start;
    }
    std::string out;
    for (const auto& l : lines)
        out += (out.empty() ? "" : " | ") + l;
    if (out.size() > 500)
        out = "…" + out.substr(out.size() - 500);
    return out;
}

std::string withLastWords(std::string hint, const std::string& tail)
{
    std::string words = lastWords(tail);
    if (words.empty())
        return hint;
    return hint + (hint.empty() ? "" : "; ") + "the runner's last words: " + words;
}

// Writes a whole line while draining the runner's stdout and stderr: a runner blocked on a full
// stderr pipe would otherwise never read the rest of a large request (cubins are megabytes).
WriteEnd writeAll(int toFd, std::string_view data, Clock::time_point deadline, const CancelToken* cancel,
                  int& outFd, std::string& outBuffer, int& errFd, std::string& errTail)
{
    SigpipeBlock block;
    std::size_t done = 0;
    while (done < data.size()) {
        if (cancel && cancel->cancelled())
            return WriteEnd::Cancelled;
        const int left = msUntil(deadline);
        if (left <= 0)
            return WriteEnd::TimedOut;
        pollfd fds[3] = {{toFd, POLLOUT, 0}, {outFd, POLLIN, 0}, {errFd, POLLIN, 0}};
        int n = ::poll(fds, 3, std::min(left, kPollSliceMs));
        if (n < 0 && errno != EINTR)
            return WriteEnd::ReaderGone;
        if (n <= 0)
            continue;
        if (fds[1].revents)
            drain(outFd, outBuffer, false);
        if (fds[2].revents)
            drain(errFd, errTail, true);
        if (fds[0].revents & (POLLERR | POLLNVAL))
            return WriteEnd::ReaderGone;
        if (!(fds[0].revents & (POLLOUT | POLLHUP)))
            continue;
        ssize_t w = ::write(toFd, data.data() + done, data.size() - done);
        if (w > 0) {
            done += static_cast<std::size_t>(w);
        } else if (w < 0 && errno == EPIPE) {
            block.sawEpipe();
            return WriteEnd::ReaderGone;
        } else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            return WriteEnd::ReaderGone;
        }
    }
    return WriteEnd::Done;
}

// Pipe ends must not land on 0..2: dup2 onto the same number would keep FD_CLOEXEC and the
// runner would start without that stream (possible when our own stdin/stdout were closed).
bool moveAboveStdio(int& fd)
{
    if (fd > 2)
        return true;
    int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (moved < 0)
        return false;
    ::close(fd);
    fd = moved;
    return true;
}

bool makePipe(int fds[2])
{
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return false;
    if (moveAboveStdio(fds[0]) && moveAboveStdio(fds[1]))
        return true;
    ::close(fds[0]);
    ::close(fds[1]);
    return false;
}

std::string findOnPath(const std::string& name)
{
    const char* path = std::getenv("PATH");
    if (!path)
        return {};
    std::string_view rest(path);
    while (true) {
        std::size_t colon = rest.find(':');
        std::string dir(rest.substr(0, colon));
        fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
        if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate))
            return candidate.string();
        if (colon == std::string_view::npos)
            break;
        rest.remove_prefix(colon + 1);
    }
    return {};
}

// "during softmax<256> (launch 1)" or "while handling the verify request".

} // namespace kf::childio
