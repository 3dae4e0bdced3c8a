#pragma once
// What one pane draws, as an immutable snapshot that tile jobs carry to the worker threads, and
// the function that renders one 256×256 tile of it. Everything here is safe to call from any
// thread: the case data and the analysis are immutable and shared.

#include "widgets/inspect/SliceSpec.h"

#include <QImage>

#include <cstdint>
#include <memory>

namespace kf::ui {

class CaseData;
struct TensorAnalysis;

enum class DiffMode { AbsError, Ratio };

struct TileSource {
    enum class Kind { Value, Difference };
    static constexpr int kTileSize = 256;
    /// Tile levels: a tile pixel is 2^level elements wide for level > 0; an element is
    /// 2^-level pixels wide for level ≤ 0. kMinLevel is the most magnified level rendered.
    static constexpr int kMinLevel = -6;

    Kind kind = Kind::Value;
    std::shared_ptr<const CaseData> data;
    std::shared_ptr<const TensorAnalysis> analysis;
    int tensor = -1;          ///< the value tensor (Value)
    int output = -1;          ///< the judged output (Difference, and a candidate's stripes)
    bool markUnwritten = false;  ///< Value: stripe elements the candidate never wrote
    SliceSpec slice;
    DiffMode mode = DiffMode::Ratio;
    double lo = 0, hi = 1;    ///< value range, or the log10 |error| range in AbsError mode
    std::uint64_t id = 0;     ///< identifies everything above; part of every tile key

    /// Computes `id` from the fields; call after filling them.
    void seal(std::uint64_t caseGeneration);
    bool valid() const { return data && analysis && (kind == Kind::Value ? tensor >= 0 : output >= 0); }
};

/// Renders tile (tx, ty) of `level`. Cells outside the slice are transparent.
QImage renderTile(const TileSource& s, int level, std::int64_t tx, std::int64_t ty);

} // namespace kf::ui
