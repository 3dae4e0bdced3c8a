#include "ReproCommand.h"

#include "ExitCodes.h"
#include "engine/repro/ShrinkProbe.h"
#include "RunnerSession.h"
#include "engine/repro/Repro.h"
#include "engine/verify/Shrink.h"

#include <iostream>
#include <sstream>


namespace kf::cli {

namespace {

struct Start {
    ShapeBinding shape;
    FailureKind kind = FailureKind::None;
    std::uint64_t seed = 0;
    int trial = 0;
    std::string failure;
};

// The first failing trial of a report: where the shrink starts, and with which seed.
std::optional<Start> firstFailure(const protocol::RunReport& report)
{
    if (!report.verify())
        return std::nullopt;
    for (const protocol::CorrectnessShape& s : report.verify()->shapes)
        if (const protocol::Trial* t = s.firstFailingTrial()) {
            Start st;
            for (const auto& [k, v] : s.id.dims)
                st.shape.values[k] = v;
            st.shape.label = s.id.label;
            st.kind = t->failureKind();
            st.seed = protocol::parseSeed(t->seed).value_or(0);
            st.trial = static_cast<int>(t->trial);
            st.failure = t->failure;
            return st;
        }
    return std::nullopt;
}

// The candidate, the shape and the seed the command line asks for. Returns an exit code (kExitOk
// when they are usable) after printing why not.
int readArguments(const RunArgs& a, const Task& task, const Candidate*& candidate, std::optional<ShapeBinding>& given,
                  std::optional<std::uint64_t>& seed)
{
    if (a.candidates.size() > 1 || (a.candidates.empty() && task.candidates.size() != 1)) {
        std::cerr << "kforge: --shrink works on one candidate; name it with --candidate\n";
        return kExitUsage;
    }
    candidate = a.candidates.empty() ? &task.candidates.front() : task.findCandidate(a.candidates.front());
    if (!candidate) {
        std::cerr << "kforge: " << a.candidates.front() << " is not a candidate of task " << task.name << '\n';
        return kExitUsage;
    }
    if (task.symbols.empty()) {
        std::cerr << "kforge: task " << task.name << " has no shape symbols, so there is nothing to shrink\n";
        return kExitUsage;
    }
    if (!a.shape.empty() && !(given = shapeArgument(task, a.shape)))
        return kExitUsage;
    if (!a.seed.empty() && !(seed = protocol::parseSeed(a.seed))) {
        std::cerr << "kforge: --seed " << a.seed << " is not a 64-bit hexadecimal number\n";
        return kExitUsage;
    }
    return kExitOk;
}

// Step 2: probe batches of shapes with the failing trial's seed and one more, so a failure that
// needs particular values or a racy one is not lost.
Result<ShrinkResult> shrinkFrom(const RunArgs& a, RunnerSession& session, const Task& task, const Candidate& candidate,
                                const std::string& label, const Start& start)
{
    ProbeFn probe = [&](const std::vector<ShapeBinding>& shapes) -> Result<std::vector<ProbeOutcome>> {
        RunSettings s;
        s.onlyShapes = shapes;
        s.setName = "shrink";
        s.trials = 2;
        s.seed = start.seed;
        s.firstTrial = start.trial;
        s.launchTimeoutMs = a.launchTimeoutMs;
        auto r = session.verify(task, candidate, s, label + " (probing " + std::to_string(shapes.size()) + " shapes)");
        if (!r)
            return r.error();
        return probeOutcomes(r.value(), shapes.size());
    };
    ShrinkOptions options;
    options.maxProbes = a.shrinkBudget;
    options.anyKind = a.shrinkAny;
    options.cancelled = [&] { return session.cancelled(); };
    options.progress = [&](const std::string& line) { std::cerr << "  " << line << '\n'; };
    return shrink(task, start.shape, start.kind, probe, options);
}

// Step 3: confirm the smallest shape with fresh seeds, saving its tensors for the inspector, and
// print what the shrink found.
void confirmAndReport(const RunArgs& a, RunnerSession& session, const Task& task, const Candidate& candidate,
                      const std::string& label, const ShrinkResult& r)
{
    RunSettings confirm;
    confirm.onlyShapes = {r.smallest};
    confirm.setName = "shrink";
    confirm.trials = 3;
    confirm.launchTimeoutMs = a.launchTimeoutMs;
    confirm.samples = a.samples;
    confirm.dumpDir = a.dumpDir.empty() ? newRunDumpDir(task.name, candidate.file).string() : a.dumpDir;
    auto confirmed = session.verify(task, candidate, confirm, label + " (confirming " + r.smallest.describe() + ")");
    nlohmann::json out = {{"shrink", toJson(r)}};
    if (confirmed)
        out["confirmation"] = confirmed->document();
    if (a.json) {
        std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    } else {
        std::cout << "shrink " << label << ": " << r.start.describe() << " -> " << r.smallest.describe() << " ("
                  << failureKindName(r.kind) << ")\n";
        std::cout << "  " << r.probes << " shapes probed in " << r.requests << " runner requests"
                  << (r.minimal ? "; 1-minimal: one step down on every symbol passes" : "")
                  << (r.budgetExhausted ? "; the probe budget ran out (--shrink-budget)" : "")
                  << (r.cancelled ? "; cancelled" : "") << '\n';
        if (confirmed)
            printVerifyReport(std::cout, confirmed.value(), true);
    }
    if (confirmed && !a.exportRepro.empty())
        exportFirstCase(confirmed.value(), task, a.exportRepro);
}

} // namespace

int runShrink(const RunArgs& a)
{
    auto loaded = loadTaskArgument(a.path);
    if (!loaded)
        return kExitUsage;
    const Task task = std::move(*loaded);
    const Candidate* candidate = nullptr;
    std::optional<ShapeBinding> given;
    std::optional<std::uint64_t> seed;
    if (int rc = readArguments(a, task, candidate, given, seed); rc != kExitOk)
        return rc;

    std::unique_ptr<RunnerSession> runner;
    if (auto failed = startRunner(a, runner))
        return *failed;
    RunnerSession& session = *runner;
    const std::string label = task.name + "/" + candidate->file;

    // 1. Where does it fail, and how? The task's test shapes, or the one given.
    RunSettings first;
    first.trials = a.trials;
    first.seed = seed;
    first.launchTimeoutMs = a.launchTimeoutMs;
    if (given) {
        first.onlyShapes = {*given};
        first.setName = "shrink";
    }
    if (!session.hello().has("only_shapes") || !session.hello().has("first_trial")) {
        std::cerr << "kforge: this kforge-runner cannot shrink (it cannot run chosen shapes); rebuild it\n";
        return kExitEnvironment;
    }
    auto report = session.verify(task, *candidate, first, label + " (finding the failure)");
    if (!report)
        return fail(report.error(), session.cancelled() ? kExitInterrupted : kExitFailed);
    const auto start = firstFailure(report.value());
    if (!start) {
        std::cerr << "kforge: " << label << " passes " << (given ? "at " + given->describe() : "every test shape")
                  << "; there is no failure to shrink\n";
        return report->isError() ? kExitEnvironment : kExitOk;
    }
    std::cerr << "shrinking from " << start->shape.describe() << " (" << failureKindName(start->kind) << ": "
              << start->failure << ")\n";

    auto result = shrinkFrom(a, session, task, *candidate, label, *start);
    if (!result)
        return fail(result.error(), session.cancelled() ? kExitInterrupted : kExitFailed);
    confirmAndReport(a, session, task, *candidate, label, result.value());
    return kExitFailed;
}

} // namespace kf::cli
