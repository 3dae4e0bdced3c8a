#pragma once
// The promotion gates (docs/verification.md): a kernel enters the registry only with a correctness
// report and a performance report that belong to its current source and task, that pass every
// test and held-out shape, that come from a task able to tell a wrong kernel from a right one,
// that compute-sanitizer found clean (as the registry's sanitizer policy asks), and that show it
// at least as fast as LibTorch on every benchmark shape and faster on average.
// One function decides, for the CLI, the workbench's Promote button and the registry itself.

#include "engine/protocol/RunReport.h"
#include "engine/protocol/Signature.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kf {

inline constexpr double kDefaultSpeedupThreshold = 1.10;
inline constexpr int kMinTrialsForPromotion = 3;

/// What a registry asks of compute-sanitizer (docs/registry.md, "The sanitizer policy"):
/// Required: a correctness report the tools did not run on is refused; IfAvailable (the default):
/// it is refused only when the runner's host has the tool, and recorded as not run when it has
/// not; Off: the gate is not run. Under every policy a report whose tools found a bug is refused.
enum class SanitizerPolicy { Required, IfAvailable, Off };
inline constexpr SanitizerPolicy kDefaultSanitizerPolicy = SanitizerPolicy::IfAvailable;
inline constexpr const char* kSanitizerPolicyChoices = "required, if_available or off";
/// "required" | "if_available" | "off"
const char* sanitizerPolicyName(SanitizerPolicy policy);
/// The policy of a name, or nothing for any other text.
std::optional<SanitizerPolicy> parseSanitizerPolicy(std::string_view name);

/// One gate and how it went. `gate` is a stable key (docs/registry.md):
/// evidence, signed, correctness, sanitizer, held_out, negative_control, benchmarks, per_shape_speedup,
/// geomean_speedup, and compile_speedup when the registry asks for it.
struct GateCheck {
    std::string gate;
    std::string title;     ///< "Correct on every test shape"
    bool passed = false;
    std::string detail;    ///< what was found: "10 of 10 test shapes passed, 3 trials each"
    std::string hint;      ///< failed gates: what to do
    /// The gate judged nothing and does not block (the sanitizer gate without a run, where the
    /// policy allows that): `passed` stays false, so nothing claims a check that never ran, and
    /// `detail` says why it did not run.
    bool notRun = false;
    /// Failed: neither passed nor allowed not to run.
    bool blocks() const { return !passed && !notRun; }
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
    /// What the sanitizer gate judged, for the promotion record (set once the gate was reached).
    struct Sanitizer {
        SanitizerPolicy policy = kDefaultSanitizerPolicy;
        std::string toolVersion;             ///< "2025.3.1.0"; empty when the report names none
        std::vector<std::string> toolsRun;   ///< the tools that ran, in the report's order
        std::vector<std::string> shapes;     ///< "N=1000" for each shape they ran on
    };
    std::optional<Sanitizer> sanitizer;
    /// No gate blocks (a gate that did not run, where allowed, does not).
    bool passed() const;
    /// The first gate that blocks, or nullptr.
    const GateCheck* firstFailure() const;
    /// The gates that passed.
    int passedCount() const;
    /// The first gate that did not run, or nullptr.
    const GateCheck* firstNotRun() const;
    /// "refused: <title>: <detail> (<hint>)", "all 9 gates passed", or "8 gates passed; not run:
    /// <title> (<detail>)".
    std::string sentence() const;
    /// Every gate with gate, title, passed, not_run, detail and hint.
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
    /// The last gate, off when empty: the geometric-mean speedup over torch.compile (the
    /// report's compile_baseline, docs/benchmarks.md) must be at least this.
    std::optional<double> compileThreshold;
    /// What the sanitizer gate asks of the correctness report's compute-sanitizer section.
    SanitizerPolicy sanitizerPolicy = kDefaultSanitizerPolicy;
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
