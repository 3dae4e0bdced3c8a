#include "ProfileCommand.h"
#include "engine/protocol/Verdict.h"

#include "RunnerCommand.h"
#include "TextTable.h"
#include "engine/profile/Hints.h"
#include "engine/protocol/MetricCatalog.h"
#include "engine/protocol/ProfileReport.h"

#include <cmath>
#include <cstdio>
#include <memory>


namespace kf::cli {

namespace {

using profile::ProfileReport;
using profile::Side;
using profile::Totals;

std::string fmt(const char* format, double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

std::string pct(const std::optional<double>& v)
{
    return v ? fmt("%.1f %%", *v) : "-";
}

std::string duration(double ns)
{
    if (ns <= 0)
        return "-";
    return ns >= 1e6 ? fmt("%.3g ms", ns / 1e6) : fmt("%.3g us", ns / 1e3);
}

std::string bytes(double b)
{
    if (b <= 0)
        return b == 0 ? "0 B" : "-";
    const char* units[] = {"B", "KB", "MB", "GB", "TB"};
    int u = 0;
    while (b >= 1000 && u < 4) {
        b /= 1000;
        ++u;
    }
    return fmt("%.4g ", b) + units[u];
}

std::string rate(double perSecond, const char* unit)
{
    if (perSecond <= 0)
        return "-";
    return perSecond >= 1e3 ? fmt("%.3g T", perSecond / 1e3) + unit : fmt("%.3g G", perSecond) + unit;
}

std::string occupancyText(const Side& side)
{
    std::string s = pct(side.totals.achievedOccupancyPct);
    if (!side.kernels.empty() && side.kernels.front().statics.known && side.kernels.front().statics.theoreticalOccupancyPct > 0) {
        const auto& st = side.kernels.front().statics;
        s += " of " + fmt("%.1f %%", st.theoreticalOccupancyPct) + " (" + st.limiter + ")";
    }
    return s;
}

void printSides(std::ostream& out, const ProfileReport& r)
{
    using A = TextTable::Align;
    const bool base = r.baseline.has_value();
    std::vector<TextTable::Column> cols{{"", A::Left}, {"candidate", A::Right}};
    if (base)
        cols.push_back({"baseline", A::Right});
    TextTable t(cols);
    auto row = [&](const std::string& name, auto&& text) {
        std::vector<std::string> cells{name, text(*r.candidate)};
        if (base)
            cells.push_back(text(*r.baseline));
        t.addRow(std::move(cells));
    };
    row("kernels", [](const Side& s) { return std::to_string(s.totals.kernels); });
    row("duration", [](const Side& s) { return duration(s.totals.durationNs); });
    row("achieved occupancy", [](const Side& s) { return occupancyText(s); });
    row("SM throughput", [](const Side& s) { return pct(s.totals.smThroughputPct); });
    row("DRAM throughput", [](const Side& s) { return pct(s.totals.dramThroughputPct); });
    row("memory throughput", [](const Side& s) { return pct(s.totals.memoryThroughputPct); });
    row("DRAM bytes", [](const Side& s) { return s.totals.hasCounters ? bytes(s.totals.dramBytes) : "-"; });
    row("DRAM bandwidth", [](const Side& s) { return rate(s.totals.achievedDramGbs, "B/s"); });
    row("FLOP/s", [](const Side& s) { return s.totals.flops > 0 ? rate(s.totals.achievedGflops, "FLOP/s") : "-"; });
    row("arithmetic intensity", [](const Side& s) {
        return s.totals.flops > 0 && s.totals.dramBytes > 0 ? fmt("%.3g FLOP/B", s.totals.arithmeticIntensity) : "-";
    });
    row("L1 / L2 hit rate", [](const Side& s) { return pct(s.totals.l1HitRatePct) + " / " + pct(s.totals.l2HitRatePct); });
    t.print(out);
}

void printKernels(std::ostream& out, const ProfileReport& r)
{
    using A = TextTable::Align;
    TextTable t({{"kernel", A::Left},
                 {"grid × block", A::Left},
                 {"regs", A::Right},
                 {"smem", A::Right},
                 {"local", A::Right},
                 {"duration", A::Right},
                 {"occupancy (theor.)", A::Right},
                 {"SM", A::Right},
                 {"DRAM", A::Right}});
    auto add = [&](const profile::KernelRecord& k, const char* side) {
        const auto& st = k.statics;
        std::string shape = k.blocks() > 0 ? std::to_string(k.blocks()) + " × " + std::to_string(k.threadsPerBlock()) : "-";
        std::string occ = pct(k.metric(profile::key::kAchievedOccupancy));
        if (st.known && st.theoreticalOccupancyPct > 0)
            occ += " (" + fmt("%.0f %%", st.theoreticalOccupancyPct) + ")";
        const auto dur = k.metric(profile::key::kDuration);
        t.addRow({std::string(side) + TextTable::truncate(k.demangled.empty() ? k.name : k.demangled, 48), shape,
                  st.known ? std::to_string(st.registers) : "-",
                  st.known ? std::to_string(st.staticSharedBytes + k.dynamicSharedBytes) : "-",
                  st.known ? std::to_string(st.localBytes) : "-", dur ? duration(*dur) : "-", occ,
                  pct(k.metric(profile::key::kSmThroughput)), pct(k.metric(profile::key::kDramThroughput))});
    };
    for (const auto& k : r.candidate->kernels)
        add(k, "");
    if (r.baseline)
        for (const auto& k : r.baseline->kernels)
            add(k, "baseline: ");
    t.print(out);
}

} // namespace

void printProfileReport(std::ostream& out, const protocol::RunReport& report)
{
    out << report.header().title() << '\n';
    if (report.isError() || !report.profile()) {
        out << "  " << report.header().errorLine() << '\n';
        return;
    }
    const ProfileReport& r = *report.profile();
    std::string shape;
    for (const auto& [k, v] : r.shape)
        shape += (shape.empty() ? "" : ", ") + k + "=" + std::to_string(v);
    out << "  shape " << (r.label.empty() ? "" : r.label + " ") << "(" << shape << ")" << (r.set.empty() ? "" : ", " + r.set);
    if (r.counters.available)
        out << "; " << r.counters.chip << ", " << r.counters.passes << " passes, " << r.counters.replay << " replay";
    out << '\n';
    if (!r.counters.available) {
        out << "  NO COUNTERS: " << r.counters.problem << '\n';
        if (!r.counters.howToEnable.empty())
            out << "    " << r.counters.howToEnable << '\n';
    }
    if (r.candidate) {
        printSides(out, r);
        out << '\n';
        printKernels(out, r);
    }
    const auto& c = r.ceilings;
    out << "  roofline ceilings: DRAM " << (c.dramGbs > 0 ? fmt("%.0f GB/s", c.dramGbs) + " (" + c.dramSource + ")" : "-")
        << ", FP32 " << (c.fp32Gflops > 0 ? fmt("%.1f TFLOP/s", c.fp32Gflops / 1e3) : "-") << ", FP16 tensor "
        << (c.fp16TensorGflops > 0 ? fmt("%.0f TFLOP/s", c.fp16TensorGflops / 1e3) : "-") << '\n';
    const auto hints = profile::hintsFor(r);
    if (!hints.empty())
        out << "  hints:\n";
    for (const auto& h : hints) {
        const char* mark = h.severity == profile::Hint::Severity::Warning ? "!" : h.severity == profile::Hint::Severity::Advice ? "›" : "·";
        out << "  " << mark << " " << h.title << '\n';
        if (!h.evidence.empty())
            out << "      " << h.evidence << '\n';
        if (!h.suggestion.empty())
            out << "      → " << h.suggestion << '\n';
    }
    if (r.verdict == protocol::Verdict::Ok)
        out << "  OK: " << r.summary << '\n';
}

void addProfileCommand(CLI::App& app, int& exitCode)
{
    auto args = std::make_shared<RunArgs>();
    args->kind = RunKind::Profile;
    args->shapes = "benchmarks";
    CLI::App* cmd = app.add_subcommand(
        "profile", "Replay one launch of a candidate (and the LibTorch baseline) under CUPTI: occupancy, throughput, roofline, hints");
    cmd->add_option("task", args->path, "task folder or task.json")->required();
    cmd->add_option("--candidate", args->candidates, "profile only this candidate (repeatable; default: all)")
        ->allow_extra_args(false);
    cmd->add_option("--shape", args->shape, "the shape to profile, e.g. N=16777216 (default: the largest benchmark shape)");
    cmd->add_flag("--no-baseline", args->noBaseline, "profile the candidate only, not the LibTorch baseline");
    cmd->add_option("--seed", args->seed, "input seed (hex); default: a fresh one");
    cmd->add_flag("--json", args->json, "print the reports as JSON (docs/report-schema.md, \"Profile\")");
    cmd->add_option("--report", args->reportFile, "also write the JSON reports to this file (atomically)");
    cmd->add_option("--arch", args->arch, "compile for this architecture instead of the GPU's");
    cmd->add_option("--launch-timeout-ms", args->launchTimeoutMs, "watchdog per launch and pass; a hung kernel is killed after it")
        ->check(CLI::Range(1, 86400000));
    addRunnerOptions(cmd, &args->runnerPath, &args->endpoint);
    cmd->callback([args, &exitCode] { exitCode = runOnRunner(*args); });
}

} // namespace kf::cli
