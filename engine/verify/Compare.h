#pragma once
// Host-side verdict arithmetic, in float64 (VERIFICATION.md correctness rules 2, 7, 8, 9, 10).
// Lives in the engine so it is tested without a GPU; the runner hands it raw output bytes and
// the reference as doubles. Never trusts the candidate: every input is plain memory.

#include "engine/task/DType.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kf {

/// Decodes `n` raw elements of `t` into doubles (fp16 and bf16 exactly; bool as 0/1).
void toDouble(DType t, const void* raw, std::int64_t n, double* out);

/// The sentinel written into outputs before a launch: a NaN with a recognisable payload for
/// floating types (a kernel computing NaN writes the canonical NaN, not ours), a random value
/// for integers. `variant` selects a different pattern for the second run (rule 9).
std::vector<unsigned char> sentinelBytes(DType t, int variant, std::uint64_t seed);

struct Mismatch {
    std::vector<std::int64_t> index;
    double expected = 0;
    double actual = 0;
    double absError = 0;
    double relError = 0;
};

struct OutputCheck {
    std::string output;
    std::int64_t elements = 0;
    std::int64_t mismatches = 0;            ///< outside tolerance, non-finite mismatch or unwritten
    double mismatchFraction = 0;
    double maxAbsError = 0;                 ///< over finite pairs
    double maxRelError = 0;
    std::int64_t unwritten = 0;             ///< elements still holding the sentinel
    std::int64_t nonFiniteMismatches = 0;   ///< NaN/Inf where the reference differs, or vice versa
    double referenceRms = 0;
    double atolEffective = 0;
    double rtol = 0;
    std::vector<Mismatch> firstMismatches;  ///< bounded, in index order
    std::vector<std::vector<std::int64_t>> firstUnwritten;
    bool passed = false;
};

/// Compares one output. `sentinel` (element-size bytes) marks never-written elements; pass
/// nullptr to skip that check. `maxSamples` bounds the listed mismatches.
OutputCheck compareOutput(const std::string& name, DType t, const void* actualRaw, const double* expected,
                          const std::vector<std::int64_t>& extents, const Tolerance& tol, const void* sentinel,
                          int maxSamples = 10);

/// Rule 9: two runs of the candidate agree within the tolerance (NaN positions equal).
/// Returns the number of disagreeing elements; `maxAbsDiff` receives the largest difference.
std::int64_t countDisagreements(DType t, const void* a, const void* b, std::int64_t n, const Tolerance& tol,
                                const double* expected, double* maxAbsDiff);

struct NegativeControl {
    std::string output;
    bool zerosPass = false;        ///< an all-zero output would pass the tolerance
    bool constantPass = false;     ///< a constant output (the reference mean) would pass
    /// False when the reference itself is constant (one element, or softmax over one column):
    /// then a constant output is the right answer and proves nothing about the tolerance.
    bool constantApplicable = true;
    double constant = 0;
    bool discriminates() const { return !zerosPass && !(constantApplicable && constantPass); }
};

/// Rule 8: would trivial outputs pass for this reference and tolerance?
NegativeControl negativeControl(const std::string& output, DType t, const double* expected,
                                const std::vector<std::int64_t>& extents, const Tolerance& tol);

/// Effective absolute tolerance for a reference (atol scaled by its RMS unless absolute).
double effectiveAtol(const Tolerance& tol, double referenceRms);
double rmsOf(const double* v, std::int64_t n);

nlohmann::json toJson(const Mismatch& m);
nlohmann::json toJson(const OutputCheck& c);
nlohmann::json toJson(const NegativeControl& n);

} // namespace kf
