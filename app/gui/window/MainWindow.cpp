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
    m_agent = new AgentController(m_settings, this);
    connect(m_agent, &AgentController::promptCopied, this, [this](const QString& summary) {
        statusBar()->showMessage(summary, 10000);
    });
    connect(m_agent, &AgentController::failed, this, [this](const QString& title, const QString& message) {
        QMessageBox::warning(this, title, message);
    });
    connect(m_agent, &AgentController::candidateAdded, this,
            [this](const QString& dir, const QString& file, const QStringList& warnings) {
                m_workspace->reload(dir);
                openFile(file);
                statusBar()->showMessage(tr("Added %1 to %2: press F5 to verify it")
                                             .arg(QFileInfo(file).fileName(), QFileInfo(dir).fileName()),
                                         8000);
                if (!warnings.isEmpty())
                    QMessageBox::information(this, tr("Add Candidate"),
                                             tr("%1 was added. The static scan and the checks say:\n\n%2\n\nThese are "
                                                "warnings, not a verdict: Verify decides.")
                                                 .arg(QFileInfo(file).fileName(), warnings.join(QLatin1Char('\n'))));
            });
    m_assistant = new AssistantController(m_assistantDock, this);
    m_assistant->setRunService(m_run->service()); // the Run menu's runner: one owner of the GPU
    m_assistant->reloadModels();
    connect(m_assistantDock, &kf::ui::AssistantDock::startRequested, this, &MainWindow::startSynthesis);
    connect(m_assistant, &AssistantController::openFileRequested, this, [this](const QString& path) { openFile(path); });
    connect(m_assistant, &AssistantController::finished, this, [this](const QString&, const QString& sentence) {
        statusBar()->showMessage(sentence, 15000);
    });
    connect(m_assistant, &AssistantController::candidateAdded, this, [this](const QString& dir, const QString& file) {
        if (m_workspace->indexOfDir(dir) >= 0)
            m_workspace->reload(dir);
        else
            m_workspace->rescan(); // a task the interview created
        openFile(file);
    });
    m_promote->setEvidenceDirectory(m_options.recoveryDir.isEmpty()
                                        ? QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) +
                                              QStringLiteral("/evidence")
                                        : QDir::cleanPath(m_options.recoveryDir + QStringLiteral("/../evidence")));
    // Theme ▸ System follows the desktop, also when it switches while the workbench is open.
    if (m_options.followDesktopScheme) {
        m_colorScheme = new SystemColorScheme(QDBusConnection::sessionBus(), this);
        connect(m_colorScheme, &SystemColorScheme::changed, this, [this] {
            if (m_settings->theme() == Settings::Theme::System)
                applyTheme(*qApp, ThemeChoice::System, m_colorScheme->scheme());
        });
    }
    applySettings();
    buildMenus();
    connect(m_run.get(), &RunController::reportReceived, m_promote.get(), &PromoteController::addReport);
    connect(m_promote.get(), &PromoteController::stateChanged, this, [this](bool can, const QString& tip) {
        m_runPanel->setPromoteState(can, tip);
        m_promoteAction->setEnabled(can);
        m_promoteAction->setToolTip(tip);
    });
    m_runPanel->setPromoteState(m_promote->canPromote(), m_promote->stateText());
    m_promoteAction->setEnabled(m_promote->canPromote());
    connect(m_runPanel, &kf::ui::RunPanel::promoteRequested, m_promote.get(), &PromoteController::promote);
    m_inspect = std::make_unique<InspectController>(m_inspector, dock("inspectorDock"), m_runPanel, m_run.get());
    connect(m_inspect.get(), &InspectController::message, this, [this](const QString& t) { m_status->showMessage(t, 15000); });
    connect(m_inspect.get(), &InspectController::problem, this, [this](const QString& t) { m_status->showMessage(t, 30000); });
    m_registry = std::make_unique<RegistryController>(m_registryBrowser, m_workspace, this);
    // Another process may change the threshold or promote: the button follows the registry.
    connect(m_registry->service(), &RegistryService::indexLoaded, m_promote.get(), [this] { m_promote->reevaluate(); });
    connect(m_promote.get(), &PromoteController::promoted, this, [this](const QString& id, const QString& folder) {
        m_status->showMessage(tr("Promoted %1 into %2").arg(id, folder), 15000);
        dock("registryDock")->raise();
        m_registry->reveal(id);
    });
    connect(m_registry.get(), &RegistryController::openFileRequested, this, [this](const QString& path) { openFile(path); });
    connect(m_registry.get(), &RegistryController::reverifyRequested, this,
            [this](const kf::Task& task, const QString& file, const QString& note) {
                if (m_run->startTask(kf::RunKind::Verify, task, file, note))
                    dock("runsDock")->raise();
                else
                    m_status->showMessage(tr("A run is in progress: re-verify when it ends"), 8000);
            });
    connect(m_registry.get(), &RegistryController::message, this,
            [this](const QString& text) { m_status->showMessage(text, 10000); });
    connect(m_registry.get(), &RegistryController::problem, this,
            [this](const QString& text) { QMessageBox::warning(this, tr("Registry"), text); });
    connect(m_promote.get(), &PromoteController::failed, this, [this](const QString& sentence) {
        QMessageBox::warning(this, tr("Promote"), tr("The kernel was not promoted: %1").arg(sentence));
    });

    connect(m_tabs, &QTabWidget::currentChanged, this, &MainWindow::onCurrentTabChanged);
    connect(m_tabs, &QTabWidget::tabCloseRequested, this, &MainWindow::closeTab);
    connect(m_workspaceView, &QTreeView::activated, this, [this](const QModelIndex& i) {
        const QString path = i.data(WorkspaceModel::PathRole).toString();
        const auto kind = WorkspaceModel::Kind(i.data(WorkspaceModel::KindRole).toInt());
        if (kind == WorkspaceModel::Kind::Task)
            showTaskFor(path);
        else
            openFile(path);
    });
    connect(m_diagnostics, &kf::ui::DiagnosticsPanel::diagnosticActivated, this,
            [this](const QString& file, int line, int column) { goToDiagnostic(file, line, column); });
    connect(m_assembly, &kf::ui::AssemblyView::sourceLinesSelected, this, [this](const QList<int>& lines) {
        if (CandidateTab* t = currentTab())
            t->editor()->setHighlightedLines(lines);
    });
    connect(m_occupancy, &kf::ui::OccupancyPanel::architectureChanged, this,
            [this](const QString& arch) { m_compile->setArchitecture(arch); });
    connect(m_taskEditor, &kf::ui::TaskEditor::saveRequested, this, &MainWindow::onTaskEditorSave);
    connect(m_workspace, &Workspace::taskReloaded, this, [this](const QString& dir) {
        // A changed launch plan changes the static analysis: rebuild the open candidate.
        if (CandidateTab* t = currentTab(); t && t->taskDir() == dir) {
            t->compileNow();
            m_promote->reevaluate(); // an edited task.json voids the evidence
        }
    });
    // A task.json that does not load is a row in Problems at its place, until it loads again.
    const auto showTaskProblems = [this] { m_compile->setWorkspaceDiagnostics(taskDiagnostics(*m_workspace)); };
    connect(m_workspace, &Workspace::opened, this, showTaskProblems);
    connect(m_workspace, &Workspace::taskReloaded, this, showTaskProblems);
    connect(m_workspace, &Workspace::taskAdded, this, showTaskProblems);
    connect(m_workspace, &Workspace::taskRemoved, this, showTaskProblems);
    connect(m_run.get(), &RunController::verified, this, &MainWindow::applyVerification);
    connect(m_run.get(), &RunController::runningChanged, this, [this](bool running) {
        m_verifyAction->setEnabled(!running);
        m_verifySanitizedAction->setEnabled(!running);
        m_benchAction->setEnabled(!running);
        m_profileAction->setEnabled(!running);
        m_cancelAction->setEnabled(running);
    });
    connect(m_run.get(), &RunController::profileReceived, this, [this](const QString&, const kf::protocol::RunReport& r) {
        m_profiling = false;
        if (r.profile())
            m_profilePanel->setReport(*r.profile());
        else
            m_profilePanel->setError(QString::fromStdString(r.header().errorSentence()));
        dock("profileDock")->raise();
    });
    connect(m_run.get(), &RunController::finished, this, [this](bool, const QString& sentence) {
        // A profile that ended without a report (no GPU, a crash, a cancel) says why in its panel.
        if (std::exchange(m_profiling, false))
            m_profilePanel->setError(sentence);
    });

    // The layout buildDocks() made, before a saved one replaces it: View ▸ Reset Layout returns to it.
    m_defaultState = saveState(kLayoutVersion);
    if (m_settings->windowGeometry().isEmpty() || !restoreGeometry(m_settings->windowGeometry())) {
        const QScreen* s = screen() ? screen() : QGuiApplication::primaryScreen();
        setGeometry(defaultGeometry(s ? s->availableGeometry() : QRect(0, 0, 1600, 1000)));
    }
    // A state saved by a version with another layout is not restored (its docks would land elsewhere).
    m_restoredState = !m_settings->windowState().isEmpty() && restoreState(m_settings->windowState(), kLayoutVersion);

    QString root = m_options.workspace;
    if (root.isEmpty()) {
        for (const QString& recent : m_settings->recentWorkspaces())
            if (QFileInfo(recent).isDir()) {
                root = recent;
                break;
            }
    }
    QString warning;
    if (root.isEmpty())
        root = userExampleWorkspace(&warning); // first start: the user's own copy of the examples
    if (!openWorkspace(root, &warning))
        openWorkspace(userExampleWorkspace(&warning), nullptr);
    if (!endpointWarning.isEmpty())
        warning += (warning.isEmpty() ? QString() : QStringLiteral(" · ")) + endpointWarning;
    if (!warning.isEmpty())
        m_status->showMessage(warning, 15000);
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
