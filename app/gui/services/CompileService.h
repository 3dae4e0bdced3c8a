#pragma once
// The workbench's one owner of NVRTC builds (docs/conventions.md: one owner per expensive resource). A
// single worker thread compiles one request at a time from a queue keyed by tag (one tag per
// editor tab). A newer request for a tag replaces the queued one and cancels the build in flight
// through NVRTC's flow callback; every result carries its generation and results older than
// the tag's latest request are dropped on the UI thread, never painted.
#include "engine/compile/CompileCache.h"
#include "engine/compile/CompileTypes.h"

#include <QObject>
#include <QString>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <QHash>

namespace kf::app {

class CompileService : public QObject {
    Q_OBJECT
public:
    /// `cacheDir` empty: the user's default compile cache. Starts the worker thread.
    explicit CompileService(const QString& cacheDir = {}, QObject* parent = nullptr);
    /// Cancels the build in flight and joins the worker.
    ~CompileService() override;

    /// Queues a build for `tag` and returns its generation (increasing per service). UI thread.
    quint64 request(const QString& tag, CompileRequest request);
    /// Forgets `tag`: its queued build is removed, the one in flight cancelled, results dropped.
    void cancel(const QString& tag);
    /// The generation of the newest request for `tag` (0 if none).
    quint64 latestGeneration(const QString& tag) const;
    /// Results thrown away because a newer request for their tag existed (for tests and stats).
    int staleResultsDropped() const { return m_dropped; }
    bool isBusy() const { return m_pending > 0; }

signals:
    /// The worker began building `generation` (queued to the UI thread).
    void started(const QString& tag, quint64 generation);
    /// The newest build for `tag` finished; sources with errors arrive here too (success false).
    void finished(const QString& tag, quint64 generation, std::shared_ptr<const kf::CompileResult> result);
    /// The newest build for `tag` could not run at all (no libnvrtc, unknown architecture).
    void failed(const QString& tag, quint64 generation, const QString& sentence);
    /// Work queue became empty (all results delivered or dropped).
    void idle();

private:
    struct Job {
        QString tag;
        quint64 generation = 0;
        CompileRequest request;
        std::shared_ptr<CancelToken> cancel;
    };
    void workerLoop();
    /// Removes `tag`'s queued builds and cancels its build in flight. Caller holds m_mutex.
    void dropLocked(const QString& tag);
    void deliver(const QString& tag, quint64 generation, std::shared_ptr<const CompileResult> result, QString error);

    std::unique_ptr<CompileCache> m_cache;
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<Job> m_queue;                                   // guarded by m_mutex
    std::shared_ptr<CancelToken> m_inFlightCancel;             // guarded by m_mutex
    QString m_inFlightTag;                                     // guarded by m_mutex
    bool m_stopping = false;                                   // guarded by m_mutex
    QHash<QString, quint64> m_latest;                            // UI thread only
    quint64 m_nextGeneration = 1;                              // UI thread only
    int m_dropped = 0;                                         // UI thread only
    int m_pending = 0;                                         // UI thread only
    std::thread m_worker;
};

} // namespace kf::app
