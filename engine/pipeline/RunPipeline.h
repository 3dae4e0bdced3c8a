#pragma once
// The one run pipeline (docs/architecture.md, "A run"): everything a verify, bench or profile run
// is, decided in one place for the CLI, the workbench, the pool, the Assistant and synthesis.
//
//   resolveCandidates  which candidates of the task a run names (the one "is this a candidate" check)
//   RunSession         start the runner, compile for its GPU, apply the run policy, stage files,
//                      send the request, read the typed report (an error report for every failure)
//   RunPipeline        then what follows a report: the torch.compile comparison on this machine
//                      (never beside a kernel timed on another host), re-signing the edited report
//
// A new run kind is a new RunKind value, its request in engine/runner/RunSettings.cpp and, if a
// report of that kind needs a step after the runner, one branch in RunPipeline::run.
// Callers only translate their options into a Plan and show the events and the outcome.
//
// Not thread-safe: one owner, on the thread that must outlive the runner (RunnerSupervisor).

#include "engine/core/Result.h"
#include "engine/runner/RunSession.h"
#include "engine/task/Task.h"

#include <functional>
#include <string>
#include <vector>

namespace kf {

using RunPlan = RunSession::Plan;

/// How a run ended; `report` is always there (RunSession::Outcome).
struct RunOutcome : RunSession::Outcome {
    /// Cancel came while torch.compile was timed: the report against LibTorch stands, the
    /// comparison says it was cancelled.
    bool comparisonCancelled = false;
    /// The one pass rule (protocol::passes) applied to a run that produced its own report.
    bool passed() const { return !failure && report.passed(); }
};

/// The candidates of `task` that `names` lists, in order and without repeats; every candidate
/// when `names` is empty. An Error names the first that is not one, and what to do.
Result<std::vector<const Candidate*>> resolveCandidates(const Task& task, const std::vector<std::string>& names);

class RunPipeline {
public:
    using Options = RunSession::Options;
    using EventFn = RunSession::EventFn;

    RunPipeline();
    explicit RunPipeline(Options options);

    /// Starts the runner if needed (RunSession::start).
    Result<protocol::Hello> start() { return m_session.start(); }
    RunSession& session() { return m_session; }
    const RunSession& session() const { return m_session; }

    /// Runs `plan` on `task`. An Error only when nothing could be tried (RunSession::run); every
    /// other ending, a compile error and a crash included, is an outcome with a report.
    Result<RunOutcome> run(const Task& task, const RunPlan& plan, const EventFn& onEvent = {},
                           const CancelToken* cancel = nullptr);

private:
    /// Bench: the torch.compile comparison of the report, when the plan asked for it.
    void compareWithTorchCompile(const Task& task, const RunPlan& plan, RunOutcome& outcome, const EventFn& onEvent,
                                 const CancelToken* cancel);

    RunSession::Options m_options;
    RunSession m_session;
};

} // namespace kf
