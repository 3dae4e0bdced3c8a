#pragma once
// Rendered tiles by key, least recently used dropped first, bounded by a byte budget. When a
// tile is missing, coarser() finds the nearest coarser cached tile that covers it, so a pane
// shows a blurrier picture instead of a hole while the sharp tile renders. GUI thread only.

#include <QCache>
#include <QHashFunctions>
#include <QImage>
#include <QRect>

#include <cstdint>

namespace kf::ui {

struct TileKey {
    std::uint64_t source = 0;  ///< TileSource::id
    int level = 0;
    std::int64_t tx = 0, ty = 0;
    bool operator==(const TileKey& o) const = default;
};

inline size_t qHash(const TileKey& k, size_t seed = 0) noexcept
{
    return qHashMulti(seed, k.source, k.level, k.tx, k.ty);
}

class TileCache {
public:
    explicit TileCache(std::int64_t budgetBytes = std::int64_t(192) << 20);

    void insert(const TileKey& key, const QImage& image);
    /// The tile, or null; marks it recently used.
    const QImage* find(const TileKey& key);
    bool contains(const TileKey& key) const { return m_cache.contains(key); }
    /// The nearest cached coarser tile (up to `maxUp` levels up) covering `key`, and the part of
    /// it that stands for `key`'s area in `part`. Null when there is none.
    const QImage* coarser(const TileKey& key, int maxUp, QRect* part);
    void clear() { m_cache.clear(); }
    std::int64_t budgetBytes() const { return std::int64_t(m_cache.maxCost()) << 10; }
    std::int64_t usedBytes() const { return std::int64_t(m_cache.totalCost()) << 10; }
    int count() const { return static_cast<int>(m_cache.count()); }

private:
    QCache<TileKey, QImage> m_cache;  ///< cost in KiB
};

} // namespace kf::ui
