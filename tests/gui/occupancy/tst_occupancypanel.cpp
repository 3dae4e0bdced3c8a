// OccupancyPanel: the occupancy calculator a kernel author reads next to the editor.
#include "testutil.h"

#include "engine/compile/Compiler.h"
#include "engine/compile/TaskCompile.h"
#include "widgets/occupancy/OccupancyChart.h"
#include "widgets/occupancy/OccupancyPanel.h"
#include "widgets/occupancy/ResourceModel.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLabel>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QtTest>

#include <cmath>

using kf::ui::LaunchConfig;
using kf::ui::OccupancyChart;
using kf::ui::OccupancyPanel;

namespace {

kf::KernelResources kernel(const std::string& name, int regs, int staticShared = 0, int maxThreads = 0)
{
    kf::KernelResources k;
    k.name = name;
    k.demangled = kf::demangle(name);
    k.registers = regs;
    k.staticSharedBytes = staticShared;
    k.reservedSharedBytes = 1024;
    k.maxThreadsPerBlock = maxThreads;
    k.spillStoreBytes = 0;
    k.spillLoadBytes = 0;
    return k;
}

LaunchConfig launch(const std::string& lowered, const std::string& label, int block, std::int64_t dyn = 0)
{
    LaunchConfig l;
    l.lowered = lowered;
    l.label = label;
    l.blockThreads = block;
    l.dynamicSharedBytes = dyn;
    return l;
}

template <class T>
T* child(const QWidget& w, const char* name)
{
    T* c = w.findChild<T*>(QLatin1String(name));
    if (!c)
        qFatal("no child %s", name);
    return c;
}

/// The point of the chart's curve at exactly `x`, or NaN.
double curveAt(const OccupancyChart& chart, double x)
{
    for (const QPointF& p : chart.curvePoints())
        if (qFuzzyCompare(p.x() + 1, x + 1))
            return p.y();
    return std::nan("");
}

} // namespace

class TestOccupancyPanel : public QObject {
    Q_OBJECT
private slots:
    void handComputedOccupancy_data()
    {
        QTest::addColumn<QString>("arch");
        QTest::addColumn<int>("regs");
        QTest::addColumn<int>("block");
        QTest::addColumn<int>("staticShared");
        QTest::addColumn<int>("dynamicShared");
        QTest::addColumn<double>("percent");
        QTest::addColumn<QString>("limiterContains");

        // 80 × 256 = 20480 registers per block; 65536 / 20480 = 3 blocks = 24 of 64 warps.
        QTest::newRow("80 regs x 256 threads on sm_90 is register-bound")
            << "sm_90" << 80 << 256 << 0 << 0 << 37.5
            << "limited by registers: 80 registers × 256 threads allocate 20480 of 65536 registers per block";
        // Same 3 blocks, but sm_75 has only 32 warp slots.
        QTest::newRow("80 regs x 256 threads on sm_75") << "sm_75" << 80 << 256 << 0 << 0 << 75.0
                                                        << "hold 3 blocks (24 of 32 warps)";
        QTest::newRow("32 regs x 256 threads fills the SM") << "sm_90" << 32 << 256 << 0 << 0 << 100.0
                                                            << "full occupancy: 8 blocks of 8 warps";
        // 32 resident blocks of one warp each use half the 64 warp slots.
        QTest::newRow("one-warp blocks run out of block slots") << "sm_90" << 32 << 32 << 0 << 0 << 50.0
                                                                << "limited by block slots";
        // 48 KiB dynamic + 1 KiB reserved per block: 4 blocks fit in 228 KiB, 16 of 64 warps.
        QTest::newRow("48 KiB of dynamic shared memory") << "sm_90" << 32 << 128 << 0 << 48 * 1024 << 25.0
                                                         << "limited by shared memory";
        // 16 KiB static + 32 KiB dynamic + 1 KiB reserved = 49 KiB, the same 4 blocks.
        QTest::newRow("static and dynamic shared memory add up") << "sm_90" << 32 << 128 << 16 * 1024 << 32 * 1024
                                                                 << 25.0 << "16 KiB static + 32 KiB dynamic";
        // 24 warps per block: only 2 blocks fit in 64 slots (registers would allow 5).
        QTest::newRow("768-thread blocks leave warp slots empty") << "sm_90" << 16 << 768 << 0 << 0 << 75.0
                                                                  << "limited by warp slots: 24 warps per block";
    }

    void handComputedOccupancy()
    {
        QFETCH(QString, arch);
        QFETCH(int, regs);
        QFETCH(int, block);
        QFETCH(int, staticShared);
        QFETCH(int, dynamicShared);
        QFETCH(double, percent);
        QFETCH(QString, limiterContains);

        OccupancyPanel panel;
        QAbstractItemModelTester tester(panel.resourceModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        panel.setArchitecture(arch);
        panel.setKernels({kernel("_Z1kPf", regs, staticShared)}, {launch("_Z1kPf", "launch 1: k", block, dynamicShared)});
        QCOMPARE(panel.occupancy() * 100.0, percent);
        QVERIFY2(panel.limiterText().contains(limiterContains), qPrintable(panel.limiterText()));
        QVERIFY(panel.errorText().isEmpty());
        QVERIFY(!child<QLabel>(panel, "errorLabel")->isVisibleTo(&panel));
        const QString shown = child<QLabel>(panel, "occupancyLabel")->text();
        QCOMPARE(shown, QString::number(percent) + QStringLiteral(" %"));
    }

    void configurationsThatCannotLaunch_data()
    {
        QTest::addColumn<int>("regs");
        QTest::addColumn<int>("block");
        QTest::addColumn<int>("maxThreads");
        QTest::addColumn<int>("dynamicShared");
        QTest::addColumn<QString>("errorContains");
        QTest::newRow("128 regs x 1024 threads need more than the register file")
            << 128 << 1024 << 0 << 0 << "more than the 65536 registers per block";
        QTest::newRow("block larger than the kernel's launch bounds")
            << 32 << 512 << 256 << 0 << "__launch_bounds__ of 256";
        QTest::newRow("more dynamic shared memory than the opt-in limit")
            << 32 << 128 << 0 << 240 * 1024 << "opt-in limit of 227 KiB";
    }

    void configurationsThatCannotLaunch()
    {
        QFETCH(int, regs);
        QFETCH(int, block);
        QFETCH(int, maxThreads);
        QFETCH(int, dynamicShared);
        QFETCH(QString, errorContains);
        OccupancyPanel panel;
        panel.setArchitecture(QStringLiteral("sm_90"));
        panel.setKernels({kernel("_Z1kPf", regs, 0, maxThreads)}, {launch("_Z1kPf", "k", block, dynamicShared)});
        QVERIFY(std::isnan(panel.occupancy()));
        QVERIFY(panel.limiterText().isEmpty());
        QVERIFY2(panel.errorText().contains(errorContains), qPrintable(panel.errorText()));
        const QLabel* error = child<QLabel>(panel, "errorLabel");
        QVERIFY(error->isVisibleTo(&panel));
        QCOMPARE(error->text(), panel.errorText());
        // Red on the default (light) palette: much more red than green or blue.
        const QColor c = error->palette().color(QPalette::WindowText);
        QVERIFY2(c.red() > 2 * c.green() && c.red() > 2 * c.blue(), qPrintable(c.name()));
        // The charts still show where the other sizes would be; the marker sits at zero.
        const auto marker = panel.chart(OccupancyPanel::BlockSizeChart)->marker();
        QVERIFY(marker);
        QCOMPARE(marker->x(), double(block));
        QCOMPARE(marker->y(), 0.0);
    }

    void pickingAnArchitectureRecomputesAndAsksForARebuild()
    {
        OccupancyPanel panel;
        panel.setArchitecture(QStringLiteral("sm_90"));
        QSignalSpy changed(&panel, &OccupancyPanel::architectureChanged);
        // 100 KiB of dynamic shared memory fits sm_90's 227 KiB opt-in but not sm_75's 64 KiB.
        panel.setKernels({kernel("_Z1kPf", 32)}, {launch("_Z1kPf", "k", 256, 100 * 1024)});
        QCOMPARE(panel.occupancy(), 0.25);
        QCOMPARE(changed.count(), 0);

        auto* combo = child<QComboBox>(panel, "architectureCombo");
        QVERIFY(combo->currentText().startsWith(QStringLiteral("sm_90 · H100")));
        QVERIFY(combo->currentText().contains(QStringLiteral("132 SMs")));
        combo->setCurrentIndex(combo->findData(QStringLiteral("sm_75")));
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed.at(0).at(0).toString(), QStringLiteral("sm_75"));
        QCOMPARE(panel.architecture(), QStringLiteral("sm_75"));
        QVERIFY(std::isnan(panel.occupancy()));
        QVERIFY2(panel.errorText().contains(QStringLiteral("opt-in limit of 64 KiB")), qPrintable(panel.errorText()));

        combo->setCurrentIndex(combo->findData(QStringLiteral("sm_80")));
        QCOMPARE(changed.count(), 2);
        QVERIFY(!std::isnan(panel.occupancy()));
        QVERIFY(panel.errorText().isEmpty());

        // The owner setting the architecture (after its rebuild) is not a user pick.
        panel.setArchitecture(QStringLiteral("sm_90"));
        QCOMPARE(changed.count(), 2);
        QCOMPARE(combo->currentData().toString(), QStringLiteral("sm_90"));
    }

    void architectureNames_data()
    {
        QTest::addColumn<QString>("given");
        QTest::addColumn<QString>("shown");
        QTest::addColumn<bool>("known");
        QTest::newRow("arch-specific variant") << "sm_90a" << "sm_90" << true;
        QTest::newRow("virtual architecture") << "compute_80" << "sm_80" << true;
        QTest::newRow("architecture without a table") << "sm_70" << "sm_70" << false;
    }

    void architectureNames()
    {
        QFETCH(QString, given);
        QFETCH(QString, shown);
        QFETCH(bool, known);
        OccupancyPanel panel;
        panel.setKernels({kernel("_Z1kPf", 32)}, {});
        panel.setArchitecture(given);
        QCOMPARE(panel.architecture(), shown);
        QCOMPARE(!std::isnan(panel.occupancy()), known);
        QCOMPARE(panel.errorText().contains(QStringLiteral("no occupancy data for sm_70")), !known);
    }

    void blockSizeChartMarksTheCurrentBlockSize_data()
    {
        QTest::addColumn<int>("block");
        QTest::addColumn<double>("percent");
        // 80 registers per thread on sm_90.
        QTest::newRow("launch's own 256 threads") << 256 << 37.5;
        QTest::newRow("512 threads: one block of 16 warps") << 512 << 25.0;
        QTest::newRow("128 threads: six blocks of 4 warps") << 128 << 37.5;
        QTest::newRow("typed 100 threads: still 4 warps") << 100 << 37.5;
        QTest::newRow("1024 threads cannot launch at 80 regs") << 1024 << 0.0;
    }

    void blockSizeChartMarksTheCurrentBlockSize()
    {
        QFETCH(int, block);
        QFETCH(double, percent);
        OccupancyPanel panel;
        panel.setArchitecture(QStringLiteral("sm_90"));
        panel.setKernels({kernel("_Z1kPf", 80)}, {launch("_Z1kPf", "k", 256)});
        OccupancyChart* chart = panel.chart(OccupancyPanel::BlockSizeChart);
        QCOMPARE(chart->marker()->x(), 256.0);
        QCOMPARE(chart->marker()->y(), 37.5);

        child<QSpinBox>(panel, "blockSizeSpin")->setValue(block);
        QCOMPARE(chart->marker()->x(), double(block));
        QCOMPARE(chart->marker()->y(), percent);
        QCOMPARE(std::isnan(panel.occupancy()) ? 0.0 : panel.occupancy() * 100.0, percent);
        // The curve runs over every warp multiple up to 1024 threads and agrees with the marker.
        QCOMPARE(chart->curvePoints().size(), 32);
        if (block % 32 == 0)
            QCOMPARE(curveAt(*chart, block), percent);
    }

    void registerAndSharedChartsMarkTheirAxes()
    {
        OccupancyPanel panel;
        panel.setArchitecture(QStringLiteral("sm_90"));
        panel.setKernels({kernel("_Z1kPf", 80, 2048)}, {launch("_Z1kPf", "k", 256, 6 * 1024)});
        OccupancyChart* regs = panel.chart(OccupancyPanel::RegistersChart);
        OccupancyChart* shared = panel.chart(OccupancyPanel::SharedMemoryChart);
        QCOMPARE(regs->marker()->x(), 80.0);
        QCOMPARE(regs->marker()->y(), 37.5);
        QCOMPARE(curveAt(*regs, 80), 37.5);
        QCOMPARE(curveAt(*regs, 32), 100.0);   // fewer registers would fill the SM
        QCOMPARE(curveAt(*regs, 128), 25.0);   // 128 × 256 = 32768: two blocks
        QCOMPARE(shared->marker()->x(), 8.0);  // 2 KiB static + 6 KiB dynamic
        QCOMPARE(shared->marker()->y(), 37.5);
        QCOMPARE(shared->curvePoints().first().x(), 2.0); // static shared is the least a block takes
        QCOMPARE(shared->curvePoints().last().x(), 227.0); // sm_90 opt-in limit

        child<QSpinBox>(panel, "registersSpin")->setValue(32);
        QCOMPARE(regs->marker()->x(), 32.0);
        QCOMPARE(panel.occupancy(), 1.0);
        QVERIFY(child<QLabel>(panel, "kernelFacts")->text().contains(QStringLiteral("kernel uses 80 registers")));
        child<QSpinBox>(panel, "dynamicSharedSpin")->setValue(62 * 1024);
        // 2 + 62 + 1 reserved = 65 KiB: three blocks fit in 228 KiB, 24 warps.
        QCOMPARE(shared->marker()->x(), 64.0);
        QCOMPARE(shared->marker()->y(), 37.5);
        QVERIFY(panel.limiterText().startsWith(QStringLiteral("limited by shared memory")));
    }

    void firstLaunchIsSelected()
    {
        OccupancyPanel panel;
        panel.setArchitecture(QStringLiteral("sm_90"));
        panel.setKernels({kernel("_Z5firstPf", 80), kernel("_Z6secondPf", 40, 4096), kernel("_Z6helperv", 16)},
                         {launch("_Z6secondPf", "launch 1: second", 128, 8192),
                          launch("_Z5firstPf", "launch 2: first", 256)});
        auto* kernels = child<QComboBox>(panel, "kernelCombo");
        auto* blockSpin = child<QSpinBox>(panel, "blockSizeSpin");
        auto* regsSpin = child<QSpinBox>(panel, "registersSpin");
        auto* table = child<QTableView>(panel, "resourceTable");
        // Two launches, then the helper no launch uses.
        QCOMPARE(kernels->count(), 3);
        QCOMPARE(kernels->itemText(0), QStringLiteral("launch 1: second"));
        QCOMPARE(kernels->itemText(2), QStringLiteral("helper()"));
        QCOMPARE(kernels->currentIndex(), 0);
        QCOMPARE(panel.currentKernel()->name, std::string("_Z6secondPf"));
        QCOMPARE(blockSpin->value(), 128);
        QCOMPARE(child<QSpinBox>(panel, "dynamicSharedSpin")->value(), 8192);
        QCOMPARE(regsSpin->value(), 40);
        QCOMPARE(table->currentIndex().row(), 1);

        kernels->setCurrentIndex(1);
        QCOMPARE(blockSpin->value(), 256);
        QCOMPARE(regsSpin->value(), 80);
        QCOMPARE(panel.occupancy(), 0.375);
        QCOMPARE(table->currentIndex().row(), 0);

        // Clicking the helper's row in the table selects it in the calculator at 256 threads.
        table->setCurrentIndex(panel.resourceModel()->index(2, 0));
        QCOMPARE(kernels->currentIndex(), 2);
        QCOMPARE(regsSpin->value(), 16);
        QCOMPARE(blockSpin->value(), 256);
    }

    void withoutLaunchesTheFirstKernelRunsAt256Threads()
    {
        OccupancyPanel panel;
        panel.setKernels({kernel("_Z1av", 64), kernel("_Z1bv", 32)}, {});
        QCOMPARE(panel.currentKernel()->name, std::string("_Z1av"));
        QCOMPARE(child<QSpinBox>(panel, "blockSizeSpin")->value(), 256);
        QCOMPARE(child<QSpinBox>(panel, "dynamicSharedSpin")->value(), 0);
        QCOMPARE(panel.occupancy(), 0.5); // 64 × 256 = 16384: 4 blocks, 32 of 64 warps
    }

    void rebuildKeepsTheUsersWhatIf()
    {
        OccupancyPanel panel;
        panel.setArchitecture(QStringLiteral("sm_90"));
        panel.setKernels({kernel("_Z1kPf", 80)}, {launch("_Z1kPf", "k", 256)});
        child<QSpinBox>(panel, "blockSizeSpin")->setValue(512);
        // An edit lowers the register count; the plan is unchanged.
        panel.setKernels({kernel("_Z1kPf", 40)}, {launch("_Z1kPf", "k", 256)});
        QCOMPARE(child<QSpinBox>(panel, "blockSizeSpin")->value(), 512);
        QCOMPARE(child<QSpinBox>(panel, "registersSpin")->value(), 40);
        QCOMPARE(panel.occupancy(), 0.75); // 40 × 512 → 20480 each: 3 blocks of 16 warps
        // The plan itself changes its block size: the calculator follows the plan.
        panel.setKernels({kernel("_Z1kPf", 40)}, {launch("_Z1kPf", "k", 128)});
        QCOMPARE(child<QSpinBox>(panel, "blockSizeSpin")->value(), 128);
    }

    void missingKernelIsReported()
    {
        OccupancyPanel panel;
        panel.setKernels({kernel("_Z1av", 32)}, {launch("_Z7renamedv", "launch 1: renamed", 256)});
        QCOMPARE(child<QComboBox>(panel, "kernelCombo")->currentText(), QStringLiteral("launch 1: renamed"));
        QVERIFY(std::isnan(panel.occupancy()));
        QVERIFY2(panel.errorText().contains(QStringLiteral("_Z7renamedv")), qPrintable(panel.errorText()));
    }

    void clearShowsWhy()
    {
        OccupancyPanel panel;
        panel.setKernels({kernel("_Z1kPf", 80)}, {launch("_Z1kPf", "k", 256)});
        QVERIFY(!std::isnan(panel.occupancy()));
        panel.clear(QStringLiteral("the source has errors"));
        QVERIFY(std::isnan(panel.occupancy()));
        QCOMPARE(panel.resourceModel()->rowCount(), 0);
        QCOMPARE(child<QComboBox>(panel, "kernelCombo")->count(), 0);
        QCOMPARE(child<QLabel>(panel, "messageLabel")->text(), QStringLiteral("the source has errors"));
        QVERIFY(child<QLabel>(panel, "messageLabel")->isVisibleTo(&panel));
        for (OccupancyChart* c : panel.charts()) {
            QVERIFY(!c->marker());
            QVERIFY(c->curvePoints().isEmpty());
        }
        // The next good build brings everything back.
        panel.setKernels({kernel("_Z1kPf", 80)}, {launch("_Z1kPf", "k", 256)});
        QCOMPARE(panel.occupancy(), 0.375);
        QVERIFY(!child<QLabel>(panel, "messageLabel")->isVisibleTo(&panel));
    }

    void chartsFollowThePalette()
    {
        OccupancyPanel panel;
        QPalette dark;
        dark.setColor(QPalette::Window, QColor(0x20, 0x20, 0x24));
        dark.setColor(QPalette::Base, QColor(0x18, 0x18, 0x1b));
        dark.setColor(QPalette::WindowText, Qt::white);
        dark.setColor(QPalette::Text, Qt::white);
        panel.setPalette(dark);
        for (OccupancyChart* c : panel.charts())
            QVERIFY(c->isDarkTheme());
        QPalette light;
        light.setColor(QPalette::Window, QColor(0xf4, 0xf4, 0xf4));
        light.setColor(QPalette::Base, Qt::white);
        light.setColor(QPalette::Text, Qt::black);
        panel.setPalette(light);
        for (OccupancyChart* c : panel.charts())
            QVERIFY(!c->isDarkTheme());
    }

    void realBuildOfTheSoftmaxExample()
    {
        if (!kf::nvrtcVersion())
            QSKIP(("libnvrtc is not available on this machine: " + kf::nvrtcVersion().error().why).c_str());
        auto task = kf::loadTask(std::string(KF_SOURCE_DIR) + "/resources/examples/softmax_fp32");
        KF_VERIFY_OK(task);
        const kf::Candidate* candidate = task->findCandidate("optimized.cu");
        QVERIFY(candidate);
        auto request = kf::compileRequestFor(*task, *candidate, "sm_90");
        KF_VERIFY_OK(request);
        auto result = kf::compile(*request);
        KF_VERIFY_OK(result);
        QVERIFY(result->success);
        const kf::ShapeBinding* shape = kf::representativeShape(*task);
        QVERIFY(shape);
        const auto analyses = kf::analyseLaunches(*task, *candidate, *result, *shape);
        QCOMPARE(analyses.size(), size_t(1));
        QVERIFY(analyses[0].resources);
        KF_VERIFY_OK(analyses[0].occupancy);

        OccupancyPanel panel;
        QAbstractItemModelTester tester(panel.resourceModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        panel.setArchitecture(QString::fromStdString(result->arch));
        const auto configs = kf::ui::launchConfigsFrom(analyses);
        QCOMPARE(configs[0].blockThreads, 256);
        panel.setKernels(result->kernels, configs);
        QCOMPARE(child<QSpinBox>(panel, "registersSpin")->value(), analyses[0].resources->registers);
        QCOMPARE(child<QSpinBox>(panel, "blockSizeSpin")->value(), 256);
        QVERIFY(child<QComboBox>(panel, "kernelCombo")->currentText().contains(QStringLiteral("softmax_block<KF_THREADS, KF_CACHE>")));
        QCOMPARE(panel.occupancy(), analyses[0].occupancy->occupancy);
        const int row = panel.resourceModel()->rowOf(analyses[0].lowered);
        QVERIFY(row >= 0);
        QCOMPARE(panel.resourceModel()->index(row, kf::ui::ResourceModel::Registers).data().toInt(),
                 analyses[0].resources->registers);
    }
};

QTEST_MAIN(TestOccupancyPanel)
#include "tst_occupancypanel.moc"
