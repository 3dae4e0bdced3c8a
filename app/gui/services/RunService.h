#pragma once
// The workbench's one owner of the GPU runner. A single long-lived worker thread owns the
// engine's RunnerSupervisor (the runner dies with the thread that spawned it, so that thread
// lives as long as this service) and runs one job at a time: probe the runner, or compile a
// candidate for the runner's GPU and verify or benchmark it. Everything the worker learns comes
// back to the UI thread as signals; the UI never waits on the runner.
//
// Other threads submit runs to the same queue (runAndWait): the Assistant's verify and bench runs
// wait there behind the workbench's own and block their thread, never the UI's, until the worker
// ran them; one runner, one GPU, one run at a time (docs/conventions.md, "One owner per
// expensive resource").
#include "engine/core/Result.h"
#include "engine/protocol/Messages.h"
#include "engine/protocol/RunReport.h"
#include "engine/runner/Endpoint.h"
#include "engine/pipeline/RunPipeline.h"
#include "engine/task/Task.h"
#include "engine/tune/Tuner.h"

#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

Q_DECLARE_METATYPE(kf::protocol::RunReport)
Q_DECLARE_METATYPE(kf::protocol::Event::Level)
Q_DECLARE_METATYPE(kf::Error)
Q_DECLARE_METATYPE(kf::tune::Outcome)

namespace kf {
class CancelToken;
} // namespace kf

namespace kf::app {

/// A step of a tune search (tune::Progress as a value the UI thread can keep).
struct TuneStep {
    QString stage;                               ///< "compile", "verify", "time", "re-measure"
    int done = 0, total = 0;                     ///< of this stage
    double elapsedS = 0;
    std::optional<kf::tune::PointResult> point;  ///< the point just finished, if any
};

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
    /// benchmarks it. Returns the run id; one run of the UI thread at a time (returns 0 while one
    /// is queued or in flight). Behind a submitted run (runAndWait) it is queued, not refused:
    /// runQueued now, runStarted when the runner takes it.
    quint64 run(kf::RunKind kind, const kf::Task& task, const QString& candidateFile, const kf::RunSettings& settings);
    using Job = kf::RunSession::Job;
    using Plan = kf::RunPlan;
    /// Shrinks a failing shape (engine/verify/Shrink.h) on the worker: probes batches of smaller
    /// shapes with the failing trial's seed, then verifies the smallest with 3 fresh trials,
    /// saving its tensors to `dumpDir`. The report is that confirmation, with a "shrink" block.
    quint64 shrink(const kf::Task& task, const QString& candidateFile, const kf::ShapeBinding& start,
                   const QString& failureKind, quint64 seed, int trial, const QString& dumpDir);
    /// Run ▸ Tune: what the search and the winner's evidence run with.
    struct TuneRequest {
        kf::tune::Settings settings;   ///< the search; an empty cacheDir takes the service's
        kf::RunSettings verify;        ///< the winner's full verify
        kf::RunSettings bench;         ///< the winner's bench (the workbench asks for torch.compile too)
        bool writeBack = true;         ///< add the winner to the task and run its verify and bench
    };
    /// Searches the "tune" space of `candidateFile` (engine/tune/Tuner.h) on the worker: each
    /// point's verify and bench is RunPipeline::run on this service's runner, one at a time like
    /// every run. Then the winner is written back as a new candidate (tune::tunedFileName) and
    /// its verify and bench run; their reports come as reportReady. Steps come as tuneProgress
    /// (and progress, for the Runs panel), the search as tuneFinished before the winner's runs.
    /// cancel() stops it through the search's CancelToken. Returns the run id; 0 as for run().
    quint64 tune(const kf::Task& task, const QString& candidateFile, const TuneRequest& request);
    /// Asks the run in flight to stop; the runner is killed and restarted if it does not return.
    /// Stops the workbench's own run, queued or in flight, and a submitted run (runAndWait) in
    /// flight: Cancel stops what the Runs panel shows.
    void cancel();

    /// A run another thread hands to this service's queue (runAndWait).
    struct Submission {
        kf::RunKind kind = kf::RunKind::Verify;
        kf::Task task;
        std::string candidateFile;
        std::optional<std::string> source;   ///< compiled instead of the file (synthesis: not in the task yet)
        kf::RunSettings settings;
        /// Settings' extra NVRTC options make exploration builds; false builds the kernel as
        /// task.json says (synthesis measures what it adds to the task).
        bool workbenchNvrtcOptions = true;
        QString title;                       ///< the Runs panel's title: "Assistant: verify k.cu"
    };
    /// Runs `submission` on this service's runner, after the runs queued before it, and returns
    /// its report (or the Error of a run that could not be tried). Thread-safe; never on the UI
    /// thread (it blocks until the worker ran it: refused there with an Error). While it runs,
    /// runStarted, progress, reportReady and runFinished say so as for the workbench's own runs,
    /// and isSubmitted() tells them apart. Returns early with an Error when `cancel` is raised
    /// (the run is then cancelled too) and when the service is destroyed ("the workbench is
    /// closing"); an Error too when cancel() stopped it ("cancelled in the Runs panel"). The
    /// service must exist when the call is made; it may go while the call waits.
    kf::Result<kf::protocol::RunReport> runAndWait(Submission submission, const kf::CancelToken& cancel);
    /// Whether run `id` came through runAndWait (not one of the workbench's own). UI thread.
    bool isSubmitted(quint64 id) const;
    /// Submitted runs queued or on the GPU now (thread-safe).
    int submittedRuns() const;

    /// A run of the UI thread (run, shrink) is queued or in flight; submitted runs do not count.
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
    /// A run of the workbench's own waits behind `ahead`, a submitted run (the Assistant's);
    /// runStarted follows when it reaches the runner.
    void runQueued(quint64 id, const QString& title, const QString& ahead);
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
    /// A step of tune run `id`: a stage's count, and the point it just finished.
    void tuneProgress(quint64 id, const kf::app::TuneStep& step);
    /// Tune run `id` searched: every point's result; `writtenFile` is the winner's new candidate
    /// (empty when there is no winner or nothing was written). Its verify and bench follow.
    void tuneFinished(quint64 id, const kf::tune::Outcome& outcome, const QString& writtenFile);

private:
    void post(std::function<void()> job);
    void workerLoop();
    /// Worker: a session of the newest options (the old one's runner is stopped first).
    void ensureSession();
    void probeOnWorker();
    quint64 startJob(const kf::Task& task, Plan plan, const QString& title);
    /// Queues `work` (run on the worker with the run's id and cancel token) as a run of the UI thread.
    quint64 startWork(const QString& title, std::function<void(quint64, const std::shared_ptr<kf::CancelToken>&)> work);
    /// Worker: the search, the write-back and the winner's runs (RunServiceTune.cpp).
    void tuneOnWorker(quint64 id, const kf::Task& task, const std::string& file, TuneRequest request,
                      const std::shared_ptr<kf::CancelToken>& cancel);
    /// Worker: the winner `file` of the task in `dir` verified and benchmarked; false when it ended the run.
    bool runEvidence(quint64 id, const std::filesystem::path& dir, const std::string& file, const TuneRequest& request,
                     const std::shared_ptr<kf::CancelToken>& cancel, bool& ok);
    void runOnWorker(quint64 id, const kf::Task& task, const Plan& plan, std::shared_ptr<kf::CancelToken> cancel);
    /// Worker: after a run that could not be tried at all (no runner, no GPU), or one that ended.
    void endAfterError(quint64 id, const kf::Error& error);
    void endAfterOutcome(quint64 id, const kf::RunOutcome& outcome);
    /// Worker: queued runFinished(id, ok, sentence), the run's cancel token dropped.
    void finishRun(quint64 id, bool ok, const std::string& sentence);
    /// What a thread in runAndWait and the worker share: the answer, set once, and the run's
    /// own cancel (the caller's Cancel, Cancel in the Runs panel, the service going away).
    struct Waiter {
        std::mutex mutex;
        std::condition_variable done;
        std::optional<kf::Result<kf::protocol::RunReport>> result;   // guarded by mutex
        kf::CancelToken cancel;
        void settle(kf::Result<kf::protocol::RunReport> r);
    };
    /// Worker: `emitIt` on the UI thread (queued; dropped when the service is gone).
    void toUi(std::function<void(RunService&)> emitIt);
    void runSubmittedOnWorker(quint64 id, const Submission& submission, const std::shared_ptr<Waiter>& waiter);
    /// Worker: sends the runner's events of run `id` to the UI thread as signals.
    kf::RunPipeline::EventFn forwardEvents(quint64 id);
    /// Worker: the status bar after a run, from how it ended.
    void applyOutcome(const kf::Result<kf::RunOutcome>& outcome);
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
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::function<void()>> m_jobs;              // guarded by m_mutex
    bool m_stopping = false;                               // guarded by m_mutex
    std::shared_ptr<kf::CancelToken> m_cancel;             // guarded by m_mutex
    std::vector<std::weak_ptr<Waiter>> m_waiters;          // guarded by m_mutex: submitted runs not yet answered
    std::shared_ptr<Waiter> m_submittedInFlight;           // guarded by m_mutex
    std::set<quint64> m_submittedIds;                      // guarded by m_mutex: queued or in flight, until runFinished is out
    QString m_submittedTitle;                              // guarded by m_mutex: the last one submitted
    // UI side.
    RunnerState m_state = RunnerState::NotStarted;
    QString m_stateText = QStringLiteral("runner not started");
    QString m_stateDetail;
    QString m_arch;
    std::optional<kf::protocol::Hello> m_hello;
    bool m_running = false;
    std::atomic<quint64> m_nextId{1};                      // runs of the UI thread and of runAndWait
    int m_restarts = 0;
    std::thread m_worker;
};

} // namespace kf::app
Q_DECLARE_METATYPE(kf::app::TuneStep)
