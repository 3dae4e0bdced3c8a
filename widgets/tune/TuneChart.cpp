#include "widgets/tune/TuneChart.h"

#include "widgets/common/StatusColors.h"
#include "widgets/common/VerdictStyle.h"
#include "widgets/profile/ProfileColors.h"
#include "widgets/tune/TuneFigures.h"

#include <QChart>
#include <QCursor>
#include <QEvent>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QToolTip>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace kf::ui {
namespace {

QColor compileColor(const QPalette& p) { return isDarkPalette(p) ? QColor(0xce, 0x93, 0xd8) : QColor(0x7b, 0x1f, 0xa2); }

} // namespace

TuneChart::TuneChart(QWidget* parent)
    : PaletteChartView(parent)
{
    auto* c = new QChart;
    c->setMargins(QMargins(4, 4, 4, 4));
    c->setBackgroundRoundness(0);
    c->legend()->setAlignment(Qt::AlignTop);
    setChart(c); // the view owns the chart
    m_x = new QValueAxis(c);
    m_x->setTitleText(tr("point (the table's #)"));
    m_x->setLabelFormat(QStringLiteral("%d"));
    m_y = new QValueAxis(c);
    m_y->setTitleText(tr("geomean time (ms)"));
    m_y->setLabelFormat(QStringLiteral("%.3g"));
    m_x->setTickType(QValueAxis::TicksDynamic);
    m_x->setTickAnchor(1);
    c->addAxis(m_x, Qt::AlignBottom);
    c->addAxis(m_y, Qt::AlignLeft);
    setRenderHint(QPainter::Antialiasing);
    setMinimumSize(320, 220);
    rebuild();
}

void TuneChart::setData(Data data)
{
    m_data = std::move(data);
    rebuild();
}

QScatterSeries* TuneChart::scatter(const QString& name)
{
    auto* s = new QScatterSeries(chart());
    s->setName(name);
    chart()->addSeries(s);
    s->attachAxis(m_x);
    s->attachAxis(m_y);
    connect(s, &QScatterSeries::hovered, this, [this](const QPointF& at, bool state) {
        if (state)
            QToolTip::showText(QCursor::pos(), m_tips.value(qRound(at.x())), this);
        else
            QToolTip::hideText();
    });
    return s;
}

void TuneChart::rebuild()
{
    QChart* c = chart();
    m_winnerName.clear();
    m_lines.clear();
    m_marks.clear();
    m_tips.clear();
    c->removeAllSeries();

    double top = 0;
    for (const kf::tune::PointResult& p : m_data.points)
        if (p.rankMs())
            top = std::max(top, *p.rankMs());
    for (const std::optional<double>& v : {m_data.floorMs, m_data.eagerMs, m_data.compileMs})
        if (v)
            top = std::max(top, *v);
    m_y->setRange(0, top > 0 ? top * 1.15 : 1.0);   // room above the slowest for the failed points' row
    m_y->setTickCount(6);
    m_y->applyNiceNumbers();
    const double xMax = std::max<double>(2, double(m_data.points.size()));
    m_x->setRange(0.5, xMax + 0.5);
    m_x->setTickInterval(std::max(1.0, std::ceil(xMax / 12)));   // whole point numbers, a dozen at most

    addMarks(m_y->max() - (m_y->max() - top) / 2);
    if (m_data.floorMs)
        addLine(Line::Floor, tr("roofline floor"), *m_data.floorMs, xMax);
    if (m_data.eagerMs)
        addLine(Line::Eager, tr("eager (LibTorch)"), *m_data.eagerMs, xMax);
    if (m_data.compileMs)
        addLine(Line::Compile, tr("torch.compile"), *m_data.compileMs, xMax);
    applyPalette();
}

void TuneChart::addMarks(double failedY)
{
    using kf::tune::Stage;
    QScatterSeries* timed = m_marks[Marks::Timed] = scatter(tr("timed"));
    QScatterSeries* finalists = m_marks[Marks::Finalists] = scatter(tr("finalist (re-measured)"));
    QScatterSeries* winner = m_marks[Marks::Winner] = scatter(tr("winner"));
    QScatterSeries* failed = m_marks[Marks::Failed] = scatter(tr("failed (hover for why)"));
    timed->setMarkerSize(9);
    finalists->setMarkerSize(15);
    winner->setMarkerShape(QScatterSeries::MarkerShapeStar);
    winner->setMarkerSize(22);
    failed->setMarkerShape(QScatterSeries::MarkerShapeRotatedRectangle);
    failed->setMarkerSize(10);
    for (std::size_t i = 0; i < m_data.points.size(); ++i) {
        const kf::tune::PointResult& p = m_data.points[i];
        const double x = double(i + 1);
        m_tips.insert(int(i + 1), tunefig::pointTip(p, int(i + 1)));
        if (tunefig::failed(p.stage)) {
            failed->append(x, failedY);
            continue;
        }
        if (!p.rankMs())
            continue;   // not reached yet
        const QPointF at(x, *p.rankMs());
        if (p.stage == Stage::Winner) {
            winner->append(at);
            m_winnerName = tr("winner #%1 · %2").arg(i + 1).arg(tunefig::msText(*p.rankMs()));   // its values: the table's selected row
            winner->setName(m_winnerName);
        } else {
            (p.stage == Stage::Finalist ? finalists : timed)->append(at);
        }
    }
    // The legend names only what is drawn.
    for (QScatterSeries* s : {timed, finalists, winner, failed})
        for (QLegendMarker* m : chart()->legend()->markers(s))
            m->setVisible(s->count() > 0);
}

void TuneChart::addLine(Line kind, const QString& name, double ms, double xMax)
{
    auto* s = new QLineSeries(chart());
    s->setName(QStringLiteral("%1 %2").arg(name, tunefig::msText(ms)));   // the legend carries the figure
    s->append(0.5, ms);
    s->append(xMax + 0.5, ms);
    chart()->addSeries(s);
    s->attachAxis(m_x);
    s->attachAxis(m_y);
    const QString tip = kind == Line::Floor     ? tr("The bytes the task moves ÷ the GPU's peak bandwidth: no point can be faster.")
                        : kind == Line::Eager   ? tr("The runner's LibTorch median over the tuning shapes.")
                                                : tr("torch.compile's best mode, from the winner's benchmark.");
    connect(s, &QLineSeries::hovered, this, [tip](const QPointF&, bool state) {
        if (state)
            QToolTip::showText(QCursor::pos(), tip);
        else
            QToolTip::hideText();
    });
    m_lines.push_back({kind, s, ms});
}

void TuneChart::applyPalette()
{
    const QPalette& p = palette();
    const bool dark = applyChartTheme(p);
    chart()->legend()->setLabelColor(p.color(QPalette::Text));
    const QColor text = p.color(QPalette::Text);
    QColor grid = text;
    grid.setAlpha(dark ? 40 : 45);
    for (QValueAxis* axis : {m_x, m_y}) {
        colorAxis(axis, text, grid);
        axis->setMinorGridLineVisible(false);
    }
    const QColor candidate = profilecolors::candidate(p);
    auto style = [&](Marks m, const QColor& fill, const QColor& border, qreal width) {
        QScatterSeries* s = m_marks[m];
        s->setBrush(fill);
        QPen pen(border);
        pen.setWidthF(width);
        s->setPen(pen);
    };
    QColor soft = candidate;
    soft.setAlpha(150);
    style(Marks::Timed, soft, candidate, 1.0);
    style(Marks::Finalists, QColor(Qt::transparent), candidate, 2.0);
    style(Marks::Winner, verdictstyle::color(Tone::Good, p), p.color(QPalette::Base), 1.0);
    style(Marks::Failed, errorColor(p), errorColor(p), 1.0);
    for (DrawnLine& d : m_lines) {
        const QColor color = d.kind == Line::Floor   ? profilecolors::ceiling(p)
                             : d.kind == Line::Eager ? profilecolors::baseline(p)
                                                     : compileColor(p);
        QPen pen(color);
        pen.setWidthF(d.kind == Line::Floor ? 1.5 : 2.0);
        pen.setStyle(d.kind == Line::Floor ? Qt::DashLine : d.kind == Line::Compile ? Qt::DashDotLine : Qt::SolidLine);
        d.series->setPen(pen);
    }
}

QScatterSeries* TuneChart::marks(Marks m) const
{
    auto it = m_marks.find(m);
    return it == m_marks.end() ? nullptr : it->second;
}

QLineSeries* TuneChart::line(Line l) const
{
    for (const DrawnLine& d : m_lines)
        if (d.kind == l)
            return d.series;
    return nullptr;
}

QString TuneChart::labelText(Line l) const
{
    for (const DrawnLine& d : m_lines)
        if (d.kind == l)
            return d.series->name();
    return {};
}

QString TuneChart::winnerLabel() const { return m_winnerName; }
QString TuneChart::tipOf(int number) const { return m_tips.value(number); }

} // namespace kf::ui
