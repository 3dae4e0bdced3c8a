#include "app/gui/services/CompileService.h"

#include "engine/compile/Compiler.h"

#include <QMetaObject>
#include <QPointer>

#include <algorithm>

namespace kf::app {

CompileService::CompileService(const QString& cacheDir, QObject* parent)
    : QObject(parent)
{
    qRegisterMetaType<std::shared_ptr<const kf::CompileResult>>("std::shared_ptr<const kf::CompileResult>");
    m_cache = std::make_unique<CompileCache>(cacheDir.isEmpty() ? CompileCache::defaultDirectory()
                                                                : std::filesystem::path(cacheDir.toStdString()));
    m_worker = std::thread([this] { workerLoop(); });
}

CompileService::~CompileService()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
        m_queue.clear();
        if (m_inFlightCancel)
            m_inFlightCancel->cancel();
    }
    m_wake.notify_all();
    m_worker.join();
}

quint64 CompileService::request(const QString& tag, CompileRequest request)
{
    const quint64 generation = m_nextGeneration++;
    m_latest[tag] = generation;
    ++m_pending;
    {
        std::lock_guard lock(m_mutex);
        dropLocked(tag); // a queued or running build of the same tag is already stale
        m_queue.push_back(Job{tag, generation, std::move(request), std::make_shared<CancelToken>()});
    }
    m_wake.notify_one();
    return generation;
}

void CompileService::cancel(const QString& tag)
{
    m_latest.remove(tag);
    {
        std::lock_guard lock(m_mutex);
        dropLocked(tag);
    }
    if (m_pending == 0) // nothing left to deliver: say so from the event loop, as deliver() does
        QMetaObject::invokeMethod(this, [this] { if (m_pending == 0) emit idle(); }, Qt::QueuedConnection);
}

void CompileService::dropLocked(const QString& tag)
{
    const auto before = m_queue.size();
    m_queue.erase(std::remove_if(m_queue.begin(), m_queue.end(), [&](const Job& j) { return j.tag == tag; }),
                  m_queue.end());
    m_pending -= static_cast<int>(before - m_queue.size());
    if (m_inFlightTag == tag && m_inFlightCancel)
        m_inFlightCancel->cancel();
}

quint64 CompileService::latestGeneration(const QString& tag) const
{
    auto it = m_latest.constFind(tag);
    return it == m_latest.constEnd() ? 0 : it.value();
}

void CompileService::workerLoop()
{
    for (;;) {
        Job job;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
            if (m_stopping)
                return;
            job = std::move(m_queue.front());
            m_queue.pop_front();
            m_inFlightTag = job.tag;
            m_inFlightCancel = job.cancel;
        }
        QPointer<CompileService> self(this);
        QMetaObject::invokeMethod(this, [self, tag = job.tag, g = job.generation] {
            if (self && self->latestGeneration(tag) == g)
                emit self->started(tag, g);
        }, Qt::QueuedConnection);

        auto result = compile(job.request, m_cache.get(), job.cancel.get());
        std::shared_ptr<const CompileResult> value;
        QString error;
        if (result)
            value = std::make_shared<const CompileResult>(std::move(result.value()));
        else
            error = QString::fromStdString(result.error().message());
        {
            std::lock_guard lock(m_mutex);
            m_inFlightTag.clear();
            m_inFlightCancel.reset();
        }
        QMetaObject::invokeMethod(this, [self, tag = job.tag, g = job.generation, value, error] {
            if (self)
                self->deliver(tag, g, value, error);
        }, Qt::QueuedConnection);
    }
}

void CompileService::deliver(const QString& tag, quint64 generation, std::shared_ptr<const CompileResult> result,
                             QString error)
{
    --m_pending;
    if (latestGeneration(tag) != generation) {
        ++m_dropped; // the user typed again (or closed the tab): this result describes old text
    } else if (result) {
        emit finished(tag, generation, std::move(result));
    } else {
        emit failed(tag, generation, error);
    }
    if (m_pending == 0)
        emit idle();
}

} // namespace kf::app
