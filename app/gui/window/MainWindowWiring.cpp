// The main window's controllers and panels, created and connected: what each one's signals change
// in the others (MainWindow.h). The constructor (MainWindow.cpp) calls these in order.
#include "app/gui/window/MainWindow.h"

#include "app/gui/registry/RegistryService.h"
#include "app/gui/settings/Settings.h"
#include "app/gui/window/AgentController.h"
#include "app/gui/window/AssistantController.h"
#include "app/gui/window/CandidateTab.h"
#include "app/gui/window/CompileController.h"
#include "app/gui/window/InspectController.h"
#include "app/gui/window/PromoteController.h"
#include "app/gui/window/RegistryController.h"
#include "app/gui/window/RunController.h"
#include "app/gui/window/StatusBar.h"
#include "app/gui/window/SystemColorScheme.h"
#include "app/gui/window/Theme.h"
#include "app/gui/window/TuneController.h"
#include "app/gui/workspace/ExampleWorkspace.h"
#include "app/gui/workspace/TaskDiagnostics.h"
#include "app/gui/workspace/Workspace.h"
#include "app/gui/workspace/WorkspaceModel.h"
#include "engine/protocol/ProfileReport.h"
#include "widgets/assembly/AssemblyView.h"
#include "widgets/assistant/AssistantDock.h"
#include "widgets/diagnostics/DiagnosticsPanel.h"
#include "widgets/editor/KernelEditor.h"
#include "widgets/occupancy/OccupancyPanel.h"
#include "widgets/profile/ProfilePanel.h"
#include "widgets/registry/RegistryBrowser.h"
#include "widgets/runs/RunPanel.h"
#include "widgets/task/TaskEditor.h"

#include <QApplication>
#include <QDBusConnection>
#include <QDockWidget>
#include <QFileInfo>
#include <QGuiApplication>
#include <QMessageBox>
#include <QScreen>
#include <QTabWidget>
#include <QTreeView>

#include <utility>

namespace kf::app {

/// Agent prompts and Add Candidate: their messages, and the candidate opened once added.
void MainWindow::createAgent()
{
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
}

/// The Assistant panel and its synthesis: the same runner and compile options as the Run menu's runs.
void MainWindow::createAssistant()
{
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
}

/// Theme ▸ System follows the desktop, also when it switches while the workbench is open.
void MainWindow::followDesktopScheme()
{
    if (m_options.followDesktopScheme) {
        m_colorScheme = new SystemColorScheme(QDBusConnection::sessionBus(), this);
        connect(m_colorScheme, &SystemColorScheme::changed, this, [this] {
            if (m_settings->theme() == Settings::Theme::System)
                applyTheme(*qApp, ThemeChoice::System, m_colorScheme->scheme());
        });
    }
}

/// Promote follows the reports the runs bring; the Runs panel's button and the menu item follow it.
void MainWindow::wirePromotion()
{
    connect(m_run.get(), &RunController::reportReceived, m_promote.get(), &PromoteController::addReport);
    connect(m_promote.get(), &PromoteController::stateChanged, this, [this](bool can, const QString& tip) {
        m_runPanel->setPromoteState(can, tip);
        m_promoteAction->setEnabled(can);
        m_promoteAction->setToolTip(tip);
    });
    m_runPanel->setPromoteState(m_promote->canPromote(), m_promote->stateText());
    m_promoteAction->setEnabled(m_promote->canPromote());
    connect(m_runPanel, &kf::ui::RunPanel::promoteRequested, m_promote.get(), &PromoteController::promote);
    connect(m_promote.get(), &PromoteController::failed, this, [this](const QString& sentence) {
        QMessageBox::warning(this, tr("Promote"), tr("The kernel was not promoted: %1").arg(sentence));
    });
}

/// The tensor inspector, fed by the runs; its messages go to the status bar.
void MainWindow::createInspector()
{
    m_inspect = std::make_unique<InspectController>(m_inspector, dock("inspectorDock"), m_runPanel, m_run.get());
    connect(m_inspect.get(), &InspectController::message, this, [this](const QString& t) { m_status->showMessage(t, 15000); });
    connect(m_inspect.get(), &InspectController::problem, this, [this](const QString& t) { m_status->showMessage(t, 30000); });
}

/// The registry browser: promotions revealed in it, re-verification through the Run menu's runner.
void MainWindow::createRegistry()
{
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
}

/// Tabs, the workspace tree, Problems, the assembly view, occupancy and the task editor.
void MainWindow::wireEditing()
{
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
}

/// What a run's end changes: sanitizer findings, the Run menu, the profile panel.
void MainWindow::wireRuns()
{
    m_tune = new TuneController(this, m_run.get());
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
}

/// The default layout (View ▸ Reset Layout) and the saved geometry and state.
void MainWindow::restoreLayout()
{
    // The layout buildDocks() made, before a saved one replaces it: View ▸ Reset Layout returns to it.
    m_defaultState = saveState(kLayoutVersion);
    if (m_settings->windowGeometry().isEmpty() || !restoreGeometry(m_settings->windowGeometry())) {
        const QScreen* s = screen() ? screen() : QGuiApplication::primaryScreen();
        setGeometry(defaultGeometry(s ? s->availableGeometry() : QRect(0, 0, 1600, 1000)));
    }
    // A state saved by a version with another layout is not restored (its docks would land elsewhere).
    m_restoredState = !m_settings->windowState().isEmpty() && restoreState(m_settings->windowState(), kLayoutVersion);
}

/// The workspace asked for, else the most recent one, else the user's copy of the examples; any
/// warning, the endpoint's included, in the status bar.
void MainWindow::openFirstWorkspace(const QString& endpointWarning)
{
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
}

} // namespace kf::app
