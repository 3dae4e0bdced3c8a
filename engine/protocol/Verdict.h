#pragma once
// A report's verdict as a value (docs/report-schema.md, "Common header"): each kind has its own
// three or four words, read strictly, and one rule says which of them is a success.

#include "engine/core/Result.h"

#include <optional>
#include <string>
#include <string_view>

namespace kf::protocol {

enum class ReportKind;

enum class Verdict {
    Pass,        ///< correctness: every shape and trial within tolerance
    Fail,        ///< correctness or performance: the candidate is wrong (or slower than its floor)
    Ok,          ///< performance or profile: measured
    NoCounters,  ///< profile: the kernels ran, CUPTI gave no counters (the machine's limit)
    Error,       ///< any kind: the run could not be done (the header's error says why)
};

/// "pass", "fail", "ok", "no_counters", "error": the word reports and `--json` carry.
const char* verdictName(Verdict v);
/// The verdict named `word`, if it is one of the five.
std::optional<Verdict> parseVerdict(std::string_view word);
/// Whether `v` is a verdict a report of `kind` may carry (correctness: pass, fail, error;
/// performance: ok, fail, error; profile: ok, no_counters, error).
bool verdictFitsKind(Verdict v, ReportKind kind);
/// The one pass rule: a run passed when its report says pass (correctness) or ok (performance,
/// profile). Every caller (CLI exit codes, the workbench's status, the pool, synthesis, the gates)
/// asks this, never compares words.
constexpr bool passes(Verdict v) { return v == Verdict::Pass || v == Verdict::Ok; }

} // namespace kf::protocol
