#pragma once
// A performance report (docs/report-schema.md, "Performance") as values, read once and shown by
// the CLI's bench table, the Runs panel, the gates and the registry's speedup chart.

#include "engine/protocol/Report.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kf::protocol {

class Fields;

/// One side's timing over the samples (all times in milliseconds); absent values are nullopt.
struct TimingSummary {
    std::optional<double> medianMs, minMs, maxMs, iqrMs, meanMs;
    std::int64_t samples = 0;
    std::optional<double> medianRelSpread;

    nlohmann::json toJson() const;
    static TimingSummary read(const Fields& f);
};

struct Recheck {
    std::int64_t checked = 0;
    std::optional<bool> passed;
    std::string failure;
};

struct BenchShape {
    ShapeId id;
    TimingSummary candidate;
    TimingSummary baseline;
    std::optional<double> speedup;          ///< baseline median ÷ candidate median
    double bytes = 0;
    double flops = 0;
    std::optional<double> achievedGbs, achievedTflops, pctPeakBandwidth, pctPeakFlops, rooflineFloorMs;
    bool belowFloor = false;
    Recheck recheck;
    std::optional<double> wallGapPct;
    std::string stoppedBy;                  ///< spread | time_cap | max_samples
    bool unstable = false;
    std::optional<double> wallMs;
    std::map<std::string, double> phaseMs;  ///< setup, warmup, rechecks
    std::vector<std::string> flags;

    /// The runner's flags plus the two that make a time untrustworthy even when unflagged: below
    /// the roofline floor, a failed re-check.
    std::vector<std::string> allFlags() const;
    /// False when the time is below the roofline floor or a re-check failed.
    bool trustworthy() const { return !belowFloor && recheck.passed != false; }
};

struct BenchReport {
    Header header;
    std::optional<double> geomeanSpeedup;
    std::optional<bool> allShapesAtLeast1x;
    std::vector<BenchShape> shapes;

    nlohmann::json toJson() const;
    static Result<BenchReport> fromJson(const nlohmann::json& j);
    static BenchReport read(const Fields& f);   ///< throws kf::json::SchemaError
};

} // namespace kf::protocol
