#pragma once
// The Registry dock: feeds the browser from the registry service and answers its requests —
// open a version as a new candidate of its task, re-verify it on this GPU, deprecate it (asking
// why) and remove it (after a confirmation). The main window owns it; it never blocks on disk
// work beyond reading one launch plan.
#include "engine/task/Task.h"
#include "widgets/registry/ExportCastDialog.h"

#include <QMetaType>
#include <QObject>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

class QWidget;
template <class T>
class QFutureWatcher;

namespace kf::ui {
class RegistryBrowser;
}
namespace kf::cast {
struct ExportOptions;
struct ExportSummary;
}

namespace kf::app {

class RegistryService;
class Workspace;

class RegistryController : public QObject {
    Q_OBJECT
public:
    /// Asks yes or no (remove). Default: a QMessageBox over the dialog parent.
    using Confirm = std::function<bool(const QString& title, const QString& text)>;
    /// Asks for a deprecation reason; nullopt cancels. Default: a QInputDialog.
    using AskReason = std::function<std::optional<QString>(const QString& id)>;
    /// Asks what to export (Export .cast…); nullopt cancels. Default: ExportCastDialog.
    using AskExport = std::function<std::optional<kf::ui::CastExportChoice>(const QString& id)>;

    RegistryController(kf::ui::RegistryBrowser* browser, Workspace* workspace, QWidget* dialogParent,
                       QObject* parent = nullptr);
    ~RegistryController() override;

    void setDirectory(const QString& dir);
    QString directory() const;
    RegistryService* service() const { return m_service; }
    /// Selects `id` as soon as the index lists it (right after a promote).
    void reveal(const QString& id);

    void setConfirm(Confirm c) { m_confirm = std::move(c); }
    void setAskReason(AskReason a) { m_askReason = std::move(a); }
    void setAskExport(AskExport a) { m_askExport = std::move(a); }

    void openAsCandidate(const QString& id);
    void reverify(const QString& id);
    void deprecate(const QString& id);
    void remove(const QString& id);
    /// Export .cast…: asks what, then compiles and writes the package off the UI thread with a
    /// progress dialog and Cancel; exportFinished() says how it ended.
    void exportCast(const QString& id);
    /// True while an export runs.
    bool exporting() const;
    /// Stops a running export (the compile in flight ends at NVRTC's next poll).
    void cancelExport();

signals:
    /// A version was added to a workspace task as a new candidate: open it.
    void openFileRequested(const QString& path);
    /// Verify this registry version (its folder as the task folder) on this machine's GPU.
    void reverifyRequested(const kf::Task& task, const QString& candidateFile, const QString& note);
    /// A sentence for the status bar.
    void message(const QString& text);
    /// Something the user asked for failed: a sentence with what to do.
    void problem(const QString& text);
    /// An export ended: written (`ok`), failed or cancelled; `sentence` says which and where.
    void exportFinished(bool ok, const QString& sentence);

private:
    kf::ui::RegistryBrowser* m_browser = nullptr;
    Workspace* m_workspace = nullptr;
    QWidget* m_dialogParent = nullptr;
    RegistryService* m_service = nullptr;
    QString m_reveal;
    Confirm m_confirm;
    AskReason m_askReason;
    AskExport m_askExport;
    struct ExportJob;
    std::shared_ptr<ExportJob> m_export;

    // Export .cast… (RegistryController.cpp): the options of the dialog's choice, the progress
    // dialog, and the sentence the finished export is reported with.
    static kf::cast::ExportOptions exportOptions(const kf::ui::CastExportChoice& choice);
    void showExportProgress(const std::shared_ptr<ExportJob>& job, const kf::cast::ExportOptions& options,
                            const QStringList& architectures);
    void finishExport(const std::shared_ptr<ExportJob>& job);
    static QString exportedSentence(const kf::cast::ExportSummary& result);
};

} // namespace kf::app

Q_DECLARE_METATYPE(kf::Task)
