#include "app/gui/workspace/Workspace.h"

#include "engine/core/Hash.h"
#include "engine/registry/Registry.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <functional>
#include <utility>
#include <filesystem>

namespace kf::app {

namespace {

constexpr int kMaxDepth = 2;
constexpr int kSettleMs = 100;

bool dirLess(const TaskEntry& a, const QString& dir) { return a.dir < dir; }

} // namespace

Workspace::Workspace(QObject* parent)
    : QObject(parent)
{
    m_settle.setSingleShot(true);
    m_settle.setInterval(kSettleMs);
    connect(&m_settle, &QTimer::timeout, this, &Workspace::flushPending);
}

Workspace::~Workspace() = default;

QString Workspace::clean(const QString& path)
{
    return QDir::cleanPath(QFileInfo(path).absoluteFilePath());
}

TaskEntry Workspace::load(const QString& dir)
{
    TaskEntry e;
    e.dir = dir;
    e.jsonPath = dir + QStringLiteral("/task.json");
    auto r = kf::loadTask(std::filesystem::path(dir.toStdString()));
    if (r)
        e.task = std::move(*r);
    else
        e.error = r.error();
    return e;
}

bool Workspace::open(const QString& root, QString* error)
{
    const QFileInfo fi(root);
    if (!fi.isDir() || !fi.isReadable()) {
        if (error)
            *error = fi.exists() ? tr("%1 is not a readable folder.").arg(root)
                                 : tr("The folder %1 does not exist.").arg(root);
        return false;
    }
    m_settle.stop();
    m_pendingReloads.clear();
    m_pendingRescan = false;
    // A fresh watcher drops every watch of the previous workspace at once.
    delete m_watcher;
    m_watcher = new QFileSystemWatcher(this);
    connect(m_watcher, &QFileSystemWatcher::fileChanged, this, &Workspace::onFileChanged);
    connect(m_watcher, &QFileSystemWatcher::directoryChanged, this, &Workspace::onDirectoryChanged);

    m_root = clean(root);
    m_tasks.clear();
    m_fingerprints.clear();
    QStringList watchDirs;
    for (const QString& dir : findTaskDirs(&watchDirs)) {
        m_tasks.push_back(load(dir));
        m_fingerprints.insert(dir, fingerprint(m_tasks.back()));
    }
    updateWatches(watchDirs);
    emit opened(m_root);
    return true;
}

QStringList Workspace::findTaskDirs(QStringList* watchDirs) const
{
    QStringList found;
    std::function<void(const QString&, int)> visit = [&](const QString& dir, int depth) {
        watchDirs->append(dir);
        if (QFileInfo(dir + QStringLiteral("/task.json")).isFile()) {
            found.append(dir);
            return; // a task folder's subfolders hold includes and data, not tasks
        }
        // A registry kept inside the workspace (kernelforge-workspace.json may put it there) holds
        // a task.json in every version folder: those are evidence, not tasks to edit.
        if (depth == kMaxDepth || QFileInfo(dir + '/' + QLatin1String(kf::kRegistryIndexFile)).isFile())
            return;
        const QStringList subs = QDir(dir).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
        for (const QString& sub : subs)
            visit(dir + QLatin1Char('/') + sub, depth + 1);
    };
    if (!m_root.isEmpty())
        visit(m_root, 0);
    std::sort(found.begin(), found.end());
    return found;
}

void Workspace::updateWatches(const QStringList& dirs)
{
    if (!m_watcher)
        return;
    QStringList wantFiles;
    for (const TaskEntry& e : m_tasks)
        if (QFileInfo::exists(e.jsonPath))
            wantFiles << e.jsonPath;
    const QSet<QString> wantDirSet(dirs.begin(), dirs.end());
    const QSet<QString> wantFileSet(wantFiles.begin(), wantFiles.end());

    QStringList drop;
    for (const QString& d : m_watcher->directories())
        if (!wantDirSet.contains(d))
            drop << d;
    for (const QString& f : m_watcher->files())
        if (!wantFileSet.contains(f))
            drop << f;
    if (!drop.isEmpty())
        m_watcher->removePaths(drop);

    QStringList add;
    const QStringList haveDirs = m_watcher->directories();
    const QStringList haveFiles = m_watcher->files();
    for (const QString& d : dirs)
        if (!haveDirs.contains(d))
            add << d;
    for (const QString& f : wantFiles)
        if (!haveFiles.contains(f))
            add << f;
    if (!add.isEmpty())
        m_watcher->addPaths(add);
}

int Workspace::indexOfDir(const QString& taskDir) const
{
    const QString dir = clean(taskDir);
    auto it = std::lower_bound(m_tasks.begin(), m_tasks.end(), dir, dirLess);
    if (it == m_tasks.end() || it->dir != dir)
        return -1;
    return static_cast<int>(it - m_tasks.begin());
}

const TaskEntry* Workspace::taskForDir(const QString& taskDir) const
{
    const int i = indexOfDir(taskDir);
    return i < 0 ? nullptr : &m_tasks[static_cast<size_t>(i)];
}

const TaskEntry* Workspace::taskForFile(const QString& filePath) const
{
    const QString file = clean(filePath);
    const TaskEntry* best = nullptr;
    for (const TaskEntry& e : m_tasks)
        if (file.startsWith(e.dir + QLatin1Char('/')) && (!best || e.dir.size() > best->dir.size()))
            best = &e;
    return best;
}

QByteArray Workspace::fingerprint(const TaskEntry& e)
{
    QFile f(e.jsonPath);
    QByteArray bytes = f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    if (e.error)
        bytes += '\0' + QByteArray::fromStdString(e.error->message());
    return QByteArray::fromStdString(kf::hashHex(std::string_view(bytes.constData(), bytes.size())));
}

void Workspace::reload(const QString& taskDir)
{
    reloadIfChanged(clean(taskDir), /*force=*/true);
}

void Workspace::reloadIfChanged(const QString& dir, bool force)
{
    const int i = indexOfDir(dir);
    if (i < 0)
        return;
    TaskEntry fresh = load(dir);
    const QByteArray fp = fingerprint(fresh);
    if (!force && m_fingerprints.value(dir) == fp)
        return;
    m_fingerprints.insert(dir, fp);
    m_tasks[static_cast<size_t>(i)] = std::move(fresh);
    emit taskReloaded(dir);
}

void Workspace::rescan()
{
    if (m_root.isEmpty())
        return;
    QStringList watchDirs;
    const QStringList found = findTaskDirs(&watchDirs);
    const QSet<QString> foundSet(found.begin(), found.end());

    for (int i = taskCount() - 1; i >= 0; --i) {
        const QString dir = m_tasks[static_cast<size_t>(i)].dir;
        if (foundSet.contains(dir))
            continue;
        m_tasks.erase(m_tasks.begin() + i);
        m_fingerprints.remove(dir);
        emit taskRemoved(dir, i);
    }
    for (const QString& dir : found) {
        auto it = std::lower_bound(m_tasks.begin(), m_tasks.end(), dir, dirLess);
        if (it != m_tasks.end() && it->dir == dir)
            continue;
        const int index = static_cast<int>(it - m_tasks.begin());
        m_tasks.insert(it, load(dir));
        m_fingerprints.insert(dir, fingerprint(m_tasks[static_cast<size_t>(index)]));
        emit taskAdded(dir, index);
    }
    updateWatches(watchDirs);
}

void Workspace::onFileChanged(const QString& path)
{
    m_pendingReloads.insert(QFileInfo(path).absolutePath());
    m_settle.start();
}

void Workspace::onDirectoryChanged(const QString& path)
{
    // A folder appeared or vanished, or a file in a task folder did: a candidate that was
    // missing may exist now, and a task.json replaced by rename must be watched again.
    m_pendingRescan = true;
    if (indexOfDir(path) >= 0)
        m_pendingReloads.insert(path);
    m_settle.start();
}

void Workspace::flushPending()
{
    if (m_pendingRescan) {
        m_pendingRescan = false;
        rescan();
    }
    const QSet<QString> dirs = std::exchange(m_pendingReloads, {});
    for (const QString& dir : dirs)
        reloadIfChanged(dir, /*force=*/false);
    // A file replaced by rename drops out of the watcher; put it back.
    QStringList watchDirs;
    findTaskDirs(&watchDirs);
    updateWatches(watchDirs);
}

} // namespace kf::app
