#pragma once
// The promotion gates (docs/verification.md): a kernel enters the registry only with a correctness
// report and a performance report that belong to its current source and task, that pass every
// test and held-out shape, that come from a task able to tell a wrong kernel from a right one,
// and that show it at least as fast as LibTorch on every benchmark shape and faster on average.
// One function decides, for the CLI, the workbench's Promote button and the registry itself.

#include "engine/protocol/RunReport.h"
#include "engine/protocol/Signature.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace kf {

inline constexpr double kDefaultSpeedupThreshold = 1.10;
inline constexpr int kMinTrialsForPromotion = 3;

/// One gate and how it went. `gate` is a stable key (docs/registry.md):
/// evidence, signed, correctness, held_out, negative_control, benchmarks, per_shape_speedup, geomean_speedup,
/// and compile_speedup when the registry asks for it.
struct GateCheck {
    std::string gate;
    std::string title;     ///< "Correct on every test shape"
    bool passed = false;
    std::string detail;    ///< what was found: "10 of 10 test shapes passed, 3 trials each"
    std::string hint;      ///< failed gates: what to do
};

struct GateVerdict {
    std::vector<GateCheck> checks;
    /// What the speed gates judged, over the task's benchmark shapes (NaN when not measured):
    /// the registry records exactly these numbers.
    double geomeanSpeedup = NAN;
    double minSpeedup = NAN;
    /// The geometric-mean speedup over torch.compile the report shows (NaN when not measured).
    double compileSpeedup = NAN;
    /// The "signed" gate passed only because the input allowed unsigned reports.
    bool unsignedAccepted = false;
    bool passed() const;
    /// The first gate that failed, or nullptr.
    const GateCheck* firstFailure() const;
    /// "refused: <title>: <detail> (<hint>)" or "all 7 gates passed".
    std::string sentence() const;
    nlohmann::json toJson() const;
};

struct GateInput {
    const Task* task = nullptr;
    std::string candidateFile;       ///< as listed in task.json
    std::string sourceHash;          ///< hashHex of the candidate file's current bytes
    std::string taskHash;            ///< taskPayload(task).hash of the current task
    const protocol::RunReport* correctness = nullptr;   ///< a report (kind correctness), or null
    const protocol::RunReport* performance = nullptr;   ///< a report (kind performance), or null
    double threshold = kDefaultSpeedupThreshold;
    /// Held-out shapes the correctness report must have passed: 0 when the task admits none.
    int heldOutRequired = 1;
    /// Who vouches for the reports (docs/reliability.md, "Signed reports"): the user's key, or
    /// null with the reason there is none.
    const protocol::SigningKey* signingKey = nullptr;
    std::string signingKeyProblem;
    /// Accept reports without a valid signature (`promote --allow-unsigned`): the gate passes
    /// and its detail says so, in the promotion record too.
    bool allowUnsigned = false;
    /// The eighth gate, off when empty: the geometric-mean speedup over torch.compile (the
    /// report's compile_baseline, docs/benchmarks.md) must be at least this.
    std::optional<double> compileThreshold;
};

GateVerdict evaluateGates(const GateInput& in);

/// Held-out shapes a correctness report of `task` must include to promote: 1, or 0 when the
/// symbols' ranges and constraints leave no shape beside the test shapes (every symbol fixed).
int heldOutRequiredFor(const Task& task);

/// The correctness and performance reports among `documents`: each may be a report, or a
/// `kforge verify|bench --json` document holding "reports". The last report of each kind for
/// `candidateFile` wins. A report that cannot be read is not evidence: its error is kept.
struct Evidence {
    std::optional<protocol::RunReport> correctness;   ///< none when none was found
    std::optional<protocol::RunReport> performance;
    std::vector<Error> unreadable;                     ///< reports refused as malformed (with their pointer)
};
Evidence collectEvidence(const std::vector<nlohmann::json>& documents, const std::string& candidateFile);

} // namespace kf
