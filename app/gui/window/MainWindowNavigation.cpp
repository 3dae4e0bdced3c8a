// The window's keyboard navigation, with Qt Creator's keys (MainWindow.h): Edit ▸ Locate
// (Ctrl+K), Find in Workspace (Ctrl+Shift+F) and its Search Results panel, Follow Symbol Under
// Cursor (F2), and Help ▸ Keyboard Shortcuts. The logic lives in widgets/navigation.
#include "app/gui/window/MainWindow.h"

#include "app/gui/window/CandidateTab.h"
#include "app/gui/workspace/Workspace.h"
#include "widgets/editor/KernelEditor.h"
#include "widgets/navigation/FindInWorkspacePanel.h"
#include "widgets/navigation/FollowSymbol.h"
#include "widgets/navigation/LocatorPopup.h"
#include "widgets/navigation/ShortcutsDialog.h"
#include "widgets/task/TaskEditor.h"

#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QMenu>
#include <QMenuBar>
#include <QShortcut>
#include <QStatusBar>
#include <QTabWidget>

namespace kf::app {

namespace {

// The open editors' texts by cleaned path: what a search or a lookup reads before the disk.
QHash<QString, QString> openBuffers(const QList<CandidateTab*>& tabs)
{
    QHash<QString, QString> buffers;
    for (CandidateTab* t : tabs)
        buffers.insert(QDir::cleanPath(t->filePath()), t->text());
    return buffers;
}

// The selection if it is on one line, else the word under the cursor.
QString wordForSearch(kf::ui::KernelEditor* e)
{
    const QString selected = e->selectedText();
    if (!selected.isEmpty() && !selected.contains(QLatin1Char('\n')))
        return selected;
    int line = 0, index = 0;
    e->getCursorPosition(&line, &index);
    const QString text = e->text(line);
    return kf::ui::identifierAt(text, int(QString::fromUtf8(text.toUtf8().left(index)).size()));
}

} // namespace

void MainWindow::buildNavigation(QMenu* edit, QMenu* help)
{
    m_locator = new kf::ui::LocatorPopup(m_tabs, this);
    connect(m_locator, &kf::ui::LocatorPopup::activated, this, [this](const kf::ui::LocatorItem& item) {
        CandidateTab* tab = openFile(item.path);
        if (tab && item.kind == kf::ui::LocatorItem::Kind::Kernel)
            tab->editor()->goTo(item.line, item.column);
        else if (tab)
            tab->editor()->setFocus(Qt::OtherFocusReason);
    });

    m_findPanel = new kf::ui::FindInWorkspacePanel(this);
    m_findPanel->setScopeProvider([this] {
        return kf::ui::FindInWorkspacePanel::Scope{m_workspace->root(), openBuffers(tabs())};
    });
    connect(m_findPanel, &kf::ui::FindInWorkspacePanel::openRequested, this, [this](const QString& path, int line, int column) {
        if (CandidateTab* tab = openFile(path); tab && line > 0)
            tab->editor()->goTo(line, column);
    });
    auto* results = new QDockWidget(tr("Search Results"), this);
    results->setObjectName("searchResultsDock");
    results->setWidget(m_findPanel);
    addDockWidget(Qt::BottomDockWidgetArea, results);
    if (QDockWidget* problems = dock("problemsDock")) {
        tabifyDockWidget(problems, results);
        problems->raise();
        // View lists every panel; this one is made after that menu, so it joins it here.
        for (QAction* top : menuBar()->actions())
            if (QMenu* m = top->menu(); m && m->actions().contains(problems->toggleViewAction())) {
                m->insertAction(problems->toggleViewAction(), results->toggleViewAction());
                break;
            }
    }

    edit->addSeparator();
    edit->addAction(tr("&Locate File or Kernel…"), QKeySequence(tr("Ctrl+K")), this, &MainWindow::showLocator)
        ->setStatusTip(tr("Open a workspace file or go to a kernel by typing part of its name (k: kernels, f: files)"));
    edit->addAction(tr("&Find in Workspace…"), QKeySequence(tr("Ctrl+Shift+F")), this, &MainWindow::findInWorkspace)
        ->setStatusTip(tr("Search every file of the workspace, open editors' unsaved text included"));
    edit->addAction(tr("F&ollow Symbol Under Cursor"), QKeySequence(Qt::Key_F2), this, &MainWindow::followSymbolUnderCursor)
        ->setStatusTip(tr("Open the included header, or go to the definition of the function, macro or type under the "
                          "cursor in this task"));

    // The Task panel's own Ctrl+S beside File ▸ Save made the key ambiguous whenever the panel
    // had the focus, and Qt then fires neither. File ▸ Save already saves the panel when it has
    // the focus (saveCurrent), so the panel's binding is left to the menu.
    for (QShortcut* s : m_taskEditor->findChildren<QShortcut*>())
        if (s->key() == QKeySequence(QKeySequence::Save))
            s->setEnabled(false);

    QAction* keys = new QAction(tr("&Keyboard Shortcuts"), help);
    keys->setStatusTip(tr("Every menu action that has a shortcut"));
    connect(keys, &QAction::triggered, this, [this] {
        auto* dialog = new kf::ui::ShortcutsDialog(menuBar(), this);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        dialog->show();
    });
    help->insertAction(help->actions().value(0), keys);
}

void MainWindow::showLocator()
{
    QStringList files;
    for (const TaskEntry& e : m_workspace->tasks()) {
        QStringList extra;
        if (e.task) {
            for (const kf::Candidate& c : e.task->candidates)
                extra << QString::fromStdString(c.file);
            if (!e.task->reference.torchscript.empty())
                extra << QString::fromStdString(e.task->reference.torchscript.string());
        }
        files << kf::ui::taskFiles(e.dir, extra);
    }
    // Open files outside any task (a header opened with F2 from elsewhere) stay findable.
    for (CandidateTab* t : tabs())
        if (!files.contains(QDir::cleanPath(t->filePath())))
            files << QDir::cleanPath(t->filePath());
    m_locator->scan(files, m_workspace->root(), openBuffers(tabs()));
    m_locator->popup();
}

void MainWindow::findInWorkspace()
{
    QDockWidget* results = dock("searchResultsDock");
    results->show();
    results->raise();
    m_findPanel->focusQuery(currentTab() ? wordForSearch(currentTab()->editor()) : QString());
}

void MainWindow::followSymbolUnderCursor()
{
    CandidateTab* tab = currentTab();
    if (!tab) {
        statusBar()->showMessage(tr("Open a kernel to follow a symbol in it."), 8000);
        return;
    }
    int line = 0, index = 0;
    tab->editor()->getCursorPosition(&line, &index);
    const QString lineText = tab->editor()->text(line);
    const int column = int(QString::fromUtf8(lineText.toUtf8().left(index)).size());
    const QHash<QString, QString> buffers = openBuffers(tabs());
    const kf::ui::FollowOutcome outcome =
        kf::ui::followSymbol(tab->filePath(), tab->text(), line + 1, column, tab->taskDir(),
                             [&buffers](const QString& path) -> std::optional<QString> {
                                 if (const auto it = buffers.constFind(path); it != buffers.constEnd())
                                     return *it;
                                 QFile f(path);
                                 if (!f.open(QIODevice::ReadOnly))
                                     return std::nullopt;
                                 return QString::fromUtf8(f.readAll());
                             });
    if (!outcome.target) {
        statusBar()->showMessage(outcome.message, 8000);
        return;
    }
    CandidateTab* target = openFile(outcome.target->path);
    if (target && outcome.target->line > 0)
        target->editor()->goTo(outcome.target->line, outcome.target->column);
    else if (target)
        target->editor()->setFocus(Qt::OtherFocusReason);
}

} // namespace kf::app
