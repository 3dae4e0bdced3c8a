#pragma once
// Timing of one candidate against the LibTorch baseline (docs/verification.md, timing rules 1-7):
// rotating input sets, an L2 flush and persisting-L2 reset before every timed call, events on
// LibTorch's stream around each call plus a device-wide synchronise, candidate and baseline
// interleaved with the order swapped every sample, repeated until the median is stable, with
// re-checks on poisoned outputs and a roofline sanity floor. Produces the performance report of
// docs/report-schema.md.

#include "device/CudaEvent.h"
#include "device/L2Flusher.h"
#include "device/runner/BufferSet.h"
#include "device/runner/CandidateProgram.h"
#include "device/runner/RunMode.h"

#include <nlohmann/json.hpp>

#include <cuda.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace kf::device {

struct Roofline;
struct TimingStats;

class Bencher : RunMode {
public:
    Bencher(Channel& channel, const GpuContext& gpu, const RunPlan& request, SoftwareVersions versions);

    /// The report (verdict ok, fail, or error). An Error only when the CUDA context was lost
    /// (stickyError() is set; the caller sends it as fatal and exits).
    Result<nlohmann::json> run();

private:
    struct Shape;
    struct Timing {
        double callMs = 0;    ///< between the events around the call
        double windowMs = 0;  ///< from before the flush to after the call (compared with wall time)
        double wallMs = 0;    ///< host clock over the same window, through the device-wide sync
    };

    struct Samples;
    /// The context current, the events, the L2 flusher and the persisting-L2 carve-out removed.
    Result<void> setUp();
    Result<nlohmann::json> runShape(size_t shapeIndex);
    /// Untimed set-up of a shape: its layout, shared outputs and sentinels, and kInputSets input
    /// sets, each with a prepared baseline and a bound launch plan.
    Result<void> setUpShape(Shape& s, std::uint64_t seed);
    /// Samples until the spread target, the sample limit or the time cap (timing rules 2-6).
    Result<void> takeSamples(Shape& s, size_t shapeIndex, std::uint64_t seed, std::chrono::steady_clock::time_point shapeStart,
                             std::int64_t sampleTimeout, Samples& m);
    /// Sample `n`: both sides timed in alternating order, with a re-check when `recheck`.
    Result<void> timeSample(Shape& s, int n, bool recheck, std::uint64_t seed, std::int64_t sampleTimeout, Samples& m);
    /// Reports progress after sample `n`; true when sampling stops (m.stoppedBy, m.spreadReached).
    bool sampledEnough(size_t shapeIndex, int n, double elapsed, const std::string& where, Samples& m);
    /// The shape's entry of the report; a failing shape has "failure", which run() takes out.
    nlohmann::json shapeReport(const Shape& s, const Samples& m, std::chrono::steady_clock::time_point shapeStart,
                               double setupMs, double warmupMs) const;
    /// The shape's flags; `failure` gets the first finding that fails the benchmark.
    nlohmann::json shapeFlags(const std::string& where, const TimingStats& c, const TimingStats& b, const Roofline& roof,
                              double wallGapPct, const Samples& m, std::string& failure) const;
    /// One timed call: flush, start event, `body`, end event, device-wide synchronise.
    Result<Timing> timed(const std::function<Result<void>()>& body, const std::string& where);
    Result<void> prepareCandidateCall(Shape& s, int variant);
    Result<Timing> candidateCall(Shape& s, int set, int variant, const std::string& where);
    Result<Timing> baselineCall(Shape& s, int set, const std::string& where);
    /// Fresh data in input set `set`, and with `fingerprint` a keyed fingerprint of each input
    /// (a re-check's inputs; the data never leaves the GPU).
    Result<void> regenerate(Shape& s, int set, std::uint64_t seed, int distribution, bool fingerprint);
    /// After the candidate's call on fresh data: guards and input fingerprints; draws modified
    /// inputs again so the baseline sees what the candidate was given.
    Result<void> captureRecheck(Shape& s, int set);
    Result<std::string> compareRecheck(Shape& s, int set, int variant);

    const CandidateProgram* m_program = nullptr;
    std::optional<L2Flusher> m_flusher;
    CudaEvent m_before, m_start, m_end;
    std::string m_carveOutProblem;   ///< why the persisting-L2 carve-out could not be removed
};

} // namespace kf::device
