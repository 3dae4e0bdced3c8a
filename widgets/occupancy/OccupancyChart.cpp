#include "widgets/occupancy/OccupancyChart.h"

#include "widgets/common/StatusColors.h"

#include <QChart>
#include <QLineSeries>
#include <QScatterSeries>
#include <QValueAxis>

namespace kf::ui {

OccupancyChart::OccupancyChart(const QString& title, const QString& xTitle, QWidget* parent)
    : PaletteChartView(parent)
{
    auto* c = new QChart;
    c->setTitle(title);
    c->legend()->hide();
    c->setMargins(QMargins(4, 4, 4, 4));
    c->setBackgroundRoundness(0);
    setChart(c); // the view owns the chart

    m_curve = new QLineSeries(c);
    m_curve->setName(tr("occupancy"));
    m_marker = new QScatterSeries(c);
    m_marker->setName(tr("current configuration"));
    m_marker->setMarkerShape(QScatterSeries::MarkerShapeCircle);
    m_marker->setMarkerSize(11);
    c->addSeries(m_curve);
    c->addSeries(m_marker);

    m_x = new QValueAxis(c);
    m_x->setTitleText(xTitle);
    m_x->setLabelFormat(QStringLiteral("%d"));
    m_y = new QValueAxis(c);
    m_y->setTitleText(tr("occupancy (%)"));
    m_y->setRange(0, 100);
    m_y->setTickCount(6);
    m_y->setLabelFormat(QStringLiteral("%d"));
    c->addAxis(m_x, Qt::AlignBottom);
    c->addAxis(m_y, Qt::AlignLeft);
    for (QAbstractSeries* s : {static_cast<QAbstractSeries*>(m_curve), static_cast<QAbstractSeries*>(m_marker)}) {
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }

    setRenderHint(QPainter::Antialiasing);
    setMinimumSize(170, 200); // three side by side must fit a dock beside the editor
    applyPalette();
}

void OccupancyChart::setCurve(const QList<QPointF>& points, double xMin, double xMax, bool niceX)
{
    m_curve->replace(points);
    m_x->setRange(xMin, xMax);
    if (niceX)
        m_x->applyNiceNumbers();
    else
        m_x->setTickCount(5);
}

void OccupancyChart::setMarker(std::optional<QPointF> point)
{
    if (point)
        m_marker->replace(QList<QPointF>{*point});
    else
        m_marker->clear();
}

void OccupancyChart::clearData()
{
    m_curve->clear();
    m_marker->clear();
}

QList<QPointF> OccupancyChart::curvePoints() const
{
    return m_curve->points();
}

std::optional<QPointF> OccupancyChart::marker() const
{
    if (m_marker->count() == 0)
        return std::nullopt;
    return m_marker->at(0);
}

void OccupancyChart::applyPalette()
{
    const QPalette& p = palette();
    applyChartTheme(p);
    chart()->setTitleBrush(p.color(QPalette::Text));
    QPen line(p.color(QPalette::Highlight));
    line.setWidthF(2.0);
    m_curve->setPen(line);
    // The marker must stand out from the curve whatever the highlight colour is.
    const QColor mark = errorColor(p);
    m_marker->setColor(mark);
    m_marker->setBorderColor(p.color(QPalette::Text));
    for (QValueAxis* axis : {m_x, m_y}) {
        axis->setLabelsBrush(p.color(QPalette::Text));
        axis->setTitleBrush(p.color(QPalette::Text));
    }
}

} // namespace kf::ui
