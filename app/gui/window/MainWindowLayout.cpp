// The window's docks and their default layout (MainWindow.h).
#include "app/gui/window/MainWindow.h"

#include "app/gui/workspace/WorkspaceModel.h"
#include "widgets/assembly/AssemblyView.h"
#include "widgets/assistant/AssistantDock.h"
#include "widgets/diagnostics/DiagnosticsPanel.h"
#include "widgets/inspect/TensorInspector.h"
#include "widgets/occupancy/OccupancyPanel.h"
#include "widgets/profile/ProfilePanel.h"
#include "widgets/registry/RegistryBrowser.h"
#include "widgets/runs/RunPanel.h"
#include "widgets/task/TaskEditor.h"

#include <QDockWidget>
#include <QScrollArea>
#include <QTreeView>

namespace kf::app {

namespace {

QDockWidget* makeDock(QMainWindow* w, const QString& title, const QString& name, QWidget* content)
{
    auto* d = new QDockWidget(title, w);
    d->setObjectName(name);
    d->setWidget(content);
    return d;
}

} // namespace

void MainWindow::buildDocks()
{
    m_workspaceView = new QTreeView(this);
    m_workspaceView->setModel(m_workspaceModel);
    m_workspaceView->setHeaderHidden(true);
    m_workspaceView->setUniformRowHeights(true);
    m_workspaceView->setObjectName("workspaceTree");
    m_diagnostics = new kf::ui::DiagnosticsPanel(this);
    m_assembly = new kf::ui::AssemblyView(this);
    m_occupancy = new kf::ui::OccupancyPanel(this);
    auto* occupancyScroll = new QScrollArea(this);
    occupancyScroll->setWidget(m_occupancy);
    occupancyScroll->setWidgetResizable(true);
    occupancyScroll->setFrameShape(QFrame::NoFrame);
    m_taskEditor = new kf::ui::TaskEditor(this);
    m_runPanel = new kf::ui::RunPanel(this);
    m_registryBrowser = new kf::ui::RegistryBrowser(this);
    m_inspector = new kf::ui::TensorInspector(this);
    m_profilePanel = new kf::ui::ProfilePanel(this);
    m_assistantDock = new kf::ui::AssistantDock(this);

    QDockWidget* ws = makeDock(this, tr("Workspace"), "workspaceDock", m_workspaceView);
    QDockWidget* problems = makeDock(this, tr("Problems"), "problemsDock", m_diagnostics);
    QDockWidget* assembly = makeDock(this, tr("Assembly"), "assemblyDock", m_assembly);
    QDockWidget* occupancy = makeDock(this, tr("Resources · Occupancy"), "occupancyDock", occupancyScroll);
    QDockWidget* task = makeDock(this, tr("Task"), "taskDock", m_taskEditor);
    QDockWidget* runs = makeDock(this, tr("Runs"), "runsDock", m_runPanel);
    QDockWidget* registry = makeDock(this, tr("Registry"), "registryDock", m_registryBrowser);
    QDockWidget* inspector = makeDock(this, tr("Inspector"), "inspectorDock", m_inspector);
    QDockWidget* profile = makeDock(this, tr("Profile"), "profileDock", m_profilePanel);
    QDockWidget* assistant = makeDock(this, tr("Assistant"), "assistantDock", m_assistantDock);
    addDockWidget(Qt::LeftDockWidgetArea, ws);
    addDockWidget(Qt::RightDockWidgetArea, assembly);
    addDockWidget(Qt::RightDockWidgetArea, occupancy);
    addDockWidget(Qt::RightDockWidgetArea, task);
    tabifyDockWidget(assembly, occupancy);
    tabifyDockWidget(occupancy, task);
    addDockWidget(Qt::RightDockWidgetArea, registry);
    tabifyDockWidget(task, registry);
    addDockWidget(Qt::RightDockWidgetArea, assistant);
    tabifyDockWidget(registry, assistant);
    assembly->raise();
    addDockWidget(Qt::BottomDockWidgetArea, problems);
    addDockWidget(Qt::BottomDockWidgetArea, runs);
    tabifyDockWidget(problems, runs);
    addDockWidget(Qt::BottomDockWidgetArea, inspector);
    tabifyDockWidget(runs, inspector);
    addDockWidget(Qt::BottomDockWidgetArea, profile);
    tabifyDockWidget(inspector, profile);
    problems->raise();
}

void MainWindow::applyDefaultSizes()
{
    resizeDocks({dock("workspaceDock"), dock("assemblyDock")}, {230, width() * 45 / 100}, Qt::Horizontal);
    resizeDocks({dock("problemsDock")}, {height() / 4}, Qt::Vertical);
}

QDockWidget* MainWindow::dock(const QString& objectName) const
{
    return findChild<QDockWidget*>(objectName);
}

} // namespace kf::app
