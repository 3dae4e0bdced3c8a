#pragma once
// A correctness report (docs/report-schema.md, "Correctness") as values. The per-output record is
// engine/verify's OutputCheck — the same struct the comparison fills in the runner — so a report
// read here holds exactly what was judged. The per-shape summary the CLI table and the Runs panel
// show is computed once, by CorrectnessShape::summary().

#include "engine/protocol/Report.h"
#include "engine/protocol/SanitizerReport.h"
#include "engine/verify/Compare.h"
#include "engine/verify/Shrink.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kf::protocol {

struct GuardViolation {
    std::string buffer;
    std::string side;               ///< before | after
    std::int64_t offsetBytes = 0;
};

struct Trial {
    std::int64_t trial = 0;
    std::string seed;               ///< "0x9f…"
    std::map<std::string, std::string> distributions;
    bool passed = false;
    std::string failure;
    std::string launchError;
    std::vector<GuardViolation> guardViolations;
    std::vector<std::string> modifiedInputs;
    bool runsAgree = true;
    std::int64_t runDisagreements = 0;
    double runMaxAbsDiff = 0;
    std::vector<OutputCheck> outputs;
    std::string caseDir;            ///< relative to the report's dump_dir
    std::string caseSkipped;

    /// Why it failed, for shrink and repro: the first of a launch error, a guard violation, a
    /// modified input, unwritten elements, mismatches, disagreeing runs. None when it passed or
    /// no field shows a cause.
    FailureKind failureKind() const;
    /// "failed because": the failure, else the launch error, else "failed".
    std::string why() const;
    /// What a user reads about a failing trial: launch error, out-of-bounds writes, modified
    /// inputs, the first mismatches (5 per output), unwritten elements, disagreeing runs.
    std::vector<std::string> evidence() const;

    /// A trial object alone (a case file keeps its trial; a repro compares one).
    static Result<Trial> fromJson(const nlohmann::json& j);
};

/// What the CLI's verify table and the Runs panel show for one shape.
struct ShapeSummary {
    bool passed = false;
    int trials = 0;
    std::optional<double> maxAbsError;   ///< the worst over trials and outputs; NaN wins
    std::optional<double> maxRelError;
    std::optional<double> errorRatio;    ///< the worst golden error ratio (candidate ÷ LibTorch)
    std::string goldenNote;              ///< why some output has no golden result
    std::int64_t mismatches = 0;
    std::int64_t elements = 0;
    std::int64_t unwritten = 0;
    std::string firstFailure;            ///< "trial 1: y: 12 of 28693 elements outside tolerance …"
};

struct CorrectnessShape {
    ShapeId id;
    bool passed = false;
    std::vector<NegativeControl> negativeControl;
    std::vector<Trial> trials;

    ShapeSummary summary() const;
    /// The first trial that failed, or nullptr.
    const Trial* firstFailingTrial() const;
};

struct VerifyReport {
    Header header;
    std::int64_t trialsPerShape = 0;
    std::optional<bool> discriminates;
    std::vector<CorrectnessShape> shapes;
    std::map<std::string, double> phaseMs;   ///< inputs, candidate, reference, compare
    std::optional<SanitizerSection> sanitizer;  ///< present when the verification asked for compute-sanitizer

    nlohmann::json toJson() const;
    static Result<VerifyReport> fromJson(const nlohmann::json& j);
    static VerifyReport read(const Fields& f);   ///< throws kf::json::SchemaError
};

// The report form of the comparison's value types (engine/verify/Compare.h).
nlohmann::json toJson(const Mismatch& m);
/// The row and column summaries are written only for a failing output: a passing one has no
/// pattern to show, and the report stays small.
nlohmann::json toJson(const OutputCheck& c);
nlohmann::json toJson(const ErrorHistogram& h);
nlohmann::json toJson(const AxisSummary& s);
nlohmann::json toJson(const NegativeControl& n);
nlohmann::json toJson(const GoldenErrors& g);
nlohmann::json toJson(const Trial& t);

OutputCheck readOutputCheck(const Fields& f);
/// One output's record alone (a case file keeps the runner's record of each output).
Result<OutputCheck> outputCheckFromJson(const nlohmann::json& j);
NegativeControl readNegativeControl(const Fields& f);
Trial readTrial(const Fields& f);

} // namespace kf::protocol
