#include "widgets/inspect/TileCache.h"

#include "widgets/inspect/TileSource.h"

namespace kf::ui {

TileCache::TileCache(std::int64_t budgetBytes) : m_cache(static_cast<qsizetype>(std::max<std::int64_t>(budgetBytes >> 10, 1))) {}

void TileCache::insert(const TileKey& key, const QImage& image)
{
    const auto cost = std::max<qsizetype>(image.sizeInBytes() >> 10, 1);
    m_cache.insert(key, new QImage(image), cost);
}

const QImage* TileCache::find(const TileKey& key)
{
    return m_cache.object(key);
}

const QImage* TileCache::coarser(const TileKey& key, int maxUp, QRect* part)
{
    const int T = TileSource::kTileSize;
    for (int up = 1; up <= maxUp; ++up) {
        const TileKey k{key.source, key.level + up, key.tx >> up, key.ty >> up};
        if (const QImage* img = m_cache.object(k)) {
            const int size = T >> up;
            const std::int64_t mask = (std::int64_t(1) << up) - 1;
            *part = QRect(static_cast<int>(key.tx & mask) * size, static_cast<int>(key.ty & mask) * size,
                          std::max(size, 1), std::max(size, 1));
            return img;
        }
    }
    return nullptr;
}

} // namespace kf::ui
