#pragma once
// The torch.compile baseline (docs/benchmarks.md, "The torch.compile baseline"): the result the
// harness (python -m kernelforge_baseline bench) prints, read strictly as outside input, and its
// merge into a performance report (docs/report-schema.md, "The torch.compile baseline").
//
// The harness times eager, each compile mode and the candidate in one process, so the speedup
// over torch.compile is its candidate median over its best compiled median. Its eager and
// candidate medians are also compared with the runner's: a harness that disagrees with the
// runner by more than kHarnessFidelityPct is flagged on the shape.

#include "engine/core/Result.h"
#include "engine/protocol/BenchReport.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kf::protocol {

/// The largest gap, in percent, between the harness's medians and the runner's before a shape is flagged.
inline constexpr double kHarnessFidelityPct = 3.0;

/// A side's timing in the harness: the runner's summary, read with the runner's reader.
using HarnessStats = TimingSummary;

struct HarnessMode {
    bool measured = false;
    std::string reason;
    std::optional<double> compileS;
    std::optional<HarnessStats> timing;
};

struct HarnessShape {
    std::string label;
    bool measured = false;
    std::string reason;
    std::optional<HarnessStats> eager, candidate;
    std::map<std::string, HarnessMode> modes;
    std::string stoppedBy;
    std::vector<std::string> flags;   ///< what the harness says of its checks (a check against eager, not float64)
};

struct HarnessResult {
    bool measured = false;
    std::string reason, device, gpu, torch, triton, python, candidateImage;
    std::vector<std::string> modes;
    std::vector<HarnessShape> shapes;
};

/// Reads the harness's JSON; an Error names `origin` and the JSON pointer of a bad value.
Result<HarnessResult> readHarnessResult(std::string_view text, const std::string& origin);

/// Adds "compile_baseline" to the performance report `report` and a "compile" object to each of
/// its shapes the harness timed (matched by label). Pure: no I/O.
void mergeCompileBaseline(nlohmann::json& report, const HarnessResult& harness);

/// Records that the baseline was asked for and could not be measured, and why.
void markCompileNotMeasured(nlohmann::json& report, const std::string& reason);

} // namespace kf::protocol
