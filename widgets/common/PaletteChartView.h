#pragma once
// A chart view that follows the widget palette, for the workbench's charts (OccupancyChart,
// RooflineChart, SpeedupChart, TuneChart, ErrorHistogramView): whenever the palette or the style
// changes, the subclass's colours are applied again; the chart theme (dark or light) and the
// background can come from the palette the same way in each of them.

#include <QChartView>

class QAbstractAxis;
class QColor;
class QPalette;

namespace kf::ui {

/// GUI thread only.
class PaletteChartView : public QChartView {
    Q_OBJECT

public:
    explicit PaletteChartView(QWidget* parent = nullptr);

    /// True when the chart uses the dark theme.
    bool isDarkTheme() const;

protected:
    /// The subclass's colours from palette(): called on every palette and style change. A
    /// subclass also calls it once, when its series exist.
    virtual void applyPalette() = 0;

    /// The dark or the light chart theme as `p` is dark or light, and p's Base behind the chart.
    /// setTheme restyles every series and axis, so the subclass's own colours go on after this.
    /// Returns whether `p` is dark.
    bool applyChartTheme(const QPalette& p);
    /// An axis's labels and title in `text`, its grid and its line in `grid`.
    static void colorAxis(QAbstractAxis* axis, const QColor& text, const QColor& grid);

    void changeEvent(QEvent* event) override;
};

} // namespace kf::ui
