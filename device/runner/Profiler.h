#pragma once
// One shape's candidate launches, and optionally the LibTorch baseline, replayed under CUPTI's
// range profiler (docs/report-schema.md, "Profile"). Inputs are made as for a benchmark; both
// sides are warmed up once before the profiled call. Static numbers come from the loaded module
// (cuFuncGetAttribute) and the occupancy calculator, so they are there even without counters.

#include "device/runner/RunMode.h"
#include "engine/protocol/ProfileReport.h"

#include <nlohmann/json.hpp>

#include <cuda.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kf::device {

struct BoundLaunch;

class Profiler : RunMode {
public:
    Profiler(Channel& channel, const GpuContext& gpu, const RunPlan& request, SoftwareVersions versions);

    /// The profile report (verdict ok, no_counters or error). An Error only when the CUDA context
    /// was lost (stickyError() is set; the caller sends it as fatal and exits).
    Result<nlohmann::json> run();

private:
    struct Shape;
    Result<void> prepare(Shape& s);
    /// Zeroes the scratch that asks for it and enqueues the candidate's launches (no sync).
    Result<void> launchCandidate(const Shape& s);
    /// Runs `body` under the watchdog, then synchronises the context.
    Result<void> synced(const std::function<Result<void>()>& body, const std::string& what, std::int64_t timeoutMs);
    std::vector<profile::KernelRecord> candidateKernels(const Shape& s) const;
    /// Opens the counters, plans the catalogue for the chip and replays both sides; fills
    /// report.counters, the candidate's metrics and the baseline. Errors say why there are none.
    Result<void> readCounters(Shape& s, profile::ProfileReport& report);
    profile::StaticResources staticsOf(const BoundLaunch& launch) const;
    profile::Ceilings ceilings(const profile::ProfileReport& report) const;
    std::string summarize(const profile::ProfileReport& report) const;

    std::string m_where;              ///< "shape 1GiB (N=268435456)", for watchdog labels and errors
    std::int64_t m_perCallMs = 0;     ///< watchdog for one call of either side
};

} // namespace kf::device
