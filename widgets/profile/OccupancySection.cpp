#include "widgets/profile/OccupancySection.h"

#include "engine/protocol/MetricCatalog.h"
#include "widgets/common/SelectableLabel.h"
#include "widgets/profile/PercentBar.h"
#include "widgets/profile/ProfileColors.h"
#include "widgets/profile/ProfileFormat.h"
#include "widgets/profile/ProfileSelection.h"

#include <QEvent>
#include <QGridLayout>
#include <QLabel>

#include <set>

namespace kf::ui {
namespace {

/// One fact as an unbreakable unit: a wrapped line breaks between facts ("16 registers/thread ·
/// 0 B static shared"), never inside one ("local/" | "thread").
QString keepTogether(QString fact)
{
    fact.replace(QLatin1Char(' '), QChar(QChar::Nbsp));
    fact.replace(QLatin1Char('/'), QStringLiteral("/\u2060"));
    return fact;
}

QString absentWhy(const QString& countersWhy)
{
    return countersWhy.isEmpty() ? OccupancySection::tr("not collected") : countersWhy;
}

} // namespace

OccupancySection::OccupancySection(QWidget* parent)
    : QGroupBox(tr("Occupancy"), parent)
{
    setObjectName(QStringLiteral("occupancySection"));
    m_achieved = new PercentBar(this);
    m_achieved->setObjectName(QStringLiteral("occupancy.achieved"));
    m_achieved->setAccessibleName(tr("achieved occupancy"));
    m_theoretical = new PercentBar(this);
    m_theoretical->setObjectName(QStringLiteral("occupancy.theoretical"));
    m_theoretical->setAccessibleName(tr("theoretical occupancy"));
    m_baseline = new PercentBar(this);
    m_baseline->setObjectName(QStringLiteral("occupancy.baseline"));
    m_baseline->setAccessibleName(tr("baseline achieved occupancy"));
    m_limiter = selectableLabel(QStringLiteral("occupancy.limiter"), this);
    m_limits = selectableLabel(QStringLiteral("occupancy.limits"), this);
    m_limits->setTextFormat(Qt::RichText);
    m_resources = selectableLabel(QStringLiteral("occupancy.resources"), this);

    auto* achievedLabel = new QLabel(tr("Achieved"), this);
    achievedLabel->setToolTip(QString::fromUtf8(kf::profile::findMetric(kf::profile::key::kAchievedOccupancy)->meaning));
    auto* theoreticalLabel = new QLabel(tr("Theoretical"), this);
    theoreticalLabel->setToolTip(tr("the most warps the SM can hold for this launch, from registers, shared "
                                    "memory and block size"));
    m_baselineLabel = new QLabel(tr("Baseline"), this);
    m_baselineLabel->setToolTip(tr("the baseline's achieved occupancy (its kernels are LibTorch's: no static numbers)"));

    auto* grid = new QGridLayout(this);
    grid->setColumnStretch(1, 1);
    grid->setVerticalSpacing(4);
    grid->addWidget(achievedLabel, 0, 0);
    grid->addWidget(m_achieved, 0, 1);
    grid->addWidget(theoreticalLabel, 1, 0);
    grid->addWidget(m_theoretical, 1, 1);
    grid->addWidget(m_baselineLabel, 2, 0);
    grid->addWidget(m_baseline, 2, 1);
    grid->addWidget(m_limiter, 3, 0, 1, 2);
    grid->addWidget(m_limits, 4, 0, 1, 2);
    grid->addWidget(m_resources, 5, 0, 1, 2);
    grid->setRowStretch(6, 1);
    applyColors();
    clear();
}

void OccupancySection::setSelection(const ProfileSelection& candidate, const ProfileSelection* baseline,
                                    const QString& countersWhy)
{
    m_achieved->setValue(candidate.totals.achievedOccupancyPct, absentWhy(countersWhy));
    m_baselineLabel->setVisible(baseline != nullptr);
    m_baseline->setVisible(baseline != nullptr);
    if (baseline)
        m_baseline->setValue(baseline->totals.achievedOccupancyPct, absentWhy(countersWhy));
    if (candidate.kernel) {
        const kf::profile::KernelRecord& k = *candidate.kernel;
        m_theoretical->setValue(k.statics.known ? std::optional<double>(k.statics.theoreticalOccupancyPct) : std::nullopt,
                                tr("the kernel's static numbers are not known"));
        showLimits(k);
    } else {
        showSeveral(candidate);
    }
}

void OccupancySection::showLimits(const kf::profile::KernelRecord& k)
{
    const kf::profile::StaticResources& s = k.statics;
    m_limiter->setText(limiterSentence(k));
    if (s.known && s.activeBlocksPerSm > 0) {
        auto cell = [&](const QString& name, int blocks, bool limiting) {
            const QString text = QStringLiteral("%1 %2").arg(name).arg(blocks).toHtmlEscaped();
            return limiting ? QStringLiteral("<b>%1</b>").arg(text) : text;
        };
        const bool full = s.theoreticalOccupancyPct >= 99.95;
        m_limits->setText(tr("blocks per SM allowed by ") + cell(tr("warps"), s.blocksLimitWarps, !full && s.limiter == "warps")
                          + QStringLiteral(" · ") + cell(tr("registers"), s.blocksLimitRegisters, !full && s.limiter == "registers")
                          + QStringLiteral(" · ")
                          + cell(tr("shared memory"), s.blocksLimitShared,
                                 !full && (s.limiter == "shared_memory" || s.limiter == "shared memory"))
                          + QStringLiteral(" · ") + cell(tr("block slots"), s.blocksLimitBlocks, !full && s.limiter == "blocks"));
    } else {
        m_limits->clear();
    }
    // Two lines: what the kernel uses, then how it is launched.
    QStringList uses, launch;
    if (s.known) {
        uses << tr("%1 registers/thread").arg(s.registers) << tr("%1 static shared").arg(bytesText(s.staticSharedBytes));
        if (k.dynamicSharedBytes > 0)
            uses << tr("%1 dynamic shared").arg(bytesText(static_cast<double>(k.dynamicSharedBytes)));
        uses << tr("%1 local/thread").arg(bytesText(s.localBytes));
    }
    if (k.threadsPerBlock() > 0)
        launch << tr("block %1").arg(dimText(k.block));
    if (k.blocks() > 0)
        launch << tr("grid %1 (%2 blocks)").arg(dimText(k.grid)).arg(k.blocks());
    QStringList lines;
    for (QStringList* part : {&uses, &launch}) {
        for (QString& fact : *part)
            fact = keepTogether(fact);
        if (!part->isEmpty())
            lines << part->join(QStringLiteral(" · "));
    }
    m_resources->setText(lines.join(QLatin1Char('\n')));
}

void OccupancySection::showSeveral(const ProfileSelection& candidate)
{
    // Theoretical occupancy is per launch; over several kernels the time-weighted mean is what
    // the achieved mean compares with (an unweighted mean without durations).
    double weighted = 0, weights = 0;
    std::set<std::string> limiters;
    QStringList perKernel;
    bool allKnown = true;
    for (const kf::profile::KernelRecord* k : candidate.kernels) {
        if (!k->statics.known) {
            allKnown = false;
            continue;
        }
        const double w = candidate.totals.hasCounters ? k->metric(kf::profile::key::kDuration).value_or(0) : 1.0;
        weighted += w * k->statics.theoreticalOccupancyPct;
        weights += w;
        limiters.insert(k->statics.limiter);
        perKernel << QStringLiteral("%1 %2").arg(shortKernelName(*k), percentText(k->statics.theoreticalOccupancyPct));
    }
    const bool have = allKnown && weights > 0;
    m_theoretical->setValue(have ? std::optional<double>(weighted / weights) : std::nullopt,
                            tr("not every kernel's static numbers are known"));
    m_theoretical->setToolTip(have ? tr("time-weighted over %n kernels", nullptr, static_cast<int>(candidate.kernels.size()))
                                   : m_theoretical->toolTip());
    m_limiter->setText(limiters.size() == 1 && have
                           ? tr("every kernel is limited by %1; pick one for the details").arg(limiterWords(*limiters.begin()))
                           : tr("pick a kernel to see what limits it"));
    m_limits->setText(perKernel.join(QStringLiteral(" · ")).toHtmlEscaped());
    m_resources->clear();
}

void OccupancySection::clear()
{
    m_achieved->setValue(std::nullopt);
    m_theoretical->setValue(std::nullopt);
    m_baseline->setValue(std::nullopt);
    m_baselineLabel->hide();
    m_baseline->hide();
    m_limiter->clear();
    m_limits->clear();
    m_resources->clear();
}

void OccupancySection::changeEvent(QEvent* event)
{
    QGroupBox::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        applyColors();
}

void OccupancySection::applyColors()
{
    m_achieved->setColor(profilecolors::candidate(palette()));
    // Theoretical is the ceiling achieved is measured against: the roofline's ceiling colour.
    m_theoretical->setColor(profilecolors::ceiling(palette()));
    m_baseline->setColor(profilecolors::baseline(palette()));
}

} // namespace kf::ui
