#pragma once
// The runner half of the one run pipeline (engine/pipeline/RunPipeline.h, which every caller
// uses): start the runner (hello), compile the candidate for the GPU it found, apply the run
// policy (RunSettings), stage files where the endpoint needs them, send the request, and return a
// typed report with typed events along the way. A candidate that does not
// compile, and a runner that crashes, hangs or loses its CUDA context, still give a report
// (verdict "error", saying why), so every caller shows every ending the same way.
//
// Not thread-safe: one owner, on the thread that must outlive the runner (RunnerSupervisor).

#include "engine/compile/CompileTypes.h"
#include "engine/core/Result.h"
#include "engine/protocol/Messages.h"
#include "engine/protocol/RunReport.h"
#include "engine/runner/RunSettings.h"
#include "engine/runner/Endpoint.h"
#include "engine/runner/FileStage.h"
#include "engine/runner/Supervisor.h"
#include "engine/task/Task.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kf {

class CompileCache;

class RunSession {
public:
    struct Options {
        std::string runnerPath;                     ///< empty: RunnerSupervisor::defaultRunnerPath()
        std::vector<std::string> extraEnv;          ///< "NAME=value" for the runner
        std::filesystem::path cacheDir;             ///< compile cache; empty: the user's default
        std::string archOverride;                   ///< compile for this instead of the GPU's architecture
        /// Where the runner runs (runners.json): ssh, srun, a template. Unset: the local runner.
        /// Its name goes into every request's placement.
        std::optional<Endpoint> endpoint;
        /// The starting process's last stderr line, each time it changes (a queued srun job).
        std::function<void(const std::string&)> onStartLog;
    };

    using EventFn = std::function<void(const protocol::Event&)>;

    /// How one run ended. `report` is always there: the runner's, or one with verdict "error" that
    /// we made (then `failure` says why: a compile error, a crash, a timeout, a cancel).
    struct Outcome {
        protocol::RunReport report;
        std::optional<Error> failure;
        bool cancelled = false;
        bool runnerRestarted = false;               ///< a crash, hang or lost context put the runner down
        CompileResult compiled;                     ///< diagnostics for printing
        double compileMs = 0;
        double runnerMs = 0;
    };

    /// A run of several requests on one compiled candidate (shrink): `send` verifies with the
    /// given settings and returns the report.
    using Send = std::function<Result<protocol::RunReport>(const RunSettings&)>;
    using Job = std::function<Result<protocol::RunReport>(const Send& send)>;

    /// One run: what engine/pipeline/RunPipeline.h is given by every caller.
    struct Plan {
        RunKind kind = RunKind::Verify;
        std::string candidateFile;                  ///< a candidate of the task, as listed in task.json
        /// The policy of the one request; with a `job`, only its extraNvrtcOptions (the build) count.
        RunSettings settings;
        std::optional<std::string> source;          ///< compiled instead of the file (synthesis, --repeat)
        Job job;                                    ///< several requests on one build (shrink); empty: one
    };

    RunSession();
    explicit RunSession(Options options);
    ~RunSession();
    RunSession(const RunSession&) = delete;
    RunSession& operator=(const RunSession&) = delete;

    /// Starts the runner if needed and checks it has a GPU, its architecture and NVRTC. An Error
    /// (no runner, no GPU, no NVRTC) says what to do.
    Result<protocol::Hello> start();
    const protocol::Hello& hello() const { return m_hello; }
    /// The architecture candidates are compiled for (after start()).
    const std::string& arch() const { return m_arch; }
    const std::string& nvrtc() const { return m_nvrtc; }

    /// Compiles the plan's candidate of `task` (its `source` instead of the file when given),
    /// resolves each request's settings against the task and sends it. An Error only when nothing
    /// could be tried (the runner did not start, the candidate is not one of the task or its file
    /// cannot be read). Callers go through RunPipeline, which adds what follows a report.
    Result<Outcome> run(const Task& task, const Plan& plan, const EventFn& onEvent = {}, const CancelToken* cancel = nullptr);


    /// Whether requests carry their files: the endpoint does not see this machine's files
    /// (shared_fs false, docs/runners.md). Each request is then preceded by stageRequest().
    bool stagesFiles() const { return m_options.endpoint && !m_options.endpoint->sharedFs; }
    /// Stages on the runner the files `request` needs, the task's (taskFilesFor) and the repro
    /// inputs of its inputsDir, and rewrites it to name them by content (task_files and
    /// inputs_files instead of task_dir and inputs_dir) and to stream its dump back (dump.stream;
    /// dump.dir stays this machine's folder, where DumpReceiver writes). run() does this itself
    /// before every request of such an endpoint: a warm runner answers at once that it has them all.
    Result<StageStats> stageRequest(protocol::RunRequest& request, const Task& task, const CancelToken* cancel = nullptr);
    /// What the last staging sent.
    const StageStats& lastStage() const { return m_lastStage; }


    RunnerSupervisor& supervisor() { return *m_runner; }
    /// The endpoint's name ("local" without one).
    std::string endpointName() const { return m_options.endpoint ? m_options.endpoint->name : std::string("local"); }
    int restarts() const { return m_runner->restarts(); }

private:
    Options m_options;
    std::unique_ptr<RunnerSupervisor> m_runner;
    std::unique_ptr<CompileCache> m_cache;
    protocol::Hello m_hello;
    Result<StageStats> stageWith(protocol::RunRequest& request, const std::vector<StageFile>& taskFiles, const CancelToken* cancel);
    struct Built;
    /// One request of a run: the settings resolved against the task, the files staged where the
    /// endpoint needs them, then exchange().
    Result<protocol::RunReport> send(Built& built, const RunSettings& given, const EventFn& onEvent, const CancelToken* cancel,
                                     Outcome& out);
    /// Sends `request` (staged again once if the runner lost a file) and reads the report.
    Result<protocol::RunReport> exchange(const protocol::RunRequest& request, const Built& built, const EventFn& onEvent,
                                         const CancelToken* cancel, Outcome& out);

    std::string m_arch;
    std::string m_nvrtc;
    StageStats m_lastStage;
};

} // namespace kf
