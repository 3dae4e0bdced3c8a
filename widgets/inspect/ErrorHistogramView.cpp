#include "widgets/inspect/ErrorHistogramView.h"

#include "widgets/inspect/Colormaps.h"

#include <QStackedBarSeries>
#include <QBarSet>
#include <QCategoryAxis>
#include <QChart>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>

#include <algorithm>
#include <cmath>

namespace kf::ui {

namespace {

constexpr int kPositions = ErrorHistogramView::kUnwrittenAt + 1;
constexpr qreal kEmpty = 1e-6;

QBarSet* makeSet(QStackedBarSeries* series, const QString& name, QColor color)
{
    auto* set = new QBarSet(name);
    set->setColor(color);
    set->setPen(Qt::NoPen);  // empty segments would otherwise draw hairlines on top of the bars
    for (int i = 0; i < kPositions; ++i)
        set->append(kEmpty);
    series->append(set);
    return set;
}

} // namespace

ErrorHistogramView::ErrorHistogramView(QWidget* parent) : PaletteChartView(parent)
{
    auto* chart = new QChart;
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->setAnimationOptions(QChart::NoAnimation);
    // One stacked series: every position has one non-zero set, so bars get the full width.
    m_bars = new QStackedBarSeries;
    m_bars->setBarWidth(0.8);
    m_within = makeSet(m_bars, tr("within tolerance"), QColor(colormaps::ratioColor(-2)));
    m_outside = makeSet(m_bars, tr("outside tolerance"), QColor(colormaps::kOutside));
    m_nonFinite = makeSet(m_bars, tr("NaN/Inf mismatch"), QColor(colormaps::kNonFinite));
    m_unwritten = makeSet(m_bars, tr("never written"), QColor(colormaps::kHazardYellow));
    chart->addSeries(m_bars);
    m_tolerance = new QLineSeries;
    m_tolerance->setName(tr("tolerance"));
    chart->addSeries(m_tolerance);

    m_x = new QCategoryAxis;
    m_x->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    m_x->setStartValue(-0.5);
    m_x->append(QStringLiteral("0"), kExactAt);
    for (int e = -8; e <= 8; e += 4)
        m_x->append(e == 0 ? QStringLiteral("1") : QStringLiteral("1e%1").arg(e), kFirstBinAt - 0.5 + (e + 8) * 2);
    m_x->setRange(-0.5, kUnwrittenAt + 0.5);
    m_x->setTitleText(tr("|error| ÷ tolerance"));
    m_x->setGridLineVisible(false);
    m_y = new QLogValueAxis;
    m_y->setBase(10);
    m_y->setLabelFormat(QStringLiteral("%g"));
    m_y->setMinorTickCount(0);
    m_y->setTitleText(tr("elements"));
    chart->addAxis(m_x, Qt::AlignBottom);
    chart->addAxis(m_y, Qt::AlignLeft);
    for (QAbstractSeries* s : chart->series()) {
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }
    chart->legend()->setAlignment(Qt::AlignTop);
    // Within and outside are read off the tolerance line; the legend names what has no position.
    for (QBarSet* set : {m_within, m_outside})
        for (QLegendMarker* m : chart->legend()->markers(m_bars))
            if (m->label() == set->label())
                m->setVisible(false);
    setChart(chart);
    setRenderHint(QPainter::Antialiasing);
    setMinimumHeight(160);
    clear();
    applyPalette();
}

void ErrorHistogramView::clear()
{
    setHistogram(ErrorHistogram{});
}

void ErrorHistogramView::setHistogram(const ErrorHistogram& h)
{
    m_counts.assign(kPositions, 0);
    m_counts[kExactAt] = h.exact;
    m_counts[kBelowAt] = h.below;
    for (int b = 0; b < ErrorHistogram::kBins; ++b)
        m_counts[static_cast<size_t>(kFirstBinAt + b)] = h.bins[b];
    m_counts[kAboveAt] = h.above;
    m_counts[kNonFiniteAt] = h.nonFinite;
    m_counts[kUnwrittenAt] = h.unwritten;
    const int firstOutside = kFirstBinAt + ErrorHistogram::kBins / 2;
    // A log axis has no 0: empty segments get a value far below the axis floor (clamped, so
    // they stay invisible and stack on the real count by a negligible amount).
    auto fill = [&](QBarSet* set, auto belongs) {
        for (int i = 0; i < kPositions; ++i) {
            const qint64 c = belongs(i) ? m_counts[static_cast<size_t>(i)] : 0;
            set->replace(i, c > 0 ? static_cast<qreal>(c) : kEmpty);
        }
    };
    fill(m_within, [&](int i) { return i < firstOutside; });
    fill(m_outside, [&](int i) { return i >= firstOutside && i <= kAboveAt; });
    fill(m_nonFinite, [&](int i) { return i == kNonFiniteAt; });
    fill(m_unwritten, [&](int i) { return i == kUnwrittenAt; });
    const qint64 top = std::max<qint64>(*std::max_element(m_counts.begin(), m_counts.end()), 1);
    const double yMax = std::pow(10.0, std::ceil(std::log10(static_cast<double>(top) * 2.0)));
    m_y->setRange(kFloor, yMax);
    // The special classes are named with their counts: their bars may be one element high.
    m_nonFinite->setLabel(tr("NaN/Inf mismatch: %1").arg(h.nonFinite));
    m_unwritten->setLabel(tr("never written: %1").arg(h.unwritten));
    m_tolerance->clear();
    m_tolerance->append(toleranceAt(), kFloor);
    m_tolerance->append(toleranceAt(), yMax);
}

qint64 ErrorHistogramView::countAt(int position) const
{
    return position >= 0 && position < static_cast<int>(m_counts.size()) ? m_counts[static_cast<size_t>(position)] : 0;
}

void ErrorHistogramView::applyPalette()
{
    const QPalette pal = palette();
    QChart* c = chart();
    c->setBackgroundBrush(pal.color(QPalette::Base));
    c->setBackgroundRoundness(0);
    c->setPlotAreaBackgroundVisible(false);
    c->legend()->setLabelColor(pal.color(QPalette::WindowText));
    QColor grid = pal.color(QPalette::WindowText);
    grid.setAlpha(50);
    for (QAbstractAxis* a : {static_cast<QAbstractAxis*>(m_x), static_cast<QAbstractAxis*>(m_y)}) {
        a->setLabelsBrush(pal.color(QPalette::WindowText));
        a->setTitleBrush(pal.color(QPalette::WindowText));
        a->setLinePenColor(pal.color(QPalette::PlaceholderText));
        a->setGridLineColor(grid);
    }
    m_tolerance->setPen(QPen(pal.color(QPalette::WindowText), 1.5, Qt::DashLine));
}

} // namespace kf::ui
