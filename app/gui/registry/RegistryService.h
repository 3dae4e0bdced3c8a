#pragma once
// The workbench's access to the registry of verified kernels: loads the index and an entry's
// evidence off the UI thread, deprecates and removes entries, and follows the folder on disk so
// a promotion by another process (`kforge promote`, a second workbench) shows up by itself.

#include "engine/protocol/RunReport.h"
#include "engine/registry/Registry.h"

#include <nlohmann/json.hpp>

#include <QMetaType>
#include <QObject>
#include <QString>

class QFileSystemWatcher;
class QThreadPool;
class QTimer;

namespace kf::app {

/// GUI thread API: every function is called, and every signal emitted, on the thread that owns
/// the service. The work (file reads, JSON parsing, registry writes under its lock) runs on a
/// private thread pool; the destructor waits for it.
///
/// Stale results are dropped: of several requests of one kind (index, details, source) only the
/// newest one's result is emitted, and setDirectory() drops everything asked of the old folder.
class RegistryService : public QObject {
    Q_OBJECT

public:
    /// What an entry's version folder holds, read in one go.
    struct Details {
        kf::RegistryEntry entry;      ///< from the index (entry.id is the requested ID)
        std::optional<kf::PromotionRecord> promotion;         ///< promotion.json; none when unreadable
        std::optional<kf::protocol::RunReport> correctness;   ///< correctness.json; none when unreadable or malformed
        std::optional<kf::protocol::RunReport> performance;   ///< performance.json; none when unreadable or malformed
        QString source;               ///< the kernel source (entry.kernelFile)
        QString error;                ///< sentences on what could not be read and what to do; empty when all was read
        std::vector<nlohmann::json> modelRuns;   ///< checked model runs stored beside the version (engine/cast/ModelRuns.h)
    };

    explicit RegistryService(QObject* parent = nullptr);
    ~RegistryService() override;

    /// Switches to `directory` (it need not exist yet), watches it and loads its index.
    void setDirectory(const QString& directory);
    QString directory() const { return m_directory; }
    /// Loads the index again (also done by itself, ~200 ms after the folder or index changes).
    void refresh();
    /// Reads `id`'s entry, promotion record, reports and source: detailsLoaded().
    void loadDetails(const QString& id);
    /// Reads `id`'s kernel source (for a diff): sourceLoaded().
    void loadSource(const QString& id);
    /// Marks `id` deprecated with `reason`: operationFinished(), then a refresh.
    void deprecate(const QString& id, const QString& reason);
    /// Deletes `id` from the index and its folder: operationFinished(), then a refresh.
    void remove(const QString& id);

    /// Reads and writes started and not yet delivered (or dropped): non-zero while busy.
    int jobsInFlight() const { return m_inFlight; }

    /// How long a burst of file-system events is collected before the index is read again.
    static constexpr int kDebounceMs = 200;

signals:
    void indexLoaded(const kf::RegistryIndex& index);
    /// The index could not be read: `sentence` says why and what to do. The last index stays valid.
    void loadFailed(const QString& sentence);
    /// `details.entry.id` names the entry; a missing entry comes back with only `error` set.
    void detailsLoaded(const kf::app::RegistryService::Details& details);
    /// `source` of `id`, or an `error` sentence.
    void sourceLoaded(const QString& id, const QString& source, const QString& error);
    /// A deprecate or remove ended; `sentence` says what happened (and what to do when it failed).
    void operationFinished(bool ok, const QString& sentence);

private:
    void watch();
    void onFileSystemChanged();
    template <class T, class Job, class Done>
    void run(Job job, Done done);

    QString m_directory;
    QThreadPool* m_pool = nullptr;
    QFileSystemWatcher* m_watcher = nullptr;
    QTimer* m_debounce = nullptr;
    // Generations: a result is delivered only while its request is the newest of its kind.
    quint64 m_indexGeneration = 0;
    quint64 m_detailsGeneration = 0;
    quint64 m_sourceGeneration = 0;
    quint64 m_directoryGeneration = 0;
    int m_inFlight = 0;
};

} // namespace kf::app

#ifndef KF_REGISTRY_INDEX_METATYPE_DECLARED
#define KF_REGISTRY_INDEX_METATYPE_DECLARED
Q_DECLARE_METATYPE(kf::RegistryIndex)
#endif
Q_DECLARE_METATYPE(kf::app::RegistryService::Details)
