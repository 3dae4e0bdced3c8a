#include "widgets/registry/SpeedupChart.h"

#include "widgets/registry/RegistryModel.h"
#include "widgets/common/VerdictStyle.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QLineSeries>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace kf::ui {

namespace {

QString categoryName(const kf::protocol::ShapeId& shape, double speedup, int index)
{
    QString name = QString::fromStdString(shape.label);
    if (name.isEmpty())
        name = QString::fromStdString(shape.dimsText());
    if (name.isEmpty())
        name = QObject::tr("shape %1").arg(index + 1);
    return name + QLatin1Char('\n') + RegistryModel::speedupText(speedup);
}

} // namespace

SpeedupChart::SpeedupChart(QWidget* parent) : PaletteChartView(parent)
{
    auto* c = new QChart;
    c->setMargins(QMargins(4, 4, 4, 4));
    c->setBackgroundRoundness(0);
    c->legend()->setAlignment(Qt::AlignBottom);
    setChart(c); // the view owns the chart

    m_set = new QBarSet(tr("speedup over LibTorch (below 1.0× in red)"));
    m_bars = new QBarSeries(c);
    m_bars->append(m_set);
    m_compileSet = new QBarSet(tr("speedup over torch.compile (its faster mode)"), this);
    m_bars->setBarWidth(0.6);
    m_parity = new QLineSeries(c);
    m_parity->setName(tr("1.0× (as fast as LibTorch)"));
    m_thresholdLine = new QLineSeries(c);
    c->addSeries(m_bars);
    c->addSeries(m_parity);
    c->addSeries(m_thresholdLine);

    m_x = new QBarCategoryAxis(c);
    m_x->setTitleText(tr("benchmark shape"));
    m_y = new QValueAxis(c);
    m_y->setTitleText(tr("speedup over LibTorch (×)"));
    m_y->setLabelFormat(QStringLiteral("%.2f"));
    c->addAxis(m_x, Qt::AlignBottom);
    c->addAxis(m_y, Qt::AlignLeft);
    for (QAbstractSeries* s : {static_cast<QAbstractSeries*>(m_bars), static_cast<QAbstractSeries*>(m_parity),
                               static_cast<QAbstractSeries*>(m_thresholdLine)}) {
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }

    setRenderHint(QPainter::Antialiasing);
    setMinimumSize(240, 200);
    clearData();
    applyPalette();
}

void SpeedupChart::setReport(const kf::protocol::BenchReport* performance, double threshold)
{
    clearData();
    m_threshold = threshold;
    if (!performance || performance->shapes.empty()) {
        chart()->setTitle(tr("No benchmark shapes in the performance report"));
        return;
    }

    QStringList names;
    double top = std::max(1.0, threshold);
    for (const kf::protocol::BenchShape& s : performance->shapes) {
        const double v = s.speedup.value_or(std::nan(""));
        m_speedups.append(v);
        if (std::isfinite(v))
            top = std::max(top, v);
        QString name = categoryName(s.id, v, static_cast<int>(names.size()));
        // Categories with one name would share one bar.
        while (names.contains(name))
            name += QLatin1Char(' ');
        names.append(name);
    }
    top *= 1.15;
    for (int i = 0; i < m_speedups.size(); ++i) {
        const double v = m_speedups[i];
        m_set->append(std::isnan(v) ? 0.0 : std::isinf(v) ? (v > 0 ? top : 0.0) : v);
        if (!(v >= 1.0))
            m_set->selectBar(i);
    }
    bool compared = false;
    for (const kf::protocol::BenchShape& s : performance->shapes)
        compared = compared || (s.compile && s.compile->measured);
    if (compared) {
        for (const kf::protocol::BenchShape& s : performance->shapes) {
            const double v = s.compile && s.compile->measured ? s.compile->speedup.value_or(std::nan("")) : std::nan("");
            m_compileSpeedups.append(v);
            if (std::isfinite(v))
                top = std::max(top, v * 1.15);
            m_compileSet->append(std::isfinite(v) ? v : 0.0);
        }
        m_bars->append(m_compileSet);
    }
    m_y->setTitleText(compared ? tr("speedup (×)") : tr("speedup over LibTorch (×)"));
    m_x->setCategories(names);
    m_y->setRange(0, top);
    m_y->applyNiceNumbers();

    // Lines from the left edge of the first bar's slot to the right edge of the last one.
    const double left = -0.5;
    const double right = static_cast<double>(names.size()) - 0.5;
    m_parity->replace(QList<QPointF>{{left, 1.0}, {right, 1.0}});
    m_thresholdLine->replace(QList<QPointF>{{left, threshold}, {right, threshold}});
    m_thresholdLine->setName(tr("registry threshold %1 (geometric mean)").arg(RegistryModel::speedupText(threshold)));
    const double geomean = performance->geomeanSpeedup.value_or(std::nan(""));
    QString title = tr("Geometric-mean speedup %1 over %2 shapes (threshold %3)")
                        .arg(RegistryModel::speedupText(geomean))
                        .arg(names.size())
                        .arg(RegistryModel::speedupText(threshold));
    if (const auto c = performance->compileSpeedup())
        title += tr("; %1 torch.compile").arg(RegistryModel::speedupText(*c));
    else if (performance->compileBaseline)
        title += tr("; torch.compile not measured");
    chart()->setTitle(title);
}

void SpeedupChart::clearData()
{
    m_set->remove(0, m_set->count());
    m_set->deselectAllBars();
    m_x->clear();
    m_parity->clear();
    m_thresholdLine->clear();
    m_speedups.clear();
    m_compileSpeedups.clear();
    if (m_bars->barSets().contains(m_compileSet))
        m_bars->take(m_compileSet);
    m_compileSet->remove(0, m_compileSet->count());
    m_y->setRange(0, 2);
    chart()->setTitle(QString());
}

int SpeedupChart::barCount() const
{
    return m_set->count();
}

QStringList SpeedupChart::categories() const
{
    QStringList out;
    for (const QString& c : m_x->categories())
        out.append(c.trimmed());
    return out;
}

QList<double> SpeedupChart::referenceLines() const
{
    if (m_parity->count() == 0)
        return {};
    return {m_parity->at(0).y(), m_thresholdLine->at(0).y()};
}

void SpeedupChart::applyPalette()
{
    const QPalette& p = palette();
    applyChartTheme(p);
    chart()->setTitleBrush(p.color(QPalette::Text));
    chart()->legend()->setLabelColor(p.color(QPalette::Text));
    m_set->setColor(p.color(QPalette::Highlight));
    m_set->setBorderColor(p.color(QPalette::Highlight).darker(130));
    m_set->setSelectedColor(verdictstyle::color(Tone::Bad, p));
    m_compileSet->setColor(p.color(QPalette::Mid));
    m_compileSet->setBorderColor(p.color(QPalette::Dark));
    QPen parity(p.color(QPalette::Text));
    parity.setStyle(Qt::DashLine);
    parity.setWidthF(1.2);
    m_parity->setPen(parity);
    QPen threshold(verdictstyle::color(Tone::Good, p));
    threshold.setStyle(Qt::DashLine);
    threshold.setWidthF(2.0);
    m_thresholdLine->setPen(threshold);
    for (QAbstractAxis* axis : {static_cast<QAbstractAxis*>(m_x), static_cast<QAbstractAxis*>(m_y)}) {
        axis->setLabelsBrush(p.color(QPalette::Text));
        axis->setTitleBrush(p.color(QPalette::Text));
    }
}

} // namespace kf::ui
