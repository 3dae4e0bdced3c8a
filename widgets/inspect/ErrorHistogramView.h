#pragma once
// The errors of an output relative to its tolerance as a histogram: x is log10(ratio) in the
// report's bins (kf::ErrorHistogram), y the element count on a log axis, the tolerance edge a
// dashed line; exact matches, NaN/Inf mismatches and never-written elements get bars of their own.

#include "engine/verify/Compare.h"
#include "widgets/common/PaletteChartView.h"

class QBarSet;
class QStackedBarSeries;
class QCategoryAxis;
class QLineSeries;
class QLogValueAxis;

namespace kf::ui {

/// GUI thread only.
class ErrorHistogramView : public PaletteChartView {
    Q_OBJECT

public:
    /// Bar positions on the x axis.
    static constexpr int kExactAt = 0;
    static constexpr int kBelowAt = 2;
    static constexpr int kFirstBinAt = 3;
    static constexpr int kAboveAt = kFirstBinAt + ErrorHistogram::kBins;
    static constexpr int kNonFiniteAt = kAboveAt + 3;
    static constexpr int kUnwrittenAt = kNonFiniteAt + 2;
    static constexpr double kFloor = 0.7;  ///< y of an empty bar (a log axis has no 0)

    explicit ErrorHistogramView(QWidget* parent = nullptr);

    void setHistogram(const ErrorHistogram& h);
    void clear();
    /// For tests: the count shown at a bar position (0 for none).
    qint64 countAt(int position) const;
    /// The x of the tolerance line.
    static double toleranceAt() { return kFirstBinAt + ErrorHistogram::kBins / 2 - 0.5; }

private:
    void applyPalette() override;

    QStackedBarSeries* m_bars = nullptr;
    QBarSet* m_within = nullptr;
    QBarSet* m_outside = nullptr;
    QBarSet* m_nonFinite = nullptr;
    QBarSet* m_unwritten = nullptr;
    QLineSeries* m_tolerance = nullptr;
    QCategoryAxis* m_x = nullptr;
    QLogValueAxis* m_y = nullptr;
    std::vector<qint64> m_counts;
};

} // namespace kf::ui
