// The Profile panel as a kernel author reads it after a profile: achieved against theoretical
// occupancy with its limiter, throughput against peak beside the baseline, the roofline with
// its ceilings and points (copy kernels included), the hints the engine derives, every metric
// in a table, and what the panel says when counters are not permitted.
#include "profilefixture.h"
#include "testutil.h"

#include "engine/profile/Hints.h"
#include "widgets/common/StatusColors.h"
#include "widgets/profile/HintList.h"
#include "widgets/profile/MetricTableModel.h"
#include "widgets/profile/PercentBar.h"
#include "widgets/profile/ProfileFormat.h"
#include "widgets/profile/ProfilePanel.h"
#include "widgets/profile/Roofline.h"
#include "widgets/profile/RooflineChart.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QBoxLayout>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QFrame>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QStyleFactory>
#include <QTableView>
#include <QToolButton>
#include <QtTest>

#include <cmath>

using kf::ui::PercentBar;
using kf::ui::ProfilePanel;
using kf::ui::Roofline;
using kf::ui::RooflineCeiling;
using kf::ui::RooflineInput;
using kf::ui::RooflinePoint;
using namespace profiletest;

Q_DECLARE_METATYPE(RooflinePoint::Placement)

namespace {

template <class T>
T* child(const QWidget& w, const QString& name)
{
    T* c = w.findChild<T*>(name);
    if (!c)
        qFatal("no child %s", qPrintable(name));
    return c;
}

QString text(const QWidget& w, const QString& name)
{
    return child<QLabel>(w, name)->text();
}

/// Relative comparison for numbers that went through a division.
bool near(double a, double b, double rel = 1e-9)
{
    return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b));
}

QStringList cardTexts(const ProfilePanel& panel, const QString& labelName)
{
    QStringList out;
    for (QFrame* card : panel.hintList()->findChildren<QFrame*>(QStringLiteral("hint")))
        if (auto* l = card->findChild<QLabel*>(labelName))
            out << l->text();
    return out;
}


} // namespace

class TestProfilePanel : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        // One style everywhere so sizes do not depend on the machine's default.
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    }

    void numbersReadAsNsightPrintsThem_data()
    {
        QTest::addColumn<QString>("shown");
        QTest::addColumn<QString>("expected");
        QTest::newRow("2.15 GB of copy traffic") << kf::ui::bytesText(2147617024) << "2.15 GB";
        QTest::newRow("small byte count stays exact") << kf::ui::bytesText(512) << "512 B";
        QTest::newRow("717 us copy") << kf::ui::durationText(716832) << "717 µs";
        QTest::newRow("2.93 ms sgemm") << kf::ui::durationText(2931072) << "2.93 ms";
        QTest::newRow("H100 DRAM bandwidth") << kf::ui::bandwidthText(2996.0) << "3.00 TB/s";
        QTest::newRow("sgemm rate") << kf::ui::flopRateText(46900) << "46.9 TFLOP/s";
        QTest::newRow("no flops") << kf::ui::flopRateText(0) << "0 FLOP/s";
        QTest::newRow("whole percent drops .0") << kf::ui::percentText(100.0) << "100 %";
        QTest::newRow("absent percent") << kf::ui::percentText(std::nullopt) << "—";
        QTest::newRow("ridge intensity") << kf::ui::intensityText(66900 / 3349.8) << "20.0 FLOP/B";
    }

    void numbersReadAsNsightPrintsThem()
    {
        QFETCH(QString, shown);
        QFETCH(QString, expected);
        QCOMPARE(shown, expected);
    }

    void occupancyShowsAchievedBesideTheoretical_data()
    {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<double>("achieved");   // NaN: no counters
        QTest::addColumn<double>("theoretical");
        QTest::addColumn<QString>("limiter");
        QTest::addColumn<QString>("resources");

        QTest::newRow("stream copy fills the SM")
            << "copy_stream" << 87.1 << 100.0 << "full occupancy: 8 blocks per SM (64 of 64 warps)"
            << "16 registers/thread · 0 B static shared · 0 B local/thread\nblock 256×1×1 · grid 1056×1×1 (1056 blocks)";
        QTest::newRow("sgemm is register-bound")
            << "sgemm_registers" << 24.3 << 25.0
            << "limited by registers: 128 registers × 256 threads allow 2 blocks per SM (16 of 64 warps)"
            << "128 registers/thread · 16.4 kB static shared";
        QTest::newRow("conv2d is shared-memory-bound")
            << "conv2d_shared" << 35.1 << 37.5 << "limited by shared memory: 0 B static + 73.7 kB dynamic per block allow 3 blocks"
            << "73.7 kB dynamic shared";
        QTest::newRow("layernorm spills") << "layernorm_spills" << 45.1 << 50.0 << "limited by registers" << "40 B local/thread";
        QTest::newRow("no counters: theoretical still shown")
            << "conv1d_no_counters" << std::nan("") << 37.5 << "limited by registers: 72 registers × 256 threads" << "72 registers/thread";
    }

    void occupancyShowsAchievedBesideTheoretical()
    {
        QFETCH(QString, fixture);
        QFETCH(double, achieved);
        QFETCH(double, theoretical);
        QFETCH(QString, limiter);
        QFETCH(QString, resources);

        ProfilePanel panel;
        panel.setReport(load(qPrintable(fixture)));
        auto* achievedBar = child<PercentBar>(panel, "occupancy.achieved");
        auto* theoreticalBar = child<PercentBar>(panel, "occupancy.theoretical");
        if (std::isnan(achieved)) {
            QVERIFY(!achievedBar->value());
            QCOMPARE(achievedBar->text(), QStringLiteral("—"));
            QVERIFY2(achievedBar->toolTip().contains("no hardware counters"), qPrintable(achievedBar->toolTip()));
        } else {
            QCOMPARE(*achievedBar->value(), achieved);
            QCOMPARE(achievedBar->text(), kf::ui::percentText(achieved));
        }
        QCOMPARE(*theoreticalBar->value(), theoretical);
        QVERIFY2(text(panel, "occupancy.limiter").startsWith(limiter), qPrintable(text(panel, "occupancy.limiter")));
        // The facts are kept unbroken with no-break spaces and word joiners; compare what one reads.
        QString shown = text(panel, "occupancy.resources");
        shown.replace(QChar(QChar::Nbsp), QLatin1Char(' ')).remove(QChar(0x2060));
        QVERIFY2(shown.contains(resources), qPrintable(shown));
    }

    void theLimiterIsBoldAmongTheLimits()
    {
        ProfilePanel panel;
        panel.setReport(load("sgemm_registers"));
        QCOMPARE(text(panel, "occupancy.limits"),
                 QStringLiteral("blocks per SM allowed by warps 8 · <b>registers 2</b> · shared memory 13 · block slots 32"));
        // At full occupancy nothing limits: no part is bold.
        panel.setReport(load("copy_stream"));
        QVERIFY(!text(panel, "occupancy.limits").contains("<b>"));
    }

    void throughputAgainstPeakBesideTheBaseline_data()
    {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<QList<double>>("candidate");   // sm, dram, memory
        QTest::addColumn<QList<double>>("baseline");    // empty: no baseline column
        QTest::addColumn<QString>("duration");
        QTest::addColumn<QString>("comparison");

        QTest::newRow("stream copy vs at::native copy")
            << "copy_stream" << QList<double>{14.2, 89.4, 89.4} << QList<double>{15.9, 88.7, 88.7} << "717 µs"
            << "candidate is 1.01× faster than the baseline under the profiler";
        QTest::newRow("sgemm vs cuBLAS") << "sgemm_registers" << QList<double>{84.6, 2.9, 61.3} << QList<double>{91.3, 2.7, 55.0}
                                         << "2.93 ms" << "candidate is 1.22× slower than the baseline under the profiler";
        QTest::newRow("no baseline profiled") << "layernorm_spills" << QList<double>{27.8, 34.5, 38.9} << QList<double>{}
                                              << "465 µs" << "";
    }

    void throughputAgainstPeakBesideTheBaseline()
    {
        QFETCH(QString, fixture);
        QFETCH(QList<double>, candidate);
        QFETCH(QList<double>, baseline);
        QFETCH(QString, duration);
        QFETCH(QString, comparison);

        const kf::profile::ProfileReport report = load(qPrintable(fixture));
        ProfilePanel panel;
        panel.setReport(report);
        const char* rows[] = {"sm", "dram", "memory"};
        for (int i = 0; i < 3; ++i) {
            auto* bar = child<PercentBar>(panel, QStringLiteral("throughput.%1.candidate").arg(rows[i]));
            QVERIFY(bar->value());
            QVERIFY2(std::fabs(*bar->value() - candidate[i]) < 0.05, rows[i]);
            auto* base = child<PercentBar>(panel, QStringLiteral("throughput.%1.baseline").arg(rows[i]));
            QCOMPARE(base->isVisibleTo(&panel), !baseline.isEmpty());
            if (!baseline.isEmpty())
                QVERIFY2(std::fabs(*base->value() - baseline[i]) < 0.05, rows[i]);
        }
        QCOMPARE(text(panel, "throughput.duration.candidate"), duration);
        QCOMPARE(text(panel, "throughput.dramBytes.candidate"), kf::ui::bytesText(report.candidate->totals.dramBytes));
        QCOMPARE(child<QLabel>(panel, "throughput.head.baseline")->isVisibleTo(&panel), !baseline.isEmpty());
        QCOMPARE(text(panel, "throughput.comparison"), comparison);
    }

    void copyBandwidthIsTheMeasuredOne()
    {
        // 1073872896 + 1073744128 bytes in 716832 ns: 2996 GB/s, 89.4 % of the 3349.8 GB/s roof.
        ProfilePanel panel;
        panel.setReport(load("copy_stream"));
        QCOMPARE(text(panel, "throughput.bandwidth.candidate"), QStringLiteral("3.00 TB/s"));
        QCOMPARE(child<QLabel>(panel, "throughput.bandwidth.candidate")->toolTip(),
                 QStringLiteral("89.4 % of the 3.35 TB/s DRAM peak"));
        QCOMPARE(text(panel, "throughput.flopRate.candidate"), QStringLiteral("0 FLOP/s"));
        QCOMPARE(text(panel, "throughput.intensity.candidate"), QStringLiteral("—"));
        QCOMPARE(text(panel, "throughput.l2.candidate"), QStringLiteral("50.2 %"));
    }

    void withoutCountersThePanelSaysWhyAndHow_data()
    {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<bool>("banner");
        QTest::newRow("insufficient privileges") << "conv1d_no_counters" << true;
        QTest::newRow("counters collected") << "copy_stream" << false;
    }

    void withoutCountersThePanelSaysWhyAndHow()
    {
        QFETCH(QString, fixture);
        QFETCH(bool, banner);
        ProfilePanel panel;
        const auto report = load(qPrintable(fixture));
        panel.setReport(report);
        QCOMPARE(child<QFrame>(panel, "counterBanner")->isVisibleTo(&panel), banner);
        if (!banner)
            return;
        QCOMPARE(text(panel, "counterProblem"), QString::fromStdString(report.counters.problem));
        QVERIFY(text(panel, "counterProblem").startsWith("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"));
        QVERIFY(text(panel, "counterHowTo").contains("NVreg_RestrictProfilingToAdminUsers=0"));
        // Selectable, so the command can be copied.
        QVERIFY(child<QLabel>(panel, "counterHowTo")->textInteractionFlags() & Qt::TextSelectableByMouse);
        QVERIFY(text(panel, "counterBannerTitle").contains("verification and timing"));
        // Every counter bar is empty, not zero; the static numbers stay.
        for (const char* name : {"throughput.sm.candidate", "throughput.dram.baseline", "occupancy.achieved"})
            QVERIFY2(!child<PercentBar>(panel, name)->value(), name);
        QCOMPARE(text(panel, "throughput.duration.candidate"), QStringLiteral("—"));
        QCOMPARE(*child<PercentBar>(panel, "occupancy.theoretical")->value(), 37.5);
        // The roofline keeps the device's ceilings but has nothing to plot.
        QVERIFY(panel.rooflineChart()->roofline().points.empty());
        QCOMPARE(panel.rooflineChart()->roofline().ceilings.size(), size_t(3));
        QVERIFY(text(panel, "rooflineNotes").contains("without hardware counters"));
        QVERIFY(panel.messageText().isEmpty());
    }

    void rooflineGeometry_data()
    {
        QTest::addColumn<double>("durationNs");
        QTest::addColumn<double>("bytes");
        QTest::addColumn<double>("flops");
        QTest::addColumn<RooflinePoint::Placement>("placement");
        QTest::addColumn<QPointF>("plotted");    // (FLOP/B, GFLOP/s)

        // 2 GB and 0.5 GFLOP in 1 ms: 0.25 FLOP/B at 500 GFLOP/s, 2000 GB/s.
        QTest::newRow("memory-bound kernel at its intensity")
            << 1e6 << 2e9 << 0.5e9 << RooflinePoint::Placement::Measured << QPointF(0.25, 500);
        // 1 GB and 40 GFLOP in 1 ms: 40 FLOP/B at 40 TFLOP/s, above the fp32 ridge.
        QTest::newRow("compute-bound kernel at its intensity")
            << 1e6 << 1e9 << 40e9 << RooflinePoint::Placement::Measured << QPointF(40, 40000);
        // No FLOPs: just inside the left edge (1.5 × 0.01 FLOP/B) at 3000 GB/s × 0.015 = 45
        // GFLOP/s, which keeps its distance below the DRAM roof (3349.8 × 0.015) equal to
        // 3000 / 3349.8 of peak bandwidth.
        QTest::newRow("copy kernel: left edge at its bandwidth")
            << 1e6 << 3e12 / 1e3 << 0.0 << RooflinePoint::Placement::NoFlops << QPointF(0.015, 45);
        QTest::newRow("everything in cache: right edge")
            << 1e6 << 0.0 << 1e9 << RooflinePoint::Placement::NoDramTraffic << QPointF(1000 / 1.5, 1000);
    }

    void rooflineGeometry()
    {
        QFETCH(double, durationNs);
        QFETCH(double, bytes);
        QFETCH(double, flops);
        QFETCH(RooflinePoint::Placement, placement);
        QFETCH(QPointF, plotted);

        const Roofline r = Roofline::compute(h100(), {{RooflineInput::Role::Candidate, "candidate", totals(durationNs, bytes, flops)}});
        QCOMPARE(r.points.size(), size_t(1));
        const RooflinePoint& p = r.points.front();
        QCOMPARE(p.placement, placement);
        QVERIFY2(near(p.plotted.x(), plotted.x()) && near(p.plotted.y(), plotted.y()),
                 qPrintable(QStringLiteral("(%1, %2)").arg(p.plotted.x()).arg(p.plotted.y())));
        QVERIFY(p.plotted.x() >= r.xMin && p.plotted.x() <= r.xMax);
        QVERIFY(p.plotted.y() >= r.yMin && p.plotted.y() <= r.yMax);
        QCOMPARE(p.description.isEmpty(), false);
        // A moved point says so, in the notes under the chart and in its tooltip.
        QCOMPARE(r.notes.isEmpty(), placement == RooflinePoint::Placement::Measured);
    }

    void rooflineCeilingsAndRidges()
    {
        const Roofline r = Roofline::compute(h100(), {});
        const RooflineCeiling* dram = r.ceiling(RooflineCeiling::Kind::Dram);
        const RooflineCeiling* fp32 = r.ceiling(RooflineCeiling::Kind::Fp32);
        const RooflineCeiling* tensor = r.ceiling(RooflineCeiling::Kind::Fp16Tensor);
        QVERIFY(dram && fp32 && tensor);
        // The DRAM slope runs from the left edge up to the highest compute roof.
        QCOMPARE(dram->line.front(), QPointF(0.01, 33.498));
        QVERIFY(near(dram->line.back().x(), 989400 / 3349.8));
        QVERIFY(near(dram->line.back().y(), 989400));
        QVERIFY(near(fp32->ridge->x(), 66900 / 3349.8));
        QCOMPARE(fp32->line.back(), QPointF(r.xMax, 66900));
        QCOMPARE(fp32->label, QStringLiteral("FP32 66.9 TFLOP/s"));
        QVERIFY(fp32->description.contains("ridge at 20.0 FLOP/B"));
        QCOMPARE(dram->label, QStringLiteral("DRAM 3.35 TB/s"));
        QVERIFY(dram->description.contains("from counters"));
        QVERIFY(r.yMax > 989400);

        // A device without a known tensor roof: that line is left out, the slope ends at fp32.
        kf::profile::Ceilings noTensor = h100();
        noTensor.fp16TensorGflops = 0;
        const Roofline r2 = Roofline::compute(noTensor, {});
        QVERIFY(!r2.ceiling(RooflineCeiling::Kind::Fp16Tensor));
        QVERIFY(near(r2.ceiling(RooflineCeiling::Kind::Dram)->line.back().y(), 66900));
    }

    void rooflineLeavesOutWhatItCannotPlace()
    {
        kf::profile::Totals none; // no duration: no counters
        const Roofline r = Roofline::compute(h100(), {{RooflineInput::Role::Candidate, "candidate", totals(1e6, 1e9, 1e9)},
                                                     {RooflineInput::Role::Baseline, "baseline", none}});
        QCOMPARE(r.points.size(), size_t(1));
        QVERIFY(!r.point("baseline"));
        QCOMPARE(r.notes, QStringList{"baseline is not drawn: no counters were collected for it"});
    }

    void rooflineChartDrawsThePoints_data()
    {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<bool>("hollow");
        QTest::newRow("sgemm: measured intensity") << "sgemm_registers" << false;
        QTest::newRow("copy: no FLOPs, at its bandwidth") << "copy_stream" << true;
    }

    void rooflineChartDrawsThePoints()
    {
        QFETCH(QString, fixture);
        QFETCH(bool, hollow);
        const auto report = load(qPrintable(fixture));
        ProfilePanel panel;
        panel.resize(700, 900);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.setReport(report);
        const kf::ui::RooflineChart* chart = panel.rooflineChart();
        const Roofline& r = chart->roofline();

        for (const char* side : {"candidate", "baseline"}) {
            const kf::profile::Totals& t = QLatin1String(side) == "candidate" ? report.candidate->totals : report.baseline->totals;
            const RooflinePoint* p = r.point(side);
            QVERIFY2(p, side);
            if (hollow) {
                QCOMPARE(p->placement, RooflinePoint::Placement::NoFlops);
                QVERIFY(near(p->plotted.x(), 1.5 * r.xMin));
                QVERIFY(near(p->plotted.y() / p->plotted.x(), t.achievedDramGbs));
                QVERIFY2(p->description.contains("no floating-point work"), qPrintable(p->description));
            } else {
                QCOMPARE(p->placement, RooflinePoint::Placement::Measured);
                QVERIFY(near(p->plotted.x(), t.flops / t.dramBytes));
                QVERIFY(near(p->plotted.y(), t.flops / t.durationNs));
            }
            // What the chart draws is that point, in TFLOP/s, inside the axes.
            QScatterSeries* s = chart->pointSeries(side);
            QVERIFY2(s, side);
            QCOMPARE(s->count(), 1);
            QVERIFY(near(s->at(0).x(), p->plotted.x()));
            QVERIFY(near(s->at(0).y(), p->plotted.y() / kf::ui::RooflineChart::kGflopsPerUnit));
            QVERIFY(s->at(0).x() >= chart->axisX()->min() && s->at(0).x() <= chart->axisX()->max());
            QVERIFY(s->at(0).y() >= chart->axisY()->min() && s->at(0).y() <= chart->axisY()->max());
            QCOMPARE(s->brush().color().alpha() == 0, hollow);
            QCOMPARE(chart->labelText(side), QString::fromLatin1(side));
        }
        // 46.9 TFLOP/s at 128 FLOP/B: above the fp32 ridge (20 FLOP/B), 70 % of the fp32 roof.
        if (!hollow)
            QVERIFY2(r.point("candidate")->description.contains("of the FP32 roof"), qPrintable(r.point("candidate")->description));
        QLineSeries* dram = chart->ceilingSeries(RooflineCeiling::Kind::Dram);
        QVERIFY(dram);
        QVERIFY(near(dram->at(1).y(), 989.4));
        QCOMPARE(chart->labelText("DRAM 3.35 TB/s"), QStringLiteral("DRAM 3.35 TB/s"));
        QCOMPARE(text(panel, "rooflineNotes").contains("Hollow marks"), hollow);
    }

    void hintsAreTheEnginesWithTheirEvidence_data()
    {
        QTest::addColumn<QString>("fixture");
        for (const char* f : {"copy_stream", "sgemm_registers", "conv2d_shared", "layernorm_spills", "scale_tiny",
                              "softmax_two_pass", "conv1d_no_counters"})
            QTest::newRow(f) << f;
    }

    void hintsAreTheEnginesWithTheirEvidence()
    {
        QFETCH(QString, fixture);
        const auto report = load(qPrintable(fixture));
        ProfilePanel panel;
        panel.setReport(report);
        const std::vector<kf::profile::Hint> hints = kf::profile::hintsFor(report);
        QStringList titles, evidence, ids;
        for (const auto& h : hints) {
            titles << qs(h.title);
            if (!h.evidence.empty())
                evidence << qs(h.evidence);
        }
        QCOMPARE(cardTexts(panel, "hintTitle"), titles);
        QCOMPARE(cardTexts(panel, "hintEvidence"), evidence);
        QCOMPARE(panel.hintList()->emptyText().isEmpty(), !hints.empty());
    }

    void registerHintSaysWhatToTry()
    {
        // The sgemm report is the one the issue names: a register-limited kernel.
        ProfilePanel panel;
        panel.setReport(load("sgemm_registers"));
        const QStringList titles = cardTexts(panel, "hintTitle");
        QVERIFY2(titles.filter("registers", Qt::CaseInsensitive).size() == 1, qPrintable(titles.join(" | ")));
        const QStringList suggestions = cardTexts(panel, "hintSuggestion");
        QVERIFY(!suggestions.isEmpty());
        for (const QString& s : suggestions)
            QVERIFY(s.startsWith("Try: "));
    }

    void severalKernelsOfferAPicker()
    {
        const auto report = load("softmax_two_pass");
        ProfilePanel panel;
        panel.show();
        panel.setReport(report);
        auto* combo = child<QComboBox>(panel, "kernelCombo");
        QVERIFY(combo->isVisibleTo(&panel));
        QCOMPARE(combo->count(), 3);
        QCOMPARE(combo->itemText(0), QStringLiteral("All 2 kernels"));
        QVERIFY2(combo->itemText(2).startsWith("2. softmax_normalize — "), qPrintable(combo->itemText(2)));
        QCOMPARE(panel.selectedKernel(), -1);
        QCOMPARE(text(panel, "throughput.head.candidate"), QStringLiteral("candidate (2 kernels)"));
        QVERIFY(!text(panel, "throughput.comparison").isEmpty());
        QCOMPARE(panel.rooflineChart()->roofline().points.size(), size_t(2));

        QSignalSpy spy(&panel, &ProfilePanel::kernelSelected);
        combo->setCurrentIndex(2); // as the user picks it
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(0).toInt(), 1);
        const kf::profile::KernelRecord& k = report.candidate->kernels[1];
        QCOMPARE(*child<PercentBar>(panel, "occupancy.achieved")->value(), *k.metric("achieved_occupancy_pct"));
        QCOMPARE(text(panel, "throughput.head.candidate"), QStringLiteral("kernel 2 of 2"));
        QCOMPARE(child<QLabel>(panel, "throughput.head.candidate")->toolTip(), qs(k.demangled));
        QCOMPARE(text(panel, "throughput.duration.candidate"), kf::ui::durationText(*k.metric("duration_ns")));
        // One kernel of two does not compare with the whole baseline.
        QCOMPARE(text(panel, "throughput.comparison"), QString());
        // The picked kernel joins the candidate and baseline on the roofline.
        QVERIFY(panel.rooflineChart()->roofline().point("softmax_normalize"));
        QVERIFY(panel.rooflineChart()->pointSeries("softmax_normalize"));

        // A new report of the same kernels keeps the choice; a different one starts at "all".
        panel.setReport(report);
        QCOMPARE(panel.selectedKernel(), 1);
        QCOMPARE(spy.count(), 1);
        panel.setReport(load("copy_stream"));
        QVERIFY(!combo->isVisibleTo(&panel));
        QCOMPARE(panel.selectedKernel(), 0);
    }

    void severalKernelsTimeWeightTheoreticalOccupancy()
    {
        // Two kernels of equal length at 100 % and 25 %: the whole launch can at best reach 62.5 %.
        auto a = measuredKernel("a", 1000, 1e6, 0);
        a.statics.known = true;
        a.statics.theoreticalOccupancyPct = 100;
        a.statics.limiter = "warps";
        auto b = measuredKernel("b", 3000, 1e6, 0);
        b.statics.known = true;
        b.statics.theoreticalOccupancyPct = 25;
        b.statics.limiter = "registers";
        kf::profile::ProfileReport r;
        r.verdict = kf::protocol::Verdict::Ok;
        r.counters.available = true;
        r.candidate = side({a, b});
        ProfilePanel panel;
        panel.setReport(r);
        // (1000 × 100 + 3000 × 25) / 4000
        QCOMPARE(*child<PercentBar>(panel, "occupancy.theoretical")->value(), 43.75);
        QCOMPARE(text(panel, "occupancy.limiter"), QStringLiteral("pick a kernel to see what limits it"));
    }

    void metricTableHasEveryNumberPerKernel()
    {
        const auto report = load("softmax_two_pass");
        ProfilePanel panel;
        panel.setReport(report);
        kf::ui::MetricTableModel* m = panel.metricModel();
        QAbstractItemModelTester tester(m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(m->columnCount(), 1 + 2 + 1);
        QCOMPARE(m->headerData(1, Qt::Horizontal, Qt::DisplayRole).toString(), QStringLiteral("candidate 1: softmax_rowstats"));
        QCOMPARE(m->headerData(3, Qt::Horizontal, Qt::DisplayRole).toString(), QStringLiteral("baseline"));

        const int read = m->rowOf("dram_read_bytes");
        QVERIFY(read >= 0);
        QCOMPARE(m->index(read, 2).data(kf::ui::MetricTableModel::ValueRole).toDouble(),
                 *report.candidate->kernels[1].metric("dram_read_bytes"));
        QCOMPARE(m->index(read, 0).data(Qt::ToolTipRole).toString().contains("dram__bytes_read.sum"), true);
        // The baseline's static numbers are not ours to read: a dash that says why.
        const int regs = m->rowOf("registers");
        QCOMPARE(m->index(regs, 1).data().toString(), QStringLiteral("32"));
        QCOMPARE(m->index(regs, 3).data().toString(), QStringLiteral("—"));
        QVERIFY(m->index(regs, 3).data(Qt::ToolTipRole).toString().contains("LibTorch"));
        QCOMPARE(m->index(m->rowOf("grid"), 1).data().toString(), QStringLiteral("8192×1×1"));

        // Collapsed until asked for.
        auto* table = child<QTableView>(panel, "metricTable");
        QVERIFY(!table->isVisibleTo(&panel));
        child<QToolButton>(panel, "detailsToggle")->click();
        QVERIFY(table->isVisibleTo(&panel));
    }

    void unsupportedMetricsAreNamed()
    {
        auto report = load("copy_stream");
        report.counters.unsupported = {"l1_hit_rate_pct"};
        for (auto& k : report.candidate->kernels)
            k.metrics.erase("l1_hit_rate_pct");
        report.candidate->totals = kf::profile::totalsOf(report.candidate->kernels);
        ProfilePanel panel;
        panel.setReport(report);
        QCOMPARE(text(panel, "counterUnsupported"), QStringLiteral("GH100 does not report l1_hit_rate_pct (shown as —)."));
        QCOMPARE(text(panel, "throughput.l1.candidate"), QStringLiteral("—"));
        const int row = panel.metricModel()->rowOf("l1_hit_rate_pct");
        QCOMPARE(panel.metricModel()->index(row, 1).data(Qt::ToolTipRole).toString(), QStringLiteral("not supported on GH100"));
    }

    void copyGivesExactNumbers()
    {
        const auto report = load("copy_stream");
        ProfilePanel panel;
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.setReport(report);
        child<QToolButton>(panel, "detailsToggle")->click();
        auto* table = child<QTableView>(panel, "metricTable");
        const int row = panel.metricModel()->rowOf("duration_ns");
        table->selectionModel()->select(panel.metricModel()->index(row, 0), QItemSelectionModel::Select);
        table->selectionModel()->select(panel.metricModel()->index(row, 1), QItemSelectionModel::Select);
        table->setFocus();
        QTest::keySequence(table, QKeySequence::Copy);
        QCOMPARE(QGuiApplication::clipboard()->text(), QStringLiteral("metric\tcandidate\nduration_ns\t716832\n"));
    }

    void busyKeepsTheOldNumbersGreyed()
    {
        ProfilePanel panel;
        panel.setReport(load("copy_stream"));
        panel.setBusy(QStringLiteral("Profiling copy_fp32 (9 passes)…"));
        QVERIFY(panel.isBusy());
        QCOMPARE(text(panel, "busyLabel"), QStringLiteral("Profiling copy_fp32 (9 passes)…"));
        auto* content = child<QWidget>(panel, "profileContent");
        QVERIFY(!content->isEnabled());
        QCOMPARE(*child<PercentBar>(panel, "occupancy.achieved")->value(), 87.1);
        panel.setReport(load("sgemm_registers"));
        QVERIFY(!panel.isBusy());
        QVERIFY(content->isEnabled());
        QCOMPARE(*child<PercentBar>(panel, "occupancy.achieved")->value(), 24.3);
    }

    void errorsReplaceTheNumbers_data()
    {
        QTest::addColumn<bool>("errorReport");
        QTest::newRow("setError from the owner") << false;
        QTest::newRow("a report whose verdict is error") << true;
    }

    void errorsReplaceTheNumbers()
    {
        QFETCH(bool, errorReport);
        ProfilePanel panel;
        panel.setReport(load("copy_stream"));
        panel.setBusy(QStringLiteral("Profiling…"));
        if (errorReport) {
            kf::profile::ProfileReport r;
            r.verdict = kf::protocol::Verdict::Error;
            r.header["error"] = {{"what", "profiling copy_fp32"}, {"why", "the runner crashed (signal 11)"},
                                 {"hint", "run kforge profile --verbose"}};
            panel.setReport(r);
            QCOMPARE(panel.messageText(), QStringLiteral("The profile failed.\nprofiling copy_fp32\nthe runner crashed "
                                                         "(signal 11)\nrun kforge profile --verbose"));
        } else {
            panel.setError(QStringLiteral("the runner is not running"));
            QCOMPARE(panel.messageText(), QStringLiteral("the runner is not running"));
            QVERIFY(!panel.report());
        }
        QVERIFY(!panel.isBusy());
        auto* message = child<QLabel>(panel, "messageLabel");
        QVERIFY(message->isVisibleTo(&panel));
        QCOMPARE(message->palette().color(QPalette::WindowText), QColor(0xc0, 0x10, 0x10));
        QVERIFY(!child<QWidget>(panel, "profileScroll")->isVisibleTo(&panel));
        QCOMPARE(panel.metricModel()->rowCount(), 0);
    }

    void clearResets()
    {
        ProfilePanel panel;
        panel.setReport(load("softmax_two_pass"));
        panel.clear(QStringLiteral("the source has errors"));
        QVERIFY(!panel.report());
        QCOMPARE(panel.messageText(), QStringLiteral("the source has errors"));
        QCOMPARE(panel.metricModel()->rowCount(), 0);
        QVERIFY(panel.hintList()->hints().empty());
        QVERIFY(panel.rooflineChart()->roofline().points.empty());
        QCOMPARE(child<QComboBox>(panel, "kernelCombo")->count(), 0);
        QVERIFY(!child<PercentBar>(panel, "occupancy.achieved")->value());
        QVERIFY(!child<PercentBar>(panel, "throughput.dram.candidate")->value());
        // A report afterwards shows numbers again.
        panel.setReport(load("copy_stream"));
        QVERIFY(panel.messageText().isEmpty());
        QVERIFY(child<QWidget>(panel, "profileScroll")->isVisibleTo(&panel));
        ProfilePanel fresh;
        QVERIFY(fresh.messageText().startsWith("No profile yet"));
    }

    void headerNamesTaskShapeAndDevice()
    {
        ProfilePanel panel;
        panel.setReport(load("copy_stream"));
        const QString header = text(panel, "profileHeader");
        for (const char* part : {"<b>copy_fp32</b> · vec4.cu", "shape “1 GiB” N=268435456 (benchmarks)",
                                 "NVIDIA H100 80GB HBM3 · GH100 · sm_90 · 9 replay passes, kernel replay"})
            QVERIFY2(header.contains(QString::fromUtf8(part)), qPrintable(header));
        QCOMPARE(text(panel, "profileSummary"), QString::fromStdString(load("copy_stream").summary));
    }

    void fitsADockAndStacksWhenNarrow_data()
    {
        QTest::addColumn<int>("width");
        QTest::addColumn<bool>("numbersSideBySide");
        QTest::addColumn<bool>("rooflineBesideHints");
        QTest::newRow("700 px dock: occupancy beside throughput") << 700 << true << false;
        QTest::newRow("420 px dock: everything stacked") << 420 << false << false;
        QTest::newRow("1200 px floating panel: roofline beside the hints") << 1200 << true << true;
    }

    void fitsADockAndStacksWhenNarrow()
    {
        QFETCH(int, width);
        QFETCH(bool, numbersSideBySide);
        QFETCH(bool, rooflineBesideHints);
        ProfilePanel panel;
        panel.resize(width, 600);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.setReport(load("sgemm_registers"));
        auto* occupancy = child<QWidget>(panel, "occupancySection");
        auto* throughput = child<QWidget>(panel, "throughputSection");
        auto* hints = child<QWidget>(panel, "hintsSection");
        auto* roofline = child<QWidget>(panel, "rooflineSection");
        QTRY_VERIFY(occupancy->width() > 0);
        QTRY_COMPARE(throughput->y() == occupancy->y() && throughput->x() > occupancy->x(), numbersSideBySide);
        QTRY_COMPARE(roofline->y() == hints->y() && roofline->x() < hints->x(), rooflineBesideHints);
        if (!rooflineBesideHints)
            QVERIFY(roofline->y() > hints->y());
        // Never a horizontal scroll bar: a dock is narrow, everything wraps instead.
        QTRY_VERIFY(!child<QScrollArea>(panel, "profileScroll")->horizontalScrollBar()->isVisible());
    }

    void followsTheDarkPalette()
    {
        ProfilePanel panel;
        panel.setPalette(kf::ui::workbenchDarkPalette());
        panel.setReport(load("copy_stream"));
        QVERIFY(panel.rooflineChart()->isDarkTheme());
        QCOMPARE(child<PercentBar>(panel, "occupancy.achieved")->color(), QColor(0x2f, 0x65, 0xca));
        // The baseline's teal gets lighter on the dark background.
        QCOMPARE(child<PercentBar>(panel, "throughput.dram.baseline")->color(), QColor(0x4d, 0xb6, 0xac));
        panel.setPalette(QPalette());
        QVERIFY(!panel.rooflineChart()->isDarkTheme());
        QCOMPARE(child<PercentBar>(panel, "throughput.dram.baseline")->color(), QColor(0x00, 0x79, 0x6b));
    }

    void screenshots()
    {
        const QString dir = qEnvironmentVariable("KF_SCREENSHOT_DIR");
        if (dir.isEmpty())
            QSKIP("set KF_SCREENSHOT_DIR to save profile panel screenshots");
        struct Shot {
            const char* fixture;
            const char* file;
            bool dark;
            int kernel; // -1: all
            bool details;
        };
        for (const Shot& s : {Shot{"copy_stream", "profile-panel.png", false, -1, false},
                              Shot{"sgemm_registers", "profile-panel-registers.png", true, -1, false},
                              Shot{"conv1d_no_counters", "profile-panel-nocounters.png", false, -1, false},
                              Shot{"softmax_two_pass", "profile-panel-kernels.png", false, 0, true}}) {
            ProfilePanel panel;
            if (s.dark)
                panel.setPalette(kf::ui::workbenchDarkPalette());
            panel.resize(700, 600); // a dock's width; then as tall as the content, to show all of it
            panel.show();
            QVERIFY(QTest::qWaitForWindowExposed(&panel));
            panel.setReport(load(s.fixture));
            panel.selectKernel(s.kernel);
            if (s.details)
                child<QToolButton>(panel, "detailsToggle")->click();
            QApplication::processEvents();
            auto* content = child<QWidget>(panel, "profileContent");
            panel.resize(700, content->layout()->totalHeightForWidth(content->width()) + 4);
            QApplication::processEvents();
            QVERIFY(panel.grab().save(QDir(dir).filePath(QLatin1String(s.file))));
        }
    }
};

QTEST_MAIN(TestProfilePanel)
#include "tst_profilepanel.moc"
