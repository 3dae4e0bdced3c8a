#pragma once
// The data pass over one tensor of a case, and the per-slice row and column summaries. Plain
// functions, no Qt objects: they run on a worker thread (AnalysisPass) and their results are
// immutable once made, shared as std::shared_ptr<const …>.

#include "engine/verify/Compare.h"
#include "widgets/inspect/SliceSpec.h"

#include <QString>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace kf::ui {

class CaseData;

/// What the inspector knows about one displayed tensor after the pass. For an output: one
/// element code (ElementCode.h) per element, the counts and the histogram, exactly as classify()
/// judges them. For an input: only the value range.
struct TensorAnalysis {
    int tensor = -1;  ///< the displayed value tensor (the reference for an output)
    int output = -1;  ///< -1 for an input
    std::vector<std::uint8_t> codes;
    std::int64_t outside = 0;
    std::int64_t nonFinite = 0;
    std::int64_t unwritten = 0;
    std::int64_t mismatches() const { return outside + nonFinite + unwritten; }
    ErrorHistogram histogram;
    double valueMin = 0, valueMax = 0;  ///< finite range of the reference (or the input)
    double absMin = 0, absMax = 0;      ///< range of the nonzero |errors| within tolerance
    double ratioMax = 0;                ///< largest finite ratio
    /// Non-empty when the counts differ from the report's check in case.json: which ones.
    QString disagreement;
};

/// Row and column maxima of the displayed slice: the worst element code per row and column and
/// where it is (a flat index, -1 when the row is empty), for the strips beside the difference pane.
struct SliceSummary {
    std::uint64_t sliceKey = 0;
    std::vector<std::uint8_t> rowMax, colMax;
    std::vector<std::int64_t> rowArg, colArg;
};

/// Cancelled when `*generation` no longer equals `myGeneration`; `progress` gets permille.
using ProgressFn = std::function<void(int permille)>;

/// Runs the pass for output `output`, or for input tensor `tensor` when output is -1. Returns
/// null when cancelled.
std::shared_ptr<const TensorAnalysis> analyseTensor(const CaseData& data, int output, int tensor,
                                                    const std::atomic<std::uint64_t>& generation,
                                                    std::uint64_t myGeneration, const ProgressFn& progress);

std::shared_ptr<const SliceSummary> summariseSlice(const TensorAnalysis& a, const SliceSpec& slice);

} // namespace kf::ui
