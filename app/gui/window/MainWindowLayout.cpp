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
#include <QStyle>
#include <QTabWidget>
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

// A panel whose own minimum would hold its dock area open (the inspector's three panes, the
// Assistant's conversation) scrolls instead below that size, so the editor keeps its share.
QScrollArea* scrollable(QWidget* panel, QWidget* parent)
{
    auto* area = new QScrollArea(parent);
    area->setWidget(panel);
    area->setWidgetResizable(true);
    area->setFrameShape(QFrame::NoFrame);
    return area;
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
    QScrollArea* occupancyScroll = scrollable(m_occupancy, this);
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
    QDockWidget* runs = makeDock(this, tr("Runs"), "runsDock", scrollable(m_runPanel, this));
    QDockWidget* registry = makeDock(this, tr("Registry"), "registryDock", m_registryBrowser);
    QDockWidget* inspector = makeDock(this, tr("Inspector"), "inspectorDock", scrollable(m_inspector, this));
    QDockWidget* profile = makeDock(this, tr("Profile"), "profileDock", m_profilePanel);
    QDockWidget* assistant = makeDock(this, tr("Assistant"), "assistantDock", scrollable(m_assistantDock, this));
    // The editor is the window's reason to exist: like Qt Creator and VS Code, the Workspace and
    // the right-hand panels run the full height and the bottom panels sit under the editor only.
    setCorner(Qt::TopLeftCorner, Qt::LeftDockWidgetArea);
    setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
    setCorner(Qt::TopRightCorner, Qt::RightDockWidgetArea);
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
    setTabPosition(Qt::AllDockWidgetAreas, QTabWidget::North);
    addDockWidget(Qt::LeftDockWidgetArea, ws);
    // Right: what the compiler says about the kernel, and the task it belongs to.
    addDockWidget(Qt::RightDockWidgetArea, assembly);
    for (QDockWidget* d : {occupancy, task, registry}) {
        addDockWidget(Qt::RightDockWidgetArea, d);
        tabifyDockWidget(assembly, d);
    }
    assembly->raise();
    // Bottom: what happened when it ran (and the Assistant, a conversation that needs width).
    addDockWidget(Qt::BottomDockWidgetArea, problems);
    for (QDockWidget* d : {runs, inspector, profile, assistant}) {
        addDockWidget(Qt::BottomDockWidgetArea, d);
        tabifyDockWidget(problems, d);
    }
    problems->raise();
}

QRect MainWindow::defaultGeometry(const QRect& available)
{
    // 90 % of the screen, centred: a first start looks like an application, not a dialog.
    const QSize size(available.width() * 9 / 10, available.height() * 9 / 10);
    return QStyle::alignedRect(Qt::LeftToRight, Qt::AlignCenter, size, available);
}

void MainWindow::applyDefaultSizes()
{
    // Workspace ≈ 15 %, right-hand panels ≈ 30 % of the width, bottom panels ≈ 25 % of the height:
    // the editor keeps more than half of the window in both directions.
    resizeDocks({dock("workspaceDock"), dock("assemblyDock")}, {width() * 15 / 100, width() * 30 / 100}, Qt::Horizontal);
    resizeDocks({dock("problemsDock")}, {height() / 4}, Qt::Vertical);
}

void MainWindow::resetLayout()
{
    restoreState(m_defaultState, kLayoutVersion);
    applyDefaultSizes();
}

QDockWidget* MainWindow::dock(const QString& objectName) const
{
    return findChild<QDockWidget*>(objectName);
}

} // namespace kf::app
