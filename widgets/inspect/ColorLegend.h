#pragma once
// A colour legend: title, a gradient bar with labelled ticks (and the tolerance break in ratio
// mode), swatches for the special markings, and a note ("sampled when zoomed out"). The
// builders below describe exactly what TileSource draws.

#include <QGradientStops>
#include <QList>
#include <QWidget>

class QPainter;

namespace kf::ui {

struct LegendSpec {
    struct Tick {
        double at = 0;  ///< 0…1 along the bar
        QString label;
    };
    struct Swatch {
        enum class Pattern { Fill, Outlined, Cross, Hazard };
        Pattern pattern = Pattern::Fill;
        QColor color;
        QString label;
    };
    QString title;
    QGradientStops stops;
    QList<Tick> ticks;
    double breakAt = -1;  ///< 0…1, a marked break (the tolerance edge); < 0 for none
    QString breakLabel;
    QList<Swatch> swatches;
    QString note;

    static LegendSpec values(double lo, double hi, bool candidateStripes);
    static LegendSpec ratio();
    static LegendSpec absError(double log10Lo, double log10Hi);
};

/// GUI thread only.
class ColorLegend : public QWidget {
    Q_OBJECT

public:
    explicit ColorLegend(QWidget* parent = nullptr);
    void setSpec(const LegendSpec& spec);
    const LegendSpec& spec() const { return m_spec; }
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    /// Tall enough at `width` for the bar, every swatch row and the note below both.
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    /// Where the parts go at a given width (paintEvent and heightForWidth share it).
    struct Layout {
        QRect bar;
        int swatchX = 0, swatchY = 0, column = 0, columns = 1;
        int noteTop = 0, height = 0;
    };
    Layout layoutFor(int width) const;
    void paintBar(QPainter& p, const QRect& bar, const QColor& text, const QColor& dim) const;
    static void paintSwatch(QPainter& p, const LegendSpec::Swatch& s, const QRect& box);

    LegendSpec m_spec;
};

} // namespace kf::ui
