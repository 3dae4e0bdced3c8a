#pragma once
// Run ▸ Tune: the Tune window (widgets/tune/TuneView) for the current task's candidate, the search
// handed to the run service through RunController::startTune (its worker owns the runner), the
// search's steps and outcome shown as they come, and Open as Candidate (tune::writeBack under
// tune::tunedFileName, then the file opened in the editor). GUI thread only.
#include "engine/task/Task.h"
#include "engine/tune/TuneSpace.h"

#include <QObject>
#include <QPointer>
#include <QString>

#include <optional>
#include <string>

class QDialog;

namespace kf::ui {
class TuneView;
}

namespace kf::app {

class CandidateTab;
class MainWindow;
class RunController;

class TuneController : public QObject {
    Q_OBJECT
public:
    TuneController(MainWindow* window, RunController* run);

    /// Run ▸ Tune: the window, for `tab`'s task (its candidate when it has a "tune" block, else the
    /// task's first that has one); without one it says why and Tune stays off.
    void show(CandidateTab* tab);
    /// The candidate Run ▸ Tune searches: `current` when it has a "tune" block, else the task's
    /// first that has one; none when no candidate has one.
    static std::optional<std::string> chooseCandidate(const kf::Task& task, const std::string& current);

    kf::ui::TuneView* view() const { return m_view; }
    QDialog* window() const { return m_dialog; }
    /// The run id of the search in flight or last shown; 0 before the first.
    quint64 runId() const { return m_id; }

private:
    void ensureWindow();
    void start(double budgetS);
    /// Open as Candidate: the winner's file when it was written, else `point` written back now.
    void openPoint(const kf::tune::Point& point);
    void connectService();

    MainWindow* m_window = nullptr;
    RunController* m_run = nullptr;
    QPointer<QDialog> m_dialog;
    kf::ui::TuneView* m_view = nullptr;
    QString m_taskDir;
    QString m_file;          ///< the candidate searched
    QString m_written;       ///< the winner's new candidate, once written
    std::optional<kf::tune::Point> m_winner;
    quint64 m_id = 0;
};

} // namespace kf::app
