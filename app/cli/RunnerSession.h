#pragma once
// The command line's face on the engine's RunPipeline: Ctrl-C cancels through it (the runner's
// process group dies), start-up failures become a sentence on stderr and an exit code, and every
// request draws "label: 42.0% stage · launch" on stderr while it runs. `kforge verify`, `bench`,
// `profile`, `--repro` and `--shrink` share it, so all of them start, fail and cancel the same way.

#include "ProgressLine.h"
#include "engine/compile/CompileTypes.h"
#include "engine/core/Result.h"
#include "engine/protocol/RunReport.h"
#include "engine/runner/Endpoint.h"
#include "engine/pipeline/RunPipeline.h"
#include "engine/task/Task.h"

#include <memory>
#include <optional>
#include <string>

namespace kf::cli {

class RunnerSession {
public:
    RunnerSession(const std::string& runnerPath, const std::string& archOverride = {},
                  const std::optional<Endpoint>& endpoint = std::nullopt);
    ~RunnerSession();
    RunnerSession(const RunnerSession&) = delete;
    RunnerSession& operator=(const RunnerSession&) = delete;

    /// Starts the runner and checks it has a GPU. On failure prints why on stderr and returns
    /// the exit code to end with.
    std::optional<int> start();

    const protocol::Hello& hello() const { return m_session.session().hello(); }
    const std::string& arch() const { return m_session.session().arch(); }
    CancelToken& cancel() { return *m_cancel; }
    bool cancelled() const;

    /// Runs `plan` (RunPipeline::run) with a progress line labelled `label`. Compile diagnostics
    /// are printed on stderr when the candidate does not compile.
    Result<RunOutcome> run(const Task& task, const RunPlan& plan, const std::string& label);
    /// Verifies and returns the runner's report; a candidate that does not compile, or a run that
    /// failed, is an Error (the repro and shrink commands need a real verdict to go on).
    Result<protocol::RunReport> verify(const Task& task, const Candidate& candidate, const RunSettings& settings,
                                       const std::string& label, const std::optional<std::string>& source = std::nullopt);

    ProgressLine& progress() { return m_progress; }

private:
    struct Guard;
    std::unique_ptr<CancelToken> m_cancel;
    std::unique_ptr<Guard> m_guard;
    RunPipeline m_session;
    ProgressLine m_progress;
};

/// The process exit code for an interrupted command (the shell's convention for SIGINT).
inline constexpr int kExitInterrupted = 130;

} // namespace kf::cli
