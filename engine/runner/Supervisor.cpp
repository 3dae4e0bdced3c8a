#include "engine/runner/Supervisor.h"

#include "engine/runner/ChildIo.h"
#include "engine/runner/SupervisorInternal.h"
#include "engine/protocol/Messages.h"
#include "engine/protocol/Protocol.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <string_view>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace fs = std::filesystem;
using nlohmann::json;

namespace kf {

namespace supervisor_detail {

std::string lastLine(const std::string& text)
{
    std::size_t end = text.find_last_not_of("\r\n \t");
    if (end == std::string::npos)
        return {};
    std::size_t begin = text.rfind('\n', end);
    return text.substr(begin == std::string::npos ? 0 : begin + 1, end + 1 - (begin == std::string::npos ? 0 : begin + 1));
}

std::string whereText(const std::string& launch, const std::string& type)
{
    if (!launch.empty())
        return "during " + launch;
    return "while handling the " + (type.empty() ? std::string("runner") : type) + " request";
}

std::string excerpt(const std::string& line)
{
    constexpr std::size_t kMax = 80;
    std::string s = line.size() > kMax ? line.substr(0, kMax) + "…" : line;
    for (char& c : s)
        if (static_cast<unsigned char>(c) < 0x20)
            c = ' ';
    return s;
}

bool looksLikeLostConnection(const std::string& stderrTail)
{
    for (const char* sign : {"closed by remote host", "Connection reset", "Connection timed out", "Broken pipe",
                             "Timeout, server", "not responding", "Connection closed", "connect to host"})
        if (stderrTail.find(sign) != std::string::npos)
            return true;
    return false;
}

} // namespace supervisor_detail

using namespace childio;
using namespace supervisor_detail;

RunnerSupervisor::RunnerSupervisor() : RunnerSupervisor(Options{}) {}

std::string RunnerSupervisor::endpointText() const
{
    return m_options.endpointDescription.empty() ? (m_options.endpointName.empty() ? std::string("the endpoint") : m_options.endpointName)
                                                 : m_options.endpointDescription;
}

RunnerSupervisor::RunnerSupervisor(Options options) : m_options(std::move(options)) {}

RunnerSupervisor::~RunnerSupervisor()
{
    stop();
}

Result<protocol::Hello> RunnerSupervisor::hello()
{
    try {
        if (m_pid > 0 && processExited(m_pid))
            describeExit(); // died while idle: replace it quietly
        if (m_pid <= 0) {
            auto s = start();
            if (!s)
                return s.error();
        }
        return m_hello;
    } catch (const std::exception& e) {
        kill();
        return Error::failed("start the runner", std::string("unexpected failure: ") + e.what());
    }
}

Result<json> RunnerSupervisor::readMessage(int timeoutMs)
{
    const auto deadline = after(timeoutMs);
    while (true) {
        for (std::size_t nl = m_buffer.find('\n'); nl != std::string::npos; nl = m_buffer.find('\n')) {
            std::string line = m_buffer.substr(0, nl);
            m_buffer.erase(0, nl + 1);
            if (!line.empty() && line.back() == '\r')
                line.pop_back();
            if (line.find_first_not_of(" \t") == std::string::npos)
                continue; // blank lines carry nothing; tolerate them
            auto parsed = protocol::parseLine(line, protocol::From::Runner);
            if (!parsed) {
                if (parsed.error().pointer == "/protocol_version")
                    return Error::failed(std::string(kVersionMismatch), parsed.error().why, parsed.error().hint);
                m_lastBadLine = line;
                return Error::failed(std::string(kMalformed), parsed.error().why + ", in \"" + excerpt(line) + "\"");
            }
            return parsed;
        }
        if (m_buffer.size() > protocol::kMaxLineBytes)
            return Error::failed(std::string(kMalformed), "a line longer than 64 MiB without a newline");
        if (m_fromRunner < 0)
            return Error::failed(std::string(kEof), "the runner closed its output");

        const int left = msUntil(deadline);
        pollfd fds[2] = {{m_fromRunner, POLLIN, 0}, {m_errFromRunner, POLLIN, 0}};
        int n = ::poll(fds, 2, std::min(left, kExitCheckMs));
        if (n < 0 && errno != EINTR)
            return Error::failed(std::string(kEof), std::string("poll failed: ") + std::strerror(errno));
        if (n > 0) {
            if (fds[1].revents)
                drain(m_errFromRunner, m_stderrTail, true);
            if (fds[0].revents)
                drain(m_fromRunner, m_buffer, false); // on EOF the fd closes; lines before it still count
            continue;
        }
        // Nothing to read: a runner whose child still holds the pipe never gives us EOF, so
        // check for death directly.
        if (processExited(m_pid)) {
            drain(m_errFromRunner, m_stderrTail, true);
            drain(m_fromRunner, m_buffer, false);
            if (m_buffer.find('\n') != std::string::npos)
                continue;
            closeFd(m_fromRunner);
            return Error::failed(std::string(kEof), "the runner exited");
        }
        if (left <= 0)
            return Error::failed(std::string(kQuiet), "no message yet");
    }
}

void RunnerSupervisor::waitForExit(int graceMs)
{
    // Its stdout and stderr keep flowing meanwhile, so it cannot block on a full pipe.
    const auto grace = after(graceMs);
    while (!processExited(m_pid) && msUntil(grace) > 0) {
        pollfd fds[2] = {{m_fromRunner, POLLIN, 0}, {m_errFromRunner, POLLIN, 0}};
        if (::poll(fds, 2, 20) > 0) {
            std::string discard;
            if (fds[0].revents)
                drain(m_fromRunner, discard, false);
            if (fds[1].revents)
                drain(m_errFromRunner, m_stderrTail, true);
        }
    }
}

std::string RunnerSupervisor::describeExit()
{
    if (m_pid <= 0)
        return "exited";
    // Give it a moment to finish dying (a fatal error is followed by exit).
    waitForExit(kExitGraceMs);
    const bool killedByUs = !processExited(m_pid);
    const int status = reap();
    m_lastExitStatus = status;
    m_lastKilledByUs = killedByUs;
    if (killedByUs)
        return "stopped responding and was killed";
    if (WIFSIGNALED(status))
        return "crashed (" + signalName(WTERMSIG(status)) + ")";
    if (WIFEXITED(status))
        return "exited unexpectedly (exit code " + std::to_string(WEXITSTATUS(status)) + ")";
    return "exited unexpectedly";
}

int RunnerSupervisor::reap()
{
    int status = 0;
    if (m_pid > 0) {
        // A remote endpoint first gets SIGTERM: ssh then closes its channel and srun cancels its
        // step, so nothing is left running on the far side.
        if (m_options.killGraceMs > 0 && !processExited(m_pid)) {
            ::kill(-m_pid, SIGTERM);
            waitForExit(m_options.killGraceMs);
        }
        // Before reaping, so the group id cannot have been reused: take down anything it left behind.
        ::kill(-m_pid, SIGKILL);
        ::kill(m_pid, SIGKILL);
        while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
        }
        drain(m_errFromRunner, m_stderrTail, true);
    }
    m_pid = -1;
    closeFd(m_toRunner);
    closeFd(m_fromRunner);
    closeFd(m_errFromRunner);
    m_buffer.clear();
    return status;
}

void RunnerSupervisor::kill()
{
    reap();
    m_currentLaunch.clear();
}

void RunnerSupervisor::stop()
{
    try {
        if (m_pid > 0 && !processExited(m_pid) && m_toRunner >= 0) {
            const std::string line = protocol::toLine({{"type", "shutdown"}, {"id", m_nextId++}});
            writeAll(m_toRunner, line, after(500), nullptr, m_fromRunner, m_buffer, m_errFromRunner, m_stderrTail);
            closeFd(m_toRunner); // EOF on stdin is the second way of saying goodbye
        }
    } catch (...) {
        // Only allocation can fail here; the SIGKILL below still ends the runner.
    }
    if (m_pid > 0)
        describeExit(); // waits up to the grace period, then kills and reaps
    kill();
    m_started = false;
}

Result<json> RunnerSupervisor::request(const protocol::RunRequest& req, const EventFn& onEvent, const CancelToken* cancel,
                                       const FileSink& onFile)
{
    return exchange(req.toJson(), onEvent, cancel, onFile);
}

Result<json> RunnerSupervisor::control(json req, const EventFn& onEvent, const CancelToken* cancel, const FileSink& onFile)
{
    return exchange(std::move(req), onEvent, cancel, onFile);
}

/// One request in flight: its type and id, the sentences its failures become, and the deadlines
/// that guard it (idle, heartbeat, stuck main thread, a launch's watchdog).
struct RunnerSupervisor::Exchange {
    Exchange(RunnerSupervisor& supervisor, std::string requestType)
        : s(supervisor), type(std::move(requestType)),
          what("run the " + (type.empty() ? std::string("runner") : type) + " request")
    {
    }

    Error error(std::string why, std::string hint = {}) const { return Error::failed(what, std::move(why), std::move(hint)); }
    Error cancelled()
    {
        s.kill();
        return error("cancelled");
    }
    Error crashed();
    Error malformed(const std::string& why)
    {
        s.kill();
        return error("the runner sent a malformed message (" + why + "); it was restarted.",
                     withLastWords(kRebuildHint, s.m_stderrTail));
    }
    Result<void> send(const json& req, const CancelToken* cancel);
    void startClocks();
    std::optional<Error> overdue();
    Result<json> await(const EventFn& onEvent, const CancelToken* cancel, const FileSink& onFile);
    std::optional<Result<json>> answer(const protocol::RunnerMessage& m, const EventFn& onEvent, const FileSink& onFile);
    void onLaunchEvent(const protocol::Event& event);
    Error refusedFile(const protocol::FileChunk& chunk, Error refusal);
    Error runnerError(const protocol::RunnerMessage& m);

    RunnerSupervisor& s;
    const std::string type;
    const std::string what;
    std::int64_t id = 0;
    std::int64_t idleMs = 1, beatMs = 1, stuckMs = 1, watchdogMs = 0;
    bool beats = false;           ///< the runner sends heartbeats during this request
    bool watchdogArmed = false;   ///< a launch with a time budget is running
    Clock::time_point idleDeadline, beatDeadline, workDeadline, watchdogDeadline = Clock::time_point::max();
};

/// The runner's process ended during the request: what ended it, in words, and whether the
/// candidate is to blame.
Error RunnerSupervisor::Exchange::crashed()
{
    std::string where = whereText(s.m_currentLaunch, type);
    std::string how = s.describeExit();
    s.m_currentLaunch.clear();
    const bool seeded = type == "verify" || type == "bench";
    const int st = s.m_lastExitStatus;
    // ssh ends with 255 when the connection breaks (and says so on stderr).
    if (s.m_options.remote && !s.m_lastKilledByUs && WIFEXITED(st) && WEXITSTATUS(st) == 255 &&
        looksLikeLostConnection(s.m_stderrTail)) {
        Error e = error("the connection to " + s.endpointText() + " was lost " + where + ": " + lastLine(s.m_stderrTail) +
                            "; the runner was restarted.",
                        "check the network and the host; the run can be repeated as it was");
        e.kind = kConnectionLost;
        return e;
    }
    // SIGKILL, SIGTERM or SIGHUP that we did not send: killed from outside (a user, the OOM
    // killer, a scheduler), not by the candidate.
    const bool lost = !s.m_lastKilledByUs && WIFSIGNALED(st) &&
                      (WTERMSIG(st) == SIGKILL || WTERMSIG(st) == SIGTERM || WTERMSIG(st) == SIGHUP);
    if (lost && how.rfind("crashed", 0) == 0)
        how = "was killed from outside" + how.substr(std::string("crashed").size());
    Error e = error("the runner" + (s.m_options.remote ? " on " + s.endpointText() : std::string()) + " " + how + " " +
                        where + "; it was restarted.",
                    withLastWords(lost ? "the candidate is not to blame; see who stopped the process (the OOM killer, a "
                                         "scheduler, a user)"
                                  : seeded ? "run it again with the same seeds to reproduce it"
                                           : "",
                                  s.m_stderrTail));
    if (lost)
        e.kind = kRunnerLost;
    return e;
}

/// Writes the request line.
Result<void> RunnerSupervisor::Exchange::send(const json& req, const CancelToken* cancel)
{
    idleMs = std::max(s.m_options.idleTimeoutMs, 1);
    switch (writeAll(s.m_toRunner, protocol::toLine(req), after(idleMs), cancel, s.m_fromRunner, s.m_buffer,
                     s.m_errFromRunner, s.m_stderrTail)) {
    case WriteEnd::Done:
        return {};
    case WriteEnd::Cancelled:
        return cancelled();
    case WriteEnd::ReaderGone:
        return crashed();
    case WriteEnd::TimedOut:
        break;
    }
    s.kill();
    return error("the runner did not accept the request within " + secondsText(idleMs) +
                     " s and was presumed hung; it was restarted.",
                 withLastWords("", s.m_stderrTail));
}

void RunnerSupervisor::Exchange::startClocks()
{
    idleDeadline = after(idleMs);
    // A runner that says it sends heartbeats during a run is alive while they come: a
    // stopped or frozen process is noticed in seconds. Heartbeats do not count as work, so a
    // main thread stuck in a driver call still meets the idle timeout.
    beats = s.m_hello.has("heartbeat") && (type == "verify" || type == "bench" || type == "profile" || type == "test_stuck");
    beatMs = std::max(s.m_options.heartbeatTimeoutMs, 1);
    beatDeadline = after(beatMs);
    // Heartbeats prove the process lives, not that its main thread works: between launches
    // (a launch has its own watchdog) no work for stuckMs is a stuck driver call or a deadlock.
    stuckMs = std::max(s.m_options.stuckTimeoutMs, 1);
    if (const char* v = std::getenv("KF_RUNNER_STUCK_TIMEOUT_MS"); v && *v) {
        char* end = nullptr;
        const long long ms = std::strtoll(v, &end, 10);
        if (end && *end == '\0' && ms > 0)
            stuckMs = ms;
    }
    workDeadline = after(stuckMs);
}

/// The first deadline that has passed (the runner is then killed), or none.
std::optional<Error> RunnerSupervisor::Exchange::overdue()
{
    if (watchdogArmed && msUntil(watchdogDeadline) <= 0) {
        std::string launch = s.m_currentLaunch.empty() ? std::string("its launch") : s.m_currentLaunch;
        s.kill();
        return error("the candidate did not finish within " + secondsText(watchdogMs) + " s in " + launch +
                         " — an infinite loop or a deadlock? The runner was restarted.",
                     "check loop bounds and that every thread of a block reaches each __syncthreads(); "
                     "if the kernel is only slow, raise the launch timeout");
    }
    const std::string where = whereText(s.m_currentLaunch, type);
    if (msUntil(idleDeadline) <= 0) {
        s.kill();
        return error("the runner sent nothing for " + secondsText(idleMs) + " s " + where +
                         " and was presumed hung; it was restarted.",
                     withLastWords("if the work is expected to take that long, raise the idle timeout", s.m_stderrTail));
    }
    if (beats && msUntil(beatDeadline) <= 0) {
        s.kill();
        if (s.m_options.remote) {
            Error e = error("no message from " + s.endpointText() + " for " + secondsText(beatMs) + " s " + where +
                                "; the connection is presumed lost and the runner was restarted.",
                            withLastWords("check the network and the host; the run can be repeated as it was", s.m_stderrTail));
            e.kind = kConnectionLost;
            return e;
        }
        return error("the runner gave no sign of life for " + secondsText(beatMs) + " s " + where +
                         " (its process is stopped or frozen); it was restarted.",
                     withLastWords("a process stopped with SIGSTOP, a machine out of memory and swapping, or a driver "
                                   "call that froze the whole process",
                                   s.m_stderrTail));
    }
    if (beats && !watchdogArmed && msUntil(workDeadline) <= 0) {
        s.kill();
        return error("the runner's main thread did no work for " + secondsText(stuckMs) + " s " + where +
                         " while its process kept sending heartbeats (a driver call that never returns, or a "
                         "deadlock); it was restarted.",
                     withLastWords("if one step is expected to take that long, raise KF_RUNNER_STUCK_TIMEOUT_MS (ms)",
                                   s.m_stderrTail));
    }
    return std::nullopt;
}

/// Reads messages until the request's answer, a failure or a deadline.
Result<json> RunnerSupervisor::Exchange::await(const EventFn& onEvent, const CancelToken* cancel, const FileSink& onFile)
{
    while (true) {
        if (cancel && cancel->cancelled())
            return cancelled();
        if (auto late = overdue())
            return *late;
        auto until = watchdogArmed ? std::min(watchdogDeadline, idleDeadline) : idleDeadline;
        if (beats)
            until = std::min({until, beatDeadline, watchdogArmed ? until : workDeadline});
        auto msg = s.readMessage(std::min(msUntil(until), kPollSliceMs));
        if (!msg) {
            const Error& e = msg.error();
            if (e.what == kQuiet)
                continue;
            if (e.what == kEof)
                return crashed();
            return malformed(e.why);
        }
        beatDeadline = after(beatMs);
        auto decoded = protocol::RunnerMessage::decode(msg.value());
        if (decoded && decoded->type == protocol::RunnerMessage::Type::Heartbeat)
            continue; // alive, but no work done: the idle deadline stays
        idleDeadline = after(idleMs);
        workDeadline = after(stuckMs);
        if (!decoded)
            return malformed(decoded.error().why + (decoded.error().pointer.empty() ? "" : " at " + decoded.error().pointer));
        if (auto done = answer(decoded.value(), onEvent, onFile))
            return std::move(*done);
    }
}

/// One message of the request: its final answer, or none while more is to come.
std::optional<Result<json>> RunnerSupervisor::Exchange::answer(const protocol::RunnerMessage& m, const EventFn& onEvent,
                                                               const FileSink& onFile)
{
    // An error for request 0 is the runner's answer to a line it could not read the id of.
    const bool unnumberedError = m.type == protocol::RunnerMessage::Type::Error && m.id == 0;
    if (m.id && *m.id != id && !unnumberedError)
        return malformed("a message for request " + std::to_string(*m.id) + " while request " + std::to_string(id) +
                         " is in flight");
    using Type = protocol::RunnerMessage::Type;
    switch (m.type) {
    case Type::Event:
        onLaunchEvent(m.event);
        if (onEvent)
            onEvent(m.event);
        return std::nullopt;
    case Type::Report:
        s.m_currentLaunch.clear();
        return m.report;
    case Type::Pong:
        return json{{"type", "pong"}}; // the answer to "ping": final, and it carries no report
    case Type::Files:
        return json{{"type", "files"}, {"missing", m.missing}}; // the answer to have_files and put_file
    case Type::FileChunk:
        if (!onFile)
            return malformed("a file_chunk for a request that streams no files");
        if (auto taken = onFile(m.chunk); !taken)
            return refusedFile(m.chunk, taken.error());
        return std::nullopt;
    case Type::Error:
        return runnerError(m);
    case Type::Hello:
        return malformed("a second \"hello\" in the middle of a request");
    case Type::Heartbeat:
        return std::nullopt; // handled by await
    }
    return std::nullopt;
}

/// A launch begins (its watchdog armed when it has a time budget) or ends.
void RunnerSupervisor::Exchange::onLaunchEvent(const protocol::Event& event)
{
    if (event.kind == protocol::Event::Kind::LaunchBegin) {
        s.m_currentLaunch = event.label;
        if (event.timeoutMs > 0) {
            watchdogMs = event.timeoutMs + std::max(s.m_options.launchLatencyMs, 0);
            watchdogDeadline = after(watchdogMs);
            watchdogArmed = true;
        } else {
            watchdogArmed = false; // no budget given: only the idle timeout guards it
        }
    } else if (event.kind == protocol::Event::Kind::LaunchEnd) {
        watchdogArmed = false;
        s.m_currentLaunch.clear();
    }
}

/// The runner sent a file the client refuses to write (a path out of the dump folder, a chunk
/// out of order, past the budget): it is not to be trusted with the rest of this request.
Error RunnerSupervisor::Exchange::refusedFile(const protocol::FileChunk& chunk, Error e)
{
    s.kill();
    e.what = what;
    e.file.clear();
    e.pointer.clear();
    if (!e.why.empty() && e.why.back() == '.')
        e.why.pop_back();
    e.why = "the runner sent a dump file the client refused (" + chunk.path + ": " + e.why + "); it was restarted.";
    if (e.hint.empty())
        e.hint = withLastWords(kRebuildHint, s.m_stderrTail);
    return e;
}

/// The runner's own error answer; after a fatal one (the CUDA context lost) it is restarted.
Error RunnerSupervisor::Exchange::runnerError(const protocol::RunnerMessage& m)
{
    Error e = m.error;
    if (e.what.empty())
        e.what = what;
    s.m_currentLaunch.clear();
    if (m.fatal) {
        if (!e.why.empty() && e.why.back() != '.' && e.why.back() != '!' && e.why.back() != '?')
            e.why += '.';
        e.why += " The CUDA context was lost; the runner was restarted.";
        if (e.hint.empty())
            e.hint = "an illegal or misaligned memory access is the usual cause; check the candidate's "
                     "indexing against the shape";
        s.describeExit(); // it exits by itself after a fatal error; reap it (or kill it)
    }
    return e;
}

Result<json> RunnerSupervisor::exchange(json req, const EventFn& onEvent, const CancelToken* cancel, const FileSink& onFile)
{
    Exchange x(*this, req.is_object() && req.contains("type") && req["type"].is_string() ? req["type"].get<std::string>()
                                                                                         : std::string());
    if (x.type.empty())
        return x.error("the request is not an object with a \"type\"", "this is a bug in the caller");
    if (cancel && cancel->cancelled())
        return x.error("cancelled");
    try {
        if (m_pid > 0 && processExited(m_pid))
            describeExit(); // died while idle, between requests: start a fresh one
        if (m_pid <= 0) {
            auto s = start();
            if (!s)
                return s.error();
        }
        x.id = m_nextId++;
        req["id"] = x.id;
        m_currentLaunch.clear();
        if (auto sent = x.send(req, cancel); !sent)
            return sent.error();
        x.startClocks();
        return x.await(onEvent, cancel, onFile);
    } catch (const std::exception& e) {
        // A malformed field that nlohmann rejects, or a callback that threw: the runner's state is
        // unknown, so it goes.
        kill();
        return x.error(std::string("the request could not be completed (") + e.what() + "); the runner was restarted.");
    }
}

} // namespace kf
