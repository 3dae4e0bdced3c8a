#include "app/gui/registry/RegistryService.h"

#include "engine/cast/ModelRuns.h"

#include "engine/core/Files.h"
#include "engine/core/JsonReader.h"

#include <QDir>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QFutureWatcher>
#include <QStringList>
#include <QThreadPool>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>

#include <filesystem>

namespace kf::app {

namespace {

namespace fs = std::filesystem;

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

fs::path path(const QString& s)
{
    return fs::path(s.toStdString());
}

// "<file>: <why> (<hint>)." with a way forward when the engine gave none.
QString sentence(const kf::Error& e, const QString& fallbackHint)
{
    QString s = qs(e.message());
    if (e.hint.empty() && !fallbackHint.isEmpty())
        s += QStringLiteral(" (") + fallbackHint + QLatin1Char(')');
    if (!s.endsWith(QLatin1Char('.')))
        s += QLatin1Char('.');
    return s;
}

struct IndexResult {
    bool ok = false;
    kf::RegistryIndex index;
    QString error;
};

struct SourceResult {
    QString source;
    QString error;
};

struct OperationResult {
    bool ok = false;
    QString sentence;
};

SourceResult readSource(const kf::Registry& registry, const kf::RegistryEntry& entry)
{
    auto bytes = kf::readFileBytes(registry.entryDirectory(entry.id) / entry.kernelFile);
    if (!bytes)
        return {{}, QObject::tr("The source of %1 could not be read: %2")
                        .arg(qs(entry.id), sentence(bytes.error(), QObject::tr("run `kforge registry check` to see what is wrong")))};
    return {QString::fromUtf8(bytes.value().data(), static_cast<qsizetype>(bytes.value().size())), {}};
}

RegistryService::Details readDetails(const QString& directory, const QString& id)
{
    RegistryService::Details d;
    d.entry.id = id.toStdString();
    const kf::Registry registry(path(directory));
    auto entry = registry.entry(id.toStdString());
    if (!entry) {
        d.error = sentence(entry.error(), QObject::tr("refresh the registry and pick a listed kernel"));
        return d;
    }
    d.entry = entry.value();
    QStringList errors;
    const QString checkHint = QObject::tr("run `kforge registry check` to see what is wrong with the version folder");
    if (auto promotion = registry.promotion(d.entry.id))
        d.promotion = std::move(promotion.value());
    else
        errors << sentence(promotion.error(), checkHint);
    const fs::path folder = registry.entryDirectory(d.entry.id);
    // Stored reports are read as any report is: a file edited into something malformed is refused
    // with its JSON pointer, never shown as if it were evidence.
    auto readReport = [&](const char* name, std::optional<kf::protocol::RunReport>& out) {
        auto j = kf::json::readFile(folder / name);
        if (!j) {
            errors << sentence(j.error(), checkHint);
            return;
        }
        auto r = kf::protocol::RunReport::fromJson(j.value(), (folder / name).string());
        if (r)
            out = std::move(r.value());
        else
            errors << sentence(r.error(), checkHint);
    };
    readReport("correctness.json", d.correctness);
    readReport("performance.json", d.performance);
    for (kf::cast::StoredModelRun& r : kf::cast::modelRunsOf(registry, d.entry.id)) {
        if (r.problem.empty())
            d.modelRuns.push_back(std::move(r.run));
        else
            errors << QObject::tr("A stored model run is not shown: %1.").arg(qs(r.problem));
    }
    SourceResult source = readSource(registry, d.entry);
    d.source = source.source;
    if (!source.error.isEmpty())
        errors << source.error;
    d.error = errors.join(QLatin1Char(' '));
    return d;
}

} // namespace

RegistryService::RegistryService(QObject* parent) : QObject(parent)
{
    qRegisterMetaType<kf::RegistryIndex>();
    qRegisterMetaType<kf::app::RegistryService::Details>();
    m_pool = new QThreadPool(this);
    m_pool->setMaxThreadCount(2);
    m_watcher = new QFileSystemWatcher(this);
    m_debounce = new QTimer(this);
    m_debounce->setSingleShot(true);
    m_debounce->setInterval(kDebounceMs);
    connect(m_debounce, &QTimer::timeout, this, &RegistryService::refresh);
    connect(m_watcher, &QFileSystemWatcher::directoryChanged, this, &RegistryService::onFileSystemChanged);
    connect(m_watcher, &QFileSystemWatcher::fileChanged, this, &RegistryService::onFileSystemChanged);
}

RegistryService::~RegistryService()
{
    m_pool->waitForDone();
}

template <class T, class Job, class Done>
void RegistryService::run(Job job, Done done)
{
    auto* watcher = new QFutureWatcher<T>(this);
    ++m_inFlight;
    connect(watcher, &QFutureWatcher<T>::finished, this, [this, watcher, done] {
        --m_inFlight;
        done(watcher->result());
        watcher->deleteLater();
    });
    watcher->setFuture(QtConcurrent::run(m_pool, std::move(job)));
}

void RegistryService::setDirectory(const QString& directory)
{
    ++m_directoryGeneration;
    ++m_detailsGeneration;
    ++m_sourceGeneration;
    m_directory = directory;
    if (!m_watcher->files().isEmpty())
        m_watcher->removePaths(m_watcher->files());
    if (!m_watcher->directories().isEmpty())
        m_watcher->removePaths(m_watcher->directories());
    refresh();
}

void RegistryService::refresh()
{
    m_debounce->stop();
    watch();
    const quint64 generation = ++m_indexGeneration;
    const QString directory = m_directory;
    run<IndexResult>(
        [directory] {
            // The list's status column shows what each signed record says (unsigned evidence).
            auto index = kf::Registry(path(directory)).listing();
            if (!index)
                return IndexResult{false, {}, QObject::tr("The registry index could not be read: %1")
                                                  .arg(sentence(index.error(), QObject::tr("run `kforge registry check` for details")))};
            return IndexResult{true, std::move(index.value()), {}};
        },
        [this, generation](const IndexResult& r) {
            if (generation != m_indexGeneration)
                return;
            watch(); // the load may have found the folder created since the last look
            if (r.ok)
                emit indexLoaded(r.index);
            else
                emit loadFailed(r.error);
        });
}

void RegistryService::loadDetails(const QString& id)
{
    const quint64 generation = ++m_detailsGeneration;
    const QString directory = m_directory;
    run<Details>([directory, id] { return readDetails(directory, id); },
                 [this, generation](const Details& d) {
                     if (generation == m_detailsGeneration)
                         emit detailsLoaded(d);
                 });
}

void RegistryService::loadSource(const QString& id)
{
    const quint64 generation = ++m_sourceGeneration;
    const QString directory = m_directory;
    run<SourceResult>(
        [directory, id] {
            const kf::Registry registry(path(directory));
            auto entry = registry.entry(id.toStdString());
            if (!entry)
                return SourceResult{{}, sentence(entry.error(), QObject::tr("refresh the registry and pick a listed kernel"))};
            return readSource(registry, entry.value());
        },
        [this, generation, id](const SourceResult& r) {
            if (generation == m_sourceGeneration)
                emit sourceLoaded(id, r.source, r.error);
        });
}

void RegistryService::deprecate(const QString& id, const QString& reason)
{
    const QString directory = m_directory;
    const quint64 directoryGeneration = m_directoryGeneration;
    run<OperationResult>(
        [directory, id, reason] {
            auto r = kf::Registry(path(directory)).deprecate(id.toStdString(), reason.toStdString());
            if (!r)
                return OperationResult{false, QObject::tr("%1 was not deprecated: %2").arg(id, sentence(r.error(), {}))};
            return OperationResult{true, QObject::tr("%1 is deprecated: %2.").arg(id, reason)};
        },
        [this, directoryGeneration](const OperationResult& r) {
            if (directoryGeneration != m_directoryGeneration)
                return;
            emit operationFinished(r.ok, r.sentence);
            refresh();
        });
}

void RegistryService::remove(const QString& id)
{
    const QString directory = m_directory;
    const quint64 directoryGeneration = m_directoryGeneration;
    run<OperationResult>(
        [directory, id] {
            auto r = kf::Registry(path(directory)).remove(id.toStdString());
            if (!r)
                return OperationResult{false, QObject::tr("%1 was not removed: %2").arg(id, sentence(r.error(), {}))};
            return OperationResult{true, QObject::tr("%1 was removed from the registry.").arg(id)};
        },
        [this, directoryGeneration](const OperationResult& r) {
            if (directoryGeneration != m_directoryGeneration)
                return;
            emit operationFinished(r.ok, r.sentence);
            refresh();
        });
}

void RegistryService::watch()
{
    if (m_directory.isEmpty())
        return;
    // Until the folder exists (no promotion yet), watch the nearest folder above it that does,
    // so its creation by another process is seen.
    QString folder = QDir::cleanPath(QDir(m_directory).absolutePath());
    while (!QFileInfo(folder).isDir()) {
        const QString parent = QFileInfo(folder).path();
        if (parent == folder)
            return;
        folder = parent;
    }
    const QStringList stale = m_watcher->directories();
    for (const QString& d : stale)
        if (d != folder)
            m_watcher->removePath(d);
    if (!m_watcher->directories().contains(folder))
        m_watcher->addPath(folder);
    // An atomic rename replaces the index file, which ends the watch on the old one: add it again.
    const QString index = QDir(m_directory).absoluteFilePath(QString::fromLatin1(kf::kRegistryIndexFile));
    if (QFileInfo::exists(index) && !m_watcher->files().contains(index))
        m_watcher->addPath(index);
}

void RegistryService::onFileSystemChanged()
{
    watch();
    m_debounce->start();
}

} // namespace kf::app
