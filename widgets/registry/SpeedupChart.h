#pragma once
// Speedup over LibTorch per benchmark shape of a performance report, as bars, with the 1.0×
// line (as fast as LibTorch) and the registry's threshold for the geometric mean dashed across;
// beside each, the speedup over torch.compile when the report was compared with it.

#include "engine/protocol/BenchReport.h"
#include "widgets/common/PaletteChartView.h"

#include <QList>
#include <QStringList>

class QBarCategoryAxis;
class QBarSeries;
class QBarSet;
class QLineSeries;
class QValueAxis;

namespace kf::ui {

/// One bar per shape of a performance report (docs/report-schema.md); bars below 1.0× are drawn
/// in the error colour. Non-finite speedups ("nan", "inf") keep their category, named with the
/// value: a nan bar has no height, an inf bar reaches the top of the axis. GUI thread only.
class SpeedupChart : public PaletteChartView {
    Q_OBJECT

public:
    explicit SpeedupChart(QWidget* parent = nullptr);

    /// Shows `performance`'s shapes; `threshold` is the registry's geometric-mean threshold.
    /// A report without shapes empties the chart and says so in the title.
    void setReport(const kf::protocol::BenchReport* performance, double threshold);
    void clearData();

    /// Bars shown (one per benchmark shape).
    int barCount() const;
    /// The category labels, "8k-rows-of-4k\n1.36×" (the dimensions when a shape has no label).
    QStringList categories() const;
    /// The speedups as reported, NaN and ±inf included, in category order.
    QList<double> speedups() const { return m_speedups; }
    double threshold() const { return m_threshold; }
    /// Per shape, the speedup over torch.compile (NaN where not compared); empty when the report
    /// has no comparison, and then no second bar set is shown.
    QList<double> compileSpeedups() const { return m_compileSpeedups; }
    /// The y values of the two dashed lines: {1.0, threshold}; empty when the chart is empty.
    QList<double> referenceLines() const;

private:
    void applyPalette() override;

    QBarSeries* m_bars = nullptr;
    QBarSet* m_set = nullptr;
    QBarSet* m_compileSet = nullptr;   ///< in the series only while the report has a torch.compile comparison
    QList<double> m_compileSpeedups;
    QLineSeries* m_parity = nullptr;
    QLineSeries* m_thresholdLine = nullptr;
    QBarCategoryAxis* m_x = nullptr;
    QValueAxis* m_y = nullptr;
    QList<double> m_speedups;
    double m_threshold = 0;
};

} // namespace kf::ui
