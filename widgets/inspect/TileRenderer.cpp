#include "widgets/inspect/TileRenderer.h"

#include <QMetaObject>
#include <QThreadPool>
#include <QTimer>

namespace kf::ui {

TileRenderer::TileRenderer(QThreadPool* pool, QObject* parent) : QObject(parent), m_pool(pool) {}

void TileRenderer::want(int owner, std::vector<TileJob> jobs)
{
    m_wanted[owner] = std::move(jobs);
    if (!m_flushQueued) {
        m_flushQueued = true;
        QTimer::singleShot(0, this, &TileRenderer::flush);
    }
}

void TileRenderer::invalidate()
{
    ++*m_generation;
    m_pool->clear();
    m_inflight.clear();
    m_wanted.clear();
    m_cache.clear();
}

void TileRenderer::flush()
{
    m_flushQueued = false;
    // Drop the queue, keep what already runs: the new wishes are the only ones that matter.
    m_pool->clear();
    for (auto it = m_inflight.begin(); it != m_inflight.end();)
        it = it.value()->load() ? std::next(it) : m_inflight.erase(it);

    // Interleave the panes so that each one's most important tiles come first.
    std::vector<const TileJob*> order;
    size_t longest = 0;
    for (const auto& [owner, jobs] : m_wanted)
        longest = std::max(longest, jobs.size());
    for (size_t i = 0; i < longest; ++i)
        for (const auto& [owner, jobs] : m_wanted)
            if (i < jobs.size())
                order.push_back(&jobs[i]);

    const quint64 gen = m_generation->load();
    auto genState = m_generation;
    for (const TileJob* job : order) {
        const TileKey key = job->key();
        if (m_cache.contains(key) || m_inflight.contains(key))
            continue;
        auto started = std::make_shared<std::atomic<bool>>(false);
        m_inflight.insert(key, started);
        m_pool->start([this, job = *job, key, gen, genState, started] {
            started->store(true);
            if (genState->load() != gen)
                return;  // a new case: the picture is of data no longer shown
            QImage image = renderTile(*job.source, job.level, job.tx, job.ty);
            QMetaObject::invokeMethod(this, [this, key, gen, image = std::move(image), started] {
                deliver(key, gen, image, started);
            }, Qt::QueuedConnection);
        });
    }
    if (m_inflight.isEmpty())
        emit idle();
}

void TileRenderer::deliver(const TileKey& key, quint64 gen, const QImage& image,
                           const std::shared_ptr<std::atomic<bool>>& started)
{
    if (auto it = m_inflight.find(key); it != m_inflight.end() && it.value() == started)
        m_inflight.erase(it);
    if (gen != m_generation->load())
        return;
    if (!image.isNull())
        m_cache.insert(key, image);
    emit tileReady(key.source);
    if (m_inflight.isEmpty())
        emit idle();
}

} // namespace kf::ui
