// The Bencher's sampling loop: candidate and baseline interleaved with the order swapped every
// sample, re-checks on poisoned outputs, stopped by the spread target, the sample limit or the
// time cap; then the shape's entry of the performance report with its flags.
#include "device/runner/BencherShape.h"

#include "device/CudaDriver.h"
#include "device/runner/Roofline.h"
#include "device/runner/TimingStats.h"
#include "engine/core/Clock.h"
#include "engine/verify/Compare.h"

#include <algorithm>
#include <cstdio>
#include <random>

namespace kf::device {

using namespace bencher;

Result<void> Bencher::takeSamples(Shape& s, size_t shapeIndex, std::uint64_t seed,
                                  std::chrono::steady_clock::time_point shapeStart, std::int64_t sampleTimeout, Samples& m)
{
    const BenchSettings& cfg = m_request.bench;
    std::mt19937_64 rng(deriveSeed(seed, 0x4ec4ull));
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const int evenBelowMin = std::max(1, (cfg.minSamples + 1) / 2);
    const int forcedRecheck = cfg.recheckFraction > 0 ? 2 * static_cast<int>(rng() % static_cast<std::uint64_t>(evenBelowMin)) : -1;
    const double recheckProbability = std::min(1.0, 2.0 * cfg.recheckFraction); // only even samples qualify

    for (int n = 0; n < cfg.maxSamples; ++n) {
        const bool candidateFirst = n % 2 == 0;
        const bool recheck = candidateFirst && (n == forcedRecheck || (cfg.recheckFraction > 0 && uniform(rng) < recheckProbability));
        if (auto r = timeSample(s, n, recheck, seed, sampleTimeout, m); !r)
            return r.error();
        if (sampledEnough(shapeIndex, n, msSince(shapeStart), "shape " + s.name, m))
            break;
    }
    return {};
}

Result<void> Bencher::timeSample(Shape& s, int n, bool recheck, std::uint64_t seed, std::int64_t sampleTimeout, Samples& m)
{
    const std::string where = "shape " + s.name;
    const int set = n % kInputSets;
    const bool candidateFirst = n % 2 == 0;
    const int variant = (n / 2) % 2;
    const auto sampleStart = std::chrono::steady_clock::now();
    if (recheck)
        // Fresh data in a buffer the candidate has seen before: a result cached by pointer is stale.
        if (auto r = regenerate(s, set, deriveSeed(seed, kRecheckSalt + static_cast<std::uint64_t>(m.rechecks)), 0, true); !r)
            return stickyError() ? fatal(r.error(), where) : r.error();

    m_channel.launchBegin(m_request.id, "bench sample " + std::to_string(n) + " " + where, sampleTimeout);
    Timing tc, tb;
    for (int side = 0; side < 2; ++side) {
        const bool candidateNow = (side == 0) == candidateFirst;
        auto t = candidateNow ? candidateCall(s, set, variant, where) : baselineCall(s, set, where);
        if (!t) {
            m_channel.launchEnd(m_request.id);
            return t.error();
        }
        (candidateNow ? tc : tb) = t.value();
        if (candidateNow && recheck)
            if (auto r = captureRecheck(s, set); !r) {
                m_channel.launchEnd(m_request.id);
                return stickyError() ? fatal(r.error(), where) : r.error();
            }
    }
    m_channel.launchEnd(m_request.id);
    if (recheck) {
        ++m.rechecks;
        auto why = compareRecheck(s, set, variant);
        if (!why)
            return why.error();
        if (!why->empty() && m.recheckFailure.empty())
            m.recheckFailure = "sample " + std::to_string(n) + ": " + why.value();
        m.recheckMs += msSince(sampleStart) - tc.wallMs - tb.wallMs;
    }
    m.cand.push_back(tc.callMs);
    m.base.push_back(tb.callMs);
    m.wallSum += tc.wallMs + tb.wallMs;
    m.windowSum += tc.windowMs + tb.windowMs;
    return {};
}

bool Bencher::sampledEnough(size_t shapeIndex, int n, double elapsed, const std::string& where, Samples& m)
{
    const BenchSettings& cfg = m_request.bench;
    const double done = std::max(static_cast<double>(n + 1) / cfg.maxSamples, elapsed / cfg.timeCapMs);
    std::string stage = "benchmark " + where + ": " + std::to_string(n + 1) + " samples";
    if (n >= 2) {
        char spread[96];
        std::snprintf(spread, sizeof spread, ", spread %.1f%% / %.1f%% (target %.1f%%)",
                      100.0 * TimingStats::of(m.cand).medianRelSpread, 100.0 * TimingStats::of(m.base).medianRelSpread,
                      100.0 * cfg.targetSpread);
        stage += spread;
    }
    m_channel.progress(m_request.id,
                       static_cast<int>(999.0 * (static_cast<double>(shapeIndex) + std::min(1.0, done)) /
                                        static_cast<double>(m_request.runShapes.size())),
                       stage);
    if (elapsed >= cfg.timeCapMs) {
        // The cap wins over the minimum sample count: a promise of wall time is kept.
        m.stoppedBy = "time_cap";
        m.spreadReached = n + 1 >= cfg.minSamples && TimingStats::of(m.cand).medianRelSpread <= cfg.targetSpread &&
                          TimingStats::of(m.base).medianRelSpread <= cfg.targetSpread;
        return true;
    }
    if (n + 1 < cfg.minSamples)
        return false;
    m.spreadReached = TimingStats::of(m.cand).medianRelSpread <= cfg.targetSpread &&
                      TimingStats::of(m.base).medianRelSpread <= cfg.targetSpread;
    if (m.spreadReached) {
        m.stoppedBy = "spread";
        return true;
    }
    return false;
}

nlohmann::json Bencher::shapeReport(const Shape& s, const Samples& m, std::chrono::steady_clock::time_point shapeStart,
                                    double setupMs, double warmupMs) const
{
    const ShapeBinding& binding = s.ref->binding;
    const std::string where = "shape " + s.name;
    const TimingStats c = TimingStats::of(m.cand), b = TimingStats::of(m.base);
    std::vector<DType> inputTypes;
    for (const auto& l : s.layout)
        if (l.role == TensorLayout::Role::Input)
            inputTypes.push_back(l.dtype);
    const Roofline roof = Roofline::at(m_request.task, binding, inputTypes, m_gpu.info, m_request.arch);
    const bool belowFloor = roof.below(c.medianMs);
    const double speedup = c.medianMs > 0 ? b.medianMs / c.medianMs : 0.0;
    const double wallGapPct = m.wallSum > 0 ? 100.0 * (m.wallSum - m.windowSum) / m.wallSum : 0.0;
    std::string failure;
    const nlohmann::json flags = shapeFlags(where, c, b, roof, wallGapPct, m, failure);
    nlohmann::json values = nlohmann::json::object();
    for (const auto& [k, v] : binding.values)
        values[k] = v;
    nlohmann::json out = {{"shape", values},
                          {"label", binding.label},
                          {"set", s.ref->set},
                          {"candidate", c.toJson()},
                          {"baseline", b.toJson()},
                          {"speedup", round3(speedup)},
                          {"bytes", roof.bytes},
                          {"flops", roof.flops},
                          {"achieved_gbs", round3(roof.achievedGBs(c.medianMs))},
                          {"achieved_tflops", round3(roof.achievedTflops(c.medianMs))},
                          {"pct_peak_bandwidth", roof.peakGBs > 0 ? round3(100.0 * roof.achievedGBs(c.medianMs) / roof.peakGBs) : 0.0},
                          {"pct_peak_flops",
                           roof.typicalTflops > 0 ? round3(100.0 * roof.achievedTflops(c.medianMs) / roof.typicalTflops) : 0.0},
                          {"roofline_floor_ms", std::round(roof.floorMs * 1e6) / 1e6},
                          {"below_floor", belowFloor},
                          {"recheck", {{"checked", m.rechecks}, {"passed", m.recheckFailure.empty()}, {"failure", m.recheckFailure}}},
                          {"wall_gap_pct", std::round(wallGapPct * 10.0) / 10.0},
                          {"stopped_by", m.stoppedBy},
                          {"unstable", !m.spreadReached},
                          {"wall_ms", std::round(msSince(shapeStart))},
                          {"phase_ms", {{"setup", std::round(setupMs)}, {"warmup", std::round(warmupMs)},
                                        {"rechecks", std::round(m.recheckMs)}}},
                          {"flags", flags}};
    if (!failure.empty())
        out["failure"] = failure; // taken out by run() for the summary
    return out;
}

nlohmann::json Bencher::shapeFlags(const std::string& where, const TimingStats& c, const TimingStats& b, const Roofline& roof,
                                   double wallGapPct, const Samples& m, std::string& failure) const
{
    const BenchSettings& cfg = m_request.bench;
    nlohmann::json flags = nlohmann::json::array();
    if (roof.below(c.medianMs)) {
        flags.push_back("below roofline floor");
        failure = where + ": the median " + formatNumber(c.medianMs) + " ms is below the roofline floor " +
                  formatNumber(roof.floorMs) + " ms (" + formatNumber(roof.bytes) + " bytes at " + formatNumber(roof.peakGBs) +
                  " GB/s, " + formatNumber(roof.flops) + " flops at " + formatNumber(roof.floorTflops) +
                  " TFLOP/s): the timing cannot be real";
    }
    if (!m.recheckFailure.empty()) {
        flags.push_back("re-check failed");
        if (failure.empty())
            failure = where + ": re-check of a timed call failed: " + m.recheckFailure;
    }
    const double calls = static_cast<double>(m.cand.size() + m.base.size());
    // Host launch and wake-up latency is tens of microseconds per call; more means untimed work.
    if (calls > 0 && (m.wallSum - m.windowSum) / calls > 0.2 && wallGapPct > 25.0)
        flags.push_back("event/wall gap " + std::to_string(static_cast<int>(std::lround(wallGapPct))) + "%");
    if (m.windowSum > m.wallSum * 1.05)
        flags.push_back("event time exceeds wall time");
    if (!m.spreadReached)
        flags.push_back(std::string(m.stoppedBy == "time_cap" ? "unstable: time cap reached" : "unstable: sample limit reached") +
                        " before the spread target (candidate " + formatNumber(100.0 * c.medianRelSpread) + "%, baseline " +
                        formatNumber(100.0 * b.medianRelSpread) + "%)");
    if (static_cast<int>(m.cand.size()) < cfg.minSamples)
        flags.push_back("only " + std::to_string(m.cand.size()) + " samples within the time cap (minimum " +
                        std::to_string(cfg.minSamples) + ")");
    if (!m_flusher->persistingResetProblem().empty())
        flags.push_back("persisting L2 lines not reset (" + m_flusher->persistingResetProblem() + ")");
    if (!m_carveOutProblem.empty())
        flags.push_back("persisting L2 carve-out not removed (" + m_carveOutProblem + ")");
    return flags;
}

} // namespace kf::device
