#include "engine/protocol/CompileBaseline.h"

#include "engine/core/JsonReader.h"
#include "engine/protocol/Report.h"
#include "engine/protocol/ReportJson.h"

#include <cmath>

namespace kf::protocol {

namespace jr = kf::json;
using Json = nlohmann::json;

namespace {

std::optional<HarnessStats> readStats(const Fields& parent, std::string_view key)
{
    const Json* v = parent.find(key);
    if (!v)
        return std::nullopt;
    const Fields f(*v, parent.at(key));
    const HarnessStats s = TimingSummary::read(f);
    // Stricter than a runner report: this is another process's output.
    if (s.samples < 0)
        jr::fail(f.at("samples"), "a sample count is never negative");
    for (const auto& [name, x] : {std::pair{"median_ms", s.medianMs}, {"min_ms", s.minMs}, {"max_ms", s.maxMs}})
        if (x && (!std::isfinite(*x) || *x < 0))
            jr::fail(f.at(name), "a time is a finite number of milliseconds, at least 0");
    if (s.samples > 0 && !s.medianMs)
        jr::fail(f.pointer(), "timed samples without a median");
    return s;
}

std::optional<double> gapPct(const std::optional<double>& harness, const Json& runnerSide)
{
    if (!harness || !runnerSide.is_object() || !runnerSide.contains("median_ms") || !runnerSide["median_ms"].is_number())
        return std::nullopt;
    const double runner = runnerSide["median_ms"].get<double>();
    const double gap = std::round(1000.0 * (*harness - runner) / runner) / 10.0;
    if (!(runner > 0) || !std::isfinite(gap))
        return std::nullopt;
    return gap;
}

} // namespace

Result<HarnessResult> readHarnessResult(std::string_view text, const std::string& origin)
{
    auto parsed = jr::parseText(text, origin);
    if (!parsed)
        return parsed.error();
    const Json& j = parsed.value();
    return readReport<HarnessResult>("read the torch.compile harness's result (" + origin + ")", [&] {
        const Fields f(j, "");
        if (f.integer("schema_version", -1) != 1)
            jr::fail(f.at("schema_version"), "this KernelForge reads harness results of schema 1; run the harness "
                                             "that ships with it");
        HarnessResult r;
        r.measured = f.boolean("measured");
        r.reason = f.text("reason");
        for (auto [key, out] : {std::pair{"device", &r.device}, {"gpu", &r.gpu}, {"torch", &r.torch}, {"triton", &r.triton},
                                {"python", &r.python}, {"candidate_image", &r.candidateImage}})
            *out = f.text(key);   // null reads as empty
        r.modes = f.texts("modes");
        f.forEach("shapes", [&](const Json& v, const std::string& p) {
            const Fields e(v, p);
            HarnessShape s;
            s.label = e.text("label");
            if (s.label.empty())
                jr::fail(e.at("label"), "every shape has a label");
            s.measured = e.boolean("measured");
            s.reason = e.text("reason");
            s.eager = readStats(e, "eager");
            s.candidate = readStats(e, "candidate");
            s.stoppedBy = e.text("stopped_by");
            s.flags = e.texts("flags");
            if (s.measured && !(s.eager && s.eager->medianMs))
                jr::fail(e.at("eager"), "a measured shape has an eager median");
            if (const Json* modes = e.find("compiled")) {
                const Fields mf(*modes, e.at("compiled"));
                for (auto it = modes->begin(); it != modes->end(); ++it) {
                    const Fields m(it.value(), mf.at(it.key()));
                    HarnessMode mode;
                    mode.measured = m.boolean("measured");
                    mode.reason = m.text("reason");
                    mode.compileS = m.optionalNumber("compile_s");
                    mode.timing = readStats(m, "timing");
                    if (mode.measured && !(mode.timing && mode.timing->medianMs))
                        jr::fail(m.at("timing"), "a measured mode has a median");
                    s.modes[it.key()] = std::move(mode);
                }
            }
            r.shapes.push_back(std::move(s));
        });
        return r;
    });
}

void markCompileNotMeasured(Json& report, const std::string& reason)
{
    report["compile_baseline"] = {{"measured", false}, {"reason", reason}};
}

namespace {

/// The harness's entry for a report shape, matched by its text ("label (B=7 D=4099) [set]").
const HarnessShape* harnessShapeFor(const Json& shape, const HarnessResult& h)
{
    const ShapeId id = [&] {
        try {
            return ShapeId::read(Fields(shape, ""));
        } catch (...) {
            return ShapeId{};
        }
    }();
    const std::string key = id.text(true);
    const HarnessShape* hs = nullptr;
    for (const HarnessShape& s : h.shapes)
        if (s.label == key)
            hs = &s;
    return hs;
}

/// Each mode's compile time and median; `best` and `bestMode` the fastest measured one.
Json modesJson(const HarnessShape& hs, std::optional<double>& best, std::string& bestMode)
{
    Json modes = Json::object();
    for (const auto& [mode, m] : hs.modes) {
        Json mj = {{"measured", m.measured}, {"reason", m.reason}};
        if (m.compileS)
            mj["compile_s"] = *m.compileS;
        if (m.timing && m.timing->medianMs) {
            mj["median_ms"] = *m.timing->medianMs;
            mj["samples"] = m.timing->samples;
            if (m.timing->medianRelSpread)
                mj["median_rel_spread"] = *m.timing->medianRelSpread;
        }
        if (m.measured && m.timing && m.timing->medianMs && (!best || *m.timing->medianMs < *best)) {
            best = *m.timing->medianMs;
            bestMode = mode;
        }
        modes[mode] = std::move(mj);
    }
    return modes;
}

/// A shape's "compile" block; a measured speedup is added to `logSum` and counted in `timed`.
Json shapeComparison(const Json& shape, const HarnessShape& hs, double& logSum, int& timed)
{
    Json c = {{"measured", false}, {"reason", hs.reason}, {"modes", Json::object()}, {"flags", hs.flags}};
    std::optional<double> best;
    std::string bestMode;
    c["modes"] = modesJson(hs, best, bestMode);
    const std::optional<double> eager = hs.eager ? hs.eager->medianMs : std::nullopt;
    const std::optional<double> cand = hs.candidate ? hs.candidate->medianMs : std::nullopt;
    if (eager)
        c["eager_ms"] = *eager;
    if (cand)
        c["candidate_ms"] = *cand;
    if (best) {
        c["best_mode"] = bestMode;
        c["best_ms"] = *best;
    }
    const double speedup = best && cand && *cand > 0 ? *best / *cand : 0.0;
    if (hs.measured && std::isfinite(speedup) && speedup > 0) {
        c["measured"] = true;
        c["reason"] = "";
        c["speedup"] = speedup;   // unrounded: a 1000x slower candidate is still a number
        logSum += std::log(speedup);
        ++timed;
    } else if (c["reason"].get<std::string>().empty()) {
        std::string why;
        for (const auto& [mode, m] : hs.modes)
            if (!m.measured)
                why += (why.empty() ? "" : "; ") + mode + ": " + m.reason;
        c["reason"] = why.empty() ? std::string("the harness timed no candidate") : why;
    }
    // The harness against the runner, side by side: how far to trust it (docs/benchmarks.md).
    auto addGap = [&](const char* runnerKey, const char* side, const std::optional<double>& harness, const char* gapKey) {
        const std::optional<double> gap = gapPct(harness, shape.contains(runnerKey) ? shape[runnerKey] : Json());
        if (!gap)
            return;
        c[gapKey] = *gap;
        if (std::abs(*gap) > kHarnessFidelityPct)
            c["flags"].push_back(std::string("the torch.compile harness's ") + side + " median differs from the runner's by " +
                                 formatNumber(*gap) + " %");
    };
    addGap("baseline", "eager", eager, "eager_gap_pct");
    addGap("candidate", "candidate", cand, "candidate_gap_pct");
    return c;
}

} // namespace

void mergeCompileBaseline(Json& report, const HarnessResult& h)
{
    if (!report.is_object())
        return;
    Json summary = {{"measured", false},
                    {"reason", h.reason},
                    {"modes", h.modes},
                    {"torch", h.torch},
                    {"triton", h.triton},
                    {"python", h.python},
                    {"gpu", h.gpu},
                    {"candidate_image", h.candidateImage},
                    {"harness", "kernelforge_baseline"}};
    double logSum = 0;
    int timed = 0;
    if (report.contains("shapes") && report["shapes"].is_array())
        for (Json& shape : report["shapes"])
            if (shape.is_object())
                if (const HarnessShape* hs = harnessShapeFor(shape, h))
                    shape["compile"] = shapeComparison(shape, *hs, logSum, timed);
    const double geomean = timed > 0 ? std::exp(logSum / timed) : 0.0;
    if (timed > 0 && std::isfinite(geomean) && geomean > 0) {
        summary["measured"] = true;
        summary["reason"] = "";
        summary["geomean_speedup"] = geomean;
    } else if (summary["reason"].get<std::string>().empty()) {
        summary["reason"] = "no shape was timed against torch.compile";
    }
    report["compile_baseline"] = std::move(summary);
}

} // namespace kf::protocol
