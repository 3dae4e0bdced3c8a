#include "engine/protocol/BenchReport.h"

#include "engine/protocol/ReportJson.h"

#include <algorithm>
#include <cmath>

namespace kf::protocol {

namespace jr = kf::json;

namespace {

void putOptional(nlohmann::json& j, const char* key, const std::optional<double>& v)
{
    if (v)
        j[key] = numberJson(*v);
}

nlohmann::json compileJson(const CompileComparison& c)
{
    nlohmann::json j = {{"measured", c.measured}, {"reason", c.reason}, {"flags", c.flags}, {"modes", nlohmann::json::object()}};
    putOptional(j, "eager_ms", c.eagerMs);
    putOptional(j, "candidate_ms", c.candidateMs);
    putOptional(j, "best_ms", c.bestMs);
    putOptional(j, "speedup", c.speedup);
    putOptional(j, "eager_gap_pct", c.eagerGapPct);
    putOptional(j, "candidate_gap_pct", c.candidateGapPct);
    if (!c.bestMode.empty())
        j["best_mode"] = c.bestMode;
    for (const CompileModeTiming& m : c.modes) {
        nlohmann::json mj = {{"measured", m.measured}, {"reason", m.reason}, {"samples", m.samples}};
        putOptional(mj, "compile_s", m.compileS);
        putOptional(mj, "median_ms", m.medianMs);
        putOptional(mj, "median_rel_spread", m.medianRelSpread);
        j["modes"][m.mode] = mj;
    }
    return j;
}

CompileComparison readCompile(const Fields& c)
{
    CompileComparison r;
    r.measured = c.boolean("measured");
    r.reason = c.text("reason");
    r.eagerMs = c.optionalNumber("eager_ms");
    r.candidateMs = c.optionalNumber("candidate_ms");
    r.bestMs = c.optionalNumber("best_ms");
    r.speedup = c.optionalNumber("speedup");
    r.eagerGapPct = c.optionalNumber("eager_gap_pct");
    r.candidateGapPct = c.optionalNumber("candidate_gap_pct");
    r.bestMode = c.text("best_mode");
    r.flags = c.texts("flags");
    if (const nlohmann::json* modes = c.find("modes")) {
        const Fields mf(*modes, c.at("modes"));
        for (auto it = modes->begin(); it != modes->end(); ++it) {
            const Fields m(it.value(), mf.at(it.key()));
            r.modes.push_back({it.key(), m.boolean("measured"), m.text("reason"), m.optionalNumber("compile_s"),
                               m.optionalNumber("median_ms"), m.optionalNumber("median_rel_spread"), m.integer("samples")});
        }
    }
    if (r.measured && !(r.speedup && *r.speedup > 0))
        jr::fail(c.at("speedup"), "a measured comparison with torch.compile has a positive speedup");
    // The claim must be the medians' ratio (the gates recompute it; the tables show the claim).
    if (r.measured && r.bestMs && r.candidateMs && *r.candidateMs > 0) {
        const double derived = *r.bestMs / *r.candidateMs;
        if (!(std::abs(*r.speedup - derived) <= 1e-6 * std::max(1.0, std::abs(derived))))
            jr::fail(c.at("speedup"), "the speedup is not best_ms / candidate_ms (" + formatNumber(derived) + ")");
    }
    return r;
}

} // namespace

std::optional<double> BenchReport::compileSpeedup() const
{
    return compileBaseline && compileBaseline->measured ? compileBaseline->geomeanSpeedup : std::nullopt;
}

nlohmann::json TimingSummary::toJson() const
{
    nlohmann::json j = nlohmann::json::object();
    putOptional(j, "median_ms", medianMs);
    putOptional(j, "min_ms", minMs);
    putOptional(j, "max_ms", maxMs);
    putOptional(j, "iqr_ms", iqrMs);
    putOptional(j, "mean_ms", meanMs);
    j["samples"] = samples;
    putOptional(j, "median_rel_spread", medianRelSpread);
    return j;
}

TimingSummary TimingSummary::read(const Fields& f)
{
    TimingSummary t;
    t.medianMs = f.optionalNumber("median_ms");
    t.minMs = f.optionalNumber("min_ms");
    t.maxMs = f.optionalNumber("max_ms");
    t.iqrMs = f.optionalNumber("iqr_ms");
    t.meanMs = f.optionalNumber("mean_ms");
    t.samples = f.integer("samples");
    t.medianRelSpread = f.optionalNumber("median_rel_spread");
    return t;
}

std::vector<std::string> BenchShape::allFlags() const
{
    std::vector<std::string> out = flags;
    auto add = [&](const std::string& f) {
        if (std::find(out.begin(), out.end(), f) == out.end())
            out.push_back(f);
    };
    if (belowFloor)
        add("below roofline floor");
    if (recheck.passed == false)
        add("re-check failed" + (recheck.failure.empty() ? std::string() : ": " + recheck.failure));
    return out;
}

nlohmann::json BenchReport::toJson() const
{
    nlohmann::json r = nlohmann::json::object();
    header.writeTo(r);
    putOptional(r, "geomean_speedup", geomeanSpeedup);
    if (allShapesAtLeast1x)
        r["all_shapes_at_least_1x"] = *allShapesAtLeast1x;
    nlohmann::json shapesJson = nlohmann::json::array();
    for (const BenchShape& s : shapes) {
        nlohmann::json e = nlohmann::json::object();
        s.id.writeTo(e);
        e["candidate"] = s.candidate.toJson();
        e["baseline"] = s.baseline.toJson();
        putOptional(e, "speedup", s.speedup);
        e["bytes"] = numberJson(s.bytes);
        e["flops"] = numberJson(s.flops);
        putOptional(e, "achieved_gbs", s.achievedGbs);
        putOptional(e, "achieved_tflops", s.achievedTflops);
        putOptional(e, "pct_peak_bandwidth", s.pctPeakBandwidth);
        putOptional(e, "pct_peak_flops", s.pctPeakFlops);
        putOptional(e, "roofline_floor_ms", s.rooflineFloorMs);
        e["below_floor"] = s.belowFloor;
        nlohmann::json rc = {{"checked", s.recheck.checked}, {"failure", s.recheck.failure}};
        if (s.recheck.passed)
            rc["passed"] = *s.recheck.passed;
        e["recheck"] = rc;
        putOptional(e, "wall_gap_pct", s.wallGapPct);
        if (!s.stoppedBy.empty())
            e["stopped_by"] = s.stoppedBy;
        e["unstable"] = s.unstable;
        putOptional(e, "wall_ms", s.wallMs);
        if (!s.phaseMs.empty()) {
            nlohmann::json p = nlohmann::json::object();
            for (const auto& [k, v] : s.phaseMs)
                p[k] = numberJson(v);
            e["phase_ms"] = p;
        }
        e["flags"] = s.flags;
        if (s.compile)
            e["compile"] = compileJson(*s.compile);
        shapesJson.push_back(std::move(e));
    }
    r["shapes"] = shapesJson;
    if (compileBaseline) {
        const CompileBaselineSummary& c = *compileBaseline;
        nlohmann::json cb = {{"measured", c.measured}, {"reason", c.reason}, {"modes", c.modes}, {"torch", c.torch},
                             {"triton", c.triton}, {"python", c.python}, {"gpu", c.gpu}, {"candidate_image", c.candidateImage}};
        putOptional(cb, "geomean_speedup", c.geomeanSpeedup);
        r["compile_baseline"] = cb;
    }
    return r;
}

BenchReport BenchReport::read(const Fields& f)
{
    BenchReport r;
    r.header = Header::read(f, ReportKind::Performance);
    r.geomeanSpeedup = f.optionalNumber("geomean_speedup");
    r.allShapesAtLeast1x = f.optionalBoolean("all_shapes_at_least_1x");
    f.forEach("shapes", [&](const nlohmann::json& v, const std::string& p) {
        const Fields e(v, p);
        BenchShape s;
        s.id = ShapeId::read(e);
        s.candidate = TimingSummary::read(e.object("candidate"));
        s.baseline = TimingSummary::read(e.object("baseline"));
        s.speedup = e.optionalNumber("speedup");
        s.bytes = e.number("bytes", 0);
        s.flops = e.number("flops", 0);
        s.achievedGbs = e.optionalNumber("achieved_gbs");
        s.achievedTflops = e.optionalNumber("achieved_tflops");
        s.pctPeakBandwidth = e.optionalNumber("pct_peak_bandwidth");
        s.pctPeakFlops = e.optionalNumber("pct_peak_flops");
        s.rooflineFloorMs = e.optionalNumber("roofline_floor_ms");
        s.belowFloor = e.boolean("below_floor");
        const Fields rc = e.object("recheck");
        s.recheck = {rc.integer("checked"), rc.optionalBoolean("passed"), rc.text("failure")};
        s.wallGapPct = e.optionalNumber("wall_gap_pct");
        s.stoppedBy = e.text("stopped_by");
        s.unstable = e.boolean("unstable");
        s.wallMs = e.optionalNumber("wall_ms");
        if (const nlohmann::json* ph = e.find("phase_ms")) {
            const Fields phases(*ph, e.at("phase_ms"));
            for (auto it = ph->begin(); it != ph->end(); ++it)
                s.phaseMs[it.key()] = readNumber(it.value(), phases.at(it.key()));
        }
        s.flags = e.texts("flags");
        if (e.find("compile"))
            s.compile = readCompile(e.object("compile"));
        r.shapes.push_back(std::move(s));
    });
    if (f.find("compile_baseline")) {
        const Fields c = f.object("compile_baseline");
        CompileBaselineSummary cb;
        cb.measured = c.boolean("measured");
        cb.reason = c.text("reason");
        cb.modes = c.texts("modes");
        cb.torch = c.text("torch");
        cb.triton = c.text("triton");
        cb.python = c.text("python");
        cb.gpu = c.text("gpu");
        cb.candidateImage = c.text("candidate_image");
        cb.geomeanSpeedup = c.optionalNumber("geomean_speedup");
        if (!cb.measured && cb.reason.empty())
            jr::fail(c.at("reason"), "a compile baseline that was not measured says why");
        r.compileBaseline = std::move(cb);
    }
    return r;
}

Result<BenchReport> BenchReport::fromJson(const nlohmann::json& j)
{
    return readReport<BenchReport>("read a performance report", [&] { return read(Fields(j, "")); });
}

} // namespace kf::protocol
