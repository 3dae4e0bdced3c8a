#include "engine/pipeline/RunPipeline.h"

#include "engine/cast/CompileBaselineRun.h"

#include <algorithm>

namespace kf {

Result<std::vector<const Candidate*>> resolveCandidates(const Task& task, const std::vector<std::string>& names)
{
    std::vector<const Candidate*> out;
    for (const std::string& name : names) {
        const Candidate* c = task.findCandidate(name);
        if (!c)
            return Error::inFile((task.directory / "task.json").string(), "/candidates", "run " + name, name + " is not a candidate of task " + task.name, "list it with its launch plan under \"candidates\" in task.json (kforge candidate add, or File ▸ New "
                         "Candidate in the workbench)");
        if (std::find(out.begin(), out.end(), c) == out.end())
            out.push_back(c);
    }
    if (names.empty())
        for (const Candidate& c : task.candidates)
            out.push_back(&c);
    if (out.empty())
        return Error::inFile((task.directory / "task.json").string(), "/candidates", "run task " + task.name, "task " + task.name + " has no candidates yet", "add one with `kforge candidate add " + task.directory.string() + " <file.cu>` (or kforge generate)");
    return out;
}

RunPipeline::RunPipeline() : RunPipeline(Options{}) {}

RunPipeline::RunPipeline(Options options) : m_options(options), m_session(std::move(options)) {}

Result<RunOutcome> RunPipeline::run(const Task& task, const RunPlan& plan, const EventFn& onEvent, const CancelToken* cancel)
{
    if (auto listed = resolveCandidates(task, {plan.candidateFile}); !listed)
        return listed.error();
    auto ran = m_session.run(task, plan, onEvent, cancel);
    if (!ran)
        return ran.error();
    RunOutcome outcome;
    static_cast<RunSession::Outcome&>(outcome) = std::move(ran.value());
    if (plan.kind == RunKind::Bench && plan.settings.compileBaseline && !outcome.failure && !outcome.cancelled)
        compareWithTorchCompile(task, plan, outcome, onEvent, cancel);
    return outcome;
}

void RunPipeline::compareWithTorchCompile(const Task& task, const RunPlan& plan, RunOutcome& outcome, const EventFn& onEvent,
                                          const CancelToken* cancel)
{
    // torch.compile is timed by Python on this machine: beside a kernel timed on another host's
    // GPU the ratio would compare two machines.
    if (m_options.endpoint && m_options.endpoint->remote()) {
        outcome.report = outcome.report.withCompileNotMeasured(
            "torch.compile is timed on this machine and the candidate ran on " + m_options.endpoint->describe() +
            "; run `kforge bench` on that host for this baseline");
        return;
    }
    const Candidate* candidate = task.findCandidate(plan.candidateFile);
    if (onEvent)
        onEvent(protocol::Event::progress(0, 990, "timing against torch.compile"));
    cast::CompileBaselineOptions options;
    options.modes = plan.settings.compileModes;
    options.sampling = plan.settings.bench;
    options.stop = [cancel] { return cancel && cancel->cancelled(); };
    // The cubin the runner timed, not a second build: the harness times exactly that kernel.
    auto measured = cast::measureCompileBaseline(outcome.report, task, task.directory / "task.json", *candidate,
                                                 outcome.compiled, options);
    outcome.report = measured ? outcome.report.withCompileBaseline(measured.value())
                              : outcome.report.withCompileNotMeasured(measured.error().why);
    outcome.comparisonCancelled = cancel && cancel->cancelled();
}

} // namespace kf
