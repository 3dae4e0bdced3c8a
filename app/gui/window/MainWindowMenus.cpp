// The window's menus and the run actions they trigger (MainWindow.h).
#include "app/gui/window/MainWindow.h"

#include "app/gui/settings/Settings.h"
#include "app/gui/window/AgentController.h"
#include "app/gui/window/CandidateTab.h"
#include "app/gui/window/ModelRunDialog.h"
#include "app/gui/window/PromoteController.h"
#include "app/gui/window/RunController.h"
#include "app/gui/window/TuneController.h"
#include "widgets/assistant/AssistantDock.h"
#include "widgets/editor/KernelEditor.h"
#include "widgets/profile/ProfilePanel.h"

#include <QDockWidget>
#include <QFileDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QTabWidget>

namespace kf::app {

void MainWindow::buildMenus()
{
    buildFileMenu();
    QMenu* edit = buildEditMenu();
    buildRunMenu();
    buildViewMenu();
    QMenu* help = buildHelpMenu();
    buildNavigation(edit, help);
}

void MainWindow::buildFileMenu()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open Workspace…"), QKeySequence::Open, this, &MainWindow::openWorkspaceDialog);
    m_recentMenu = file->addMenu(tr("Recent &Workspaces"));
    rebuildRecentMenu();
    file->addSeparator();
    file->addAction(tr("New &Task…"), QKeySequence(tr("Ctrl+Shift+N")), this, &MainWindow::newTask);
    file->addAction(tr("&New Candidate…"), QKeySequence::New, this, &MainWindow::newCandidate);
    file->addAction(tr("New Candidate from &Reference…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_G), this,
                    &MainWindow::newCandidateFromReference);
    file->addAction(tr("&Import Problem…"), this, &MainWindow::importProblem)
        ->setStatusTip(tr("Turn a KernelBench problem file or a GPU MODE problem folder into a task (runs its Python code)"));
    file->addAction(tr("&Add Candidate…"), QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_A), this, &MainWindow::addCandidateFromFile)
        ->setStatusTip(tr("Add a kernel written elsewhere (by an agent, say) with its launch plan: checked, compiled and "
                          "listed in task.json"));
    file->addSeparator();
    file->addAction(tr("&Save"), QKeySequence::Save, this, &MainWindow::saveCurrent);
    file->addAction(tr("Save A&ll"), QKeySequence(tr("Ctrl+Shift+S")), this, &MainWindow::saveAll);
    file->addAction(tr("&Close Tab"), QKeySequence::Close, this, [this] {
        if (m_tabs->currentIndex() >= 0)
            closeTab(m_tabs->currentIndex());
    });
    file->addSeparator();
    file->addAction(tr("Se&ttings…"), QKeySequence::Preferences, this, &MainWindow::showSettings);
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
}

QMenu* MainWindow::buildEditMenu()
{
    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    edit->addAction(tr("&Undo"), QKeySequence::Undo, this, [this] { if (auto* t = currentTab()) t->editor()->undo(); });
    edit->addAction(tr("&Redo"), QKeySequence::Redo, this, [this] { if (auto* t = currentTab()) t->editor()->redo(); });
    edit->addSeparator();
    edit->addAction(tr("Copy Agent &Prompt"), QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_C), this, &MainWindow::copyAgentPrompt)
        ->setStatusTip(tr("Copy a strict task for a coding agent: the operation, hardware, shapes, objective, rules and "
                          "skills (kforge prompt)"));
    return edit;
}

// One statement per item: a new run action is one more line here.
void MainWindow::buildRunMenu()
{
    QMenu* run = menuBar()->addMenu(tr("&Run"));
    m_verifyAction = run->addAction(tr("&Verify"), QKeySequence(Qt::Key_F5), this, &MainWindow::verify);
    m_verifySanitizedAction = run->addAction(tr("Verify under compute-&sanitizer"), QKeySequence(tr("Ctrl+F5")), this,
                                             &MainWindow::verifySanitized);
    m_verifySanitizedAction->setStatusTip(tr("Verify, then run memcheck, racecheck, initcheck and synccheck on the smallest "
                                             "test shapes: findings appear at their lines and in Problems"));
    m_benchAction = run->addAction(tr("&Benchmark"), QKeySequence(Qt::Key_F6), this, &MainWindow::benchmark);
    m_profileAction = run->addAction(tr("&Profile"), QKeySequence(Qt::Key_F7), this, &MainWindow::profile);
    m_profileAction->setStatusTip(tr("Replay one launch under the hardware counters: achieved occupancy, throughput, "
                                     "roofline and hints, beside the LibTorch baseline"));
    m_cancelAction = run->addAction(tr("&Cancel Run"), QKeySequence(tr("Shift+F5")), this, [this] { m_run->cancel(); });
    run->addAction(tr("Open &Report…"), this, &MainWindow::openReportDialog)
        ->setStatusTip(tr("Show the reports of a kforge verify or bench --json file in the Runs panel, with "
                          "compute-sanitizer's findings at their lines"));
    run->addAction(tr("&Tune…"), QKeySequence(tr("Ctrl+F6")), this, [this] { m_tune->show(currentTab()); })
        ->setStatusTip(tr("Search the candidate's \"tune\" space on the GPU: every point verified before it is timed"));
    m_promoteAction = run->addAction(tr("&Promote…"), QKeySequence(tr("Ctrl+Shift+P")), m_promote.get(),
                                     &PromoteController::promote);
    m_promoteAction->setEnabled(false);
    m_cancelAction->setEnabled(false);
    run->addSeparator();
    run->addAction(tr("Run &Model from .cast Package…"), this, &MainWindow::showModelRunDialog)
        ->setStatusTip(tr("Run a packaged model with and without its verified kernels: substitution, end-to-end time, "
                          "errors against the original and fp64"));
    run->addSeparator();
    run->addAction(tr("&Recompile"), QKeySequence(tr("Ctrl+B")), this, [this] {
        if (auto* t = currentTab())
            t->compileNow();
    });
}

void MainWindow::buildViewMenu()
{
    QMenu* view = menuBar()->addMenu(tr("&View"));
    QDockWidget* assistant = dock("assistantDock");
    for (QDockWidget* d : findChildren<QDockWidget*>())
        if (d != assistant)
            view->addAction(d->toggleViewAction());
    // The Assistant's own entry: it shows the panel and brings it forward even when it is tabbed
    // behind another (its title bar's close button hides it).
    m_assistantAction = view->addAction(tr("&Assistant"), QKeySequence(tr("Ctrl+Shift+A")), this, [this, assistant] {
        assistant->show();
        assistant->raise();
        m_assistantDock->requestBox()->setFocus();
    });
    m_assistantAction->setStatusTip(tr("Ask a language model for a kernel: it proposes, KernelForge verifies and "
                                       "benchmarks every kernel it sends"));
    view->addSeparator();
    view->addAction(tr("Reset &Layout"), this, &MainWindow::resetLayout)
        ->setStatusTip(tr("The editor in the middle, the Workspace on the left, assembly, resources, task and registry "
                          "on the right, problems and runs below"));
}

QMenu* MainWindow::buildHelpMenu()
{
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About KernelForge"), this, [this] {
        QMessageBox::about(this, tr("About KernelForge"),
                           tr("<b>KernelForge %1</b><p>Write CUDA kernels that are proven correct and proven fast.</p>")
                               .arg(QStringLiteral(KF_VERSION)));
    });
    return help;
}

void MainWindow::openReportDialog()
{
    const QString file = QFileDialog::getOpenFileName(this, tr("Open Report"), QString(), tr("Reports (*.json);;All files (*)"));
    if (!file.isEmpty())
        openReport(file);
}

void MainWindow::showModelRunDialog()
{
    if (!m_modelRun)
        m_modelRun = new ModelRunDialog(this);
    m_modelRun->show();
    m_modelRun->raise();
    m_modelRun->activateWindow();
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = m_settings->recentWorkspaces();
    for (const QString& path : recent)
        m_recentMenu->addAction(path, this, [this, path] { openWorkspace(path); });
    m_recentMenu->setEnabled(!recent.isEmpty());
}

} // namespace kf::app
