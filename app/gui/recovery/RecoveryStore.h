#pragma once
// Crash recovery for unsaved editor buffers: the editor saves each modified buffer here every
// few seconds, and the next start offers what a crash (of the app, never of a kernel: those run
// in the runner) would otherwise have lost.

#include <QDateTime>
#include <QList>
#include <QString>

namespace kf::app {

/// One JSON file per buffer in `dir`, named by a hash of the buffer's path:
/// {"schema_version", "path", "text", "saved_at", "base_hash"}. Files are written atomically, so
/// a crash mid-save leaves the previous snapshot. Not thread-safe; use from one thread (the GUI
/// thread). Cheap to construct: nothing is read until pending().
class RecoveryStore {
public:
    struct Entry {
        QString filePath;             ///< the edited file (absolute)
        QString text;                 ///< the unsaved buffer
        QDateTime savedAt;            ///< when the snapshot was taken (UTC)
        bool fileChangedSinceEdit = false; ///< the file on disk differs from when editing began
    };

    /// `dir` empty: QStandardPaths::AppLocalDataLocation + "/recovery".
    explicit RecoveryStore(QString dir = {});

    QString directory() const { return m_dir; }

    /// Snapshots the buffer of `filePath`. The first snapshot after remove() records a hash of
    /// the file on disk as the edit's base, later ones keep it, so pending() can tell the user
    /// that the file changed underneath. Returns false (with a warning logged) on write errors.
    bool save(const QString& filePath, const QString& text);
    /// Forgets the buffer: call after a real save or a discard.
    void remove(const QString& filePath);
    /// Snapshots whose text differs from the file on disk now, newest first. Snapshots identical
    /// to the disk are deleted; corrupt files are skipped with a warning and left for a human.
    QList<Entry> pending() const;

    /// The snapshot file used for `filePath`.
    QString snapshotPath(const QString& filePath) const;

private:
    static QString normalized(const QString& filePath);

    QString m_dir;
};

} // namespace kf::app
