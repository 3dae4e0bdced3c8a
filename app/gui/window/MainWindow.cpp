#include "app/gui/window/MainWindow.h"

#include "app/gui/recovery/RecoveryStore.h"
#include "app/gui/registry/RegistryService.h"
#include "app/gui/settings/Settings.h"
#include "app/gui/settings/SettingsDialog.h"
#include "app/gui/window/AgentController.h"
#include "app/gui/window/AssistantController.h"
#include "app/gui/window/CandidateTab.h"
#include "app/gui/window/CompileController.h"
#include "app/gui/window/PromoteController.h"
#include "app/gui/window/InspectController.h"
#include "app/gui/window/ModelRunDialog.h"
#include "app/gui/window/RegistryController.h"
#include "app/gui/window/RunController.h"
#include "app/gui/window/StatusBar.h"
#include "app/gui/window/Theme.h"
#include "app/gui/workspace/ExampleWorkspace.h"
#include "app/gui/workspace/TaskDiagnostics.h"
#include "app/gui/workspace/Templates.h"
#include "app/gui/workspace/Workspace.h"
#include "app/gui/workspace/WorkspaceModel.h"
#include "engine/core/Files.h"
#include "engine/core/Hash.h"
#include "engine/registry/Registry.h"
#include "engine/runner/RunnersConfig.h"
#include "widgets/assembly/AssemblyView.h"
#include "widgets/assistant/AssistantDock.h"
#include "widgets/diagnostics/DiagnosticsPanel.h"
#include "widgets/diagnostics/SanitizerDiagnostics.h"
#include "widgets/editor/KernelEditor.h"
#include "widgets/occupancy/OccupancyPanel.h"
#include "widgets/inspect/TensorInspector.h"
#include "widgets/profile/ProfilePanel.h"
#include "engine/protocol/ProfileReport.h"
#include "widgets/registry/RegistryBrowser.h"
#include "widgets/runs/RunPanel.h"
#include "widgets/task/TaskEditor.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QScreen>
#include <QHeaderView>
#include <QInputDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QScrollArea>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTimer>
#include <QTreeView>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <utility>

namespace kf::app {

MainWindow::MainWindow(Settings* settings, Options options, QWidget* parent)
    : QMainWindow(parent)
    , m_settings(settings)
    , m_options(std::move(options))
    , m_recovery(std::make_unique<RecoveryStore>(m_options.recoveryDir))
    , m_workspace(new Workspace(this))
{
    setWindowTitle(tr("KernelForge"));
    setDockNestingEnabled(true);
    m_workspaceModel = new WorkspaceModel(m_workspace, this);
    m_tabs = new QTabWidget(this);
    m_tabs->setTabsClosable(true);
    m_tabs->setMovable(true);
    m_tabs->setDocumentMode(true);
    setCentralWidget(m_tabs);
    m_status = new StatusBar(this);
    setStatusBar(m_status);
    buildDocks();

    m_compile = std::make_unique<CompileController>(
        m_workspace, CompilePanels{m_diagnostics, m_assembly, m_occupancy, m_status}, m_options.cacheDir);
    m_compile->setArchitecture(m_settings->defaultArchitecture());
    connect(m_compile.get(), &CompileController::resultShown, this, &MainWindow::onBuildShown);
    m_occupancy->setArchitecture(m_settings->defaultArchitecture());
    QString endpointWarning;
    const RunService::Options ro = runnerOptions(&endpointWarning);
    m_run = std::make_unique<RunController>(ro, m_runPanel, m_status);
    m_run->setSaveHook([this](const QString& dir, QString* error) { return saveTaskFiles(dir, error); });
    m_promote = std::make_unique<PromoteController>(this);
    createAgent();
    createAssistant();
    m_promote->setEvidenceDirectory(m_options.recoveryDir.isEmpty()
                                        ? QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) +
                                              QStringLiteral("/evidence")
                                        : QDir::cleanPath(m_options.recoveryDir + QStringLiteral("/../evidence")));
    followDesktopScheme();
    applySettings();
    buildMenus();
    wirePromotion();
    createInspector();
    createRegistry();
    wireEditing();
    wireRuns();
    restoreLayout();
    openFirstWorkspace(endpointWarning);
    if (m_options.probeRunner)
        m_run->probe();
    else
        m_status->setRunner(tr("runner not started"), "busy", {});
}

MainWindow::~MainWindow()
{
    // The synthesis worker first: it cancels and joins before anything it reports to goes.
    delete m_assistant;
    m_assistant = nullptr;
    // Controllers first: their worker threads deliver into widgets that are about to go.
    m_promote.reset();
    m_registry.reset();
    m_inspect.reset();
    m_run.reset();
    m_compile.reset();
}

void MainWindow::applyVerification(const QString& candidatePath, const QString& verifiedText,
                                   const kf::protocol::RunReport& report)
{
    // Every verification of the candidate replaces the findings of the one before: none when it
    // ran no tools or they found nothing.
    std::vector<kf::Diagnostic> findings;
    if (report.verify() && report.verify()->sanitizer)
        findings = kf::ui::sanitizerDiagnostics(*report.verify()->sanitizer, candidatePath);
    if (findings.empty())
        m_runDiagnostics.remove(candidatePath);
    else
        m_runDiagnostics.insert(candidatePath, {findings, verifiedText});
    for (CandidateTab* t : tabs())
        if (t->filePath() == candidatePath) {
            t->setRunDiagnostics(findings, verifiedText);
            m_compile->refreshDiagnostics(t);
        }
}

bool MainWindow::openReport(const QString& file)
{
    dock("runsDock")->raise();
    const QString title = tr("Report %1 · opened from a file").arg(QFileInfo(file).fileName());
    std::vector<kf::protocol::RunReport> reports;
    QStringList notes;
    QString sentence = tr("opened from %1").arg(QFileInfo(file).fileName());
    if (auto bytes = kf::readFileBytes(file.toStdString()); !bytes) {
        sentence = QString::fromStdString(bytes.error().message());
    } else if (const auto j = nlohmann::json::parse(*bytes, nullptr, false); j.is_discarded()) {
        sentence = tr("%1 is not JSON: open the --json output of kforge verify or kforge bench").arg(file);
    } else {
        std::vector<kf::Error> unreadable;
        reports = kf::protocol::reportsOfDocument(j, &unreadable);
        for (const kf::Error& e : unreadable)
            notes << tr("a report in %1 does not read: %2").arg(file, QString::fromStdString(e.message()));
        if (reports.empty())
            sentence = tr("%1 holds no report that reads").arg(file);
    }
    for (const kf::protocol::RunReport& r : reports) {
        if (r.kind() != kf::protocol::ReportKind::Correctness || r.isError())
            continue;
        // The workspace's candidate the report is about, if its file is still what was verified.
        const QString name = QString::fromStdString(r.header().task.name);
        const QString candidate = QString::fromStdString(r.header().candidate.file);
        QString path;
        for (int i = 0; i < m_workspace->taskCount() && path.isEmpty(); ++i) {
            const TaskEntry& e = m_workspace->taskAt(i);
            if (e.task && QString::fromStdString(e.task->name) == name && e.task->findCandidate(candidate.toStdString()))
                path = QDir(e.dir).filePath(candidate);
        }
        const bool findings = r.verify() && r.verify()->sanitizer && !r.verify()->sanitizer->findings.empty();
        if (path.isEmpty()) {
            if (findings)
                notes << tr("%1/%2 is not in this workspace: its compute-sanitizer findings are listed here only").arg(name, candidate);
            continue;
        }
        auto bytes = kf::readFileBytes(path.toStdString());
        if (!bytes || kf::hashHex(*bytes) != r.header().candidate.sourceHash) {
            if (findings)
                notes << tr("%1 changed since this report was made (its source hash differs): its compute-sanitizer "
                            "findings are not put at its lines")
                             .arg(QDir::toNativeSeparators(path));
            continue;
        }
        applyVerification(path, QString::fromStdString(*bytes), r);
    }
    return m_run->showReports(title, reports, notes, sentence);
}

QString MainWindow::runnersFile() const
{
    return m_options.runnersFile.isEmpty() ? QString::fromStdString(kf::runnersConfigPath().string()) : m_options.runnersFile;
}

RunService::Options MainWindow::runnerOptions(QString* warning) const
{
    RunService::Options ro = m_options.runner;
    if (ro.runnerPath.isEmpty())
        ro.runnerPath = m_settings->runnerPath();
    ro.cacheDir = m_options.cacheDir;
    ro.extraNvrtcOptions = m_settings->nvrtcExtraOptions();
    if (m_options.runner.endpoint)
        return ro; // chosen by the caller (tests)
    const std::filesystem::path file = runnersFile().toStdString();
    auto config = kf::readRunnersConfig(file);
    if (!config) {
        *warning = tr("The runner endpoints do not read, so runs use the local runner: %1")
                       .arg(QString::fromStdString(config.error().message()));
        return ro;
    }
    const QString chosen = m_settings->runnerEndpoint();
    const kf::Endpoint* e = config->find((chosen.isEmpty() ? QString::fromStdString(config->defaultEndpoint) : chosen).toStdString());
    if (!e) {
        *warning = tr("The endpoint %1 chosen in Settings ▸ Runners is not in %2; runs use its default, %3.")
                       .arg(chosen, QString::fromStdString(file.string()), QString::fromStdString(config->defaultEndpoint));
        e = config->find(config->defaultEndpoint);
    }
    // The built-in local runner needs no endpoint: runs are exactly what they were before endpoints
    // (kforge does the same).
    if (e && !(e->kind == kf::Endpoint::Kind::Local && e->name == "local" && e->env.empty() && e->runner.empty()))
        ro.endpoint = *e;
    return ro;
}

void MainWindow::showSettings()
{
    SettingsDialog dialog(m_settings, this, m_options.runnersFile);
    if (dialog.exec() == QDialog::Accepted)
        applySettings();
    m_assistant->reloadModels(); // Settings ▸ Models may have changed models.json
}

void MainWindow::applySettings()
{
    m_compile->setExtraOptions(m_settings->nvrtcExtraOptions());
    RunController::Settings rs;
    rs.trials = m_settings->trials();
    rs.compileBaseline = m_settings->benchAgainstCompile();
    rs.launchTimeoutMs = m_settings->launchTimeoutMs();
    rs.rtol = m_settings->toleranceOverride().rtol;
    rs.atol = m_settings->toleranceOverride().atol;
    m_run->setSettings(rs);
    // The runner, its NVRTC options and the endpoint: a change takes effect at the next run (the
    // old runner stops then). A local runner is started at once so the status bar shows its GPU;
    // a remote one waits for a run (an srun may queue for minutes).
    QString warning;
    const RunService::Options now = runnerOptions(&warning);
    if (m_run->service()->setOptions(now) && m_options.probeRunner && !m_run->isRunning() &&
        !(now.endpoint && now.endpoint->remote()))
        m_run->probe();
    if (!warning.isEmpty())
        m_status->showMessage(warning, 15000);
    switch (m_settings->theme()) {
    case Settings::Theme::System:
        applyTheme(*qApp, ThemeChoice::System, m_colorScheme ? m_colorScheme->scheme() : ColorScheme::NoPreference);
        break;
    case Settings::Theme::Light: applyTheme(*qApp, ThemeChoice::Light); break;
    case Settings::Theme::Dark: applyTheme(*qApp, ThemeChoice::Dark); break;
    }
}

int MainWindow::recoverableCount() const
{
    return m_recovery->pending().size();
}

void MainWindow::restoreRecovered(bool restore)
{
    for (const RecoveryStore::Entry& e : m_recovery->pending()) {
        if (!restore) {
            m_recovery->remove(e.filePath);
            continue;
        }
        CandidateTab* t = openFile(e.filePath);
        if (!t) { // the file is gone: recreate it from the buffer rather than lose the text
            const QByteArray bytes = e.text.toUtf8();
            if (!kf::writeFileAtomic(e.filePath.toStdString(), std::string_view(bytes.constData(), bytes.size())))
                continue;
            t = openFile(e.filePath);
            if (!t)
                continue;
        }
        t->restoreBuffer(e.text); // an undoable edit on top of the file: modified, not saved
    }
}

void MainWindow::showEvent(QShowEvent* event)
{
    QMainWindow::showEvent(event);
    if (!m_firstShow)
        return;
    m_firstShow = false;
    if (!m_restoredState)
        applyDefaultSizes(); // dock sizes only take once the window has its real size
    if (!m_options.askToRestore)
        return;
    QTimer::singleShot(0, this, [this] {
        const auto pending = m_recovery->pending();
        if (pending.isEmpty())
            return;
        QStringList files;
        for (const auto& e : pending)
            files << QString("%1 (%2)%3").arg(e.filePath, e.savedAt.toLocalTime().toString(Qt::ISODate),
                                               e.fileChangedSinceEdit ? tr(" — the file changed on disk since") : QString());
        const auto answer = QMessageBox::question(
            this, tr("Restore unsaved edits?"),
            tr("KernelForge closed without saving these files:\n\n%1\n\nRestore the unsaved edits?").arg(files.join("\n")),
            QMessageBox::Yes | QMessageBox::No, QMessageBox::Yes);
        restoreRecovered(answer == QMessageBox::Yes);
    });
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (m_assistant && !m_assistant->mayClose(this)) {
        event->ignore();
        return;
    }
    QStringList unsaved;
    for (CandidateTab* t : tabs())
        if (t->isModified())
            unsaved << t->fileName();
    if (m_taskEditor->isModified())
        unsaved << "task.json";
    if (!unsaved.isEmpty()) {
        const auto answer = QMessageBox::question(this, tr("Quit KernelForge"),
                                                  tr("Save changes to %1?").arg(unsaved.join(", ")),
                                                  QMessageBox::SaveAll | QMessageBox::Discard | QMessageBox::Cancel);
        if (answer == QMessageBox::Cancel || (answer == QMessageBox::SaveAll && !saveAll())) {
            event->ignore();
            return;
        }
        for (CandidateTab* t : tabs())
            m_recovery->remove(t->filePath());
    }
    m_settings->setWindowGeometry(saveGeometry());
    m_settings->setWindowState(saveState(kLayoutVersion));
    m_settings->setDefaultArchitecture(m_compile->architecture());
    m_settings->sync();
    event->accept();
}

void MainWindow::updatePromoteTarget()
{
    CandidateTab* t = currentTab();
    m_promote->setCurrent(t ? t->taskDir() : QString(), t ? t->fileName() : QString(), t && t->isModified());
}

void MainWindow::updateTitle()
{
    QString title = tr("KernelForge");
    if (!m_workspace->root().isEmpty())
        title += " — " + QFileInfo(m_workspace->root()).fileName();
    if (CandidateTab* t = currentTab())
        title += " — " + QFileInfo(t->taskDir()).fileName() + "/" + t->fileName();
    setWindowTitle(title);
}

} // namespace kf::app
