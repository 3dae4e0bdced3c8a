#pragma once
// One "occupancy versus X" line chart with the current configuration marked on it.

#include "widgets/common/PaletteChartView.h"

#include <QList>
#include <QPointF>

#include <optional>

class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace kf::ui {

/// A line chart of occupancy (%) over one launch parameter, plus one scatter point that marks
/// the current configuration in a colour distinct from the curve. Follows the widget palette:
/// the dark chart theme when the window colour is dark, the light one otherwise. GUI thread only.
class OccupancyChart : public PaletteChartView {
    Q_OBJECT
public:
    /// `title` is the chart heading, `xTitle` the horizontal axis label; the vertical axis is
    /// always "occupancy (%)", 0..100.
    OccupancyChart(const QString& title, const QString& xTitle, QWidget* parent = nullptr);

    /// Replaces the curve (x, occupancy in %) and the horizontal range.
    void setCurve(const QList<QPointF>& points, double xMin, double xMax, bool niceX = false);
    /// Marks the current configuration; nullopt hides the marker.
    void setMarker(std::optional<QPointF> point);
    /// Empties curve and marker (no valid kernel).
    void clearData();

    QList<QPointF> curvePoints() const;
    /// The marked point, or nullopt when nothing is marked.
    std::optional<QPointF> marker() const;

private:
    void applyPalette() override;

    QLineSeries* m_curve = nullptr;
    QScatterSeries* m_marker = nullptr;
    QValueAxis* m_x = nullptr;
    QValueAxis* m_y = nullptr;
};

} // namespace kf::ui
