#pragma once
// The roofline chart: the device's DRAM and compute ceilings on log-log axes with the candidate,
// the baseline and (optionally) one kernel as labelled points. Geometry comes from Roofline; this
// class only draws it.

#include "widgets/common/PaletteChartView.h"
#include "widgets/profile/Roofline.h"

#include <vector>

class QGraphicsSimpleTextItem;
class QLineSeries;
class QLogValueAxis;
class QScatterSeries;
class QXYSeries;

namespace kf::ui {

/// Read-only. x is arithmetic intensity (FLOP/byte), y is TFLOP/s (Roofline works in GFLOP/s;
/// the chart divides by kGflopsPerUnit so the log axis reads 0.1, 1, 10 … rather than 1e+06).
/// Hovering a point or a ceiling shows its numbers. Follows the widget palette like
/// OccupancyChart. GUI thread only.
class RooflineChart : public PaletteChartView {
    Q_OBJECT
public:
    static constexpr double kGflopsPerUnit = 1000.0;

    explicit RooflineChart(QWidget* parent = nullptr);

    void setRoofline(Roofline roofline);
    /// No ceilings, no points.
    void clearData();
    const Roofline& roofline() const { return m_roofline; }

    // What is drawn, for tests (chart units: FLOP/B, TFLOP/s).
    QScatterSeries* pointSeries(const QString& label) const;
    QLineSeries* ceilingSeries(RooflineCeiling::Kind kind) const;
    /// The text drawn beside a point or ceiling; empty when none.
    QString labelText(const QString& pointOrCeilingLabel) const;
    QLogValueAxis* axisX() const { return m_x; }
    QLogValueAxis* axisY() const { return m_y; }

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    struct DrawnPoint {
        QScatterSeries* series = nullptr;
        QGraphicsSimpleTextItem* label = nullptr;
        const RooflinePoint* point = nullptr;
    };
    struct DrawnCeiling {
        QLineSeries* series = nullptr;
        QGraphicsSimpleTextItem* label = nullptr;
        const RooflineCeiling* ceiling = nullptr;
    };

    void rebuild();
    void drawCeilings(QChart* c);
    void drawPoints(QChart* c);
    void tipOnHover(QXYSeries* s, const QString& tip);
    void applyPalette() override;
    void placeLabels();
    QPointF toChart(const QPointF& gflopsPoint) const;

    Roofline m_roofline;
    QLogValueAxis* m_x = nullptr;
    QLogValueAxis* m_y = nullptr;
    QScatterSeries* m_ridges = nullptr;
    std::vector<DrawnPoint> m_points;
    std::vector<DrawnCeiling> m_ceilings;
};

} // namespace kf::ui
