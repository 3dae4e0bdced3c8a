#pragma once
// The open workspace: a root folder and the task folders found under it, each loaded with the
// engine. Keeps itself in step with the disk through a file watcher, so edits made in another
// editor (or by "New Task"/"New Candidate") show up without a manual refresh.

#include "engine/core/Result.h"
#include "engine/task/Task.h"

#include <QByteArray>
#include <QFileSystemWatcher>
#include <QHash>
#include <QObject>
#include <QSet>
#include <QString>
#include <QTimer>

#include <optional>
#include <vector>

namespace kf::app {

/// One task folder. Exactly one of `task` and `error` is set: a task that fails to load stays
/// in the list with the engine's error, so the user can open its task.json and fix it.
struct TaskEntry {
    QString dir;                     ///< absolute, cleaned path of the task folder
    QString jsonPath;                ///< dir + "/task.json"
    std::optional<kf::Task> task;
    std::optional<kf::Error> error;
};

/// Lives on the GUI thread (the watcher delivers there). Task folders are folders holding
/// task.json at most two levels below the root (the root itself counts too); the search does
/// not descend into a task folder, a registry folder (one holding verified_kernels.json) or hidden
/// folders. Tasks are kept sorted by folder path.
class Workspace : public QObject {
    Q_OBJECT
public:
    explicit Workspace(QObject* parent = nullptr);
    ~Workspace() override;

    /// Scans `root` and loads every task; replaces whatever was open (emits opened()). Returns
    /// false with a sentence in `error` when `root` is not a readable folder; the previous
    /// workspace then stays open.
    bool open(const QString& root, QString* error = nullptr);
    /// Empty when nothing is open.
    QString root() const { return m_root; }

    const std::vector<TaskEntry>& tasks() const { return m_tasks; }
    int taskCount() const { return static_cast<int>(m_tasks.size()); }
    const TaskEntry& taskAt(int index) const { return m_tasks.at(static_cast<size_t>(index)); }
    /// -1 when `taskDir` is not a task folder of this workspace. Accepts relative or unclean paths.
    int indexOfDir(const QString& taskDir) const;
    /// nullptr when not found. The pointer is valid until the next signal of this object.
    const TaskEntry* taskForDir(const QString& taskDir) const;
    /// The task whose folder holds `filePath` (task.json or a candidate), or nullptr.
    const TaskEntry* taskForFile(const QString& filePath) const;

    /// Loads the task again from disk now and emits taskReloaded(). No-op for unknown folders.
    void reload(const QString& taskDir);
    /// Looks for task folders that appeared or vanished; emits taskAdded()/taskRemoved().
    void rescan();

signals:
    /// A new root was opened: the whole list changed.
    void opened(const QString& root);
    /// The task at `index` was inserted (already in tasks()).
    void taskAdded(const QString& taskDir, int index);
    /// The task that was at `index` was removed (already gone from tasks()).
    void taskRemoved(const QString& taskDir, int index);
    /// The task's entry was replaced by a fresh load (its task or its error may have changed).
    void taskReloaded(const QString& taskDir);

private:
    static QString clean(const QString& path);
    static TaskEntry load(const QString& dir);
    // What a reload must differ in to be worth a signal: task.json's bytes and the error.
    static QByteArray fingerprint(const TaskEntry& e);
    void reloadIfChanged(const QString& dir, bool force);
    QStringList findTaskDirs(QStringList* watchDirs) const;
    void updateWatches(const QStringList& dirs);
    void onFileChanged(const QString& path);
    void onDirectoryChanged(const QString& path);
    void flushPending();

    QString m_root;
    std::vector<TaskEntry> m_tasks;
    QFileSystemWatcher* m_watcher = nullptr;
    // Editors save in bursts (truncate, write, rename); changes are coalesced briefly so one
    // save gives one reload.
    QTimer m_settle;
    QSet<QString> m_pendingReloads;
    QHash<QString, QByteArray> m_fingerprints;
    bool m_pendingRescan = false;
};

} // namespace kf::app
