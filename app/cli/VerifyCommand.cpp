#include "VerifyCommand.h"

#include "engine/protocol/Report.h"
#include "ExitCodes.h"
#include "ReproCommand.h"
#include "RunnerCommand.h"
#include "TextTable.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>


namespace kf::cli {

namespace {

std::string worstText(const std::optional<double>& v, const char* unit = "")
{
    return v ? protocol::formatNumber(*v) + unit : std::string("-");
}

// Below the table: the evidence of the first failing trial, so the user sees where it went
// wrong without opening the JSON.
void printFirstFailure(std::ostream& out, const protocol::VerifyReport& report, bool withSet)
{
    for (const protocol::CorrectnessShape& s : report.shapes)
        if (const protocol::Trial* t = s.firstFailingTrial()) {
            out << "  first failure: " << s.id.text(withSet) << ", trial " << t->trial << " (seed "
                << (t->seed.empty() ? "?" : t->seed) << ")\n";
            for (const std::string& line : t->evidence())
                out << "    " << line << '\n';
            return;
        }
}

} // namespace

void printSanitizerSection(std::ostream& out, const protocol::SanitizerSection& s)
{
    if (!s.ran) {
        // Every verify report has the section; one the user did not ask for says nothing new.
        if (s.requested)
            out << "  compute-sanitizer: not run (" << s.reason << ")\n";
        return;
    }
    std::string shapes;
    for (const std::string& sh : s.shapes)
        shapes += (shapes.empty() ? "" : "; ") + sh;
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f s", s.durationMs / 1000.0);
    out << "  compute-sanitizer " << s.toolVersion << " on " << shapes << " (" << secs << "):";
    for (const protocol::SanitizerToolRun& t : s.tools) {
        out << ' ' << t.tool << ' ';
        if (!t.error.empty())
            out << "ERROR";
        else if (!t.skipped.empty())
            out << "skipped";
        else
            out << (t.findings ? std::to_string(t.findings) + (t.findings == 1 ? " finding" : " findings") : std::string("clean"));
    }
    out << '\n';
    for (const protocol::SanitizerToolRun& t : s.tools)
        if (!t.error.empty())
            out << "    " << t.tool << ": " << t.error << '\n';
    std::size_t shown = 0;
    for (const protocol::SanitizerFinding& f : s.findings) {
        if (++shown > 5) {
            out << "    … and " << (s.findings.size() - 5) << " more (--json)\n";
            break;
        }
        out << "    " << f.summary() << (f.count > 1 ? " [" + std::to_string(f.count) + "×]" : std::string()) << '\n';
    }
}

void printVerifyReport(std::ostream& out, const protocol::RunReport& run, bool withSet)
{
    const protocol::Header& h = run.header();
    out << h.title() << '\n';
    static const protocol::VerifyReport none;
    const protocol::VerifyReport& report = run.verify() ? *run.verify() : none;
    if (!report.shapes.empty()) {
        using A = TextTable::Align;
        TextTable table({{"shape", A::Left},
                         {"verdict", A::Left},
                         {"max abs err", A::Right},
                         {"max rel err", A::Right},
                         {"err vs LibTorch", A::Right},
                         {"mismatches", A::Right},
                         {"unwritten", A::Right},
                         {"first failure", A::Left}});
        std::string goldenNote;
        for (const protocol::CorrectnessShape& s : report.shapes) {
            // The same summary the workbench's Runs table shows (CorrectnessShape::summary).
            const protocol::ShapeSummary sum = s.summary();
            if (goldenNote.empty())
                goldenNote = sum.goldenNote;
            table.addRow({s.id.text(withSet), sum.passed ? "pass" : "FAIL", worstText(sum.maxAbsError), worstText(sum.maxRelError),
                          worstText(sum.errorRatio, "\u00d7"), std::to_string(sum.mismatches), std::to_string(sum.unwritten),
                          TextTable::truncate(sum.firstFailure, 90)});
        }
        table.print(out);
        // "err vs LibTorch": the candidate's RMS error against the float64 golden result over LibTorch's.
        if (!goldenNote.empty())
            out << "  note: no float64 golden result for some output (" << goldenNote << ")\n";
        if (h.verdict == protocol::Verdict::Fail)
            printFirstFailure(out, report, withSet);
    }
    if (report.sanitizer)
        printSanitizerSection(out, *report.sanitizer);
    if (report.discriminates == false)
        out << "  warning: an all-zero or constant output would pass on some shape (see negative_control in --json); "
               "tighten the tolerance or change the inputs before trusting a pass\n";
    if (h.verdict == protocol::Verdict::Pass) {
        std::string detail = std::to_string(report.shapes.size()) + " shape(s)";
        if (report.trialsPerShape > 0)
            detail += " × " + std::to_string(report.trialsPerShape) + " trial(s)";
        out << "  PASS (" << detail << ")\n";
    } else if (h.verdict == protocol::Verdict::Fail) {
        out << "  FAIL: " << (h.summary.empty() ? "some shapes failed" : h.summary) << '\n';
    } else {
        out << "  " << h.errorLine() << '\n';
    }
    if (!h.seeds.empty()) {
        std::string list;
        for (const std::string& seed : h.seeds)
            list += (list.empty() ? "" : ", ") + seed;
        out << "  seeds: " << list << '\n';
    }
}

namespace {

// What to do for the options given: replay a bundle, shrink a failure, or verify on the runner
// (or a pool). Refuses the combinations that mean nothing. Returns the exit code.
int dispatchVerify(const RunArgs& a)
{
    if (!a.endpoint.pool.empty() && (!a.repro.empty() || a.shrink)) {
        std::cerr << "kforge: --pool fans a task's candidates out; --repro and --shrink run one candidate on one endpoint "
                     "(use --runner-endpoint)\n";
        return kExitUsage;
    }
    if (!a.repro.empty()) {
        if (!a.path.empty() || a.shrink || !a.exportRepro.empty()) {
            std::cerr << "kforge: --repro replays a bundle; give no task, --shrink or --export-repro with it\n";
            return kExitUsage;
        }
        return runRepro(a);
    }
    if (a.path.empty()) {
        std::cerr << "kforge: verify needs a task folder (or --repro BUNDLE)\n";
        return kExitUsage;
    }
    if (!a.candidateSource.empty() || (!a.shape.empty() && !a.shrink)) {
        std::cerr << "kforge: " << (a.candidateSource.empty() ? "--shape" : "--candidate-source") << " needs "
                  << (a.candidateSource.empty() ? "--shrink" : "--repro") << '\n';
        return kExitUsage;
    }
    if (a.shrink) {
        if (a.shapes != "tests" || a.heldOut > 0 || a.repeat > 1) {
            std::cerr << "kforge: --shrink starts from the test shapes (or --shape); it takes no --shapes, --held-out "
                         "or --repeat\n";
            return kExitUsage;
        }
        return runShrink(a);
    }
    return runOnRunner(a);
}

// The options of what a failure leaves behind: the sanitizer, dumps, repro bundles and --shrink.
void addFailureOptions(CLI::App* cmd, RunArgs* args)
{
    cmd->add_flag("--sanitize{all}", args->sanitize,
                  "also run the candidate under compute-sanitizer on the smallest test shapes: all tools, or a comma-separated "
                  "list of memcheck, racecheck, initcheck, synccheck (--sanitize=memcheck,racecheck)");
    cmd->add_option("--arch", args->arch, "compile for this architecture instead of the GPU's, e.g. sm_90");
    cmd->add_option("--samples", args->samples, "mismatching elements listed per output in the report")
        ->check(CLI::Range(1, 1000));
    cmd->add_option("--dump", args->dumpDir,
                    "save the inputs, expected and actual outputs of failing trials here (.npy, see docs/tensor-files.md)");
    cmd->add_option("--dump-max-mib", args->dumpMaxMib, "the most --dump may write in a run, in MiB (default 2048)")
        ->check(CLI::Range(0, 65536));
    cmd->add_flag("--dump-all", args->dumpAllFailing, "save every failing trial, not only each shape's first");
    cmd->add_option("--export-repro", args->exportRepro,
                    "write the first failing case as a repro bundle to this new folder (one candidate)");
    cmd->add_option("--repro", args->repro, "re-run a repro bundle from its saved inputs instead of a task");
    cmd->add_option("--candidate-source", args->candidateSource,
                    "with --repro: compile this file instead of the bundle's copy (try a fix on the same inputs)");
    cmd->add_flag("--shrink", args->shrink, "find the smallest shape that still fails the same way");
    cmd->add_option("--shape", args->shape, "with --shrink: start from this shape, e.g. N=4099 or B=7,D=4097");
    cmd->add_option("--shrink-budget", args->shrinkBudget, "with --shrink: the most shapes to probe")
        ->check(CLI::Range(1, 4096));
    cmd->add_flag("--shrink-any", args->shrinkAny, "with --shrink: accept any failure, not only one of the same kind");
}

} // namespace

void addVerifyCommand(CLI::App& app, int& exitCode)
{
    auto args = std::make_shared<RunArgs>();
    args->kind = RunKind::Verify;
    args->shapes = "tests";
    CLI::App* cmd = app.add_subcommand("verify", "Check candidates against the task's LibTorch reference on the GPU");
    cmd->add_option("task", args->taskPaths, "task folder or task.json (not with --repro; several with --pool)");
    cmd->add_option("--candidate", args->candidates, "verify only this candidate (repeatable; default: all)")
        ->allow_extra_args(false); // one file per flag, so a task path after it stays the task
    cmd->add_option("--seed", args->seed, "hex seed of trial 0 (trial i uses seed+i), to replay a failure exactly");
    cmd->add_option("--trials", args->trials, "trials per shape, each with fresh inputs")->check(CLI::Range(1, 1000));
    cmd->add_option("--repeat", args->repeat,
                    "edit-to-verdict latency: N rounds of edit, compile and verify with one warm runner, each timed")
        ->check(CLI::Range(1, 1000));
    cmd->add_option("--held-out", args->heldOut,
                    "also run N shapes derived from the task's symbol ranges and constraints (as promotion does)")
        ->check(CLI::Range(0, 16));
    cmd->add_option("--shapes", args->shapes, "which shape set to run")->check(CLI::IsMember({"tests", "benchmarks", "all"}));
    addFailureOptions(cmd, args.get());
    addTaskRunOptions(cmd, args, exitCode, dispatchVerify);
}

} // namespace kf::cli
