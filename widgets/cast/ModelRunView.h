#pragma once
// One model run of a .cast package, as the runtimes record it (docs/cast-format.md, "Model
// runs"): which call sites run packaged kernels and why the others do not, the time per pass
// with and without the kernels as a box plot (p10–p90 box, min–max whiskers, median line), the
// end-to-end speedup — always labelled model-level, never an op's microbenchmark — and the
// outputs' errors against the unsubstituted model and fp64.

#include <nlohmann/json.hpp>

#include <QWidget>

class QBoxPlotSeries;
class QChartView;
class QLabel;
class QTableWidget;
class QValueAxis;

namespace kf::ui {

class ModelRunView : public QWidget {
    Q_OBJECT

public:
    explicit ModelRunView(QWidget* parent = nullptr);

    /// Shows `run`. Evidence that is not a model run (checkModelRun) is not shown: the view says
    /// why and returns false.
    bool setEvidence(const nlohmann::json& run);
    /// Empties the view, with `text` where the summary was.
    void clear(const QString& text);

    // Parts, for tests.
    QLabel* summary() const { return m_summary; }
    QTableWidget* sites() const { return m_sites; }
    QTableWidget* checks() const { return m_checks; }
    QChartView* chart() const { return m_chart; }
    QBoxPlotSeries* boxes() const { return m_boxes; }

private:
    // setEvidence's parts (ModelRunView.cpp).
    void showSummary(const nlohmann::json& run);
    void showSites(const nlohmann::json& run);
    void showTimes(const nlohmann::json& run);
    void showChecks(const nlohmann::json& run);
    QLabel* m_summary = nullptr;
    QTableWidget* m_sites = nullptr;
    QTableWidget* m_checks = nullptr;
    QLabel* m_checkNote = nullptr;
    QChartView* m_chart = nullptr;
    QBoxPlotSeries* m_boxes = nullptr;
    QValueAxis* m_y = nullptr;
};

} // namespace kf::ui
