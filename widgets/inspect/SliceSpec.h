#pragma once
// Which 2-D picture of a tensor the panes show: two displayed axes (rows and columns) and the
// index of every other axis. A 1-D tensor is wrapped into rows of `wrap` elements; a 0-d one
// is a single cell. Plain value; cheap to copy.

#include <cstdint>
#include <vector>

namespace kf::ui {

struct SliceSpec {
    std::vector<std::int64_t> extents;
    int rowAxis = -1;                 ///< -1 for rank 0 and 1
    int colAxis = -1;
    std::vector<std::int64_t> fixed;  ///< per axis; the displayed axes' entries are ignored
    std::int64_t wrap = 1024;         ///< rank 1 only: elements per displayed row

    /// Rows = the second-to-last axis, columns = the last, other axes at 0.
    static SliceSpec defaultFor(const std::vector<std::int64_t>& extents, std::int64_t wrap = 1024);

    int rank() const { return static_cast<int>(extents.size()); }
    std::int64_t elements() const;
    std::int64_t rows() const;
    std::int64_t cols() const;
    /// The C-order flat index of the displayed cell, or -1 past the end of a wrapped 1-D tensor.
    std::int64_t flat(std::int64_t row, std::int64_t col) const;
    /// The full index tuple of a flat index (one entry for 1-D, none for 0-d).
    std::vector<std::int64_t> index(std::int64_t flat) const;
    /// Whether `flat` lies on the displayed slice; if so, its row and column.
    bool locate(std::int64_t flat, std::int64_t* row, std::int64_t* col) const;
    /// Moves the fixed axes so that `flat` is on the slice; returns its row and column.
    void moveTo(std::int64_t flat, std::int64_t* row, std::int64_t* col);
    /// Identifies the displayed picture (axes, fixed indices, wrap) for tile keys.
    std::uint64_t key() const;
    /// flat(row, col) = base + row·rowStride + col·colStride for every displayed cell (for a
    /// wrapped 1-D tensor also check flat < elements()). For the renderers' inner loops.
    void linear(std::int64_t* base, std::int64_t* rowStride, std::int64_t* colStride) const;
    bool operator==(const SliceSpec& o) const = default;

private:
    std::int64_t stride(int axis) const;
};

} // namespace kf::ui
