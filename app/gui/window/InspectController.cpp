#include "app/gui/window/InspectController.h"

#include "app/gui/window/RunController.h"
#include "engine/repro/Repro.h"
#include "engine/task/Task.h"
#include "widgets/inspect/TensorInspector.h"
#include "widgets/runs/RunPanel.h"

#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>

namespace kf::app {

InspectController::InspectController(kf::ui::TensorInspector* inspector, QDockWidget* dock, kf::ui::RunPanel* panel,
                                     RunController* run, QObject* parent)
    : QObject(parent), m_inspector(inspector), m_dock(dock), m_run(run)
{
    m_askFolder = [this](const QString& suggestion) {
        return QFileDialog::getSaveFileName(m_inspector, tr("Export repro bundle (a new folder)"), suggestion, {}, nullptr,
                                            QFileDialog::ShowDirsOnly);
    };
    connect(panel, &kf::ui::RunPanel::inspectRequested, this, [this](int, const QString& caseDir) { open(caseDir); });
    connect(m_inspector, &kf::ui::TensorInspector::rerunRequested, this, [this](const QString& caseDir) {
        if (!m_run->rerunCase(caseDir))
            emit problem(tr("Could not re-run the case: a run is in progress or its task is unknown (see the Runs panel)."));
    });
    connect(m_inspector, &kf::ui::TensorInspector::shrinkRequested, this, [this](const QString& caseDir) {
        if (m_run->shrinkCase(caseDir))
            emit message(tr("Shrinking: probing smaller shapes on the GPU (progress in the Runs panel)"));
        else
            emit problem(tr("Could not start the shrink: a run is in progress or its task is unknown (see the Runs panel)."));
    });
    connect(m_inspector, &kf::ui::TensorInspector::exportReproRequested, this, [this](const QString& caseDir) {
        const QString suggestion = QDir::home().filePath("repro-" + QFileInfo(caseDir).fileName());
        const QString folder = m_askFolder ? m_askFolder(suggestion) : QString();
        if (!folder.isEmpty())
            exportRepro(caseDir, folder);
    });
}

bool InspectController::open(const QString& caseDir)
{
    m_dock->show();
    m_dock->raise();
    m_run->setOpenCase(caseDir);
    const bool ok = m_inspector->openCase(caseDir);
    if (!ok)
        emit problem(m_inspector->errorString());
    return ok;
}

bool InspectController::exportRepro(const QString& caseDir, const QString& bundleDir)
{
    const QString taskDir = m_run->taskDirForCase(caseDir);
    if (taskDir.isEmpty()) {
        emit problem(tr("The task of this case is not known in this session; re-run it (F5) and export the new case."));
        return false;
    }
    auto task = kf::loadTask(taskDir.toStdString());
    if (!task) {
        emit problem(QString::fromStdString(task.error().message()));
        return false;
    }
    auto bundle = kf::exportRepro(caseDir.toStdString(), task.value(), bundleDir.toStdString());
    if (!bundle) {
        emit problem(QString::fromStdString(bundle.error().message()));
        return false;
    }
    emit message(tr("Repro bundle written to %1; re-run it with: kforge verify --repro %1").arg(bundleDir));
    return true;
}

} // namespace kf::app
