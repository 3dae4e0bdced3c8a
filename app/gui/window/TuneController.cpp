#include "app/gui/window/TuneController.h"

#include "app/gui/services/RunService.h"
#include "app/gui/window/CandidateTab.h"
#include "app/gui/window/MainWindow.h"
#include "app/gui/window/RunController.h"
#include "app/gui/workspace/Workspace.h"
#include "widgets/tune/TuneFigures.h"
#include "widgets/tune/TuneView.h"

#include <QDialog>
#include <QDir>
#include <QMessageBox>
#include <QVBoxLayout>

namespace kf::app {

namespace {
QString qs(const std::string& s) { return QString::fromStdString(s); }
} // namespace

TuneController::TuneController(MainWindow* window, RunController* run)
    : QObject(window)
    , m_window(window)
    , m_run(run)
{
    connectService();
}

std::optional<std::string> TuneController::chooseCandidate(const Task& task, const std::string& current)
{
    if (const Candidate* c = task.findCandidate(current); c && !c->tune.empty())
        return current;
    for (const Candidate& c : task.candidates)
        if (!c.tune.empty())
            return c.file;
    return std::nullopt;
}

void TuneController::ensureWindow()
{
    if (m_dialog)
        return;
    m_dialog = new QDialog(m_window);
    m_dialog->setObjectName(QStringLiteral("tuneWindow"));
    m_dialog->setWindowTitle(tr("Tune"));
    m_dialog->setWindowFlag(Qt::WindowMaximizeButtonHint);
    m_dialog->setModal(false);
    m_view = new kf::ui::TuneView(m_dialog);
    auto* layout = new QVBoxLayout(m_dialog);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(m_view);
    m_dialog->resize(1100, 760);
    connect(m_view, &kf::ui::TuneView::startRequested, this, &TuneController::start);
    connect(m_view, &kf::ui::TuneView::cancelRequested, m_run, &RunController::cancel);
    connect(m_view, &kf::ui::TuneView::openRequested, this, &TuneController::openPoint);
}

void TuneController::show(CandidateTab* tab)
{
    ensureWindow();
    m_dialog->show();
    m_dialog->raise();
    m_dialog->activateWindow();
    if (m_view->isRunning())
        return;   // the search under way stays in view
    m_taskDir.clear();
    m_file.clear();
    if (!tab || tab->taskDir().isEmpty())
        return m_view->setTarget({}, tr("Open a candidate kernel of a task first (double-click one in the Workspace)."));
    auto task = loadTask(tab->taskDir().toStdString());
    if (!task)
        return m_view->setTarget({}, qs(task.error().message()));
    const auto file = chooseCandidate(*task, tab->fileName().toStdString());
    if (!file)
        return m_view->setTarget({}, tr("No candidate of task %1 has a \"tune\" block: add one to a candidate in task.json "
                                        "(the values its defines may take, docs/tune.md).")
                                         .arg(qs(task->name)));
    auto space = tune::enumerate(*task, *task->findCandidate(*file));
    if (!space)
        return m_view->setTarget({}, qs(space.error().message()));
    m_taskDir = tab->taskDir();
    m_file = qs(*file);
    QStringList names;
    for (const auto& [name, value] : space->points.front().values)
        names << qs(name);
    m_view->setTarget(tr("%1 / %2 · %3 points of %4").arg(qs(task->name), m_file).arg(space->points.size()).arg(names.join(" × ")));
    m_dialog->setWindowTitle(tr("Tune %1 / %2").arg(qs(task->name), m_file));
}

void TuneController::start(double budgetS)
{
    if (m_file.isEmpty())
        return;
    m_written.clear();
    m_winner.reset();
    m_view->begin();
    m_id = m_run->startTune(m_taskDir, m_file, budgetS);
    if (m_id == 0)
        m_view->finish(false, m_run->isRunning() ? tr("A run is on the runner: wait for it or cancel it (Shift+F5), then tune.")
                                                 : tr("The search did not start: the Runs panel says why."));
}

void TuneController::connectService()
{
    RunService* s = m_run->service();
    connect(s, &RunService::tuneProgress, this, [this](quint64 id, const TuneStep& step) {
        if (id == m_id && m_view)
            m_view->step(step.stage, step.done, step.total, step.elapsedS, step.point);
    });
    connect(s, &RunService::tuneFinished, this, [this](quint64 id, const tune::Outcome& o, const QString& written) {
        if (id != m_id || !m_view)
            return;
        m_view->setOutcome(o);
        if (const tune::PointResult* w = o.best())
            m_winner = w->point;
        m_written = written;
        if (!written.isEmpty())
            m_window->workspace()->reload(m_taskDir);   // the new candidate in the tree and the Task panel
    });
    connect(s, &RunService::reportReady, this, [this](quint64 id, const protocol::RunReport& r) {
        if (id == m_id && m_view && r.bench())
            m_view->setCompileMs(kf::ui::tunefig::compileMs(*r.bench()));
    });
    connect(s, &RunService::runFinished, this, [this](quint64 id, bool ok, const QString& sentence) {
        if (id == m_id && m_view && m_view->isRunning())
            m_view->finish(ok, sentence);
    });
}

void TuneController::openPoint(const tune::Point& point)
{
    QString file = m_winner && point == *m_winner ? m_written : QString();
    if (file.isEmpty()) {
        auto task = loadTask(m_taskDir.toStdString());
        if (!task) {
            QMessageBox::warning(m_dialog, tr("Open as Candidate"), qs(task.error().message()));
            return;
        }
        auto written = tune::writeBack(*task, m_file.toStdString(), point,
                                       "point " + point.label() + " of " + m_file.toStdString() + "'s tune space, opened from Run ▸ Tune");
        if (!written) {
            QMessageBox::warning(m_dialog, tr("Open as Candidate"), qs(written.error().message()));
            return;
        }
        file = qs(written->filename().string());
        m_window->workspace()->reload(m_taskDir);
    }
    m_window->openFile(QDir(m_taskDir).filePath(file));
    m_window->raise();
    m_window->activateWindow();
}

} // namespace kf::app
