// The main window's files: opening workspaces and candidates into tabs, saving (the task's files
// before a run), closing with unsaved edits, new tasks and candidates. MainWindow.cpp builds the
// window and routes its actions.
#include "app/gui/window/MainWindow.h"

#include "app/gui/recovery/RecoveryStore.h"
#include "app/gui/registry/RegistryService.h"
#include "app/gui/settings/Settings.h"
#include "app/gui/settings/SettingsDialog.h"
#include "app/gui/window/AgentController.h"
#include "app/gui/window/AssistantController.h"
#include "app/gui/window/CandidateTab.h"
#include "app/gui/window/ImportDialog.h"
#include "app/gui/window/CompileController.h"
#include "app/gui/window/GenerateDialog.h"
#include "app/gui/window/PromoteController.h"
#include "app/gui/window/InspectController.h"
#include "app/gui/window/RegistryController.h"
#include "app/gui/window/RunController.h"
#include "app/gui/window/StatusBar.h"
#include "app/gui/window/Theme.h"
#include "app/gui/workspace/ExampleWorkspace.h"
#include "app/gui/workspace/Templates.h"
#include "app/gui/workspace/Workspace.h"
#include "app/gui/workspace/WorkspaceModel.h"
#include "engine/compile/SourceEncoding.h"
#include "engine/core/Files.h"
#include "engine/registry/Registry.h"
#include "widgets/assembly/AssemblyView.h"
#include "widgets/diagnostics/DiagnosticsPanel.h"
#include "widgets/editor/KernelEditor.h"
#include "widgets/occupancy/OccupancyPanel.h"
#include "widgets/inspect/TensorInspector.h"
#include "widgets/profile/ProfilePanel.h"
#include "engine/protocol/ProfileReport.h"
#include "widgets/registry/RegistryBrowser.h"
#include "widgets/runs/RunPanel.h"
#include "widgets/task/JsonTextPane.h"
#include "widgets/task/TaskEditor.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
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

#include <algorithm>
#include <optional>
#include <utility>

namespace kf::app {

namespace {

// The engine's reader, so a failure names the file and the reason the same way everywhere.
std::optional<QByteArray> readBytes(const QString& path, QString* error)
{
    auto bytes = kf::readFileBytes(path.toStdString());
    if (!bytes) {
        if (error)
            *error = QString::fromStdString(bytes.error().message());
        return std::nullopt;
    }
    return QByteArray::fromStdString(*bytes);
}

} // namespace

bool MainWindow::openWorkspace(const QString& root, QString* error)
{
    QString why;
    if (!m_workspace->open(root, &why)) {
        if (error)
            *error = why;
        m_status->showMessage(why, 8000);
        return false;
    }
    m_settings->addRecentWorkspace(m_workspace->root());
    m_diagnostics->setBaseDirectory(m_workspace->root());
    // The registry: $KF_REGISTRY, the workspace's kernelforge-workspace.json, or the user's default.
    if (auto reg = kf::Registry::resolveDirectory({}, m_workspace->root().toStdString())) {
        m_promote->setRegistryDirectory(QString::fromStdString(reg->string()));
        m_registry->setDirectory(QString::fromStdString(reg->string()));
    }
    else
        m_status->showMessage(QString::fromStdString(reg.error().message()), 15000);
    if (m_recentMenu)
        rebuildRecentMenu();
    m_workspaceView->expandAll();
    updateTitle();
    openDefaultFile();
    return true;
}

void MainWindow::openDefaultFile()
{
    // Show something real straight away: the first candidate of the first task that loads.
    if (!tabs().isEmpty())
        return;
    for (const TaskEntry& e : m_workspace->tasks()) {
        if (e.task && !e.task->candidates.empty()) {
            const auto& cands = e.task->candidates;
            const auto& c = cands.size() > 1 ? cands[1] : cands[0]; // the optimised one, when there is one
            openFile(e.dir + "/" + QString::fromStdString(c.file));
            return;
        }
    }
}

bool MainWindow::diagnosticIsIn(const QString& diagnosticFile, const QString& path)
{
    if (diagnosticFile.isEmpty())
        return true;   // NVRTC names the program, which is the candidate
    return QDir::cleanPath(diagnosticFile) == QDir::cleanPath(path) ||
           (QFileInfo(diagnosticFile).isRelative() && QFileInfo(diagnosticFile).fileName() == QFileInfo(path).fileName());
}

CandidateTab* MainWindow::goToDiagnostic(const QString& file, int line, int column, CandidateTab* from)
{
    // A task that does not load (TaskDiagnostics.h): its task.json in the Task panel's JSON tab,
    // whose text is the file's, at the place.
    if (const QFileInfo json(file); json.isAbsolute() && json.fileName() == QLatin1String("task.json")) {
        showTaskFor(json.absolutePath());
        if (QDir::cleanPath(m_taskEditor->filePath()) == QDir::cleanPath(json.absoluteFilePath())) {
            dock("taskDock")->show();
            dock("taskDock")->raise();
            m_taskEditor->goToText(std::max(line, 1), std::max(column, 1));
        }
        return nullptr;
    }
    CandidateTab* target = from ? from : currentTab();
    if (!target || !diagnosticIsIn(file, target->filePath())) {
        const QList<CandidateTab*> open = tabs();
        const auto it = std::find_if(open.begin(), open.end(),
                                     [&](CandidateTab* t) { return diagnosticIsIn(file, t->filePath()); });
        target = it == open.end() ? nullptr : *it;
    }
    if (!target && QFileInfo(file).isAbsolute() && QFileInfo(file).isFile())
        target = openFile(file);   // an included header
    if (!target)
        return nullptr;
    m_tabs->setCurrentWidget(target);
    target->editor()->goTo(std::max(line, 1), std::max(column, 1));
    target->editor()->setFocus();
    return target;
}

CandidateTab* MainWindow::openFile(const QString& path)
{
    const QString abs = QFileInfo(path).absoluteFilePath();
    if (QFileInfo(abs).fileName() == "task.json") {
        showTaskFor(QFileInfo(abs).absolutePath());
        return nullptr;
    }
    for (CandidateTab* t : tabs())
        if (t->filePath() == abs) {
            m_tabs->setCurrentWidget(t);
            return t;
        }
    QString error;
    const std::optional<QByteArray> bytes = readBytes(abs, &error);
    if (!bytes) {
        m_status->showMessage(error, 8000);
        return nullptr;
    }
    // A file that is not UTF-8 opens read-only under its banner (CandidateTab.h).
    auto* tab = new CandidateTab(abs, *bytes, m_settings->compileDebounceMs(), m_tabs);
    connect(tab, &CandidateTab::titleChanged, this, [this](CandidateTab* t) {
        m_tabs->setTabText(m_tabs->indexOf(t), t->title());
        if (t == currentTab())
            updatePromoteTarget(); // saved or edited: the evidence may no longer match
    });
    connect(tab, &CandidateTab::snapshotDue, this, [this](CandidateTab* t) {
        if (t->isModified())
            m_recovery->save(t->filePath(), t->text());
    });
    connect(tab->editor(), &kf::ui::KernelEditor::cursorPositionChanged, this, [this, tab](int line, int index) {
        if (tab == currentTab()) {
            m_status->setCursor(line + 1, index + 1);
            m_assembly->highlightSourceLine(line + 1);
        }
    });
    // The last verification's compute-sanitizer findings outlive the tab that showed them.
    if (auto it = m_runDiagnostics.constFind(abs); it != m_runDiagnostics.constEnd())
        tab->setRunDiagnostics(it->first, it->second);
    const int index = m_tabs->addTab(tab, tab->title());
    m_tabs->setTabToolTip(index, abs);
    m_compile->addTab(tab);
    m_tabs->setCurrentIndex(index);
    return tab;
}

CandidateTab* MainWindow::currentTab() const
{
    return qobject_cast<CandidateTab*>(m_tabs->currentWidget());
}

QList<CandidateTab*> MainWindow::tabs() const
{
    QList<CandidateTab*> out;
    for (int i = 0; i < m_tabs->count(); ++i)
        if (auto* t = qobject_cast<CandidateTab*>(m_tabs->widget(i)))
            out.append(t);
    return out;
}

void MainWindow::onCurrentTabChanged(int)
{
    CandidateTab* tab = currentTab();
    m_compile->setCurrentTab(tab);
    updatePromoteTarget();
    if (tab) {
        showTaskFor(tab->taskDir());
        tab->editor()->setFocus();
    }
    updateTitle();
}

void MainWindow::showTaskFor(const QString& taskDir)
{
    const QString jsonPath = taskDir + "/task.json";
    if (m_taskEditor->filePath() == jsonPath && m_taskEditor->isModified())
        return; // keep the user's unsaved task edits
    const std::optional<QByteArray> bytes = readBytes(jsonPath, nullptr);
    if (!bytes)
        return;
    // The file's own text, so that the JSON tab's lines are the file's (a problem in Problems
    // opens at its line) and a syntax error shows the text that has it, not an empty task.
    m_taskEditor->setText(QString::fromUtf8(*bytes), jsonPath, taskDir);
}

void MainWindow::onTaskEditorSave()
{
    m_taskEditor->flushPendingEdits();
    // Text that does not parse is saved as typed (the form is read-only then): never the last
    // document that parsed, which would drop what the user typed since.
    const QString typed = m_taskEditor->jsonPane()->text();
    const std::string text = m_taskEditor->jsonPane()->syntaxError().isEmpty() ? m_taskEditor->document().dump(2) + "\n"
                                                                                : typed.toStdString();
    // task.json in another encoding was shown as a UTF-8 reader sees it: writing that back would
    // replace the file's text with the damage.
    if (auto disk = kf::readFileBytes(m_taskEditor->filePath().toStdString())) {
        if (const kf::EncodingCheck check = kf::checkSourceEncoding(*disk); !check.isUtf8()) {
            m_status->showMessage(tr("task.json %1: not saved, so as not to replace it; save it as UTF-8 in the editor "
                                     "that wrote it.")
                                      .arg(QString::fromStdString(kf::encodingProblem(check))),
                                  15000);
            return;
        }
    }
    auto written = kf::writeFileAtomic(m_taskEditor->filePath().toStdString(), text);
    if (!written) {
        QMessageBox::warning(this, tr("Save task"), QString::fromStdString(written.error().message()));
        return;
    }
    m_taskEditor->setModified(false);
    m_workspace->reload(m_taskEditor->taskDir());
    m_status->showMessage(tr("Saved %1").arg(m_taskEditor->filePath()), 4000);
}

bool MainWindow::saveCurrent()
{
    if (m_taskEditor->isAncestorOf(QApplication::focusWidget())) {
        onTaskEditorSave();
        return !m_taskEditor->isModified();
    }
    CandidateTab* t = currentTab();
    if (!t)
        return true;
    QString error;
    if (!t->save(&error)) {
        if (t->isEncodingLocked()) // the banner already says why: the status bar repeats it, no dialog
            m_status->showMessage(error, 15000);
        else
            QMessageBox::warning(this, tr("Save"), error);
        return false;
    }
    m_recovery->remove(t->filePath());
    m_status->showMessage(tr("Saved %1").arg(t->filePath()), 4000);
    return true;
}

bool MainWindow::saveAll()
{
    QString error;
    for (CandidateTab* t : tabs()) {
        if (t->isModified() && !t->save(&error)) {
            QMessageBox::warning(this, tr("Save"), error);
            return false;
        }
        m_recovery->remove(t->filePath());
    }
    if (m_taskEditor->isModified())
        onTaskEditorSave();
    return true;
}

bool MainWindow::saveTaskFiles(const QString& taskDir, QString* error)
{
    for (CandidateTab* t : tabs()) {
        if (t->taskDir() != taskDir || !t->isModified())
            continue;
        if (!t->save(error))
            return false;
        m_recovery->remove(t->filePath());
    }
    if (m_taskEditor->taskDir() == taskDir && m_taskEditor->isModified()) {
        onTaskEditorSave();
        if (m_taskEditor->isModified()) {
            if (error)
                *error = tr("task.json could not be written");
            return false;
        }
    }
    return true;
}

void MainWindow::closeTab(int index)
{
    auto* t = qobject_cast<CandidateTab*>(m_tabs->widget(index));
    if (!t)
        return;
    if (t->isModified()) {
        const auto answer = QMessageBox::question(this, tr("Close %1").arg(t->fileName()),
                                                  tr("%1 has unsaved changes. Save them?").arg(t->fileName()),
                                                  QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
        if (answer == QMessageBox::Cancel)
            return;
        QString error;
        if (answer == QMessageBox::Save && !t->save(&error)) {
            QMessageBox::warning(this, tr("Save"), error);
            return;
        }
    }
    m_recovery->remove(t->filePath());
    m_compile->removeTab(t);
    m_tabs->removeTab(index);
    t->deleteLater();
}

void MainWindow::newTask()
{
    bool ok = false;
    const QString name = QInputDialog::getText(this, tr("New Task"),
                                               tr("Task name (letters, digits, '_' and '-'):"), QLineEdit::Normal,
                                               {}, &ok);
    if (!ok || name.isEmpty())
        return;
    auto created = createTask(m_workspace->root(), name);
    if (!created) {
        QMessageBox::warning(this, tr("New Task"), QString::fromStdString(created.error().message()));
        return;
    }
    m_workspace->rescan();
    const QString dir = created.value();
    if (auto t = kf::loadTask(dir.toStdString()); t && !t->candidates.empty())
        openFile(dir + "/" + QString::fromStdString(t->candidates.front().file));
    showTaskFor(dir);
}

void MainWindow::newCandidate()
{
    CandidateTab* current = currentTab();
    QString taskDir = current ? current->taskDir() : QString();
    if (taskDir.isEmpty()) {
        const QModelIndex i = m_workspaceView->currentIndex();
        taskDir = i.data(WorkspaceModel::TaskDirRole).toString();
    }
    if (taskDir.isEmpty()) {
        QMessageBox::information(this, tr("New Candidate"), tr("Select a task in the Workspace first."));
        return;
    }
    bool ok = false;
    const QString name = QInputDialog::getText(this, tr("New Candidate"),
                                               tr("File name for the new candidate of %1 (a copy of the current "
                                                  "kernel, with its launch plan):")
                                                   .arg(QFileInfo(taskDir).fileName()),
                                               QLineEdit::Normal, "candidate.cu", &ok);
    if (!ok || name.isEmpty())
        return;
    auto created = createCandidate(taskDir, name, current ? current->filePath() : QString());
    if (!created) {
        QMessageBox::warning(this, tr("New Candidate"), QString::fromStdString(created.error().message()));
        return;
    }
    m_workspace->reload(taskDir);
    openFile(created.value());
}

QString MainWindow::selectedTaskDir() const
{
    CandidateTab* current = currentTab();
    QString taskDir = current ? current->taskDir() : QString();
    if (taskDir.isEmpty())
        taskDir = m_workspaceView->currentIndex().data(WorkspaceModel::TaskDirRole).toString();
    return taskDir;
}

void MainWindow::addCandidateFromFile()
{
    const QString taskDir = selectedTaskDir();
    if (taskDir.isEmpty()) {
        QMessageBox::information(this, tr("Add Candidate"), tr("Select a task in the Workspace first."));
        return;
    }
    m_agent->addCandidateInteractive(taskDir);
}

void MainWindow::startSynthesis(const QString& request, const QString& model)
{
    QString taskDir = selectedTaskDir();
    if (taskDir.isEmpty()) {
        taskDir = QFileDialog::getExistingDirectory(this, tr("Assistant: an empty folder for the new task"), m_workspace->root());
        if (taskDir.isEmpty())
            return;
        // The proposed task is written into this folder: never the workspace or a folder with files.
        if (!QDir(taskDir).isEmpty(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden)) {
            QMessageBox::information(this, tr("Assistant"),
                                     tr("%1 is not empty. Choose or create an empty folder for the new task.").arg(taskDir));
            return;
        }
    } else {
        // The run freezes task.json as it is on disk and adds its kernel there at the end: unsaved
        // edits would either be lost or undo the added candidate, so they are saved first.
        QString error;
        if (!saveTaskFiles(taskDir, &error)) {
            QMessageBox::warning(this, tr("Assistant"), tr("Save the task's files before a synthesis run: %1").arg(error));
            return;
        }
    }
    dock("assistantDock")->raise();
    m_assistant->start(request, model, taskDir);
}

void MainWindow::importProblem()
{
    ImportDialog dialog(m_workspace->root(), this);
    connect(&dialog, &ImportDialog::imported, this, [this](const QString& dir, const QStringList&) {
        m_workspace->rescan();
        showTaskFor(dir);
        statusBar()->showMessage(tr("Imported %1: Edit ▸ Copy Agent Prompt hands it to an agent").arg(QFileInfo(dir).fileName()),
                                 10000);
    });
    dialog.exec();
}

void MainWindow::copyAgentPrompt()
{
    const QString taskDir = selectedTaskDir();
    if (taskDir.isEmpty()) {
        QMessageBox::information(this, tr("Copy Agent Prompt"), tr("Select a task in the Workspace first."));
        return;
    }
    statusBar()->showMessage(tr("Writing the agent prompt for %1…").arg(QFileInfo(taskDir).fileName()));
    m_agent->copyPrompt(taskDir);
}

void MainWindow::newCandidateFromReference()
{
    const QString taskDir = selectedTaskDir();
    if (taskDir.isEmpty()) {
        QMessageBox::information(this, tr("New Candidate from Reference"), tr("Select a task in the Workspace first."));
        return;
    }
    GenerateDialog dialog(this);
    dialog.prepare(taskDir);
    connect(&dialog, &GenerateDialog::candidateAdded, this, [this](const QString& dir, const QString& file) {
        m_workspace->reload(dir);
        openFile(file);
        statusBar()->showMessage(tr("Added %1 to %2: press F5 to verify it").arg(QFileInfo(file).fileName(), QFileInfo(dir).fileName()),
                                 8000);
    });
    dialog.exec();
}

void MainWindow::openWorkspaceDialog()
{
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open Workspace"), m_workspace->root());
    if (dir.isEmpty())
        return;
    QString error;
    if (!openWorkspace(dir, &error))
        QMessageBox::warning(this, tr("Open Workspace"), error);
}

} // namespace kf::app
