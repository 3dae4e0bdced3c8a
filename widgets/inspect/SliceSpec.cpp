#include "widgets/inspect/SliceSpec.h"

#include <algorithm>

namespace kf::ui {

SliceSpec SliceSpec::defaultFor(const std::vector<std::int64_t>& extents, std::int64_t wrap)
{
    SliceSpec s;
    s.extents = extents;
    s.fixed.assign(extents.size(), 0);
    s.wrap = std::max<std::int64_t>(wrap, 1);
    if (extents.size() >= 2) {
        s.rowAxis = static_cast<int>(extents.size()) - 2;
        s.colAxis = static_cast<int>(extents.size()) - 1;
    }
    return s;
}

std::int64_t SliceSpec::elements() const
{
    std::int64_t n = 1;
    for (auto e : extents)
        n *= e;
    return n;
}

std::int64_t SliceSpec::stride(int axis) const
{
    std::int64_t s = 1;
    for (int a = rank() - 1; a > axis; --a)
        s *= extents[static_cast<size_t>(a)];
    return s;
}

std::int64_t SliceSpec::rows() const
{
    if (rank() == 0)
        return 1;
    if (rank() == 1)
        return (extents[0] + wrap - 1) / wrap;
    return extents[static_cast<size_t>(rowAxis)];
}

std::int64_t SliceSpec::cols() const
{
    if (rank() == 0)
        return 1;
    if (rank() == 1)
        return std::min(extents[0], wrap);
    return extents[static_cast<size_t>(colAxis)];
}

std::int64_t SliceSpec::flat(std::int64_t row, std::int64_t col) const
{
    if (row < 0 || col < 0 || row >= rows() || col >= cols())
        return -1;
    if (rank() == 0)
        return 0;
    if (rank() == 1) {
        const std::int64_t f = row * wrap + col;
        return f < extents[0] ? f : -1;
    }
    std::int64_t f = 0;
    for (int a = 0; a < rank(); ++a) {
        const std::int64_t i = a == rowAxis ? row : a == colAxis ? col : fixed[static_cast<size_t>(a)];
        f += i * stride(a);
    }
    return f;
}

std::vector<std::int64_t> SliceSpec::index(std::int64_t flat) const
{
    std::vector<std::int64_t> idx(extents.size());
    for (int a = rank() - 1; a >= 0; --a) {
        const std::int64_t e = std::max<std::int64_t>(extents[static_cast<size_t>(a)], 1);
        idx[static_cast<size_t>(a)] = flat % e;
        flat /= e;
    }
    return idx;
}

bool SliceSpec::locate(std::int64_t flat, std::int64_t* row, std::int64_t* col) const
{
    if (flat < 0 || flat >= elements())
        return false;
    if (rank() <= 1) {
        *row = rank() == 0 ? 0 : flat / wrap;
        *col = rank() == 0 ? 0 : flat % wrap;
        return true;
    }
    const auto idx = index(flat);
    for (int a = 0; a < rank(); ++a)
        if (a != rowAxis && a != colAxis && idx[static_cast<size_t>(a)] != fixed[static_cast<size_t>(a)])
            return false;
    *row = idx[static_cast<size_t>(rowAxis)];
    *col = idx[static_cast<size_t>(colAxis)];
    return true;
}

void SliceSpec::moveTo(std::int64_t flat, std::int64_t* row, std::int64_t* col)
{
    if (rank() >= 2) {
        const auto idx = index(flat);
        for (int a = 0; a < rank(); ++a)
            if (a != rowAxis && a != colAxis)
                fixed[static_cast<size_t>(a)] = idx[static_cast<size_t>(a)];
    }
    locate(flat, row, col);
}

void SliceSpec::linear(std::int64_t* base, std::int64_t* rowStride, std::int64_t* colStride) const
{
    *base = 0;
    if (rank() <= 1) {
        *rowStride = rank() == 0 ? 0 : wrap;
        *colStride = rank() == 0 ? 0 : 1;
        return;
    }
    for (int a = 0; a < rank(); ++a)
        if (a != rowAxis && a != colAxis)
            *base += fixed[static_cast<size_t>(a)] * stride(a);
    *rowStride = stride(rowAxis);
    *colStride = stride(colAxis);
}

std::uint64_t SliceSpec::key() const
{
    // FNV-1a over everything that changes the picture.
    std::uint64_t h = 1469598103934665603ull;
    auto mix = [&h](std::uint64_t v) {
        for (int i = 0; i < 8; ++i) {
            h ^= (v >> (8 * i)) & 0xff;
            h *= 1099511628211ull;
        }
    };
    mix(static_cast<std::uint64_t>(rowAxis + 1));
    mix(static_cast<std::uint64_t>(colAxis + 1));
    mix(static_cast<std::uint64_t>(wrap));
    for (int a = 0; a < rank(); ++a) {
        mix(static_cast<std::uint64_t>(extents[static_cast<size_t>(a)]));
        mix(a == rowAxis || a == colAxis ? ~0ull : static_cast<std::uint64_t>(fixed[static_cast<size_t>(a)]));
    }
    return h;
}

} // namespace kf::ui
