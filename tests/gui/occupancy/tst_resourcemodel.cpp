// ResourceModel: what the resource table shows for each kernel of a build.
#include "testutil.h"

#include "widgets/occupancy/ResourceModel.h"

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QFont>
#include <QSignalSpy>
#include <QtTest>

using kf::ui::ResourceModel;

namespace {

kf::KernelResources kernel(const std::string& name, const std::string& demangled, int regs)
{
    kf::KernelResources k;
    k.name = name;
    k.demangled = demangled;
    k.registers = regs;
    k.staticSharedBytes = 4096;
    k.reservedSharedBytes = 1024;
    k.localBytes = 0;
    k.spillStoreBytes = 0;
    k.spillLoadBytes = 0;
    k.constBank0Bytes = 552;
    k.paramBytes = 24;
    return k;
}

} // namespace

class TestResourceModel : public QObject {
    Q_OBJECT
private slots:
    void modelStaysConsistentAcrossBuilds()
    {
        ResourceModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.setKernels({kernel("_Z1av", "a()", 32), kernel("_Z1bv", "b()", 80)});
        QCOMPARE(model.rowCount(), 2);
        model.setKernels({kernel("_Z1cv", "c()", 40)});
        QCOMPARE(model.rowCount(), 1);
        model.setKernels({});
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(reset.count(), 3);
    }

    void cellText_data()
    {
        QTest::addColumn<kf::KernelResources>("k");
        QTest::addColumn<int>("column");
        QTest::addColumn<QString>("display");
        QTest::addColumn<QString>("toolTipContains");

        auto k = kernel("_Z7softmaxILi256EEvPKfPfi", "void softmax<256>(float const*, float*, int)", 80);
        QTest::newRow("demangled name, mangled in the tool tip")
            << k << int(ResourceModel::Kernel) << "void softmax<256>(float const*, float*, int)"
            << "_Z7softmaxILi256EEvPKfPfi";
        auto plainC = kernel("vector_add", "", 16);
        QTest::newRow("extern C kernel without a demangled name")
            << plainC << int(ResourceModel::Kernel) << "vector_add" << "vector_add";
        QTest::newRow("registers per thread") << k << int(ResourceModel::Registers) << "80" << "80 registers";
        QTest::newRow("static shared with the reserved bytes in the tool tip")
            << k << int(ResourceModel::StaticShared) << "4096" << "1024 bytes reserved";
        auto unknown = k;
        unknown.spillStoreBytes = -1;
        unknown.spillLoadBytes = -1;
        QTest::newRow("spill stores unknown without a ptxas report")
            << unknown << int(ResourceModel::SpillStores) << "—" << "unknown";
        QTest::newRow("spill loads unknown without a ptxas report")
            << unknown << int(ResourceModel::SpillLoads) << "—" << "unknown";
        auto spilling = k;
        spilling.spillStoreBytes = 48;
        spilling.spillLoadBytes = 40;
        QTest::newRow("spill stores reported") << spilling << int(ResourceModel::SpillStores) << "48" << "spilled";
        QTest::newRow("no spills") << k << int(ResourceModel::SpillLoads) << "0" << "no register spills";
        QTest::newRow("constant bank 0") << k << int(ResourceModel::ConstBank0) << "552" << "constant bank 0";
        QTest::newRow("parameter bytes") << k << int(ResourceModel::ParamBytes) << "24" << "parameters";
        QTest::newRow("no launch bounds") << k << int(ResourceModel::LaunchBounds) << "—" << "__launch_bounds__";
        auto bounded = k;
        bounded.maxThreadsPerBlock = 256;
        bounded.minBlocksPerSm = 2;
        QTest::newRow("launch bounds with min blocks")
            << bounded << int(ResourceModel::LaunchBounds) << "256 / 2" << "__launch_bounds__";
        auto maxOnly = k;
        maxOnly.maxThreadsPerBlock = 512;
        QTest::newRow("launch bounds without min blocks")
            << maxOnly << int(ResourceModel::LaunchBounds) << "512 / —" << "__launch_bounds__";
    }

    void cellText()
    {
        QFETCH(kf::KernelResources, k);
        QFETCH(int, column);
        QFETCH(QString, display);
        QFETCH(QString, toolTipContains);
        ResourceModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setKernels({k});
        const QModelIndex index = model.index(0, column);
        QCOMPARE(index.data(Qt::DisplayRole).toString(), display);
        QVERIFY2(index.data(Qt::ToolTipRole).toString().contains(toolTipContains),
                 qPrintable(index.data(Qt::ToolTipRole).toString()));
    }

    void spillsAreFlagged_data()
    {
        QTest::addColumn<int>("stores");
        QTest::addColumn<int>("loads");
        QTest::addColumn<bool>("storesFlagged");
        QTest::addColumn<bool>("loadsFlagged");
        QTest::newRow("spilling kernel") << 48 << 40 << true << true;
        QTest::newRow("stores only") << 8 << 0 << true << false;
        QTest::newRow("clean kernel") << 0 << 0 << false << false;
        QTest::newRow("unknown is not a warning") << -1 << -1 << false << false;
    }

    void spillsAreFlagged()
    {
        QFETCH(int, stores);
        QFETCH(int, loads);
        QFETCH(bool, storesFlagged);
        QFETCH(bool, loadsFlagged);
        auto k = kernel("_Z1kv", "k()", 255);
        k.spillStoreBytes = stores;
        k.spillLoadBytes = loads;
        ResourceModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setKernels({k});
        const QModelIndex s = model.index(0, ResourceModel::SpillStores);
        const QModelIndex l = model.index(0, ResourceModel::SpillLoads);
        QCOMPARE(s.data(ResourceModel::WarningRole).toBool(), storesFlagged);
        QCOMPARE(l.data(ResourceModel::WarningRole).toBool(), loadsFlagged);
        QCOMPARE(s.data(Qt::ForegroundRole).isValid(), storesFlagged);
        QCOMPARE(l.data(Qt::ForegroundRole).isValid(), loadsFlagged);
        QCOMPARE(s.data(Qt::FontRole).value<QFont>().bold(), storesFlagged);
        // The registers cell of the same kernel never carries the warning colour.
        QVERIFY(!model.index(0, ResourceModel::Registers).data(Qt::ForegroundRole).isValid());
    }

    void kernelAtFollowsRows()
    {
        ResourceModel model;
        model.setKernels({kernel("_Z1av", "a()", 32), kernel("_Z1bv", "b()", 80)});
        QVERIFY(model.kernelAt(1));
        QCOMPARE(model.kernelAt(1)->registers, 80);
        QCOMPARE(model.rowOf("_Z1bv"), 1);
        QCOMPARE(model.rowOf("_Z1zv"), -1);
        QVERIFY(!model.kernelAt(2));
        QVERIFY(!model.kernelAt(-1));
        QCOMPARE(model.index(1, ResourceModel::Registers).data(Qt::UserRole).toInt(), 80);
    }

    void headersNameEveryColumn()
    {
        ResourceModel model;
        for (int c = 0; c < ResourceModel::ColumnCount; ++c)
            QVERIFY2(!model.headerData(c, Qt::Horizontal).toString().isEmpty(), qPrintable(QString::number(c)));
        QCOMPARE(model.headerData(ResourceModel::SpillLoads, Qt::Horizontal).toString(), QStringLiteral("Spill loads (B)"));
    }
};

QTEST_MAIN(TestResourceModel)
#include "tst_resourcemodel.moc"
