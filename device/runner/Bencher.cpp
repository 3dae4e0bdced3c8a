#include "device/runner/Bencher.h"
#include "engine/protocol/Verdict.h"

#include "device/CudaDriver.h"
#include "device/runner/Roofline.h"
#include "device/runner/TimingStats.h"
#include "device/runner/TorchBridge.h"
#include "engine/core/Clock.h"
#include "engine/verify/Compare.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>

namespace kf::device {

namespace {

constexpr int kInputSets = 3;
constexpr std::uint64_t kGuardSalt = 0xb3c4ull;
constexpr std::uint64_t kInputSalt = 0x2000ull;
constexpr std::uint64_t kRecheckSalt = 0x7e000ull;
constexpr std::uint64_t kSentinelSalt = 0x5e00ull;

double round3(double v)
{
    return std::round(v * 1e3) / 1e3;
}

} // namespace

// Everything one benchmark shape owns; freed when the shape is done (bounded memory).
struct Bencher::Shape {
    const ShapeRef* ref = nullptr;
    std::string name;
    std::vector<TensorLayout> layout;
    std::vector<BufferSet> inputs;                          ///< kInputSets rotating sets
    BufferSet outputs;                                      ///< outputs and scratch, shared by all sets
    std::vector<std::unique_ptr<TorchBridge::Reference>> references; ///< one per input set
    std::vector<std::vector<BoundLaunch>> launches;         ///< per input set
    std::vector<std::vector<unsigned char>> sentinels[2];   ///< [variant][output]
    std::vector<std::uint64_t> fingerprints;                ///< the re-checked set's inputs, keyed (TorchBridge::fingerprint)
    std::uint64_t recheckSeed = 0;                          ///< regenerates those inputs exactly
    std::uint64_t fingerprintKey = 0;
    std::string recheckProblem;                             ///< guard or input finding of the re-check
};

Bencher::Bencher(Channel& channel, const GpuContext& gpu, const RunPlan& request, SoftwareVersions versions)
    : m_channel(channel), m_gpu(gpu), m_request(request), m_header(request, gpu.info, std::move(versions))
{
}

Error Bencher::fatal(const Error& e, const std::string& where) const
{
    return lostContextError(e, "benchmark", m_request, where);
}

Result<nlohmann::json> Bencher::run()
{
    nlohmann::json report = m_header.make("performance", "error", "");
    nlohmann::json seeds = nlohmann::json::array();
    for (auto s : m_request.seeds)
        seeds.push_back(seedHex(s));
    report["seeds"] = seeds;
    report["geomean_speedup"] = 0.0;
    report["all_shapes_at_least_1x"] = false;
    report["shapes"] = nlohmann::json::array();

    auto setup = [&]() -> Result<void> {
        if (auto r = m_gpu.context.makeCurrent(); !r)
            return r;
        m_stream = static_cast<CUstream>(TorchBridge::currentStream());
        for (CudaEvent* e : {&m_before, &m_start, &m_end}) {
            auto ev = CudaEvent::create();
            if (!ev)
                return ev.error();
            *e = std::move(ev.value());
        }
        const bool persisting = m_gpu.info.persistingL2MaxBytes > 0;
        if (persisting)
            m_carveOutProblem = L2Flusher::disablePersistingCarveOut();
        if (auto e = stickyError())
            return cuError(*e, "cuCtxSetLimit", __FILE__, __LINE__);
        auto f = L2Flusher::create(m_gpu.info.l2Bytes, persisting);
        if (!f)
            return f.error();
        m_flusher = std::move(f.value());
        return {};
    };
    if (auto r = setup(); !r) {
        if (stickyError())
            return r.error();
        ReportHeader::markError(report, r.error());
        return report;
    }
    auto program = CandidateProgram::load(m_request, m_gpu.info);
    if (!program) {
        if (stickyError())
            return program.error();
        ReportHeader::markError(report, program.error());
        return report;
    }
    m_program = &program.value();

    std::optional<Error> runError;
    std::string firstFailure, slowest;
    double logSum = 0, minSpeedup = 0;
    int timedShapes = 0;
    bool allAtLeast1x = true;
    for (size_t s = 0; s < m_request.runShapes.size(); ++s) {
        auto shape = runShape(s);
        if (!shape) {
            if (stickyError())
                return shape.error();
            runError = shape.error();
            break;
        }
        nlohmann::json& j = shape.value();
        const double speedup = j["speedup"].get<double>();
        if (speedup > 0) {
            logSum += std::log(speedup);
            ++timedShapes;
            if (timedShapes == 1 || speedup < minSpeedup) {
                minSpeedup = speedup;
                slowest = j["label"].get<std::string>().empty() ? m_request.runShapes[s].binding.describe() : j["label"].get<std::string>();
            }
        }
        allAtLeast1x = allAtLeast1x && speedup >= 1.0;
        if (firstFailure.empty() && j.contains("failure"))
            firstFailure = j["failure"].get<std::string>();
        j.erase("failure");
        report["shapes"].push_back(std::move(j));
    }
    m_channel.progress(m_request.id, 1000, "done");

    nlohmann::json done = m_header.make("performance", "ok", "");
    for (auto it = done.begin(); it != done.end(); ++it)
        report[it.key()] = it.value();
    const double geomean = timedShapes ? std::exp(logSum / timedShapes) : 0.0;
    report["geomean_speedup"] = round3(geomean);
    report["all_shapes_at_least_1x"] = allAtLeast1x && timedShapes > 0;
    if (runError) {
        ReportHeader::markError(report, *runError);
    } else if (!firstFailure.empty()) {
        report["verdict"] = protocol::verdictName(protocol::Verdict::Fail);
        report["summary"] = firstFailure;
    } else {
        report["verdict"] = protocol::verdictName(protocol::Verdict::Ok);
        report["summary"] = "geometric-mean speedup " + formatNumber(round3(geomean)) + "x over " + std::to_string(timedShapes) +
                            " shapes (lowest " + formatNumber(round3(minSpeedup)) + "x at " + slowest + ")";
    }
    return report;
}

Result<Bencher::Timing> Bencher::timed(const std::function<Result<void>()>& body, const std::string& where)
{
    // Flush outside the timed window, but recorded in the window compared with wall time.
    const auto w0 = std::chrono::steady_clock::now();
    Result<void> r = m_before.record(m_stream);
    if (r)
        r = m_flusher->flush(m_stream);
    if (r)
        r = m_start.record(m_stream);
    if (r)
        r = body();
    if (r)
        r = m_end.record(m_stream);
    // Device-wide: work the call left behind on any stream is waited for, and shows in wall time.
    const CUresult sync = KF_CU(cuCtxSynchronize);
    const double wall = msSince(w0);
    if (!r)
        return stickyError() ? fatal(r.error(), where) : r.error();
    if (sync != CUDA_SUCCESS) {
        Error e = cuError(sync, "cuCtxSynchronize", __FILE__, __LINE__);
        return stickyError() ? fatal(e, where) : e;
    }
    auto call = CudaEvent::elapsedMs(m_start, m_end);
    auto window = CudaEvent::elapsedMs(m_before, m_end);
    if (!call || !window)
        return !call ? call.error() : window.error();
    return Timing{call.value(), window.value(), wall};
}

Result<void> Bencher::prepareCandidateCall(Shape& s, int variant)
{
    // Poison every call's outputs (rule 5): a re-checked call looks like any other.
    size_t o = 0;
    for (const auto& l : s.layout) {
        const GuardedBuffer* b = s.outputs.find(l.name);
        if (!b)
            continue;
        if (l.role == TensorLayout::Role::Output) {
            if (auto r = fillDevicePattern(b->ptr(), static_cast<size_t>(l.elements), s.sentinels[variant][o++], m_stream); !r)
                return r;
        } else if (l.zero && l.bytes > 0) {
            KF_CU_CHECK(cuMemsetD8Async, b->ptr(), 0, l.bytes, m_stream);
        }
    }
    KF_CU_CHECK(cuStreamSynchronize, m_stream);
    return {};
}

Result<Bencher::Timing> Bencher::candidateCall(Shape& s, int set, int variant, const std::string& where)
{
    if (auto r = prepareCandidateCall(s, variant); !r)
        return stickyError() ? fatal(r.error(), where) : r.error();
    const auto& launches = s.launches[static_cast<size_t>(set)];
    return timed(
        [&]() -> Result<void> {
            for (const BoundLaunch& l : launches)
                if (auto r = LaunchPlan::enqueue(l, m_stream); !r)
                    return r;
            return {};
        },
        "the candidate at " + where);
}

Result<Bencher::Timing> Bencher::baselineCall(Shape& s, int set, const std::string& where)
{
    TorchBridge::Reference& ref = *s.references[static_cast<size_t>(set)];
    return timed([&]() { return ref.run(); }, "the baseline at " + where);
}

Result<void> Bencher::regenerate(Shape& s, int set, std::uint64_t seed, int distribution, bool fingerprint)
{
    // The data is drawn on the GPU and stays there: a re-check keeps only a keyed fingerprint of
    // each input, and the seed that draws the same data again.
    s.fingerprints.clear();
    s.recheckSeed = seed;
    size_t i = 0;
    for (const auto& l : s.layout) {
        if (l.role != TensorLayout::Role::Input)
            continue;
        const GuardedBuffer* b = s.inputs[static_cast<size_t>(set)].find(l.name);
        const auto& dists = l.spec->distributions;
        const RawTensor raw{reinterpret_cast<void*>(b->ptr()), l.dtype, l.extents, true};
        if (l.elements > 0)
            if (auto r = TorchBridge::fillInput(raw, dists[static_cast<size_t>(distribution) % dists.size()], deriveSeed(seed, i)); !r)
                return r;
        ++i;
        if (!fingerprint)
            continue;
        auto f = TorchBridge::fingerprint(raw, s.fingerprintKey);
        if (!f)
            return f.error();
        s.fingerprints.push_back(f.value());
    }
    TorchBridge::synchronize();
    return {};
}

Result<void> Bencher::captureRecheck(Shape& s, int set)
{
    s.recheckProblem.clear();
    auto guards = s.outputs.checkGuards(m_stream);
    if (!guards)
        return guards.error();
    if (!guards->empty()) {
        const GuardViolation& g = guards->front();
        s.recheckProblem = "guard violation: " + g.buffer + " was written " + (g.after ? "past its end" : "before its start");
        if (auto r = s.outputs.writeGuards(m_stream); !r)
            return r;
    }
    size_t i = 0;
    bool modified = false;
    for (const auto& l : s.layout) {
        if (l.role != TensorLayout::Role::Input)
            continue;
        const GuardedBuffer* b = s.inputs[static_cast<size_t>(set)].find(l.name);
        auto now = TorchBridge::fingerprint(RawTensor{reinterpret_cast<void*>(b->ptr()), l.dtype, l.extents, true}, s.fingerprintKey);
        if (!now)
            return now.error();
        if (now.value() != s.fingerprints[i] && s.recheckProblem.empty())
            s.recheckProblem = "input " + l.name + " was modified by the candidate during a timed call";
        modified = modified || now.value() != s.fingerprints[i];
        ++i;
    }
    // The baseline must see exactly the inputs the candidate was given: draw them again.
    if (modified)
        return regenerate(s, set, s.recheckSeed, 0, true);
    return {};
}

Result<std::string> Bencher::compareRecheck(Shape& s, int set, int variant)
{
    if (!s.recheckProblem.empty())
        return s.recheckProblem;
    // Judged as Verify judges (golden result, on the GPU): the outputs never leave the device.
    TorchBridge::Expected expected{s.references[static_cast<size_t>(set)].get(), nullptr, {}};
    std::map<std::string, RawTensor> inputs;
    for (const auto& l : s.layout)
        if (l.role == TensorLayout::Role::Input)
            inputs[l.name] = RawTensor{reinterpret_cast<void*>(s.inputs[static_cast<size_t>(set)].find(l.name)->ptr()), l.dtype,
                                       l.extents, true};
    const std::unique_ptr<TorchBridge::Reference> golden = TorchBridge::runGolden(m_request.task, inputs, expected.goldenNote);
    expected.golden = golden.get();
    size_t o = 0;
    for (const auto& l : s.layout) {
        if (l.role != TensorLayout::Role::Output)
            continue;
        const RawTensor actual{reinterpret_cast<void*>(s.outputs.find(l.name)->ptr()), l.dtype, l.extents, true};
        auto judged = TorchBridge::judgeOutput(expected, *l.spec, actual, s.sentinels[variant][o].data(), 1);
        if (!judged)
            return judged.error();
        const OutputCheck& c = judged.value();
        if (!c.passed) {
            std::string why = l.name + ": " + std::to_string(c.mismatches) + " of " + std::to_string(c.elements) +
                              " elements wrong in a timed call (" + std::to_string(c.unwritten) + " never written";
            if (!c.firstMismatches.empty())
                why += "; first mismatch at " + formatIndex(c.firstMismatches.front().index) + ": expected " +
                       formatNumber(c.firstMismatches.front().expected) + ", got " + formatNumber(c.firstMismatches.front().actual);
            return why + ")";
        }
        ++o;
    }
    return std::string();
}

Result<nlohmann::json> Bencher::runShape(size_t shapeIndex)
{
    const BenchSettings& cfg = m_request.bench;
    // The time cap is wall-clock for the whole shape: set-up, warm-up, inputs, flushes, samples
    // and re-checks all count (docs/verification.md, timing rule 3).
    const auto shapeStart = std::chrono::steady_clock::now();
    Shape s;
    s.ref = &m_request.runShapes[shapeIndex];
    s.fingerprintKey = deriveSeed(m_request.seeds.front(), 0xf1a9e7ull + shapeIndex);
    const ShapeBinding& binding = s.ref->binding;
    s.name = binding.label.empty() ? binding.describe() : binding.label + " (" + binding.describe() + ")";
    const std::string where = "shape " + s.name;
    const std::uint64_t seed = deriveSeed(m_request.seeds.front(), shapeIndex);
    auto layout = layoutFor(m_request.task, m_request.candidate(), binding, m_gpu.info.memoryBytes);
    if (!layout)
        return layout.error();
    s.layout = std::move(layout.value());

    // Untimed set-up: K input sets, shared outputs, one prepared baseline and bound plan per set.
    auto outs = BufferSet::allocate(s.layout, {TensorLayout::Role::Output, TensorLayout::Role::Scratch}, deriveSeed(seed, kGuardSalt),
                                    m_stream);
    if (!outs)
        return outs.error();
    s.outputs = std::move(outs.value());
    size_t o = 0;
    for (const auto& l : s.layout)
        if (l.role == TensorLayout::Role::Output) {
            for (int v = 0; v < 2; ++v)
                s.sentinels[v].push_back(sentinelBytes(l.dtype, v, deriveSeed(seed, kSentinelSalt + o)));
            ++o;
        }
    for (int k = 0; k < kInputSets; ++k) {
        const std::uint64_t k64 = static_cast<std::uint64_t>(k);
        auto set = BufferSet::allocate(s.layout, {TensorLayout::Role::Input}, deriveSeed(seed, kGuardSalt + 1 + k64), m_stream);
        if (!set)
            return set.error();
        s.inputs.push_back(std::move(set.value()));
        if (auto r = regenerate(s, k, deriveSeed(seed, kInputSalt + k64), 0, false); !r)
            return r.error();
        std::map<std::string, RawTensor> raw;
        for (const auto& l : s.layout)
            if (l.role == TensorLayout::Role::Input)
                raw[l.name] = RawTensor{reinterpret_cast<void*>(s.inputs.back().find(l.name)->ptr()), l.dtype, l.extents, true};
        auto ref = TorchBridge::prepareReference(m_request.task, raw);
        if (!ref)
            return ref.error();
        s.references.push_back(std::move(ref.value()));
        auto pointers = s.outputs.pointers();
        for (const auto& [name, ptr] : s.inputs.back().pointers())
            pointers[name] = ptr;
        auto bound = m_program->plan().bind(m_request.task, binding, pointers, m_gpu.info);
        if (!bound)
            return bound.error();
        s.launches.push_back(std::move(bound.value()));
    }
    const std::int64_t sampleTimeout = m_request.launchTimeoutMs * static_cast<std::int64_t>(2 + s.launches.front().size());
    const double setupMs = msSince(shapeStart);

    // Warm-up: both sides, discarded (cuBLAS handles, allocator pools, instruction caches).
    for (int w = 0; w < cfg.warmup; ++w) {
        m_channel.launchBegin(m_request.id, "bench warm-up " + std::to_string(w) + " " + where, sampleTimeout);
        auto c = candidateCall(s, w % kInputSets, w % 2, where);
        auto b = c ? baselineCall(s, w % kInputSets, where) : Result<Timing>(c.error());
        m_channel.launchEnd(m_request.id);
        if (!b)
            return b.error();
    }

    const double warmupMs = msSince(shapeStart) - setupMs;
    double recheckMs = 0; // counted in the cap like everything else; reported so a user sees where time went
    std::mt19937_64 rng(deriveSeed(seed, 0x4ec4ull));
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const int evenBelowMin = std::max(1, (cfg.minSamples + 1) / 2);
    const int forcedRecheck = cfg.recheckFraction > 0 ? 2 * static_cast<int>(rng() % static_cast<std::uint64_t>(evenBelowMin)) : -1;
    const double recheckProbability = std::min(1.0, 2.0 * cfg.recheckFraction); // only even samples qualify

    std::vector<double> cand, base;
    double wallSum = 0, windowSum = 0;
    int rechecks = 0;
    std::string recheckFailure;
    bool spreadReached = false;
    std::string stoppedBy = "max_samples";
    for (int n = 0; n < cfg.maxSamples; ++n) {
        const int set = n % kInputSets;
        const bool candidateFirst = n % 2 == 0;
        const int variant = (n / 2) % 2;
        const bool recheck = candidateFirst && (n == forcedRecheck || (cfg.recheckFraction > 0 && uniform(rng) < recheckProbability));
        const auto sampleStart = std::chrono::steady_clock::now();
        if (recheck)
            // Fresh data in a buffer the candidate has seen before: a result cached by pointer is stale.
            if (auto r = regenerate(s, set, deriveSeed(seed, kRecheckSalt + static_cast<std::uint64_t>(rechecks)), 0, true); !r)
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
            ++rechecks;
            auto why = compareRecheck(s, set, variant);
            if (!why)
                return why.error();
            if (!why->empty() && recheckFailure.empty())
                recheckFailure = "sample " + std::to_string(n) + ": " + why.value();
            recheckMs += msSince(sampleStart) - tc.wallMs - tb.wallMs;
        }
        cand.push_back(tc.callMs);
        base.push_back(tb.callMs);
        wallSum += tc.wallMs + tb.wallMs;
        windowSum += tc.windowMs + tb.windowMs;

        const double elapsed = msSince(shapeStart);
        const double done = std::max(static_cast<double>(n + 1) / cfg.maxSamples, elapsed / cfg.timeCapMs);
        std::string stage = "benchmark " + where + ": " + std::to_string(n + 1) + " samples";
        if (n >= 2) {
            char spread[96];
            std::snprintf(spread, sizeof spread, ", spread %.1f%% / %.1f%% (target %.1f%%)",
                          100.0 * TimingStats::of(cand).medianRelSpread, 100.0 * TimingStats::of(base).medianRelSpread,
                          100.0 * cfg.targetSpread);
            stage += spread;
        }
        m_channel.progress(m_request.id,
                           static_cast<int>(999.0 * (static_cast<double>(shapeIndex) + std::min(1.0, done)) /
                                            static_cast<double>(m_request.runShapes.size())),
                           stage);
        if (elapsed >= cfg.timeCapMs) {
            // The cap wins over the minimum sample count: a promise of wall time is kept.
            stoppedBy = "time_cap";
            spreadReached = n + 1 >= cfg.minSamples && TimingStats::of(cand).medianRelSpread <= cfg.targetSpread &&
                            TimingStats::of(base).medianRelSpread <= cfg.targetSpread;
            break;
        }
        if (n + 1 < cfg.minSamples)
            continue;
        spreadReached = TimingStats::of(cand).medianRelSpread <= cfg.targetSpread &&
                        TimingStats::of(base).medianRelSpread <= cfg.targetSpread;
        if (spreadReached) {
            stoppedBy = "spread";
            break;
        }
    }

    const TimingStats c = TimingStats::of(cand), b = TimingStats::of(base);
    std::vector<DType> inputTypes;
    for (const auto& l : s.layout)
        if (l.role == TensorLayout::Role::Input)
            inputTypes.push_back(l.dtype);
    const Roofline roof = Roofline::at(m_request.task, binding, inputTypes, m_gpu.info, m_request.arch);
    const bool belowFloor = roof.below(c.medianMs);
    const double speedup = c.medianMs > 0 ? b.medianMs / c.medianMs : 0.0;

    nlohmann::json flags = nlohmann::json::array();
    std::string failure;
    if (belowFloor) {
        flags.push_back("below roofline floor");
        failure = where + ": the median " + formatNumber(c.medianMs) + " ms is below the roofline floor " +
                  formatNumber(roof.floorMs) + " ms (" + formatNumber(roof.bytes) + " bytes at " + formatNumber(roof.peakGBs) +
                  " GB/s, " + formatNumber(roof.flops) + " flops at " + formatNumber(roof.floorTflops) +
                  " TFLOP/s): the timing cannot be real";
    }
    if (!recheckFailure.empty()) {
        flags.push_back("re-check failed");
        if (failure.empty())
            failure = where + ": re-check of a timed call failed: " + recheckFailure;
    }
    const double wallGapPct = wallSum > 0 ? 100.0 * (wallSum - windowSum) / wallSum : 0.0;
    const double calls = static_cast<double>(cand.size() + base.size());
    // Host launch and wake-up latency is tens of microseconds per call; more means untimed work.
    if (calls > 0 && (wallSum - windowSum) / calls > 0.2 && wallGapPct > 25.0)
        flags.push_back("event/wall gap " + std::to_string(static_cast<int>(std::lround(wallGapPct))) + "%");
    if (windowSum > wallSum * 1.05)
        flags.push_back("event time exceeds wall time");
    const bool unstable = !spreadReached;
    if (unstable)
        flags.push_back(std::string(stoppedBy == "time_cap" ? "unstable: time cap reached" : "unstable: sample limit reached") +
                        " before the spread target (candidate " + formatNumber(100.0 * c.medianRelSpread) + "%, baseline " +
                        formatNumber(100.0 * b.medianRelSpread) + "%)");
    if (static_cast<int>(cand.size()) < cfg.minSamples)
        flags.push_back("only " + std::to_string(cand.size()) + " samples within the time cap (minimum " +
                        std::to_string(cfg.minSamples) + ")");
    if (!m_flusher->persistingResetProblem().empty())
        flags.push_back("persisting L2 lines not reset (" + m_flusher->persistingResetProblem() + ")");
    if (!m_carveOutProblem.empty())
        flags.push_back("persisting L2 carve-out not removed (" + m_carveOutProblem + ")");

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
                          {"recheck", {{"checked", rechecks}, {"passed", recheckFailure.empty()}, {"failure", recheckFailure}}},
                          {"wall_gap_pct", std::round(wallGapPct * 10.0) / 10.0},
                          {"stopped_by", stoppedBy},
                          {"unstable", unstable},
                          {"wall_ms", std::round(msSince(shapeStart))},
                          {"phase_ms", {{"setup", std::round(setupMs)}, {"warmup", std::round(warmupMs)},
                                        {"rechecks", std::round(recheckMs)}}},
                          {"flags", flags}};
    if (!failure.empty())
        out["failure"] = failure; // taken out by run() for the summary
    return out;
}

} // namespace kf::device
