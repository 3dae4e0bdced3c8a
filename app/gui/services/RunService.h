#pragma once
// The workbench's one owner of the GPU runner. A single long-lived worker thread owns the
// engine's RunnerSupervisor (the runner dies with the thread that spawned it, so that thread
// lives as long as this service) and runs one job at a time: probe the runner, or compile a
// candidate for the runner's GPU and verify or benchmark it. Everything the worker learns comes
// back to the UI thread as signals; the UI never waits on the runner.
#include "engine/core/Result.h"
#include "engine/protocol/Messages.h"
#include "engine/protocol/RunReport.h"
#include "engine/runner/Endpoint.h"
#include "engine/pipeline/RunPipeline.h"
#include "engine/task/Task.h"

#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

Q_DECLARE_METATYPE(kf::protocol::RunReport)
Q_DECLARE_METATYPE(kf::protocol::Event::Level)
Q_DECLARE_METATYPE(kf::Error)

namespace kf {
class CancelToken;
} // namespace kf

namespace kf::app {

class RunService : public QObject {
    Q_OBJECT
public:
    enum class RunnerState { NotStarted, Starting, Ready, NoGpu, Unavailable, Busy };
    Q_ENUM(RunnerState)

    struct Options {
        QString runnerPath;              ///< empty: $KF_RUNNER, beside the executable, PATH
        QStringList extraEnv;            ///< "NAME=value" for the runner (tests use the test hooks)
        QString cacheDir;                ///< compile cache; empty: the user's default
        QStringList extraNvrtcOptions;   ///< appended to every build (Settings)
        /// Where the runner runs (runners.json, docs/runners.md): ssh, srun, a command, a local GPU.
        /// Unset: the local runner at `runnerPath`. A local endpoint without its own runner uses `runnerPath`.
        std::optional<kf::Endpoint> endpoint;

        bool operator==(const Options& o) const;
    };

    explicit RunService(Options options, QObject* parent = nullptr);
    /// Cancels the job in flight, stops the runner and joins the worker.
    ~RunService() override;

    /// New options (Settings ▸ Runners chose another endpoint, the runner path or NVRTC options
    /// changed). Nothing is stopped now: the next probe or run stops the runner of the old options
    /// and starts one of these. Equal options change nothing (returns false). UI thread.
    bool setOptions(Options options);
    const Options& options() const { return m_options; }
    /// The endpoint's name: "local" without one.
    QString endpointName() const;
    /// The last hello (after a probe or a run), or none.
    const std::optional<kf::protocol::Hello>& hello() const { return m_hello; }

    /// Starts the runner (if needed) and reports what it found through stateChanged. UI thread.
    void probe();
    /// Compiles `candidateFile` of `task` (as saved on disk) for the runner's GPU and verifies or
    /// benchmarks it. Returns the run id; only one run at a time (returns 0 while busy).
    quint64 run(kf::RunKind kind, const kf::Task& task, const QString& candidateFile, const kf::RunSettings& settings);
    using Job = kf::RunSession::Job;
    using Plan = kf::RunPlan;
    /// Shrinks a failing shape (engine/verify/Shrink.h) on the worker: probes batches of smaller
    /// shapes with the failing trial's seed, then verifies the smallest with 3 fresh trials,
    /// saving its tensors to `dumpDir`. The report is that confirmation, with a "shrink" block.
    quint64 shrink(const kf::Task& task, const QString& candidateFile, const kf::ShapeBinding& start,
                   const QString& failureKind, quint64 seed, int trial, const QString& dumpDir);
    /// Asks the run in flight to stop; the runner is killed and restarted if it does not return.
    void cancel();

    bool isRunning() const { return m_running; }
    RunnerState state() const { return m_state; }
    /// "local · NVIDIA H100 80GB HBM3 · GPU-1a2b3c4d · sm_90", "local · no GPU: compile-only mode",
    /// "box: connection lost — <sentence>", ... (the status bar's runner text).
    QString stateText() const { return m_stateText; }
    QString stateDetail() const { return m_stateDetail; }
    QString architecture() const { return m_arch; }
    int restarts() const { return m_restarts; }

signals:
    void stateChanged(kf::app::RunService::RunnerState state, const QString& text);
    void runStarted(quint64 id, const QString& title);
    /// How far the run is (0..1000) and what it does now ("compiling for sm_90", "shape 2/5").
    void progress(quint64 id, int permille, const QString& stage);
    /// The launch the runner's watchdog is timing now; empty when none is in flight.
    void launchChanged(quint64 id, const QString& label);
    /// A line for the run log (the runner's notes, a fallback it took).
    void log(quint64 id, kf::protocol::Event::Level level, const QString& text);
    /// The run's report: the runner's, or one with verdict "error" saying why there is none.
    void reportReady(quint64 id, const kf::protocol::RunReport& report);
    /// The run itself failed (no runner, no GPU, a crash, a cancel); runFinished follows.
    void failed(quint64 id, const kf::Error& error);
    /// The run ended: `ok` when every report passed; `sentence` says what happened (the
    /// runner's crash or timeout sentence when it failed).
    void runFinished(quint64 id, bool ok, const QString& sentence);

private:
    void post(std::function<void()> job);
    void workerLoop();
    /// Worker: a session of the newest options (the old one's runner is stopped first).
    void ensureSession();
    void probeOnWorker();
    quint64 startJob(const kf::Task& task, Plan plan, const QString& title);
    void runOnWorker(quint64 id, const kf::Task& task, const Plan& plan, std::shared_ptr<kf::CancelToken> cancel);
    /// Worker: the run's events as queued signals of run `id`.
    kf::RunPipeline::EventFn eventsTo(quint64 id);
    /// Worker: after a run that could not be tried at all (no runner, no GPU), or one that ended.
    void endAfterError(quint64 id, const kf::Error& error);
    void endAfterOutcome(quint64 id, const kf::RunOutcome& outcome);
    /// Worker: queued runFinished(id, ok, sentence), the run's cancel token dropped.
    void finishRun(quint64 id, bool ok, const std::string& sentence);
    void setState(RunnerState state, const QString& text, const QString& detail = {});
    void applyHello(const kf::protocol::Hello& hello);
    void applyStartError(const kf::Error& error);
    /// Worker: the run ended because the connection or the runner went away (Error::kind
    /// connection_lost, runner_lost): the status bar says so, and the next run starts a new one.
    void applyLost(const kf::Error& error);

    Options m_options;                                     // UI side: the newest
    // Worker side.
    std::unique_ptr<kf::RunPipeline> m_session;            // worker thread only
    Options m_sessionOptions;                              // worker thread only: what m_session was made with
    QString m_sessionEndpoint;                             // worker thread only: its endpoint's name
    Options m_pendingOptions;                              // guarded by m_mutex
    quint64 m_optionsGeneration = 0;                       // guarded by m_mutex
    quint64 m_sessionGeneration = ~quint64(0);             // worker thread only
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::function<void()>> m_jobs;              // guarded by m_mutex
    bool m_stopping = false;                               // guarded by m_mutex
    std::shared_ptr<kf::CancelToken> m_cancel;             // guarded by m_mutex
    // UI side.
    RunnerState m_state = RunnerState::NotStarted;
    QString m_stateText = QStringLiteral("runner not started");
    QString m_stateDetail;
    QString m_arch;
    std::optional<kf::protocol::Hello> m_hello;
    bool m_running = false;
    quint64 m_nextId = 1;
    int m_restarts = 0;
    std::thread m_worker;
};

} // namespace kf::app
