#include "device/runner/BencherShape.h"
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

using namespace bencher;

Bencher::Bencher(Channel& channel, const GpuContext& gpu, const RunPlan& request, SoftwareVersions versions)
    : RunMode(channel, gpu, request, std::move(versions), "benchmark")
{
}

Result<void> Bencher::setUp()
{
    if (auto r = enterContext(); !r)
        return r;
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

    if (auto r = setUp(); !r)
        return ReportHeader::stoppedBy(std::move(report), r.error());
    auto program = CandidateProgram::load(m_request, m_gpu.info);
    if (!program)
        return ReportHeader::stoppedBy(std::move(report), program.error());
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
    if (auto r = setUpShape(s, seed); !r)
        return r.error();
    const std::int64_t sampleTimeout = m_request.launchTimeoutMs * static_cast<std::int64_t>(2 + s.launches.front().size());
    const double setupMs = msSince(shapeStart);

    // Warm-up: both sides, discarded (cuBLAS handles, allocator pools, instruction caches).
    for (int w = 0; w < m_request.bench.warmup; ++w) {
        m_channel.launchBegin(m_request.id, "bench warm-up " + std::to_string(w) + " " + where, sampleTimeout);
        auto c = candidateCall(s, w % kInputSets, w % 2, where);
        auto b = c ? baselineCall(s, w % kInputSets, where) : Result<Timing>(c.error());
        m_channel.launchEnd(m_request.id);
        if (!b)
            return b.error();
    }

    const double warmupMs = msSince(shapeStart) - setupMs;
    Samples m;
    if (auto r = takeSamples(s, shapeIndex, seed, shapeStart, sampleTimeout, m); !r)
        return r.error();
    return shapeReport(s, m, shapeStart, setupMs, warmupMs);
}

Result<void> Bencher::setUpShape(Shape& s, std::uint64_t seed)
{
    const ShapeBinding& binding = s.ref->binding;
    // Untimed set-up: K input sets, shared outputs, one prepared baseline and bound plan per set.
    if (auto r = layOutShape(binding, deriveSeed(seed, kGuardSalt), s.layout, s.outputs); !r)
        return r;
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
    return {};
}

} // namespace kf::device
