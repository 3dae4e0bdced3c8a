#pragma once
// The target half of a profile: CUPTI's range profiler on the runner's context, in auto-range
// mode (one range per kernel launch) with kernel replay (CUPTI saves and restores the memory a
// kernel may touch, and replays it once per pass). Requires a current context.

#include "device/CounterPlan.h"
#include "engine/core/Result.h"

#include <cuda.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

struct CUpti_RangeProfiler_Object;

namespace kf::device {

/// Whether this device lets us read counters, and what the host plan needs from it.
struct CounterAccess {
    std::string chip;                           ///< "GH100"
    std::vector<std::uint8_t> availability;     ///< counter availability image
};

/// Loads CUPTI, checks the device is supported and that counters are permitted. The Error's
/// `why` names the CUPTI result (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, ...) and `hint` how to fix it.
Result<CounterAccess> openCounters(CUdevice device, int deviceIndex, CUcontext context);

struct ProfiledRange {
    std::string name;                           ///< the kernel's (mangled) name; "" when CUPTI could not say
    std::map<std::string, double> metrics;      ///< catalogue keys -> values
};

class RangeProfiler {
public:
    /// Enables the range profiler on `context` for at most `maxRanges` kernel launches.
    static Result<RangeProfiler> enable(CUcontext context, const CounterPlan& plan, size_t maxRanges);
    RangeProfiler(RangeProfiler&& other) noexcept;
    RangeProfiler& operator=(RangeProfiler&&) = delete;
    RangeProfiler(const RangeProfiler&) = delete;
    RangeProfiler& operator=(const RangeProfiler&) = delete;
    ~RangeProfiler();

    /// Runs `workload` (enqueues launches; must not synchronise away errors) between start and
    /// stop until CUPTI has every pass, then decodes and evaluates one range per launch.
    /// `dropped` says how many launches did not fit into maxRanges.
    Result<std::vector<ProfiledRange>> run(const std::function<Result<void>()>& workload, const CounterHost& host,
                                           const CounterPlan& plan, size_t& dropped);

private:
    RangeProfiler() = default;
    CUpti_RangeProfiler_Object* m_object = nullptr;
    std::vector<std::uint8_t> m_counterData;
    std::vector<std::uint8_t> m_config;
};

} // namespace kf::device
