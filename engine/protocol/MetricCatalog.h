#pragma once
// The hardware counters a profile collects: our short key, the CUPTI metric behind it, its unit
// and what it means. Pure data (no CUPTI): the runner builds its counter configuration from it,
// reports carry the short keys, and the panel, the hints and the CLI read them by key.

#include <span>
#include <string_view>

namespace kf::profile {

struct MetricInfo {
    const char* key;          ///< "achieved_occupancy_pct": the key in a report's "metrics"
    const char* cuptiName;    ///< "sm__warps_active.avg.pct_of_peak_sustained_active"
    const char* unit;         ///< "%", "bytes", "ns", "instructions", "Hz", "bytes/cycle"
    const char* meaning;      ///< one line for tooltips and `kforge profile --list-metrics`
    bool required;            ///< a chip without it cannot be profiled (else: left out, listed as unsupported)
};

/// Every metric, in report order.
std::span<const MetricInfo> metricCatalog();
/// By short key or by CUPTI name; nullptr when unknown.
const MetricInfo* findMetric(std::string_view keyOrCuptiName);

// The keys the rest of the code reads (each is in the catalogue; tst_profilereport checks).
namespace key {
inline constexpr const char* kAchievedOccupancy = "achieved_occupancy_pct";
inline constexpr const char* kSmThroughput = "sm_throughput_pct";
inline constexpr const char* kDramThroughput = "dram_throughput_pct";
inline constexpr const char* kMemoryThroughput = "memory_throughput_pct";
inline constexpr const char* kDramReadBytes = "dram_read_bytes";
inline constexpr const char* kDramWriteBytes = "dram_write_bytes";
inline constexpr const char* kDuration = "duration_ns";
inline constexpr const char* kL1HitRate = "l1_hit_rate_pct";
inline constexpr const char* kL2HitRate = "l2_hit_rate_pct";
inline constexpr const char* kFfma = "fp32_ffma";
inline constexpr const char* kFadd = "fp32_fadd";
inline constexpr const char* kFmul = "fp32_fmul";
inline constexpr const char* kDfma = "fp64_dfma";
inline constexpr const char* kDadd = "fp64_dadd";
inline constexpr const char* kDmul = "fp64_dmul";
inline constexpr const char* kHfma = "fp16_hfma";
inline constexpr const char* kHadd = "fp16_hadd";
inline constexpr const char* kHmul = "fp16_hmul";
inline constexpr const char* kTensorInstructions = "tensor_instructions";
inline constexpr const char* kSmClock = "sm_clock_hz";
inline constexpr const char* kDramPeakBytesPerCycle = "dram_peak_bytes_per_cycle";
inline constexpr const char* kDramClock = "dram_clock_hz";
} // namespace key

} // namespace kf::profile
