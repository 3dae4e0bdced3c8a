#include "widgets/inspect/ColorLegend.h"

#include "widgets/inspect/Colormaps.h"

#include <QPainter>
#include <QPainterPath>

#include <cmath>

namespace kf::ui {

namespace cm = colormaps;

namespace {

QString num(double v)
{
    return QString::number(v, 'g', 3);
}

// "Nice" ticks (1, 2 or 5 × 10^k apart) between lo and hi.
QList<LegendSpec::Tick> niceTicks(double lo, double hi)
{
    if (!(hi > lo))
        return {{0.5, num(lo)}};
    const double raw = (hi - lo) / 4;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double f = raw / mag;
    const double step = (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
    QList<LegendSpec::Tick> ticks;
    for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
        ticks.append({(v - lo) / (hi - lo), num(std::fabs(v) < step * 1e-9 ? 0.0 : v)});
    return ticks;
}

QString decade(int e)
{
    return e == 0 ? QStringLiteral("1") : QStringLiteral("1e%1").arg(e);
}

QList<LegendSpec::Swatch> markSwatches(QColor outside)
{
    using P = LegendSpec::Swatch::Pattern;
    return {{P::Outlined, outside, QObject::tr("outside tolerance")},
            {P::Cross, QColor(cm::kNonFinite), QObject::tr("NaN/Inf mismatch")},
            {P::Hazard, QColor(cm::kHazardYellow), QObject::tr("never written")}};
}

} // namespace

LegendSpec LegendSpec::values(double lo, double hi, bool candidateStripes)
{
    using P = Swatch::Pattern;
    LegendSpec s;
    s.title = QObject::tr("Value (colour range of the reference)");
    s.stops = cm::valueStops();
    s.ticks = niceTicks(lo, hi);
    s.swatches = {{P::Fill, QColor(cm::kNaNValue), QStringLiteral("NaN")},
                  {P::Fill, QColor(cm::kPosInfValue), QStringLiteral("+Inf")},
                  {P::Fill, QColor(cm::kNegInfValue), QStringLiteral("−Inf")}};
    if (candidateStripes)
        s.swatches.append({P::Hazard, QColor(cm::kHazardYellow), QObject::tr("never written (candidate)")});
    s.note = QObject::tr("Zoomed out, value panes sample one element per pixel.");
    return s;
}

LegendSpec LegendSpec::ratio()
{
    constexpr double lo = -8, hi = 6;
    LegendSpec s;
    s.title = QObject::tr("|error| ÷ tolerance (log scale)");
    const double edge = -lo / (hi - lo);
    for (int i = 0; i <= 32; ++i) {
        const double l = lo + (hi - lo) * i / 32.0;
        const double at = (l - lo) / (hi - lo);
        if (std::fabs(at - edge) < 1e-9) {
            s.stops.append({at - 1e-6, QColor(cm::ratioColor(0))});
            s.stops.append({at, QColor(cm::ratioColor(1e-9))});
        } else {
            s.stops.append({at, QColor(cm::ratioColor(l))});
        }
    }
    for (int e = static_cast<int>(lo); e <= static_cast<int>(hi); e += 2)
        s.ticks.append({(e - lo) / (hi - lo), decade(e)});
    s.breakAt = edge;
    s.breakLabel = QObject::tr("tolerance");
    s.swatches = markSwatches(QColor(cm::ratioColor(2)));
    s.note = QObject::tr("Zoomed out, each pixel shows its block's worst element.");
    return s;
}

LegendSpec LegendSpec::absError(double lo, double hi)
{
    LegendSpec s;
    s.title = QObject::tr("|expected − actual| within tolerance (log scale)");
    s.stops = cm::absStops();
    if (!(hi > lo)) {
        s.ticks = {{0.5, hi > 0 || hi < 0 ? QStringLiteral("1e%1").arg(num(hi)) : QStringLiteral("0")}};
    } else {
        const int first = static_cast<int>(std::ceil(lo)), last = static_cast<int>(std::floor(hi));
        const int step = std::max(1, (last - first) / 6 + 1);
        for (int e = first; e <= last; e += step)
            s.ticks.append({(e - lo) / (hi - lo), decade(e)});
    }
    s.swatches = markSwatches(QColor(cm::kOutside));
    s.note = QObject::tr("Zoomed out, each pixel shows its block's worst element.");
    return s;
}

ColorLegend::ColorLegend(QWidget* parent) : QWidget(parent)
{
    QSizePolicy policy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
}

ColorLegend::Layout ColorLegend::layoutFor(int width) const
{
    const QFontMetrics fm = fontMetrics();
    const int h = fm.height();
    Layout l;
    const int y = h + 3;   // under the title
    // The bar, with room for half a label at each end; ticks (and the break's label) under it.
    const int margin = fm.horizontalAdvance(QStringLiteral("1e-88")) / 2 + 4;
    l.bar = QRect(margin, y, std::max(40, width / 2 - margin), 12);
    int bottom = l.bar.bottom() + 4 + h + (m_spec.breakAt >= 0 && !m_spec.breakLabel.isEmpty() ? h : 0);
    // Swatches to the right of the bar, in as many columns as fit.
    l.swatchX = l.bar.right() + 24;
    l.swatchY = y - 2;
    int widest = 0;
    for (const auto& s : m_spec.swatches)
        widest = std::max(widest, fm.horizontalAdvance(s.label));
    l.column = widest + 14 + 6 + 18;
    l.columns = std::max(1, (width - l.swatchX) / l.column);
    const int rows = (int(m_spec.swatches.size()) + l.columns - 1) / l.columns;
    if (rows > 0)
        bottom = std::max(bottom, l.swatchY + (rows - 1) * (h + 4) + std::max(14, h));
    l.noteTop = bottom + 4;
    l.height = m_spec.note.isEmpty() ? bottom + 2 : l.noteTop + h + 2;
    return l;
}

int ColorLegend::heightForWidth(int width) const
{
    return layoutFor(width).height;
}

void ColorLegend::setSpec(const LegendSpec& spec)
{
    m_spec = spec;
    updateGeometry();
    update();
}

QSize ColorLegend::sizeHint() const
{
    return {420, heightForWidth(420)};
}

QSize ColorLegend::minimumSizeHint() const
{
    return {240, heightForWidth(240)};
}

void ColorLegend::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QFontMetrics fm = fontMetrics();
    const int h = fm.height();
    const QColor text = palette().color(QPalette::WindowText);
    const QColor dim = palette().color(QPalette::PlaceholderText);
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.setPen(text);
    p.drawText(QRect(4, 0, width() - 8, h), Qt::AlignLeft | Qt::AlignVCenter, m_spec.title);
    p.setFont(font());

    const Layout l = layoutFor(width());
    paintBar(p, l.bar, text, dim);

    // Swatches to the right of the bar, in as many columns as fit.
    const int sx = l.swatchX, sy = l.swatchY, col = l.column, columns = l.columns;
    int i = 0;
    for (const auto& s : m_spec.swatches) {
        const QRect box(sx + (i % columns) * col, sy + (i / columns) * (h + 4), 14, 14);
        paintSwatch(p, s, box);
        p.setPen(QPen(dim, 1));
        p.drawRect(QRectF(box).adjusted(-0.5, -0.5, 0.5, 0.5));
        p.setPen(text);
        p.drawText(QRect(box.right() + 6, box.center().y() - h / 2, col - 20, h), Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(s.label, Qt::ElideRight, std::max(0, width() - box.right() - 8)));
        ++i;
    }
    if (!m_spec.note.isEmpty()) {
        p.setPen(dim);
        p.drawText(QRect(4, l.noteTop, width() - 8, h), Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(m_spec.note, Qt::ElideRight, width() - 8));
    }
}

// The gradient bar with its break mark, ticks and the break's label.
void ColorLegend::paintBar(QPainter& p, const QRect& bar, const QColor& text, const QColor& dim) const
{
    const QFontMetrics fm = fontMetrics();
    const int h = fm.height();
    QLinearGradient g(bar.topLeft(), bar.topRight());
    g.setStops(m_spec.stops);
    p.fillRect(bar, g);
    p.setPen(QPen(dim, 1));
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRectF(bar).adjusted(-0.5, -0.5, 0.5, 0.5));
    if (m_spec.breakAt >= 0) {
        const double x = bar.left() + m_spec.breakAt * bar.width();
        p.setPen(QPen(text, 2));
        p.drawLine(QPointF(x, bar.top() - 3), QPointF(x, bar.bottom() + 4));
    }
    p.setPen(text);
    for (const auto& t : m_spec.ticks) {
        const double x = bar.left() + t.at * bar.width();
        p.drawLine(QPointF(x, bar.bottom() + 1), QPointF(x, bar.bottom() + 4));
        const int w = fm.horizontalAdvance(t.label);
        p.drawText(QRectF(x - w / 2.0 - 1, bar.bottom() + 4, w + 2, h), Qt::AlignCenter, t.label);
    }
    if (m_spec.breakAt >= 0 && !m_spec.breakLabel.isEmpty()) {
        const double x = bar.left() + m_spec.breakAt * bar.width();
        QFont small = font();
        small.setPointSizeF(font().pointSizeF() * 0.85);
        p.setFont(small);
        p.drawText(QRectF(x - 60, bar.bottom() + 4 + h, 120, h), Qt::AlignHCenter | Qt::AlignTop, m_spec.breakLabel);
        p.setFont(font());
    }
}

// A swatch's fill in its pattern, as the canvas draws that class of element.
void ColorLegend::paintSwatch(QPainter& p, const LegendSpec::Swatch& s, const QRect& box)
{
    switch (s.pattern) {
    case LegendSpec::Swatch::Pattern::Fill: p.fillRect(box, s.color); break;
    case LegendSpec::Swatch::Pattern::Outlined:
        p.fillRect(box, s.color);
        p.setPen(QPen(QColor(cm::kOutline), 2));
        p.drawRect(QRectF(box).adjusted(1, 1, -1, -1));
        break;
    case LegendSpec::Swatch::Pattern::Cross:
        p.fillRect(box, s.color);
        p.setPen(QPen(QColor(cm::kCross), 2));
        p.drawLine(box.topLeft() + QPoint(3, 3), box.bottomRight() - QPoint(3, 3));
        p.drawLine(box.topRight() + QPoint(-3, 3), box.bottomLeft() + QPoint(3, -3));
        break;
    case LegendSpec::Swatch::Pattern::Hazard:
        for (int yy = 0; yy < box.height(); ++yy)
            for (int xx = 0; xx < box.width(); ++xx) {
                p.setPen(QColor(cm::hazard(xx, yy)));
                p.drawPoint(box.left() + xx, box.top() + yy);
            }
        break;
    }
}

} // namespace kf::ui
