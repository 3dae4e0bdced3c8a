#pragma once
// Schedules tile rendering on a worker pool for the panes of one inspector. Each pane says which
// tiles it wants (visible ones first); want() calls of one event-loop turn are merged, the
// pool's queue is replaced by the new wishes (tiles scrolled away are never rendered), and a
// result is dropped when its generation is older than the last invalidate() (a new case).

#include "widgets/inspect/TileCache.h"
#include "widgets/inspect/TileSource.h"

#include <QHash>
#include <QObject>

#include <atomic>
#include <map>
#include <memory>
#include <vector>

class QThreadPool;

namespace kf::ui {

struct TileJob {
    std::shared_ptr<const TileSource> source;
    int level = 0;
    std::int64_t tx = 0, ty = 0;
    TileKey key() const { return {source->id, level, tx, ty}; }
};

/// GUI thread only. `pool` is the owner's and must be waited for before this object dies.
class TileRenderer : public QObject {
    Q_OBJECT

public:
    explicit TileRenderer(QThreadPool* pool, QObject* parent = nullptr);

    TileCache& cache() { return m_cache; }
    /// Replaces what `owner` (a pane) wants rendered, in priority order; the wishes of the other
    /// panes stay. Cached tiles are skipped.
    void want(int owner, std::vector<TileJob> jobs);
    /// Forgets every tile and wish: results of jobs already running are dropped.
    void invalidate();
    /// Tiles queued or being rendered.
    int pending() const { return static_cast<int>(m_inflight.size()); }
    quint64 generation() const { return m_generation->load(); }

signals:
    /// A tile of source `sourceId` is now in the cache.
    void tileReady(quint64 sourceId);
    /// Nothing is queued or running any more.
    void idle();

private:
    void flush();
    void deliver(const TileKey& key, quint64 generation, const QImage& image, const std::shared_ptr<std::atomic<bool>>& started);

    QThreadPool* m_pool;
    TileCache m_cache;
    std::map<int, std::vector<TileJob>> m_wanted;
    QHash<TileKey, std::shared_ptr<std::atomic<bool>>> m_inflight;  ///< value: set once the job started
    std::shared_ptr<std::atomic<std::uint64_t>> m_generation = std::make_shared<std::atomic<std::uint64_t>>(1);
    bool m_flushQueued = false;
};

} // namespace kf::ui
