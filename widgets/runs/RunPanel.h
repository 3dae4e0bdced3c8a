#pragma once
// The Run panel: the verdict of the latest run, its progress and Cancel, the results table and
// the log. The main window feeds it what the runner client reports; it never talks to the runner.

#include "widgets/runs/RunLogView.h"
#include "widgets/common/VerdictStyle.h"

#include "engine/protocol/Messages.h"
#include "engine/protocol/RunReport.h"

#include <QString>
#include <QWidget>

#include <vector>

class QLabel;
class QMenu;
class QModelIndex;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace kf::ui {

class ElidedLabel;
class ResultsModel;

/// GUI thread only; owned by its Qt parent. A run goes begin() → handleEvent()/addReport() any
/// number of times → finish() or fail(). Results of earlier runs stay in the table (a new report
/// replaces the same candidate and shape; see ResultsModel); the banner speaks for the last run.
class RunPanel : public QWidget {
    Q_OBJECT

public:
    explicit RunPanel(QWidget* parent = nullptr);

    /// Starts a run: shows `title`, resets the bar to 0 and the stage to "starting", clears the
    /// banner and enables Cancel.
    void begin(const QString& title);
    /// Moves the bar (0..1000) and shows the stage; a new stage is logged once.
    void setProgress(int permille, const QString& stage);
    /// The launch in flight (the runner's watchdog is timing it); empty: none.
    void setLaunch(const QString& label);
    /// A line of the run log (the runner's notes).
    void appendLog(kf::protocol::Event::Level level, const QString& text);
    /// One report of this run: rows in the table, a log line with its summary, and a part of the
    /// verdict banner that finish() shows.
    void addReport(const kf::protocol::RunReport& report);
    /// Ends the run normally: disables Cancel and shows the banner made from this run's reports,
    /// followed by `sentence` when it is not empty ("cancelled", "2 candidates in 3.1 s"). With no
    /// reports the banner is `sentence` alone, green when `ok`, red otherwise.
    void finish(bool ok, const QString& sentence);
    /// Ends the run because the runner failed (crash, watchdog, start-up): the sentence in a red
    /// banner and as an error line in the log.
    void fail(const QString& sentence);

    bool isRunning() const { return m_running; }
    ResultsModel* model() const { return m_model; }
    RunLogView* log() const { return m_log; }

    /// For tests and the status bar: what the panel shows now.
    QString title() const;
    QString bannerText() const;
    Tone bannerTone() const { return m_bannerTone; }
    QString stageText() const;
    int progressPermille() const;
    QPushButton* cancelButton() const { return m_cancel; }
    QPushButton* promoteButton() const { return m_promote; }

    /// The Promote button's state: enabled only when the promotion gates pass; `tooltip` says
    /// which gate blocks it otherwise (or what promoting will do).
    void setPromoteState(bool enabled, const QString& tooltip);
    QTableView* resultsView() const { return m_table; }
    /// The context menu of a results-table cell (an index of resultsView()'s model); the caller
    /// owns it. "Inspect tensors…" is enabled for a failing row with saved tensors, and says why
    /// not in its tooltip otherwise.
    QMenu* createRowMenu(const QModelIndex& viewIndex);

signals:
    /// The user pressed Cancel. Emitted once per run; the caller cancels and then calls finish()
    /// or fail().
    void cancelRequested();
    /// The user pressed Promote (enabled only while the gates pass).
    void promoteRequested();
    /// The user asked to inspect the saved tensors of a failing row (double-click or the context
    /// menu): `row` is the model's row, `caseDir` the absolute case folder of one of its trials.
    void inspectRequested(int row, const QString& caseDir);

protected:
    void changeEvent(QEvent* event) override;

private:
    void setBanner(Tone tone, const QString& text);
    /// Hides the columns no row has a value in (timings of a verification, errors of a benchmark).
    void updateColumns();
    void updateStage();
    void onCancelClicked();
    void onRowDoubleClicked(const QModelIndex& viewIndex);

    QPushButton* m_promote = nullptr;
    QLabel* m_title = nullptr;
    QLabel* m_banner = nullptr;
    QProgressBar* m_progress = nullptr;
    ElidedLabel* m_stage = nullptr;
    QPushButton* m_cancel = nullptr;
    ResultsModel* m_model = nullptr;
    QSortFilterProxyModel* m_proxy = nullptr;
    QTableView* m_table = nullptr;
    RunLogView* m_log = nullptr;

    bool m_running = false;
    Tone m_bannerTone = Tone::Neutral;
    QString m_stageName;    ///< the runner's latest `progress` stage
    QString m_launch;       ///< the label of the launch in flight, empty between launches
    QString m_loggedStage;  ///< the stage last written to the log, without its sample count
    std::vector<kf::protocol::RunReport> m_runReports;
};

} // namespace kf::ui
