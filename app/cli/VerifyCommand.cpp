#include "VerifyCommand.h"

#include "ReportText.h"
#include "ExitCodes.h"
#include "ReproCommand.h"
#include "RunnerCommand.h"
#include "TextTable.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

using nlohmann::json;

namespace kf::cli {

namespace {

// The worst of several report numbers; NaN anywhere wins, since it is what a user must see.
struct Worst {
    double value = 0.0;
    bool any = false;
    bool nan = false;
    void add(const json& v)
    {
        if (!v.is_number() && !v.is_string())
            return;
        any = true;
        double d = numberValue(v);
        if (std::isnan(d))
            nan = true;
        else
            value = std::max(value, d);
    }
    std::string text() const
    {
        if (!any)
            return "-";
        if (nan)
            return "nan";
        return numberText(value, 3);
    }
};

std::string indexText(const json& index)
{
    if (!index.is_array())
        return numberText(index, 17);
    std::string s = "[";
    for (std::size_t i = 0; i < index.size(); ++i)
        s += (i ? ", " : "") + numberText(index[i], 17);
    return s + "]";
}

// Below the table: the evidence of the first failing trial, so the user sees where it went
// wrong without opening the JSON.
void printFirstFailure(std::ostream& out, const json& shapes, bool withSet)
{
    for (const auto& s : shapes) {
        for (const auto& t : field(s, "trials")) {
            if (field(t, "passed") != json(false))
                continue;
            const std::string where = shapeText(s, withSet) + ", trial " + numberText(field(t, "trial")) + " (seed " +
                                      stringField(t, "seed", "?") + ")";
            out << "  first failure: " << where << '\n';
            if (std::string le = stringField(t, "launch_error"); !le.empty())
                out << "    launch error: " << le << '\n';
            for (const auto& g : field(t, "guard_violations"))
                out << "    out-of-bounds write: " << stringField(g, "buffer", "?") << ", " << stringField(g, "side", "?")
                    << " the buffer, at byte offset " << numberText(field(g, "offset_bytes"), 17) << '\n';
            if (const json& mi = field(t, "modified_inputs"); mi.is_array() && !mi.empty()) {
                std::string names;
                for (const auto& n : mi)
                    names += (names.empty() ? "" : ", ") + (n.is_string() ? n.get<std::string>() : n.dump());
                out << "    inputs modified by the candidate: " << names << '\n';
            }
            for (const auto& o : field(t, "outputs")) {
                const std::string name = stringField(o, "output", "?");
                int shown = 0;
                for (const auto& m : field(o, "first_mismatches")) {
                    if (shown++ == 5)
                        break;
                    out << "    " << name << indexText(field(m, "index")) << ": expected " << numberText(field(m, "expected"), 6)
                        << ", got " << numberText(field(m, "actual"), 6) << " (abs error " << numberText(field(m, "abs_error"))
                        << ", rel error " << numberText(field(m, "rel_error")) << ")\n";
                }
                if (const json& u = field(o, "first_unwritten"); u.is_array() && !u.empty()) {
                    std::string idx;
                    for (std::size_t i = 0; i < u.size() && i < 5; ++i)
                        idx += (i ? ", " : "") + indexText(u[i]);
                    out << "    " << name << ": never written at " << idx << (u.size() > 5 ? ", …" : "") << '\n';
                }
            }
            if (field(t, "runs_agree") == json(false))
                out << "    two runs of the candidate disagreed on " << numberText(field(t, "run_disagreements"), 17)
                    << " element(s) (max difference " << numberText(field(t, "run_max_abs_diff")) << ")\n";
            return;
        }
    }
}

} // namespace

void printVerifyReport(std::ostream& out, const json& report, bool withSet)
{
    out << reportHeader(report) << '\n';
    const std::string verdict = stringField(report, "verdict");
    const json& shapes = field(report, "shapes");
    if (shapes.is_array() && !shapes.empty()) {
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
        for (const auto& s : shapes) {
            Worst absErr, relErr, ratio;
            long long mismatches = 0, unwritten = 0;
            std::string firstFailure;
            for (const auto& t : field(s, "trials")) {
                for (const auto& o : field(t, "outputs")) {
                    absErr.add(field(o, "max_abs_error"));
                    relErr.add(field(o, "max_rel_error"));
                    if (const json& g = field(o, "golden"); field(g, "available") == json(true))
                        ratio.add(field(g, "error_ratio"));
                    else if (goldenNote.empty() && field(g, "available") == json(false))
                        goldenNote = stringField(g, "note");
                    if (field(o, "mismatches").is_number_integer())
                        mismatches += field(o, "mismatches").get<long long>();
                    if (field(o, "unwritten").is_number_integer())
                        unwritten += field(o, "unwritten").get<long long>();
                }
                if (firstFailure.empty() && field(t, "passed") == json(false)) {
                    std::string why = stringField(t, "failure", stringField(t, "launch_error", "failed"));
                    firstFailure = "trial " + numberText(field(t, "trial")) + ": " + why;
                }
            }
            const bool passed = field(s, "passed") == json(true);
            table.addRow({shapeText(s, withSet), passed ? "pass" : "FAIL", absErr.text(), relErr.text(),
                          ratio.any ? ratio.text() + "\u00d7" : "-", std::to_string(mismatches), std::to_string(unwritten),
                          TextTable::truncate(firstFailure, 90)});
        }
        table.print(out);
        // "err vs LibTorch": the candidate's RMS error against the float64 golden result over LibTorch's.
        if (!goldenNote.empty())
            out << "  note: no float64 golden result for some output (" << goldenNote << ")\n";
        if (verdict == "fail")
            printFirstFailure(out, shapes, withSet);
    }
    if (field(report, "discriminates") == json(false))
        out << "  warning: an all-zero or constant output would pass on some shape (see negative_control in --json); "
               "tighten the tolerance or change the inputs before trusting a pass\n";
    if (verdict == "pass") {
        std::string detail;
        if (shapes.is_array())
            detail = std::to_string(shapes.size()) + " shape(s)";
        if (field(report, "trials_per_shape").is_number_integer())
            detail += " × " + field(report, "trials_per_shape").dump() + " trial(s)";
        out << "  PASS" << (detail.empty() ? "" : " (" + detail + ")") << '\n';
    } else if (verdict == "fail") {
        out << "  FAIL: " << stringField(report, "summary", "some shapes failed") << '\n';
    } else {
        out << "  " << errorLine(report) << '\n';
    }
    if (const json& seeds = field(report, "seeds"); seeds.is_array() && !seeds.empty()) {
        std::string list;
        for (const auto& s : seeds)
            list += (list.empty() ? "" : ", ") + (s.is_string() ? s.get<std::string>() : s.dump());
        out << "  seeds: " << list << '\n';
    }
}

void addVerifyCommand(CLI::App& app, int& exitCode)
{
    auto args = std::make_shared<RunArgs>();
    args->kind = RunKind::Verify;
    args->shapes = "tests";
    CLI::App* cmd = app.add_subcommand("verify", "Check candidates against the task's LibTorch reference on the GPU");
    cmd->add_option("task", args->path, "task folder or task.json (not with --repro)");
    cmd->add_option("--candidate", args->candidates, "verify only this candidate (repeatable; default: all)")
        ->allow_extra_args(false); // one file per flag, so a task path after it stays the task
    cmd->add_flag("--json", args->json, "print the reports as JSON (docs/report-schema.md)");
    cmd->add_option("--report", args->reportFile, "also write the JSON reports to this file (atomically)");
    cmd->add_option("--seed", args->seed, "hex seed of trial 0 (trial i uses seed+i), to replay a failure exactly");
    cmd->add_option("--trials", args->trials, "trials per shape, each with fresh inputs")->check(CLI::Range(1, 1000));
    cmd->add_option("--repeat", args->repeat,
                    "edit-to-verdict latency: N rounds of edit, compile and verify with one warm runner, each timed")
        ->check(CLI::Range(1, 1000));
    cmd->add_option("--held-out", args->heldOut,
                    "also run N shapes derived from the task's symbol ranges and constraints (as promotion does)")
        ->check(CLI::Range(0, 16));
    cmd->add_option("--shapes", args->shapes, "which shape set to run")->check(CLI::IsMember({"tests", "benchmarks", "all"}));
    cmd->add_option("--launch-timeout-ms", args->launchTimeoutMs, "watchdog per launch; a hung kernel is killed after it")
        ->check(CLI::Range(1, 86400000));
    cmd->add_option("--runner", args->runnerPath, "the kforge-runner program (default: $KF_RUNNER, beside kforge, PATH)");
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
    cmd->callback([args, &exitCode] {
        const RunArgs& a = *args;
        if (!a.repro.empty()) {
            if (!a.path.empty() || a.shrink || !a.exportRepro.empty()) {
                std::cerr << "kforge: --repro replays a bundle; give no task, --shrink or --export-repro with it\n";
                exitCode = kExitUsage;
                return;
            }
            exitCode = runRepro(a);
            return;
        }
        if (a.path.empty()) {
            std::cerr << "kforge: verify needs a task folder (or --repro BUNDLE)\n";
            exitCode = kExitUsage;
            return;
        }
        if (!a.candidateSource.empty() || (!a.shape.empty() && !a.shrink)) {
            std::cerr << "kforge: " << (a.candidateSource.empty() ? "--shape" : "--candidate-source") << " needs "
                      << (a.candidateSource.empty() ? "--shrink" : "--repro") << '\n';
            exitCode = kExitUsage;
            return;
        }
        if (a.shrink) {
            if (a.shapes != "tests" || a.heldOut > 0 || a.repeat > 1) {
                std::cerr << "kforge: --shrink starts from the test shapes (or --shape); it takes no --shapes, --held-out "
                             "or --repeat\n";
                exitCode = kExitUsage;
                return;
            }
            exitCode = runShrink(a);
            return;
        }
        exitCode = runOnRunner(a);
    });
}

} // namespace kf::cli
