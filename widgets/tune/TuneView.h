#pragma once
// Run ▸ Tune's view: the search's budget, Tune and Cancel with its progress, the chart of every
// point (TuneChart) over the table of points (TuneTableModel), the search's cost, and Open as
// Candidate for the selected point. It shows values and asks for actions through signals; the
// search itself runs on the run service's worker (app/gui/window/TuneController.h).

#include "engine/tune/Tuner.h"

#include <QWidget>

#include <optional>

class QLabel;
class QLayout;
class QProgressBar;
class QPushButton;
class QDoubleSpinBox;
class QSortFilterProxyModel;
class QTableView;

namespace kf::ui {

class TuneChart;
class TuneTableModel;

class TuneView : public QWidget {
    Q_OBJECT
public:
    explicit TuneView(QWidget* parent = nullptr);

    /// What Tune searches: "vector_add / naive.cu", with its space's size; empty: nothing to tune,
    /// and `why` says so (Tune is then disabled).
    void setTarget(const QString& target, const QString& why = {});
    double budgetS() const;
    void setBudgetS(double s);

    /// A search starts: the table and chart empty, Cancel enabled.
    void begin();
    /// A step of the search under way: the bar (elapsed of the budget), the stage, the point it finished.
    void step(const QString& stage, int done, int total, double elapsedS, const std::optional<kf::tune::PointResult>& point);
    /// The search's result: every point, the floor and eager lines, the cost.
    void setOutcome(const kf::tune::Outcome& outcome);
    /// torch.compile's time from the winner's benchmark (a line on the chart).
    void setCompileMs(std::optional<double> ms);
    /// The run ended (the winner's verify and bench included): `sentence` says how.
    void finish(bool ok, const QString& sentence);
    bool isRunning() const { return m_running; }

    TuneChart* chart() const { return m_chart; }
    TuneTableModel* model() const { return m_model; }
    QTableView* table() const { return m_table; }
    const std::optional<kf::tune::Outcome>& outcome() const { return m_outcome; }
    /// Selects the row of point `number` (1-based, the table's #).
    void selectPoint(int number);
    QPushButton* openButton() const { return m_open; }

signals:
    void startRequested(double budgetS);
    void cancelRequested();
    /// Open as Candidate: write `point` of the searched candidate back as a new candidate and open it.
    void openRequested(const kf::tune::Point& point);

private:
    void buildUi();
    /// The target, budget, Tune and Cancel; the bar and the stage under them.
    QLayout* buildControls();
    void redrawChart();
    void updateButtons();
    const kf::tune::PointResult* selectedPoint() const;
    static QString costText(const kf::tune::Outcome& o);

    TuneChart* m_chart = nullptr;
    TuneTableModel* m_model = nullptr;
    QSortFilterProxyModel* m_sorted = nullptr;
    QTableView* m_table = nullptr;
    QLabel* m_target = nullptr;
    QLabel* m_stage = nullptr;
    QLabel* m_summary = nullptr;
    QDoubleSpinBox* m_budget = nullptr;
    QProgressBar* m_progress = nullptr;
    QPushButton* m_start = nullptr;
    QPushButton* m_cancel = nullptr;
    QPushButton* m_open = nullptr;
    std::optional<kf::tune::Outcome> m_outcome;
    std::optional<double> m_compileMs;
    double m_runBudgetS = 0;
    bool m_running = false;
    bool m_hasTarget = false;
};

} // namespace kf::ui
