#pragma once
// The profile report (docs/report-schema.md, "Profile"): one launch of the candidate, and
// optionally of the LibTorch baseline, replayed under the CUPTI range profiler, with the static
// numbers (registers, shared memory, theoretical occupancy) beside the counters.
//
// The runner fills the kernels and calls toJson(); everything else reads a report through
// fromJson(). Totals are derived from the kernels (totalsOf) on both sides of the wire, so a
// hand-edited total can never disagree with the numbers it summarises.

#include "engine/core/Result.h"
#include "engine/protocol/Verdict.h"
#include "engine/protocol/Report.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kf::profile {

inline constexpr int kSchemaVersion = 1;

/// What the cubin and cuFuncGetAttribute say about a candidate kernel, and the theoretical
/// occupancy our calculator (engine/analysis/Occupancy) gives for its launch. Absent (known ==
/// false) for baseline kernels: LibTorch's kernels are not ours to read.
struct StaticResources {
    bool known = false;
    int registers = 0;                  ///< per thread
    int staticSharedBytes = 0;
    int localBytes = 0;                 ///< local memory per thread (spills and stack)
    int maxThreadsPerBlock = 0;         ///< cuFuncGetAttribute's limit for this kernel
    double theoreticalOccupancyPct = 0;
    std::string limiter;                ///< limiterName(): "warps", "registers", "shared_memory", "blocks", ...
    int activeBlocksPerSm = 0;
    int activeWarpsPerSm = 0;
    int maxWarpsPerSm = 0;
    int blocksLimitWarps = 0, blocksLimitRegisters = 0, blocksLimitShared = 0, blocksLimitBlocks = 0;
};

/// One profiled range: one kernel launch.
struct KernelRecord {
    std::string name;                   ///< as CUPTI names the range (mangled)
    std::string demangled;              ///< for people; equals name when not mangled
    std::array<std::int64_t, 3> grid{0, 0, 0};   ///< 0s when unknown (baseline)
    std::array<std::int64_t, 3> block{0, 0, 0};
    std::int64_t dynamicSharedBytes = 0;
    StaticResources statics;
    std::map<std::string, double> metrics;       ///< MetricCatalog keys -> values; empty without counters

    std::optional<double> metric(std::string_view key) const;
    std::int64_t threadsPerBlock() const { return block[0] * block[1] * block[2]; }
    std::int64_t blocks() const { return grid[0] * grid[1] * grid[2]; }
};

/// Sums and duration-weighted means over the kernels of one side. A mean is nullopt when no
/// kernel has the metric (a chip without it, or no counters).
struct Totals {
    int kernels = 0;
    double durationNs = 0;
    double dramBytes = 0;               ///< read + write
    double fp32Flops = 0, fp64Flops = 0, fp16Flops = 0;  ///< an FMA counts two
    double flops = 0;                   ///< the three together
    std::optional<double> achievedOccupancyPct, smThroughputPct, dramThroughputPct, memoryThroughputPct;
    std::optional<double> l1HitRatePct, l2HitRatePct;
    double arithmeticIntensity = 0;     ///< flops / DRAM byte; 0 without bytes
    double achievedGflops = 0;          ///< flops / duration
    double achievedDramGbs = 0;         ///< DRAM bytes / duration
    bool hasCounters = false;           ///< at least one kernel has a duration
};
Totals totalsOf(const std::vector<KernelRecord>& kernels);

struct Side {
    std::vector<KernelRecord> kernels;
    Totals totals;                      ///< totalsOf(kernels), kept in step by fromJson and the runner
};

struct CounterStatus {
    bool available = false;             ///< counters were collected
    std::string chip;                   ///< "GH100"
    int passes = 0;                     ///< replay passes the configuration needs
    std::string replay = "kernel";
    std::vector<std::string> unsupported; ///< optional metric keys the chip lacks
    std::string problem;                ///< why not available: "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: ..." or a missing library
    std::string howToEnable;            ///< what the user can do about it
};

/// The roofline's ceilings for this device. 0 means unknown (the chart leaves that line out).
struct Ceilings {
    double dramGbs = 0;
    std::string dramSource;             ///< "counters" (dram__bytes.sum.peak_sustained x DRAM clock) or "memory clock"
    double fp32Gflops = 0;
    double fp16TensorGflops = 0;
};

struct ProfileReport {
    protocol::Verdict verdict = protocol::Verdict::Error; ///< ok | no_counters (static numbers only) | error
    std::string summary;
    nlohmann::json header = nlohmann::json::object(); ///< task, candidate, environment, started_at, duration_ms, error (as in other reports)
    std::map<std::string, std::int64_t> shape;
    std::string label;
    std::string set;                    ///< "benchmarks", "tests" or "custom"
    CounterStatus counters;
    Ceilings ceilings;
    std::optional<Side> candidate;
    std::optional<Side> baseline;       ///< only when the baseline was profiled too

    nlohmann::json toJson() const;
    /// Checks the kind, schema version and every field's type; the Error names `source`, the JSON
    /// pointer and what is wrong. Totals are recomputed from the kernels.
    static Result<ProfileReport> fromJson(const nlohmann::json& j, const std::string& source);

    protocol::Environment environment() const; ///< the header's environment block (defaults when absent)
    std::string gpu() const;            ///< environment.gpu, or ""
    std::string arch() const;           ///< "sm_90" from environment.compute_capability, or ""
};

} // namespace kf::profile
