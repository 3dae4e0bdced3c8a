#pragma once
// Host-side verdict arithmetic, in float64 (docs/verification.md correctness rules 2, 7, 8, 9, 10).
// Lives in the engine so it is tested without a GPU; the runner hands it raw output bytes and
// the reference as doubles. Never trusts the candidate: every input is plain memory.

#include "engine/task/DType.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kf {

/// The index of flat (row-major) element `flat` in a tensor of `extents`.
std::vector<std::int64_t> unflattenIndex(std::int64_t flat, const std::vector<std::int64_t>& extents);

/// Decodes `n` raw elements of `t` into doubles (fp16 and bf16 exactly; bool as 0/1).
void toDouble(DType t, const void* raw, std::int64_t n, double* out);

/// The sentinel written into outputs before a launch: a NaN with a recognisable payload for
/// floating types (a kernel computing NaN writes the canonical NaN, not ours), a random value
/// for integers. `variant` selects a different pattern for the second run (rule 9).
std::vector<unsigned char> sentinelBytes(DType t, int variant, std::uint64_t seed);

/// What one output element is, judged exactly as compareOutput judges it. The runner, the
/// inspector and the repro comparison all call classify(), so they cannot disagree.
enum class ElementClass : std::uint8_t {
    Ok,                ///< within tolerance (NaN where the reference is NaN counts as equal)
    OutsideTolerance,  ///< a finite pair too far apart
    NonFinite,         ///< NaN or Inf where the reference differs, or the reverse
    Unwritten,         ///< still holds the sentinel: the kernel never wrote it
};
std::string_view elementClassName(ElementClass c);  ///< "ok", "outside_tolerance", "non_finite", "unwritten"

struct ElementVerdict {
    ElementClass cls = ElementClass::Ok;
    double actual = 0;    ///< the decoded element (NaN for unwritten floats)
    double absError = 0;  ///< |actual − expected|; inf for a non-finite mismatch, NaN for unwritten
    /// |actual − expected| ÷ (atol + rtol·|expected|): 1 is the tolerance edge. 0 for an exact
    /// match, inf for a non-finite mismatch (or a zero tolerance and any error), NaN for unwritten.
    double ratio = 0;
};

/// One unit in the last place of `t` at the magnitude of `x` (the spacing of `t`'s values
/// there; subnormal spacing below the smallest normal). 0 for integer types.
double ulpAt(DType t, double x);

/// Judges one element `el` (dtypeSize(t) bytes) against `expected`. `sentinel` may be null.
///
/// With `libtorch` (LibTorch's own result at that element, when `expected` is the float64
/// golden result), the element also passes when its error is no larger than LibTorch's error
/// plus one ulp of `t`, and a non-finite value passes where it equals LibTorch's: a kernel at
/// least as accurate as LibTorch never fails (docs/verification.md, correctness rule 7). The
/// ratio is then the error over the larger of the two allowances.
ElementVerdict classify(DType t, const unsigned char* el, double expected, const void* sentinel, double atol, double rtol,
                        std::optional<double> libtorch = std::nullopt);

/// Errors relative to the tolerance on a log scale: bins of log10(ratio) over [kLo, kHi) in
/// kWidth steps, plus counts outside that range and of the special classes. Bin kBins/2 starts
/// at the tolerance edge (ratio 1); an element exactly at the edge passes but lands there.
struct ErrorHistogram {
    static constexpr int kBins = 32;
    static constexpr double kLo = -8.0;
    static constexpr double kWidth = 0.5;
    std::int64_t bins[kBins] = {};
    std::int64_t exact = 0;      ///< ratio 0
    std::int64_t below = 0;      ///< 0 < ratio < 10^kLo
    std::int64_t above = 0;      ///< ratio ≥ 10^(kLo + kBins·kWidth), or inf (any error with zero tolerance)
    std::int64_t nonFinite = 0;
    std::int64_t unwritten = 0;
    void add(const ElementVerdict& v);
    std::int64_t total() const;
};

/// The worst error per row or per column, bucketed to at most kMaxEntries entries so the
/// report stays small: a wrong tail block or every 17th column shows up as a pattern. A row is
/// a flat index divided by the last extent (leading dimensions flattened); a column is the
/// index in the last dimension.
struct AxisSummary {
    static constexpr std::int64_t kMaxEntries = 256;
    std::int64_t count = 0;      ///< rows (or columns) in the tensor
    std::int64_t perEntry = 1;   ///< consecutive rows (columns) folded into one entry
    std::vector<double> maxRatio;            ///< per entry; NaN-free (unwritten and non-finite count as inf)
    std::vector<std::int64_t> mismatches;    ///< per entry
    void reset(std::int64_t n);
    void add(std::int64_t i, const ElementVerdict& v);
};

struct Mismatch {
    std::vector<std::int64_t> index;
    double expected = 0;
    double actual = 0;
    double absError = 0;
    double relError = 0;
};

/// How far the candidate and LibTorch each are from the float64 golden result of one output.
struct GoldenErrors {
    bool available = false;       ///< false: compared with LibTorch's result, as `note` says why
    std::string note;             ///< why there is no golden result (integer output, a refused .double(), ...)
    double candidateMaxError = 0; ///< over elements where the candidate and the golden are finite
    double candidateRmsError = 0;
    double libtorchMaxError = 0;  ///< over elements where LibTorch and the golden are finite
    double libtorchRmsError = 0;
    std::int64_t rescued = 0;     ///< elements outside tolerance that pass as no worse than LibTorch
    /// candidate RMS error ÷ LibTorch's: 0.4 reads "candidate error 0.4× LibTorch's"; 1 when
    /// both are exact, inf when only LibTorch is.
    double ratio() const;
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
    ErrorHistogram histogram;
    AxisSummary rows;     ///< empty for rank 0 and 1
    AxisSummary columns;  ///< empty for rank 0
    GoldenErrors golden;
    bool passed = false;
};

/// Compares one output. `sentinel` (element-size bytes) marks never-written elements; pass
/// nullptr to skip that check. `maxSamples` bounds the listed mismatches. With `libtorch`
/// (LibTorch's result, when `expected` is the float64 golden one) every element is judged as
/// classify() judges it with that value, and `golden` is filled in.
OutputCheck compareOutput(const std::string& name, DType t, const void* actualRaw, const double* expected,
                          const std::vector<std::int64_t>& extents, const Tolerance& tol, const void* sentinel,
                          int maxSamples = 10, const double* libtorch = nullptr);

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

// Their report form (toJson/fromJson) is in engine/protocol/VerifyReport.h.

} // namespace kf
