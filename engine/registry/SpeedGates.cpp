// The speed gates (docs/registry.md, "Gates"): measured on every benchmark shape, never slower
// than LibTorch on one, the geometric mean at the registry's threshold, and, when the registry
// asks, a factor of torch.compile. Speedups come from the recorded medians, never the claims.
#include "engine/registry/GateFamilies.h"

#include "engine/protocol/CompileBaseline.h"

namespace kf::gates {

namespace {

/// The geometric mean over torch.compile from each benchmark shape's own medians (faster mode
/// over candidate, both the harness's), never the report's claimed fields; NaN unless every
/// benchmark shape was compared. `missing` and `flagged` name the shapes not compared and those
/// whose harness candidate median is over 3 % from the runner's.
double compileGeomean(const Task& task, const BenchReport& b, std::string& missing, std::string& flagged)
{
    double logSum = 0;
    int n = 0;
    for (const ShapeBinding& sb : task.benchmarkShapes) {
        const auto* s = findShape(b.shapes, sb, "benchmarks");
        const kf::protocol::CompileComparison* c = s && s->compile ? &*s->compile : nullptr;
        const double ratio = c && c->measured && c->bestMs && c->candidateMs && *c->candidateMs > 0 ? *c->bestMs / *c->candidateMs
                                                                                                 : NAN;
        if (!(ratio > 0) || !std::isfinite(ratio)) {
            missing += (missing.empty() ? "" : ", ") + sb.describe();
            continue;
        }
        if (c->candidateGapPct && std::abs(*c->candidateGapPct) > kf::protocol::kHarnessFidelityPct)
            flagged += (flagged.empty() ? "" : ", ") + sb.describe() + " (" + fixed(*c->candidateGapPct, 1) + " %)";
        logSum += std::log(ratio);
        ++n;
    }
    return missing.empty() && n > 0 ? std::exp(logSum / n) : NAN;
}

/// Every benchmark shape measured without errors; `speedups` gets each shape's, in the task's order.
GateCheck benchmarksGate(const Task& task, const BenchReport& p, std::vector<double>& speedups)
{
    GateCheck bs = gate("benchmarks", "Measured on every benchmark shape");
    std::string missing;
    for (const ShapeBinding& b : task.benchmarkShapes) {
        const auto* s = findShape(p.shapes, b, "benchmarks");
        if (!s)
            missing = missing.empty() ? b.describe() : missing;
        else
            speedups.push_back(derivedSpeedup(*s)); // from the medians, never the claimed field
    }
    if (task.benchmarkShapes.empty()) {
        bs.detail = "the task has no benchmark shapes";
        bs.hint = "add sizes users care about under shapes.benchmarks in task.json";
    } else if (!missing.empty()) {
        bs.detail = missing + " was not benchmarked";
        bs.hint = "benchmark on the task's benchmark shapes (`kforge bench`)";
    } else if (p.header.verdict != protocol::Verdict::Ok) {
        bs.detail = "the benchmark's verdict is " + std::string(protocol::verdictName(p.header.verdict)) + ": " + p.header.summary;
        bs.hint = "a time below the roofline floor or a failed re-check means the timing cannot be trusted";
    } else {
        bs.passed = true;
        bs.detail = std::to_string(speedups.size()) + " benchmark shape(s), " + p.header.environment.gpu;
    }
    return bs;
}

/// At least 1.00× on every benchmark shape; sets v.minSpeedup.
GateCheck perShapeGate(const Task& task, const std::vector<double>& speedups, const GateCheck& bs, GateVerdict& v)
{
    GateCheck ps = gate("per_shape_speedup", "At least 1.00× on every benchmark shape");
    double worst = INFINITY;
    std::string worstShape;
    size_t i = 0;
    for (const ShapeBinding& b : task.benchmarkShapes) {
        // A NaN speedup (a timing that failed) is the worst there is.
        if (i < speedups.size() && (std::isnan(speedups[i]) || speedups[i] < worst) && !std::isnan(worst)) {
            worst = speedups[i];
            worstShape = b.describe();
        }
        ++i;
    }
    if (!bs.passed) {
        ps.detail = "no complete benchmark";
        ps.hint = bs.hint;
    } else if (!(worst >= 1.0)) {
        ps.detail = fixed(worst) + "× on " + worstShape + " (slower than LibTorch)";
        ps.hint = "a kernel must not lose to the baseline on any benchmark shape; improve that shape";
    } else {
        ps.passed = true;
        ps.detail = "slowest shape " + fixed(worst) + "× (" + worstShape + ")";
    }
    if (bs.passed)
        v.minSpeedup = worst;
    return ps;
}

/// The geometric-mean speedup at or above the threshold; sets v.geomeanSpeedup.
GateCheck geomeanGate(const std::vector<double>& speedups, const GateCheck& bs, double threshold, GateVerdict& v)
{
    GateCheck gm = gate("geomean_speedup", "Geometric-mean speedup at or above the threshold");
    double logSum = 0;
    bool finite = !speedups.empty();
    for (double s : speedups) {
        if (!(s > 0) || !std::isfinite(s))
            finite = false;
        else
            logSum += std::log(s);
    }
    const double geomean = finite ? std::exp(logSum / double(speedups.size())) : NAN;
    if (bs.passed)
        v.geomeanSpeedup = geomean;
    if (!bs.passed) {
        gm.detail = "no complete benchmark";
        gm.hint = bs.hint;
    } else if (!(geomean >= threshold)) {
        gm.detail = "geometric mean " + fixed(geomean) + "× is below the threshold " + fixed(threshold) + "×";
        gm.hint = "make the kernel faster, or lower this registry's threshold if it is the wrong bar";
    } else {
        gm.passed = true;
        gm.detail = "geometric mean " + fixed(geomean) + "× ≥ " + fixed(threshold) + "×";
    }
    return gm;
}

/// At least `want` × torch.compile; `compileSpeedup` gets the measured geometric mean.
GateCheck compileGate(const Task& task, const BenchReport& p, const GateCheck& bs, double want, double& compileSpeedup)
{
    GateCheck cg = gate("compile_speedup", "");
    cg.title = "At least " + fixed(want) + "× torch.compile (this registry's setting)";
    const BenchReport* b = bs.passed ? &p : nullptr;
    std::string missing, flagged;
    const double geomean = b ? compileGeomean(task, *b, missing, flagged) : NAN;
    const std::string off = "or turn the setting off: kforge registry threshold --compile off";
    if (!b) {
        cg.detail = "no complete benchmark";
        cg.hint = bs.hint;
    } else if (!b->compileBaseline) {
        cg.detail = "the benchmark was not timed against torch.compile";
        cg.hint = "benchmark with `kforge bench --baseline compile` (`kforge promote` does when this is set), " + off;
    } else if (!b->compileBaseline->measured) {
        cg.detail = "torch.compile was not measured: " + b->compileBaseline->reason;
        cg.hint = "give the harness a Python with torch and Triton ($KF_BASELINE_PYTHON), " + off;
    } else if (!missing.empty()) {
        cg.detail = "not compared with torch.compile on " + missing;
        cg.hint = "every benchmark shape needs the comparison; see the report's reasons";
    } else {
        compileSpeedup = geomean;
        const std::string note = flagged.empty() ? std::string()
                                                 : "; the harness's candidate time is off the runner's on " + flagged;
        if (!(geomean >= want)) {
            cg.detail = "geometric mean " + fixed(geomean) + "× torch.compile is below " + fixed(want) + "×" + note;
            cg.hint = "a kernel that does not beat what one line of Python gives is not worth shipping here; " + off;
        } else {
            cg.passed = true;
            cg.detail = "geometric mean " + fixed(geomean) + "× torch.compile ≥ " + fixed(want) + "×" + note;
        }
    }
    return cg;
}

} // namespace

void speedGates(const GateInput& in, const BenchReport& p, GateVerdict& v)
{
    const Task& task = *in.task;
    // 5. Every benchmark shape was measured, without errors.
    std::vector<double> speedups;
    const GateCheck bs = benchmarksGate(task, p, speedups);
    v.checks.push_back(bs);
    // 6. Never slower than LibTorch on a benchmark shape.
    v.checks.push_back(perShapeGate(task, speedups, bs, v));
    // 7. Faster on average by the registry's threshold.
    v.checks.push_back(geomeanGate(speedups, bs, in.threshold, v));
    // 8. Optional: at least the registry's factor of torch.compile.
    if (in.compileThreshold) {
        v.checks.push_back(compileGate(task, p, bs, *in.compileThreshold, v.compileSpeedup));
    } else if (bs.passed && p.compileBaseline && p.compileBaseline->measured) {
        // Recorded only when every benchmark shape was compared (NaN otherwise).
        std::string missing, flagged;
        v.compileSpeedup = compileGeomean(task, p, missing, flagged);
    }
}

} // namespace kf::gates
