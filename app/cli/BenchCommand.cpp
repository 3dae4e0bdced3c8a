#include "BenchCommand.h"

#include "engine/protocol/Report.h"
#include "RunnerCommand.h"
#include "TextTable.h"

#include <algorithm>
#include <memory>


namespace kf::cli {

namespace {

std::string numberText(const std::optional<double>& v, int significant, const char* unit = "")
{
    return v ? protocol::formatNumber(*v, significant) + unit : std::string("-");
}

} // namespace

void printBenchReport(std::ostream& out, const protocol::RunReport& run, bool withSet)
{
    const protocol::Header& h = run.header();
    out << h.title() << '\n';
    static const protocol::BenchReport none;
    const protocol::BenchReport& report = run.bench() ? *run.bench() : none;
    if (!report.shapes.empty()) {
        using A = TextTable::Align;
        std::vector<TextTable::Column> columns({{"shape", A::Left},
                         {"candidate (median ± IQR)", A::Right},
                         {"baseline", A::Right},
                         {"speedup", A::Right},
                         {"GB/s (% peak)", A::Right},
                         {"TFLOP/s", A::Right},
                         {"samples", A::Right},
                         {"flags", A::Left}});
        const bool withCompile = report.compileBaseline.has_value();
        if (withCompile)
            columns.insert(columns.begin() + 4, {{"torch.compile (best mode)", A::Right}, {"vs compile", A::Right}});
        TextTable table(std::move(columns));
        for (const protocol::BenchShape& s : report.shapes) {
            std::string candText = numberText(s.candidate.medianMs, 4);
            if (s.candidate.medianMs)
                candText += " ± " + numberText(s.candidate.iqrMs, 2) + " ms";
            std::string gbs = s.achievedGbs ? protocol::formatFixed(*s.achievedGbs, 1) : "-";
            if (s.pctPeakBandwidth)
                gbs += " (" + protocol::formatFixed(*s.pctPeakBandwidth, 1) + " %)";
            const std::string tflops = s.flops > 0 && s.achievedTflops ? protocol::formatFixed(*s.achievedTflops, 2) : "-";
            std::string samples = std::to_string(s.candidate.samples);
            if (s.baseline.samples != s.candidate.samples)
                samples += "/" + std::to_string(s.baseline.samples);
            std::string flagText;
            // allFlags: shown even if the runner did not list them, since these make the number a lie.
            for (const std::string& f : s.allFlags())
                flagText += (flagText.empty() ? "" : "; ") + f;
            std::vector<std::string> row = {s.id.text(withSet), candText, numberText(s.baseline.medianMs, 4, " ms"),
                                            numberText(s.speedup, 3, "×"), gbs, tflops, samples, TextTable::truncate(flagText, 80)};
            if (withCompile) {
                const protocol::CompileComparison* c = s.compile ? &*s.compile : nullptr;
                std::string best = c && c->bestMs ? numberText(c->bestMs, 4, " ms") + " (" + c->bestMode + ")" : "-";
                std::string vs = c && c->measured ? numberText(c->speedup, 3, "×") : "not measured";
                for (const std::string& f : c ? c->flags : std::vector<std::string>{})
                    row.back() += (row.back().empty() ? "" : "; ") + f;
                row.insert(row.begin() + 4, {best, vs});
            }
            table.addRow(row);
        }
        table.print(out);
        if (report.geomeanSpeedup) {
            out << "  geomean speedup " << protocol::formatNumber(*report.geomeanSpeedup) << "× over " << report.shapes.size()
                << " shape(s)";
            if (report.allShapesAtLeast1x)
                out << "; every shape at least 1×: " << (*report.allShapesAtLeast1x ? "yes" : "no");
            out << '\n';
        }
        if (const auto& cb = report.compileBaseline) {
            if (cb->measured) {
                std::string modes;
                for (const std::string& m : cb->modes)
                    modes += (modes.empty() ? "" : ", ") + m;
                out << "  against torch.compile (" << modes << "; torch " << cb->torch
                    << (cb->triton.empty() ? "" : ", Triton " + cb->triton) << "): geomean speedup "
                    << numberText(cb->geomeanSpeedup, 3, "×") << "; compile time is not in any timing\n";
            } else {
                out << "  compile baseline: not measured: " << cb->reason << '\n';
            }
        }
    }
    if (h.verdict == protocol::Verdict::Ok)
        out << "  OK\n";
    else if (h.verdict == protocol::Verdict::Fail)
        out << "  FAIL: " << (h.summary.empty() ? "the measurement is not trustworthy" : h.summary) << '\n';
    else
        out << "  " << h.errorLine() << '\n';
}

void addBenchCommand(CLI::App& app, int& exitCode)
{
    auto args = std::make_shared<RunArgs>();
    args->kind = RunKind::Bench;
    args->shapes = "benchmarks";
    args->baseline = "both";
    CLI::App* cmd = app.add_subcommand("bench", "Time candidates against the LibTorch baseline on the GPU, interleaved");
    cmd->add_option("task", args->taskPaths, "task folder or task.json (several with --pool)")->required();
    cmd->add_option("--candidate", args->candidates, "benchmark only this candidate (repeatable; default: all)")
        ->allow_extra_args(false); // one file per flag, so a task path after it stays the task
    cmd->add_option("--shapes", args->shapes, "which shape set to time")->check(CLI::IsMember({"benchmarks", "tests", "all"}));
    cmd->add_option("--time-cap-ms", args->timeCapMs, "stop sampling a shape after this long")->check(CLI::PositiveNumber);
    cmd->add_option("--min-samples", args->minSamples, "samples per shape at least")->check(CLI::Range(1, 100000));
    cmd->add_option("--max-samples", args->maxSamples, "samples per shape at most")->check(CLI::Range(1, 100000));
    cmd->add_option("--target-spread", args->targetSpread, "stop once the median's relative spread is below this")
        ->check(CLI::Range(0.0, 1.0));
    cmd->add_option("--baseline", args->baseline,
                    "eager: LibTorch only; both: also torch.compile, said when it cannot be measured; compile: as both, "
                    "but a torch.compile baseline that cannot be measured fails the run")
        ->check(CLI::IsMember({"eager", "compile", "both"}));
    cmd->add_option("--compile-mode", args->compileModes, "torch.compile mode to time (repeatable; default: both)")
        ->check(CLI::IsMember({"default", "max-autotune-no-cudagraphs"}))
        ->allow_extra_args(false);
    addTaskRunOptions(cmd, args, exitCode, [](const RunArgs& a) { return runOnRunner(a); });
}

} // namespace kf::cli
