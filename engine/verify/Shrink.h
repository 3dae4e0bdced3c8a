#pragma once
// Shrinking a failure: from a shape on which a candidate fails, find a smaller legal shape that
// fails the same way, so the user debugs B=1 D=257 instead of B=37 D=4099. Pure: the GPU work
// happens behind a ProbeFn (one runner request per call in practice), so the search is tested
// with a predicate.

#include "engine/core/Result.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kf {

/// Why a trial failed, in the order the runner checks (docs/report-schema.md). A report
/// trial's kind is protocol::Trial::failureKind() (engine/protocol/VerifyReport.h).
enum class FailureKind { None, Launch, Guard, ModifiedInput, Unwritten, Mismatch, Nondeterministic };
/// "none", "launch", "guard", "modified_input", "unwritten", "mismatch", "nondeterministic".
std::string_view failureKindName(FailureKind k);
std::optional<FailureKind> parseFailureKind(std::string_view name);

struct ProbeOutcome {
    bool failed = false;
    FailureKind kind = FailureKind::None;
    std::string failure;          ///< the report's sentence, for the trace
};

/// Runs a batch of shapes and returns one outcome per shape, in order. An Error (runner crash,
/// compile failure) aborts the shrink with that error.
/// (engine/repro/ShrinkProbe.h reads the outcomes from a probe's report.)
using ProbeFn = std::function<Result<std::vector<ProbeOutcome>>(const std::vector<ShapeBinding>&)>;

struct ShrinkOptions {
    int maxProbes = 64;                         ///< shapes probed in all, over every call
    bool anyKind = false;                       ///< accept any failure, not only the starting kind
    std::function<bool()> cancelled;            ///< polled before each probe call; may be empty
    std::function<void(const std::string&)> progress; ///< one sentence per improvement; may be empty
};

struct ShrinkStep {
    ShapeBinding shape;
    bool failed = false;
    FailureKind kind = FailureKind::None;
};

struct ShrinkResult {
    ShapeBinding start, smallest;
    FailureKind kind = FailureKind::None;   ///< how `smallest` fails
    int probes = 0;                         ///< shapes probed
    int requests = 0;                       ///< probe calls
    /// Proven 1-minimal: lowering any one symbol to its next legal value passes, fails another
    /// way, or is illegal.
    bool minimal = false;
    bool budgetExhausted = false;           ///< a shape the search wanted was not probed
    bool cancelled = false;
    std::vector<ShrinkStep> trace;          ///< every probed shape, in probe order
};

/// Shrinks `failing` (a legal binding of `task` known to fail with `kind`) by coordinate descent
/// over the symbols, largest contribution to the task's element count first. Per symbol, one
/// probe call tries a ladder of smaller values (the smallest legal ones, one and two steps down,
/// halvings, and values that keep the residue modulo powers of two so "not a multiple of the
/// block size" survives), then bisection closes the gap below the smallest accepted value. Passes
/// repeat until one makes no progress; a final batch proves 1-minimality. No shape is probed
/// twice and at most options.maxProbes are probed. Errors: an illegal start, kind None without
/// anyKind, or the first probe error.
Result<ShrinkResult> shrink(const Task& task, const ShapeBinding& failing, FailureKind kind, const ProbeFn& probe,
                            const ShrinkOptions& options = {});

/// {"start", "smallest", "kind", "probes", "requests", "minimal", "budget_exhausted",
///  "cancelled", "trace": [{"shape", "failed", "kind"}]}; shapes as {symbol: value}.
nlohmann::json toJson(const ShrinkResult& r);

} // namespace kf
