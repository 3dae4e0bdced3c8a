#pragma once
// The host half of a profile: which of our metrics a chip has, the CUPTI configuration image
// that collects them, and how many replay passes it takes. Needs libcupti but no GPU, so CI
// plans for GH100 and GA100 on machines without one. Also evaluates collected counter data.

#include "engine/core/Result.h"
#include "engine/protocol/MetricCatalog.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

struct CUpti_Profiler_Host_Object;

namespace kf::device {

struct CounterPlan {
    std::string chip;                                       ///< "GH100"
    std::vector<const profile::MetricInfo*> metrics;        ///< collected, catalogue order
    std::vector<std::string> unsupported;                   ///< optional keys the chip lacks
    std::vector<std::uint8_t> configImage;
    size_t passes = 0;

    std::vector<const char*> cuptiNames() const;
};

/// A CUPTI Profiler Host object for one chip. Move-only; deinitialised on destruction.
class CounterHost {
public:
    /// `counterAvailability` (from the device, may be empty) restricts the plan to counters the
    /// device exposes now. An unknown chip is an Error listing the chips CUPTI knows.
    static Result<CounterHost> create(const std::string& chip, const std::vector<std::uint8_t>& counterAvailability = {});
    CounterHost(CounterHost&& other) noexcept;
    CounterHost& operator=(CounterHost&& other) noexcept;
    CounterHost(const CounterHost&) = delete;
    CounterHost& operator=(const CounterHost&) = delete;
    ~CounterHost();

    /// True when CUPTI knows `cuptiName` for this chip.
    bool supports(const char* cuptiName) const;
    /// The catalogue's metrics this chip supports (an Error when a required one is missing),
    /// their configuration image and pass count. Call once per host object.
    Result<CounterPlan> plan();
    /// The plan's metrics for range `rangeIndex` of a decoded counter data image (keys -> values).
    Result<std::map<std::string, double>> evaluate(const CounterPlan& plan, const std::vector<std::uint8_t>& counterData,
                                                   size_t rangeIndex) const;

    /// Chip names CUPTI's host API knows ("GA100", "GH100", ...).
    static Result<std::vector<std::string>> supportedChips();

private:
    CounterHost() = default;
    std::string m_chip;
    CUpti_Profiler_Host_Object* m_host = nullptr;
};

} // namespace kf::device
