#include "widgets/profile/RooflineChart.h"

#include "widgets/common/StatusColors.h"
#include "widgets/profile/ProfileColors.h"

#include <QChart>
#include <QCursor>
#include <QGraphicsSimpleTextItem>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace kf::ui {
namespace {

constexpr qreal kLabelGap = 4;

void attach(QChart* chart, QAbstractSeries* s, QAbstractAxis* x, QAbstractAxis* y)
{
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
}

} // namespace

RooflineChart::RooflineChart(QWidget* parent)
    : PaletteChartView(parent)
{
    auto* c = new QChart;
    c->legend()->hide(); // points and ceilings carry their own labels
    c->setMargins(QMargins(2, 2, 2, 2));
    c->setBackgroundRoundness(0);
    setChart(c); // the view owns the chart

    m_x = new QLogValueAxis(c);
    m_x->setBase(10);
    m_x->setLabelFormat(QStringLiteral("%g"));
    m_x->setTitleText(tr("arithmetic intensity (FLOP/byte)"));
    m_x->setMinorTickCount(-1);
    m_y = new QLogValueAxis(c);
    m_y->setBase(10);
    m_y->setLabelFormat(QStringLiteral("%g"));
    m_y->setTitleText(tr("TFLOP/s"));
    m_y->setMinorTickCount(-1);
    c->addAxis(m_x, Qt::AlignBottom);
    c->addAxis(m_y, Qt::AlignLeft);
    connect(c, &QChart::plotAreaChanged, this, &RooflineChart::placeLabels);

    setRenderHint(QPainter::Antialiasing);
    setMinimumSize(260, 220);
    setToolTip(tr("Roofline: attainable performance is capped by the DRAM slope at low intensity and by the "
                  "compute ceiling above the ridge. Hover a point or a ceiling for its numbers."));
    setRoofline(Roofline::compute({}, {}));
}

void RooflineChart::setRoofline(Roofline roofline)
{
    m_roofline = std::move(roofline);
    rebuild();
}

void RooflineChart::clearData()
{
    setRoofline(Roofline::compute({}, {}));
}

QPointF RooflineChart::toChart(const QPointF& p) const
{
    return {p.x(), p.y() / kGflopsPerUnit};
}

void RooflineChart::rebuild()
{
    QChart* c = chart();
    for (DrawnPoint& d : m_points)
        delete d.label;
    for (DrawnCeiling& d : m_ceilings)
        delete d.label;
    m_points.clear();
    m_ceilings.clear();
    c->removeAllSeries();
    m_ridges = nullptr;

    // A hair outside the decades: QLogValueAxis drops the label of an end that rounds inward.
    constexpr double hair = 1.0001;
    m_x->setRange(m_roofline.xMin / hair, m_roofline.xMax * hair);
    m_y->setRange(m_roofline.yMin / kGflopsPerUnit / hair, m_roofline.yMax / kGflopsPerUnit * hair);

    drawCeilings(c);
    drawPoints(c);
    applyPalette();
    placeLabels();
}

// The series' description as a tooltip while the pointer is over it.
void RooflineChart::tipOnHover(QXYSeries* s, const QString& tip)
{
    connect(s, &QXYSeries::hovered, this, [tip](const QPointF&, bool state) {
        if (state)
            QToolTip::showText(QCursor::pos(), tip);
        else
            QToolTip::hideText();
    });
}

// The roofs, labelled, and the ridge points where a compute roof meets the DRAM slope.
void RooflineChart::drawCeilings(QChart* c)
{
    QList<QPointF> ridges;
    for (const RooflineCeiling& ceiling : m_roofline.ceilings) {
        auto* s = new QLineSeries(c);
        s->setName(ceiling.label);
        for (const QPointF& p : ceiling.line)
            s->append(toChart(p));
        attach(c, s, m_x, m_y);
        auto* label = new QGraphicsSimpleTextItem(ceiling.label, c);
        label->setZValue(5);
        tipOnHover(s, ceiling.description);
        m_ceilings.push_back({s, label, &ceiling});
        if (ceiling.ridge)
            ridges << toChart(*ceiling.ridge);
    }
    if (!ridges.isEmpty()) {
        m_ridges = new QScatterSeries(c);
        m_ridges->setName(tr("ridge points"));
        m_ridges->setMarkerShape(QScatterSeries::MarkerShapeCircle);
        m_ridges->setMarkerSize(6);
        m_ridges->replace(ridges);
        attach(c, m_ridges, m_x, m_y);
    }
}

// One labelled marker per point, shaped by its role.
void RooflineChart::drawPoints(QChart* c)
{
    // The baseline first, so the candidate is drawn over it where they coincide.
    std::vector<const RooflinePoint*> drawOrder;
    for (const RooflinePoint& point : m_roofline.points)
        drawOrder.push_back(&point);
    std::stable_partition(drawOrder.begin(), drawOrder.end(),
                          [](const RooflinePoint* p) { return p->role == RooflineInput::Role::Baseline; });
    for (const RooflinePoint* drawn : drawOrder) {
        const RooflinePoint& point = *drawn;
        auto* s = new QScatterSeries(c);
        s->setName(point.label);
        s->append(toChart(point.plotted));
        switch (point.role) {
        case RooflineInput::Role::Candidate:
            s->setMarkerShape(QScatterSeries::MarkerShapeCircle);
            s->setMarkerSize(12);
            break;
        case RooflineInput::Role::Baseline:
            s->setMarkerShape(QScatterSeries::MarkerShapeRotatedRectangle);
            s->setMarkerSize(13);
            break;
        case RooflineInput::Role::Kernel:
            s->setMarkerShape(QScatterSeries::MarkerShapeTriangle);
            s->setMarkerSize(10);
            break;
        }
        attach(c, s, m_x, m_y);
        auto* label = new QGraphicsSimpleTextItem(point.label, c);
        label->setZValue(6);
        tipOnHover(s, point.description);
        m_points.push_back({s, label, &point});
    }
}

void RooflineChart::applyPalette()
{
    const QPalette& p = palette();
    const bool dark = applyChartTheme(p);
    const QColor text = p.color(QPalette::Text);
    // Grid lines from the text colour, faint: on log axes the minor lines are many.
    QColor grid = text;
    grid.setAlpha(60);
    QColor minor = text;
    minor.setAlpha(dark ? 14 : 22);
    for (QLogValueAxis* axis : {m_x, m_y}) {
        colorAxis(axis, text, grid);
        axis->setMinorGridLineColor(minor);
    }

    const QColor ceilingColor = profilecolors::ceiling(p);
    for (DrawnCeiling& d : m_ceilings) {
        QPen pen(ceilingColor);
        pen.setWidthF(2.0);
        if (d.ceiling->kind == RooflineCeiling::Kind::Fp16Tensor)
            pen.setStyle(Qt::DashLine); // a roof only tensor-core code can reach
        d.series->setPen(pen);
        d.label->setBrush(ceilingColor);
    }
    if (m_ridges) {
        m_ridges->setColor(ceilingColor);
        m_ridges->setBorderColor(ceilingColor);
    }
    for (DrawnPoint& d : m_points) {
        const QColor color = d.point->role == RooflineInput::Role::Baseline ? profilecolors::baseline(p)
                                                                            : profilecolors::candidate(p);
        QPen border(d.point->role == RooflineInput::Role::Kernel ? text : color);
        border.setWidthF(2.0);
        d.series->setPen(border);
        // Hollow: the point is not at its measured intensity (see Roofline::Placement). See-through,
        // so two hollow marks in one place both show.
        d.series->setBrush(d.point->placement == RooflinePoint::Placement::Measured ? QBrush(color)
                                                                                    : QBrush(Qt::transparent));
        d.label->setBrush(text);
    }
}

void RooflineChart::placeLabels()
{
    QChart* c = chart();
    const QRectF plot = c->plotArea();
    if (plot.isEmpty())
        return;

    // Every marker first: a label must not cover any of them.
    QList<QRectF> taken;
    for (const DrawnPoint& d : m_points) {
        const QPointF at = c->mapToPosition(d.series->at(0), d.series);
        const qreal radius = d.series->markerSize() / 2;
        taken << QRectF(at - QPointF(radius, radius), QSizeF(2 * radius, 2 * radius));
    }
    auto freeOf = [&taken, &plot](const QRectF& r) {
        if (!plot.adjusted(-2, -2, 2, 2).contains(r))
            return false;
        for (const QRectF& t : taken)
            if (r.intersects(t))
                return false;
        return true;
    };
    // Point labels beside their marker: right, left, right and lower or higher, above, below, the
    // first place that is free
    // (two kernels close together are the common case: candidate against baseline).
    for (DrawnPoint& d : m_points) {
        const QRectF box = d.label->boundingRect();
        const QPointF at = c->mapToPosition(d.series->at(0), d.series);
        const qreal offset = d.series->markerSize() / 2 + kLabelGap;
        const qreal centred = std::clamp(at.x() - box.width() / 2, plot.left(), plot.right() - box.width());
        const QPointF places[] = {
            {at.x() + offset, at.y() - box.height() / 2},
            {at.x() - offset - box.width(), at.y() - box.height() / 2},
            {at.x() + offset, at.y() + box.height() / 2},
            {at.x() + offset, at.y() - box.height() * 1.5},
            {centred, at.y() - offset - box.height()},
            {centred, at.y() + offset},
        };
        d.label->setPos(places[0]);
        for (const QPointF& place : places) {
            d.label->setPos(place);
            if (freeOf(d.label->sceneBoundingRect()))
                break;
        }
        if (!freeOf(d.label->sceneBoundingRect()))
            d.label->setPos(places[0]);
        taken << d.label->sceneBoundingRect();
    }

    // Ceiling labels sit above their line, at the first of a few places that no point or its
    // label covers (a compute-bound kernel sits right under the compute roof's usual place).
    for (DrawnCeiling& d : m_ceilings) {
        const QRectF box = d.label->boundingRect();
        const QPointF a = c->mapToPosition(toChart(d.ceiling->line.front()));
        const QPointF b = c->mapToPosition(toChart(d.ceiling->line.back()));
        QList<QPointF> places;
        if (d.ceiling->kind == RooflineCeiling::Kind::Dram) {
            // Along the slope, rotated with it, centred at one of three places on the segment.
            const qreal angle = std::atan2(b.y() - a.y(), b.x() - a.x()) * 180.0 / std::numbers::pi;
            d.label->setTransformOriginPoint(box.width() / 2, box.height());
            d.label->setRotation(angle);
            for (qreal t : {0.5, 0.3, 0.7})
                places << a + (b - a) * t - QPointF(box.width() / 2, box.height() + 1);
        } else {
            // Flat roofs: right-aligned, else just right of the ridge; clear of the ridge marker.
            d.label->setRotation(0);
            const qreal y = a.y() - box.height() - kLabelGap;
            places << QPointF(plot.right() - box.width() - kLabelGap, y) << QPointF(a.x() + 2 * kLabelGap, y);
        }
        d.label->setPos(places.front());
        for (const QPointF& place : places) {
            d.label->setPos(place);
            if (freeOf(d.label->sceneBoundingRect()))
                break;
        }
        if (!freeOf(d.label->sceneBoundingRect()))
            d.label->setPos(places.front());
        taken << d.label->sceneBoundingRect();
    }
}

QScatterSeries* RooflineChart::pointSeries(const QString& label) const
{
    for (const DrawnPoint& d : m_points)
        if (d.point->label == label)
            return d.series;
    return nullptr;
}

QLineSeries* RooflineChart::ceilingSeries(RooflineCeiling::Kind kind) const
{
    for (const DrawnCeiling& d : m_ceilings)
        if (d.ceiling->kind == kind)
            return d.series;
    return nullptr;
}

QString RooflineChart::labelText(const QString& pointOrCeilingLabel) const
{
    for (const DrawnPoint& d : m_points)
        if (d.point->label == pointOrCeilingLabel && d.label->isVisible())
            return d.label->text();
    for (const DrawnCeiling& d : m_ceilings)
        if (d.ceiling->label == pointOrCeilingLabel && d.label->isVisible())
            return d.label->text();
    return {};
}

void RooflineChart::resizeEvent(QResizeEvent* event)
{
    QChartView::resizeEvent(event);
    placeLabels();
}

} // namespace kf::ui
