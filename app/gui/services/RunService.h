#pragma once
// The workbench's one owner of the GPU runner. A single long-lived worker thread owns the
// engine's RunnerSupervisor (the runner dies with the thread that spawned it, so that thread
// lives as long as this service) and runs one job at a time: probe the runner, or compile a
// candidate for the runner's GPU and verify or benchmark it. Everything the worker learns comes
// back to the UI thread as signals; the UI never waits on the runner.
#include "engine/runner/RunRequest.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

Q_DECLARE_METATYPE(nlohmann::json)

namespace kf {
class RunnerSupervisor;
class CancelToken;
class CompileCache;
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
    };

    explicit RunService(Options options, QObject* parent = nullptr);
    /// Cancels the job in flight, stops the runner and joins the worker.
    ~RunService() override;

    /// Starts the runner (if needed) and reports what it found through stateChanged. UI thread.
    void probe();
    /// Compiles `candidateFile` of `task` (as saved on disk) for the runner's GPU and verifies or
    /// benchmarks it. Returns the run id; only one run at a time (returns 0 while busy).
    quint64 run(kf::RunKind kind, const kf::Task& task, const QString& candidateFile, const kf::RunSettings& settings);
    /// A run made of several requests (shrink): gets a function that sends one verify request
    /// with the given settings for the compiled candidate, and returns the report to show.
    using Send = std::function<kf::Result<nlohmann::json>(const kf::RunSettings&)>;
    using Job = std::function<kf::Result<nlohmann::json>(const Send& send)>;
    /// Shrinks a failing shape (engine/verify/Shrink.h) on the worker: probes batches of smaller
    /// shapes with the failing trial's seed, then verifies the smallest with 3 fresh trials,
    /// saving its tensors to `dumpDir`. The report is that confirmation, with a "shrink" block.
    quint64 shrink(const kf::Task& task, const QString& candidateFile, const kf::ShapeBinding& start,
                   const QString& failureKind, quint64 seed, int trial, const QString& dumpDir);
    /// Asks the run in flight to stop; the runner is killed and restarted if it does not return.
    void cancel();

    bool isRunning() const { return m_running; }
    RunnerState state() const { return m_state; }
    /// "NVIDIA H100 80GB HBM3 · sm_90 · driver 580.159.04", "no GPU: compile-only mode", ...
    QString stateText() const { return m_stateText; }
    QString stateDetail() const { return m_stateDetail; }
    QString architecture() const { return m_arch; }
    int restarts() const { return m_restarts; }

signals:
    void stateChanged(kf::app::RunService::RunnerState state, const QString& text);
    void runStarted(quint64 id, const QString& title);
    /// progress / launch_begin / launch_end / log messages from the runner, plus our own
    /// {"type":"progress","stage":"compiling for sm_90"} before the runner is involved.
    void runEvent(quint64 id, const nlohmann::json& event);
    void runReport(quint64 id, const nlohmann::json& report);
    /// The run ended: `ok` when every report passed; `sentence` says what happened (the
    /// runner's crash or timeout sentence when it failed).
    void runFinished(quint64 id, bool ok, const QString& sentence);

private:
    void post(std::function<void()> job);
    void workerLoop();
    void probeOnWorker();
    quint64 startJob(kf::RunKind kind, const kf::Task& task, const QString& candidateFile, const kf::RunSettings& settings,
                     const QString& title, Job job);
    void runOnWorker(quint64 id, kf::RunKind kind, kf::Task task, std::string candidateFile, kf::RunSettings settings,
                     std::shared_ptr<kf::CancelToken> cancel, Job job);
    void setState(RunnerState state, const QString& text, const QString& detail = {});
    void applyHello(const nlohmann::json& hello);

    Options m_options;
    // Worker side.
    std::unique_ptr<kf::RunnerSupervisor> m_supervisor;   // worker thread only
    std::unique_ptr<kf::CompileCache> m_cache;             // thread-safe
    nlohmann::json m_hello;                                // worker thread only
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
    bool m_running = false;
    quint64 m_nextId = 1;
    int m_restarts = 0;
    std::thread m_worker;
};

} // namespace kf::app
