#include "app/gui/window/RegistryController.h"

#include "app/gui/registry/RegistryService.h"
#include "app/gui/workspace/Templates.h"
#include "app/gui/workspace/Workspace.h"
#include "engine/cast/CastExport.h"
#include "engine/core/JsonReader.h"
#include "engine/registry/Registry.h"
#include "widgets/registry/RegistryBrowser.h"

#include <QDir>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QPointer>
#include <QProgressDialog>
#include <QtConcurrent/QtConcurrentRun>
#include <QInputDialog>
#include <QMessageBox>

namespace kf::app {

namespace {
QString qs(const std::string& s) { return QString::fromStdString(s); }
} // namespace

struct RegistryController::ExportJob {
    kf::CancelToken cancel;
    QFutureWatcher<kf::Result<kf::cast::ExportSummary>>* watcher = nullptr;
    QPointer<QProgressDialog> progress;
};

RegistryController::RegistryController(kf::ui::RegistryBrowser* browser, Workspace* workspace, QWidget* dialogParent,
                                       QObject* parent)
    : QObject(parent)
    , m_browser(browser)
    , m_workspace(workspace)
    , m_dialogParent(dialogParent)
    , m_service(new RegistryService(this))
{
    qRegisterMetaType<kf::Task>("kf::Task");
    m_confirm = [this](const QString& title, const QString& text) {
        return QMessageBox::question(m_dialogParent, title, text, QMessageBox::Yes | QMessageBox::Cancel,
                                     QMessageBox::Cancel) == QMessageBox::Yes;
    };
    m_askReason = [this](const QString& id) -> std::optional<QString> {
        bool ok = false;
        const QString reason = QInputDialog::getText(m_dialogParent, tr("Deprecate"),
                                                     tr("Why is %1 deprecated? (kept with the entry)").arg(id),
                                                     QLineEdit::Normal, tr("superseded by a newer version"), &ok);
        return ok ? std::optional<QString>(reason) : std::nullopt;
    };

    using kf::ui::RegistryBrowser;
    connect(m_service, &RegistryService::indexLoaded, m_browser, [this](const kf::RegistryIndex& index) {
        m_browser->setIndex(index);
        if (!m_reveal.isEmpty() && m_browser->selectId(m_reveal))
            m_reveal.clear();
    });
    connect(m_service, &RegistryService::loadFailed, m_browser, &RegistryBrowser::setLoadError);
    connect(m_browser, &RegistryBrowser::currentChanged, m_service, [this](const QString& id) {
        if (!id.isEmpty())
            m_service->loadDetails(id);
    });
    connect(m_service, &RegistryService::detailsLoaded, m_browser, [this](const RegistryService::Details& d) {
        m_browser->setDetails({d.entry, d.promotion, d.correctness, d.performance, d.source, d.error, d.modelRuns});
    });
    connect(m_browser, &RegistryBrowser::diffRequested, m_service,
            [this](const QString&, const QString& other) { m_service->loadSource(other); });
    connect(m_service, &RegistryService::sourceLoaded, m_browser,
            [this](const QString& other, const QString& src, const QString& err) {
                m_browser->setDiff(m_browser->currentId(), other, src, err);
            });
    connect(m_service, &RegistryService::operationFinished, this, [this](bool ok, const QString& sentence) {
        if (ok)
            emit message(sentence);
        else
            emit problem(sentence);
    });
    connect(m_browser, &RegistryBrowser::openAsCandidateRequested, this, &RegistryController::openAsCandidate);
    connect(m_browser, &RegistryBrowser::reverifyRequested, this, &RegistryController::reverify);
    connect(m_browser, &RegistryBrowser::deprecateRequested, this, &RegistryController::deprecate);
    connect(m_browser, &RegistryBrowser::removeRequested, this, &RegistryController::remove);
    connect(m_browser, &RegistryBrowser::exportRequested, this, &RegistryController::exportCast);
    m_askExport = [this](const QString& id) -> std::optional<kf::ui::CastExportChoice> {
        auto index = kf::Registry(directory().toStdString()).load();
        if (!index) {
            emit problem(qs(index.error().message()));
            return std::nullopt;
        }
        const QString folder = m_workspace && !m_workspace->root().isEmpty() ? m_workspace->root() : QDir::homePath();
        kf::ui::ExportCastDialog dialog(index.value(), id, folder, m_dialogParent);
        if (dialog.exec() != QDialog::Accepted)
            return std::nullopt;
        return dialog.choice();
    };
}

RegistryController::~RegistryController()
{
    if (m_export && m_export->watcher) {
        m_export->cancel.cancel();
        m_export->watcher->waitForFinished();
    }
}

bool RegistryController::exporting() const { return m_export && m_export->watcher && m_export->watcher->isRunning(); }

void RegistryController::cancelExport()
{
    if (m_export)
        m_export->cancel.cancel();
}

void RegistryController::exportCast(const QString& id)
{
    if (exporting()) {
        emit problem(tr("An export is already running; wait for it or cancel it."));
        return;
    }
    const std::optional<kf::ui::CastExportChoice> choice = m_askExport ? m_askExport(id) : std::nullopt;
    if (!choice)
        return;
    const kf::cast::ExportOptions options = exportOptions(*choice);
    const std::string output = choice->output.toStdString();
    const std::string dir = directory().toStdString();

    auto job = std::make_shared<ExportJob>();
    m_export = job;
    if (m_dialogParent)
        showExportProgress(job, options, choice->architectures);
    job->watcher = new QFutureWatcher<kf::Result<kf::cast::ExportSummary>>(this);
    connect(job->watcher, &QFutureWatcherBase::finished, this, [this, job] { finishExport(job); });
    QPointer<RegistryController> self(this);
    job->watcher->setFuture(QtConcurrent::run([job, options, output, dir, self] {
        return kf::cast::exportPackage(
            kf::Registry(dir), options, output,
            [job, self](const kf::cast::ExportProgress& p) {
                if (!self)
                    return;
                QMetaObject::invokeMethod(self.data(), [job, p] {
                    if (!job->progress)
                        return;
                    job->progress->setMaximum(p.total + 1);
                    job->progress->setValue(p.done);
                    job->progress->setLabelText(QString::fromStdString(p.text));
                }, Qt::QueuedConnection);
            },
            &job->cancel);
    }));
}

kf::cast::ExportOptions RegistryController::exportOptions(const kf::ui::CastExportChoice& choice)
{
    kf::cast::ExportOptions options;
    for (const QString& v : choice.ids)
        options.ids.push_back(v.toStdString());
    for (const QString& a : choice.architectures)
        options.architectures.push_back(a.toStdString());
    options.ptx = choice.ptx.toStdString();
    options.packageVersion = choice.packageVersion.isEmpty() ? "1.0.0" : choice.packageVersion.toStdString();
    options.kernelforgeVersion = KF_VERSION;
    for (const kf::ui::CastModelChoice& m : choice.models)
        options.models.push_back({m.file.toStdString(), m.name.toStdString(), m.inputs.toStdString()});
    return options;
}

// A window-modal progress dialog over the dialog parent; Cancel cancels the job.
void RegistryController::showExportProgress(const std::shared_ptr<ExportJob>& job, const kf::cast::ExportOptions& options,
                                            const QStringList& architectures)
{
    auto* progress = new QProgressDialog(tr("Compiling %n version(s) for %1…", nullptr, int(options.ids.size()))
                                             .arg(architectures.join(QStringLiteral(", "))),
                                         tr("Cancel"), 0, int(options.ids.size() * options.architectures.size()),
                                         m_dialogParent);
    progress->setWindowTitle(tr("Export .cast package"));
    progress->setWindowModality(Qt::WindowModal);
    progress->setMinimumDuration(300);
    progress->setAttribute(Qt::WA_DeleteOnClose);
    connect(progress, &QProgressDialog::canceled, this, [job] { job->cancel.cancel(); });
    job->progress = progress;
}

void RegistryController::finishExport(const std::shared_ptr<ExportJob>& job)
{
    const auto result = job->watcher->result();
    job->watcher->deleteLater();
    job->watcher = nullptr;
    if (job->progress)
        job->progress->close();
    if (m_export == job)
        m_export.reset();
    if (!result) {
        const bool cancelled = job->cancel.cancelled();
        const QString sentence = cancelled ? tr("Export cancelled; nothing was written.")
                                           : tr("Export failed: %1").arg(qs(result.error().message()));
        if (!cancelled)
            emit problem(sentence);
        emit exportFinished(false, sentence);
        return;
    }
    const QString sentence = exportedSentence(*result);
    emit message(sentence);
    emit exportFinished(true, sentence);
}

// "Wrote FILE (N KiB): cast::a, cubins for sm_80, sm_90 and PTX compute_80." and the models.
QString RegistryController::exportedSentence(const kf::cast::ExportSummary& result)
{
    QStringList ops;
    for (const auto& o : result.ops)
        ops << QStringLiteral("cast::") + qs(o);
    QStringList archs;
    for (const auto& x : result.architectures)
        archs << qs(x);
    const QString sentence = tr("Wrote %1 (%2 KiB): %3, cubins for %4%5.")
                                 .arg(qs(result.file.string()))
                                 .arg((result.bytes + 1023) / 1024)
                                 .arg(ops.join(QStringLiteral(", ")))
                                 .arg(archs.join(QStringLiteral(", ")))
                                 .arg(result.ptx.empty() ? QString() : tr(" and PTX %1").arg(qs(result.ptx)));
    QStringList models;
    for (const auto& m : result.models)
        models << tr("%1 (may use %n packaged op(s))", nullptr, int(m.uses.size())).arg(qs(m.name));
    return models.isEmpty() ? sentence
                            : sentence + tr(" Models: %1; Run ▸ Run Model from .cast Package… "
                                            "measures them.").arg(models.join(QStringLiteral(", ")));
}

void RegistryController::setDirectory(const QString& dir)
{
    if (dir == m_service->directory())
        return;
    m_browser->setDirectory(dir);
    m_service->setDirectory(dir);
}

QString RegistryController::directory() const { return m_service->directory(); }

void RegistryController::reveal(const QString& id)
{
    if (m_browser->selectId(id))
        return;
    m_reveal = id; // not loaded yet: the watcher (or this refresh) brings it
    m_service->refresh();
}

void RegistryController::openAsCandidate(const QString& id)
{
    const kf::Registry registry(directory().toStdString());
    auto entry = registry.entry(id.toStdString());
    if (!entry) {
        emit problem(qs(entry.error().message()));
        return;
    }
    const TaskEntry* target = nullptr;
    for (const TaskEntry& t : m_workspace->tasks())
        if (t.task && t.task->name == entry->taskName)
            target = &t;
    const QString folder = qs(registry.entryDirectory(entry->id).string());
    if (!target) {
        emit problem(tr("No task named %1 in this workspace: open the workspace that has it, or open the version "
                        "folder %2 as a workspace of its own")
                         .arg(qs(entry->taskName), folder));
        return;
    }
    auto plan = kf::json::readFile(registry.entryDirectory(entry->id) / "launch.json");
    if (!plan) {
        emit problem(qs(plan.error().message()));
        return;
    }
    const QString stem = QFileInfo(qs(entry->kernelFile)).completeBaseName();
    auto created = importCandidate(target->dir, QStringLiteral("%1_v%2.cu").arg(stem).arg(entry->version),
                                   folder + '/' + qs(entry->kernelFile), plan.value(),
                                   tr("from the registry: %1").arg(id));
    if (!created) {
        emit problem(qs(created.error().message()));
        return;
    }
    m_workspace->reload(target->dir);
    emit message(tr("Added %1 to task %2 as %3").arg(id, qs(entry->taskName), QFileInfo(created.value()).fileName()));
    emit openFileRequested(created.value());
}

void RegistryController::reverify(const QString& id)
{
    const kf::Registry registry(directory().toStdString());
    auto task = registry.entryTask(id.toStdString());
    if (!task) {
        emit problem(qs(task.error().message()));
        return;
    }
    const QString file = qs(task->candidates.front().file);
    emit reverifyRequested(task.value(), file, tr("registry %1").arg(id));
}

void RegistryController::deprecate(const QString& id)
{
    const std::optional<QString> reason = m_askReason ? m_askReason(id) : std::optional<QString>(QString());
    if (!reason)
        return;
    m_service->deprecate(id, *reason);
}

void RegistryController::remove(const QString& id)
{
    if (m_confirm && !m_confirm(tr("Remove %1?").arg(id),
                                tr("%1 and its folder (source, task, reports, promotion record) are deleted from the "
                                   "registry %2. This cannot be undone; Deprecate keeps the evidence instead.")
                                    .arg(id, directory())))
        return;
    m_service->remove(id);
}

} // namespace kf::app
