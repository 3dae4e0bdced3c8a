#pragma once
// Owns one kforge-runner process: spawns it, speaks the protocol, enforces the per-launch
// watchdog, detects crashes and sticky CUDA errors, restarts, and turns every failure into a
// sentence (docs/conventions.md: "a crash is a message"). One owner per runner: not thread-safe; the CLI
// uses it from main, the workbench from the one worker thread that owns engine jobs. That thread
// must outlive the runner: the runner dies with the thread that spawned it (PR_SET_PDEATHSIG).

#include "engine/compile/CompileTypes.h"
#include "engine/core/Result.h"
#include "engine/protocol/Messages.h"
#include "engine/protocol/RunRequest.h"
#include "engine/runner/Endpoint.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace kf {

class RunnerSupervisor {
public:
    struct Options {
        std::string runnerPath;              ///< empty: defaultRunnerPath()
        int startTimeoutMs = 120000;         ///< until "hello" (LibTorch + CUDA init can be slow)
        int idleTimeoutMs = 600000;          ///< no message at all for this long: treat as hung
        int heartbeatTimeoutMs = 5000;       ///< a runner that sends heartbeats: none for this long is a frozen process
        /// A runner that sends heartbeats but no work (no event, no answer) for this long, with no
        /// launch in flight, has a main thread stuck in a driver call or a deadlock.
        int stuckTimeoutMs = 120000;
        std::vector<std::string> extraEnv;   ///< "NAME=value" added to the runner's environment
        /// The process to start instead of {runnerPath} (an endpoint's argv: ssh …, srun …, a
        /// template); argv[0] is a path or a name found on PATH. Empty: {runnerPath}.
        std::vector<std::string> command;
        std::string endpointName;            ///< for sentences: "the connection to box (ssh) was lost"
        std::string endpointDescription;     ///< "box (ssh gpu-box.lan)"
        /// The runner sits behind a connection or a scheduler: a lost connection is told apart from
        /// a crash, a stop sends SIGTERM first (ssh closes the channel, srun cancels the step),
        /// and up to 20 lines a login shell prints before the hello are tolerated.
        bool remote = false;
        int killGraceMs = 0;                 ///< between SIGTERM and SIGKILL when stopping a remote endpoint
        int launchLatencyMs = 0;             ///< added to every launch's watchdog budget (network, scheduler)
        /// The last line the starting process wrote on stderr ("srun: job 42 queued and waiting
        /// for resources"), each time it changes, until the hello arrives.
        std::function<void(const std::string&)> onStartLog;
        /// Stops the wait for the hello when cancelled (checked every 200 ms): the process is
        /// stopped and hello() returns an Error of kind kRunnerStart saying so. Not owned; must
        /// outlive the supervisor. The workbench's endpoint check uses it (an srun may queue for minutes).
        const CancelToken* startCancel = nullptr;
    };

    /// Options that start `endpoint` (RunnerSupervisor::defaultRunnerPath() or `runnerPath` as
    /// the local runner), with its timeouts.
    static Options forEndpoint(const Endpoint& endpoint, const std::string& runnerPath = {});

    // Two constructors instead of `Options options = {}`: g++ rejects a default argument that
    // needs the nested struct's member initializers before the enclosing class is complete.
    RunnerSupervisor();
    explicit RunnerSupervisor(Options options);
    ~RunnerSupervisor();
    RunnerSupervisor(const RunnerSupervisor&) = delete;
    RunnerSupervisor& operator=(const RunnerSupervisor&) = delete;

    using EventFn = std::function<void(const protocol::Event&)>;
    /// Takes the file_chunk events of a streamed dump (engine/runner/DumpReceiver.h). An Error
    /// refuses the chunk: the request fails with it and the runner is restarted (it was sending
    /// something the client will not write). A file_chunk with no sink is a protocol error.
    using FileSink = std::function<Result<void>(const protocol::FileChunk&)>;

    /// Starts the runner if needed and returns its hello.
    Result<protocol::Hello> hello();

    /// Sends `request` (its "id" is filled in), calls `onEvent` for every progress-type message,
    /// and returns the final report. Every failure is an Error whose `why` is a sentence a user
    /// can act on: crash (with the signal and the launch in flight), watchdog timeout, sticky
    /// CUDA error, protocol error, cancellation. After crash, timeout or a fatal error the runner
    /// is restarted on the next call, so nothing the caller holds is lost.
    /// The report comes back as the runner wrote it (protocol::RunReport reads it).
    Result<nlohmann::json> request(const protocol::RunRequest& request, const EventFn& onEvent = {},
                                   const CancelToken* cancel = nullptr, const FileSink& onFile = {});
    /// A control message ("ping", "have_files", "put_file", and the runner's test hooks under
    /// KF_RUNNER_TEST_HOOKS=1), with the same failure handling; "pong" answers {"type":"pong"},
    /// "files" answers {"type":"files","missing":[...]}.
    Result<nlohmann::json> control(nlohmann::json message, const EventFn& onEvent = {}, const CancelToken* cancel = nullptr,
                                   const FileSink& onFile = {});

    /// The warnings of the last start: what a remote shell printed before the runner's hello.
    const std::vector<std::string>& startWarnings() const { return m_startWarnings; }

    /// Stops the runner (politely, then SIGKILL).
    void stop();
    int restarts() const { return m_restarts; }
    pid_t pid() const { return m_pid; }

    /// $KF_RUNNER, else kforge-runner next to the running executable, else on PATH.
    static std::string defaultRunnerPath();

private:
    struct Exchange;   ///< one request in flight (Supervisor.cpp)
    struct Start;      ///< one start of the runner process (SupervisorStart.cpp)

    Result<void> start();
    Result<nlohmann::json> exchange(nlohmann::json request, const EventFn& onEvent, const CancelToken* cancel,
                                    const FileSink& onFile);
    Result<nlohmann::json> readMessage(int timeoutMs);
    std::string describeExit();
    /// Waits up to `graceMs` for the process to exit, draining its output meanwhile.
    void waitForExit(int graceMs);
    /// SIGKILLs the runner's process group, reaps it, drains its stderr, closes the pipes;
    /// returns the wait status (0 when there was no process).
    int reap();
    void kill();
    std::string endpointText() const;

    Options m_options;
    pid_t m_pid = -1;
    int m_toRunner = -1;
    int m_fromRunner = -1;
    int m_errFromRunner = -1;
    std::string m_buffer;
    std::string m_stderrTail;
    protocol::Hello m_hello;
    std::int64_t m_nextId = 1;
    int m_restarts = 0;
    bool m_started = false;
    std::string m_currentLaunch;
    std::vector<std::string> m_startWarnings;
    std::string m_lastBadLine;   ///< the last line that was not a protocol message
    int m_lastExitStatus = 0;    ///< wait status of the last process reaped by describeExit()
    bool m_lastKilledByUs = false;
};

} // namespace kf
