#include "BenchCommand.h"

#include "ReportText.h"
#include "RunnerCommand.h"
#include "TextTable.h"

#include <algorithm>
#include <memory>

using nlohmann::json;

namespace kf::cli {

namespace {

std::string withUnit(const json& v, const char* unit, int significant = 4)
{
    std::string n = numberText(v, significant);
    return n == "-" ? n : n + unit;
}

void addFlag(std::vector<std::string>& flags, const std::string& flag)
{
    if (std::find(flags.begin(), flags.end(), flag) == flags.end())
        flags.push_back(flag);
}

} // namespace

void printBenchReport(std::ostream& out, const json& report, bool withSet)
{
    out << reportHeader(report) << '\n';
    const std::string verdict = stringField(report, "verdict");
    const json& shapes = field(report, "shapes");
    if (shapes.is_array() && !shapes.empty()) {
        using A = TextTable::Align;
        TextTable table({{"shape", A::Left},
                         {"candidate (median ± IQR)", A::Right},
                         {"baseline", A::Right},
                         {"speedup", A::Right},
                         {"GB/s (% peak)", A::Right},
                         {"TFLOP/s", A::Right},
                         {"samples", A::Right},
                         {"flags", A::Left}});
        for (const auto& s : shapes) {
            const json& cand = field(s, "candidate");
            const json& base = field(s, "baseline");
            std::string candText = numberText(field(cand, "median_ms"), 4);
            if (candText != "-")
                candText += " ± " + numberText(field(cand, "iqr_ms"), 2) + " ms";
            std::string gbs = fixedText(field(s, "achieved_gbs"), 1);
            if (field(s, "pct_peak_bandwidth").is_number())
                gbs += " (" + fixedText(field(s, "pct_peak_bandwidth"), 1) + " %)";
            std::string tflops = numberValue(field(s, "flops")) > 0 ? fixedText(field(s, "achieved_tflops"), 2) : "-";
            std::string samples = numberText(field(cand, "samples"), 17);
            if (field(base, "samples") != field(cand, "samples"))
                samples += "/" + numberText(field(base, "samples"), 17);
            std::vector<std::string> flags;
            for (const auto& f : field(s, "flags"))
                if (f.is_string())
                    flags.push_back(f.get<std::string>());
            // Shown even if the runner did not list them as flags: these two make the number a lie.
            if (field(s, "below_floor") == json(true))
                addFlag(flags, "below roofline floor");
            if (const json& rc = field(s, "recheck"); field(rc, "passed") == json(false))
                addFlag(flags, "re-check failed" + (stringField(rc, "failure").empty() ? "" : ": " + stringField(rc, "failure")));
            std::string flagText;
            for (const auto& f : flags)
                flagText += (flagText.empty() ? "" : "; ") + f;
            table.addRow({shapeText(s, withSet), candText, withUnit(field(base, "median_ms"), " ms"),
                          withUnit(field(s, "speedup"), "×", 3), gbs, tflops, samples, TextTable::truncate(flagText, 80)});
        }
        table.print(out);
        if (const json& g = field(report, "geomean_speedup"); g.is_number() || g.is_string()) {
            out << "  geomean speedup " << numberText(g, 3) << "× over " << shapes.size() << " shape(s)";
            if (const json& all = field(report, "all_shapes_at_least_1x"); all.is_boolean())
                out << "; every shape at least 1×: " << (all.get<bool>() ? "yes" : "no");
            out << '\n';
        }
    }
    if (verdict == "ok")
        out << "  OK\n";
    else if (verdict == "fail")
        out << "  FAIL: " << stringField(report, "summary", "the measurement is not trustworthy") << '\n';
    else
        out << "  " << errorLine(report) << '\n';
}

void addBenchCommand(CLI::App& app, int& exitCode)
{
    auto args = std::make_shared<RunArgs>();
    args->kind = RunKind::Bench;
    args->shapes = "benchmarks";
    CLI::App* cmd = app.add_subcommand("bench", "Time candidates against the LibTorch baseline on the GPU, interleaved");
    cmd->add_option("task", args->path, "task folder or task.json")->required();
    cmd->add_option("--candidate", args->candidates, "benchmark only this candidate (repeatable; default: all)")
        ->allow_extra_args(false); // one file per flag, so a task path after it stays the task
    cmd->add_flag("--json", args->json, "print the reports as JSON (docs/report-schema.md)");
    cmd->add_option("--report", args->reportFile, "also write the JSON reports to this file (atomically)");
    cmd->add_option("--shapes", args->shapes, "which shape set to time")->check(CLI::IsMember({"benchmarks", "tests", "all"}));
    cmd->add_option("--time-cap-ms", args->timeCapMs, "stop sampling a shape after this long")->check(CLI::PositiveNumber);
    cmd->add_option("--min-samples", args->minSamples, "samples per shape at least")->check(CLI::Range(1, 100000));
    cmd->add_option("--max-samples", args->maxSamples, "samples per shape at most")->check(CLI::Range(1, 100000));
    cmd->add_option("--target-spread", args->targetSpread, "stop once the median's relative spread is below this")
        ->check(CLI::Range(0.0, 1.0));
    cmd->add_option("--launch-timeout-ms", args->launchTimeoutMs, "watchdog per launch; a hung kernel is killed after it")
        ->check(CLI::Range(1, 86400000));
    cmd->add_option("--runner", args->runnerPath, "the kforge-runner program (default: $KF_RUNNER, beside kforge, PATH)");
    cmd->callback([args, &exitCode] { exitCode = runOnRunner(*args); });
}

} // namespace kf::cli
