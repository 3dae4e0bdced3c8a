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

/// One torch.compile mode's time on a shape (engine/protocol/CompileBaseline.h).
struct CompileModeTiming {
    std::string mode;
    bool measured = false;
    std::string reason;
    std::optional<double> compileS, medianMs, medianRelSpread;
    std::int64_t samples = 0;
};

/// A shape against torch.compile: the harness's own eager, best compiled and candidate medians,
/// and how far its eager and candidate medians are from the runner's.
struct CompileComparison {
    bool measured = false;
    std::string reason;
    std::optional<double> eagerMs, candidateMs, bestMs, speedup, eagerGapPct, candidateGapPct;
    std::string bestMode;
    std::vector<CompileModeTiming> modes;
    std::vector<std::string> flags;
};

/// The report-level result: measured, or why not; the versions; the geometric mean speedup.
struct CompileBaselineSummary {
    bool measured = false;
    std::string reason;
    std::vector<std::string> modes;
    std::string torch, triton, python, gpu, candidateImage;
    std::optional<double> geomeanSpeedup;
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
    std::optional<CompileComparison> compile;   ///< when the torch.compile baseline was asked for

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
    std::optional<CompileBaselineSummary> compileBaseline;  ///< absent: not asked for

    nlohmann::json toJson() const;
    /// The geometric-mean speedup over torch.compile when it was measured.
    std::optional<double> compileSpeedup() const;
    static Result<BenchReport> fromJson(const nlohmann::json& j);
    static BenchReport read(const Fields& f);   ///< throws kf::json::SchemaError
};

} // namespace kf::protocol
