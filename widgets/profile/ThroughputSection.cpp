#include "widgets/profile/ThroughputSection.h"

#include "engine/protocol/MetricCatalog.h"
#include "engine/protocol/ProfileReport.h"
#include "widgets/profile/PercentBar.h"
#include "widgets/profile/ProfileColors.h"
#include "widgets/profile/ProfileFormat.h"
#include "widgets/profile/ProfileSelection.h"

#include <QEvent>
#include <QGridLayout>
#include <QLabel>

#include <array>

namespace kf::ui {
namespace {

namespace key = kf::profile::key;

struct BarRow {
    const char* name;
    const char* title;
    const char* metricKey;
};
constexpr std::array kBars{
    BarRow{"sm", QT_TRANSLATE_NOOP("kf::ui::ThroughputSection", "SM"), key::kSmThroughput},
    BarRow{"dram", QT_TRANSLATE_NOOP("kf::ui::ThroughputSection", "DRAM"), key::kDramThroughput},
    BarRow{"memory", QT_TRANSLATE_NOOP("kf::ui::ThroughputSection", "Memory"), key::kMemoryThroughput},
};

struct ValueRow {
    const char* name;
    const char* title;
    const char* tooltip;
};
constexpr std::array kValues{
    ValueRow{"l1", QT_TRANSLATE_NOOP("kf::ui::ThroughputSection", "L1 hit rate"), nullptr},
    ValueRow{"l2", QT_TRANSLATE_NOOP("kf::ui::ThroughputSection", "L2 hit rate"), nullptr},
    ValueRow{"dramBytes", QT_TRANSLATE_NOOP("kf::ui::ThroughputSection", "DRAM traffic"),
             QT_TRANSLATE_NOOP("kf::ui::ThroughputSection", "bytes read from and written to DRAM")},
    ValueRow{"duration", QT_TRANSLATE_NOOP("kf::ui::ThroughputSection", "Duration"),
             QT_TRANSLATE_NOOP("kf::ui::ThroughputSection", "GPU time of the profiled launch, summed over its kernels "
                                                            "(replayed under the profiler: slower than a timed run)")},
    ValueRow{"bandwidth", QT_TRANSLATE_NOOP("kf::ui::ThroughputSection", "Bandwidth"),
             QT_TRANSLATE_NOOP("kf::ui::ThroughputSection", "DRAM traffic over the duration, and its share of the DRAM peak")},
    ValueRow{"flopRate", QT_TRANSLATE_NOOP("kf::ui::ThroughputSection", "Compute"),
             QT_TRANSLATE_NOOP("kf::ui::ThroughputSection", "floating-point operations over the duration (an FMA counts two)")},
    ValueRow{"intensity", QT_TRANSLATE_NOOP("kf::ui::ThroughputSection", "Intensity"),
             QT_TRANSLATE_NOOP("kf::ui::ThroughputSection", "FLOPs per DRAM byte: the roofline's x")},
};
enum ValueIndex { L1, L2, DramBytes, Duration, Bandwidth, FlopRate, Intensity };

const char* const kSides[2] = {"candidate", "baseline"};

} // namespace

ThroughputSection::ThroughputSection(QWidget* parent)
    : QGroupBox(tr("Throughput"), parent)
{
    setObjectName(QStringLiteral("throughputSection"));
    auto* grid = new QGridLayout(this);
    grid->setVerticalSpacing(3);
    grid->setColumnStretch(1, 1);
    grid->setColumnStretch(2, 1);
    for (int side = 0; side < 2; ++side) {
        Column& c = m_columns[side];
        const QString suffix = QLatin1Char('.') + QLatin1String(kSides[side]);
        c.head = new QLabel(this);
        c.head->setObjectName(QStringLiteral("throughput.head") + suffix);
        QFont bold = c.head->font();
        bold.setBold(true);
        c.head->setFont(bold);
        c.head->setWordWrap(true); // "candidate · a_long_kernel_name" must not widen its column
        grid->addWidget(c.head, 0, 1 + side);
        int row = 1;
        for (const BarRow& b : kBars) {
            auto* bar = new PercentBar(this);
            bar->setObjectName(QStringLiteral("throughput.") + QLatin1String(b.name) + suffix);
            bar->setAccessibleName(QStringLiteral("%1 %2 throughput").arg(QLatin1String(kSides[side]), tr(b.title)));
            grid->addWidget(bar, row++, 1 + side);
            c.bars.push_back(bar);
        }
        for (const ValueRow& v : kValues) {
            auto* label = new QLabel(this);
            label->setObjectName(QStringLiteral("throughput.") + QLatin1String(v.name) + suffix);
            label->setTextInteractionFlags(Qt::TextSelectableByMouse);
            grid->addWidget(label, row++, 1 + side);
            c.values.push_back(label);
        }
    }
    int row = 1;
    for (const BarRow& b : kBars) {
        auto* title = new QLabel(tr(b.title), this);
        title->setToolTip(QString::fromUtf8(kf::profile::findMetric(b.metricKey)->meaning));
        grid->addWidget(title, row++, 0);
    }
    for (const ValueRow& v : kValues) {
        auto* title = new QLabel(tr(v.title), this);
        if (v.tooltip)
            title->setToolTip(tr(v.tooltip));
        grid->addWidget(title, row++, 0);
    }
    m_comparison = new QLabel(this);
    m_comparison->setObjectName(QStringLiteral("throughput.comparison"));
    m_comparison->setWordWrap(true);
    grid->addWidget(m_comparison, row++, 0, 1, 3);
    grid->setRowStretch(row, 1);
    applyColors();
    clear();
}

void ThroughputSection::fill(Column& c, const ProfileSelection& s, const kf::profile::Ceilings& ceilings,
                             const QString& why)
{
    const kf::profile::Totals& t = s.totals;
    c.head->setText(s.title);
    c.head->setToolTip(s.kernel ? QString::fromStdString(s.kernel->demangled.empty() ? s.kernel->name : s.kernel->demangled)
                                : QString());
    const QString absent = why.isEmpty() ? tr("not collected") : why;
    const std::optional<double> bars[] = {t.smThroughputPct, t.dramThroughputPct, t.memoryThroughputPct};
    for (size_t i = 0; i < c.bars.size(); ++i)
        c.bars[i]->setValue(bars[i], absent);

    const QString none = QStringLiteral("—");
    c.values[L1]->setText(percentText(t.l1HitRatePct));
    c.values[L2]->setText(percentText(t.l2HitRatePct));
    if (!t.hasCounters) {
        for (size_t i = DramBytes; i < c.values.size(); ++i)
            c.values[i]->setText(none);
    } else {
        c.values[DramBytes]->setText(bytesText(t.dramBytes));
        c.values[Duration]->setText(durationText(t.durationNs));
        c.values[Bandwidth]->setText(bandwidthText(t.achievedDramGbs));
        c.values[FlopRate]->setText(flopRateText(t.achievedGflops));
        c.values[Intensity]->setText(t.flops > 0 && t.dramBytes > 0 ? intensityText(t.arithmeticIntensity) : none);
    }
    for (QLabel* l : c.values)
        l->setToolTip(l->text() == none ? absent : QString());
    // The share of the roof, where the narrow column has no room for it.
    if (t.hasCounters && ceilings.dramGbs > 0)
        c.values[Bandwidth]->setToolTip(tr("%1 of the %2 DRAM peak")
                                            .arg(percentText(100.0 * t.achievedDramGbs / ceilings.dramGbs),
                                                 bandwidthText(ceilings.dramGbs)));
}

void ThroughputSection::setSelection(const ProfileSelection& candidate, const ProfileSelection* baseline,
                                     const kf::profile::Ceilings& ceilings, const QString& countersWhy)
{
    fill(m_columns[0], candidate, ceilings, countersWhy);
    setBaselineVisible(baseline != nullptr);
    m_comparison->clear();
    if (!baseline)
        return;
    fill(m_columns[1], *baseline, ceilings, countersWhy);
    const double mine = candidate.totals.durationNs, theirs = baseline->totals.durationNs;
    // Only the whole candidate compares with the whole baseline; one kernel of several does not.
    if (mine > 0 && theirs > 0 && candidate.wholeSide) {
        const double ratio = theirs / mine;
        m_comparison->setText(ratio >= 1 ? tr("candidate is %1× faster than the baseline under the profiler")
                                               .arg(QString::number(ratio, 'f', 2))
                                         : tr("candidate is %1× slower than the baseline under the profiler")
                                               .arg(QString::number(1 / ratio, 'f', 2)));
    }
}

void ThroughputSection::setBaselineVisible(bool visible)
{
    Column& c = m_columns[1];
    c.head->setVisible(visible);
    for (PercentBar* b : c.bars)
        b->setVisible(visible);
    for (QLabel* l : c.values)
        l->setVisible(visible);
    m_comparison->setVisible(visible);
}

void ThroughputSection::clear()
{
    for (Column& c : m_columns) {
        c.head->clear();
        for (PercentBar* b : c.bars)
            b->setValue(std::nullopt);
        for (QLabel* l : c.values)
            l->clear();
    }
    m_comparison->clear();
    setBaselineVisible(false);
}

void ThroughputSection::changeEvent(QEvent* event)
{
    QGroupBox::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        applyColors();
}

void ThroughputSection::applyColors()
{
    for (PercentBar* b : m_columns[0].bars)
        b->setColor(profilecolors::candidate(palette()));
    for (PercentBar* b : m_columns[1].bars)
        b->setColor(profilecolors::baseline(palette()));
}

} // namespace kf::ui
