// The registry table: what each column says about an index entry, that speedups and dates sort
// as numbers and instants, how the filter words and the deprecated switch narrow it, and that a
// refresh updates rows in place so the user's selection stays where it was.
#include "testutil.h"

#include "widgets/registry/RegistryFilterModel.h"
#include "widgets/registry/RegistryModel.h"

#include <QAbstractItemModelTester>
#include <QDateTime>
#include <QGuiApplication>
#include <QItemSelectionModel>
#include <QPalette>
#include <QSignalSpy>

#include <cmath>
#include <limits>

using kf::RegistryEntry;
using kf::ui::RegistryFilterModel;
using kf::ui::RegistryModel;
using nlohmann::json;

namespace {

RegistryEntry entry(const std::string& id, double geomean, double minimum, const std::string& promotedAt,
                    const std::string& gpu = "NVIDIA H100 80GB HBM3", const std::string& op = "softmax",
                    const std::string& dtype = "fp32", json shapes = json::array({{{"B", 8192}, {"D", 4096}}}))
{
    RegistryEntry e;
    e.id = id;
    e.version = id.back() - '0';
    e.op = op;
    e.taskName = op + "_" + dtype;
    e.dtype = dtype;
    e.gpu = gpu;
    e.arch = "sm_90";
    e.kernelFile = "optimized.cu";
    e.benchmarkShapes = std::move(shapes);
    e.geomeanSpeedup = geomean;
    e.minSpeedup = minimum;
    e.promotedAt = promotedAt;
    return e;
}

RegistryEntry deprecated(RegistryEntry e, const std::string& reason)
{
    e.status = "deprecated";
    e.deprecatedAt = "2026-11-23T08:00:00Z";
    e.deprecationReason = reason;
    return e;
}

// Four versions a user could have: two of one softmax, a layernorm on another GPU, a deprecated one.
RegistryEntry compared(RegistryEntry e, double compileSpeedup)
{
    e.compileSpeedup = compileSpeedup;
    return e;
}

std::vector<RegistryEntry> sample()
{
    return {entry("cuda_softmax_h100_fp32_b8192-d4096_v1", 1.36, 1.21, "2026-11-20T10:00:00Z"),
            compared(entry("cuda_softmax_h100_fp32_b8192-d4096_v2", 10.2, 9.5, "2026-11-22T05:10:00Z"), 0.97),
            entry("cuda_layer_norm_rtx4090_fp16_b4096-d1024_v1", 2.5, 1.8, "2026-11-21T12:00:00Z", "NVIDIA GeForce RTX 4090",
                  "layer_norm", "fp16", json::array({{{"B", 4096}, {"D", 1024}}, {{"B", 512}, {"D", 1024}}})),
            deprecated(entry("cuda_softmax_h100_fp16_b8192-d4096_v1", 1.15, 1.02, "2026-11-19T09:00:00Z", "NVIDIA H100 80GB HBM3",
                             "softmax", "fp16"),
                       "slower than v2 after the driver update")};
}

QStringList ids(const QAbstractItemModel& m)
{
    QStringList out;
    for (int r = 0; r < m.rowCount(); ++r)
        out << m.index(r, 0).data(RegistryModel::IdRole).toString();
    return out;
}

QString cell(const QAbstractItemModel& m, int row, int column, int role = Qt::DisplayRole)
{
    return m.index(row, column).data(role).toString();
}

} // namespace

class TestRegistryModel : public QObject {
    Q_OBJECT

private slots:
    void columnsShowTheIndexEntry_data();
    void columnsShowTheIndexEntry();
    void deprecatedRowsAreGreyedWithTheReason();
    void statusSaysWhatTheSignedRecordSays();
    void sortingBySpeedupIsNumeric_data();
    void sortingBySpeedupIsNumeric();
    void sortingByDateIsChronological();
    void sortingByIdPutsV10AfterV9();
    void filterWordsMustAllMatch_data();
    void filterWordsMustAllMatch();
    void deprecatedSwitch();
    void refreshUpdatesInPlaceAndKeepsSelection();
    void refreshWithNoSurvivingIdResets();
};

void TestRegistryModel::columnsShowTheIndexEntry_data()
{
    QTest::addColumn<int>("row");
    QTest::addColumn<QStringList>("cells"); // every column but Date
    QTest::newRow("active softmax v2") << 1
        << QStringList{"cuda_softmax_h100_fp32_b8192-d4096_v2", "softmax", "fp32", "H100 80GB HBM3", "B=8192 D=4096",
                       "10.20×", "9.50×", "0.97×", "active"};
    QTest::newRow("two benchmark shapes") << 2
        << QStringList{"cuda_layer_norm_rtx4090_fp16_b4096-d1024_v1", "layer_norm", "fp16", "GeForce RTX 4090",
                       "B=4096 D=1024; B=512 D=1024", "2.50×", "1.80×", "", "active"};
    QTest::newRow("deprecated fp16") << 3
        << QStringList{"cuda_softmax_h100_fp16_b8192-d4096_v1", "softmax", "fp16", "H100 80GB HBM3", "B=8192 D=4096",
                       "1.15×", "1.02×", "", "deprecated"};
}

void TestRegistryModel::columnsShowTheIndexEntry()
{
    QFETCH(int, row);
    QFETCH(QStringList, cells);
    RegistryModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.setEntries(sample());
    QCOMPARE(m.columnCount(), int(RegistryModel::ColumnCount));
    QStringList actual;
    for (int c = 0; c < RegistryModel::ColumnCount; ++c)
        if (c != RegistryModel::DateColumn)
            actual << cell(m, row, c);
    QCOMPARE(actual, cells);
    // The date is the UTC instant in local time.
    const QDateTime utc = QDateTime::fromString(qs(m.entryAt(row).promotedAt), Qt::ISODate);
    QCOMPARE(cell(m, row, RegistryModel::DateColumn), utc.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")));
    QVERIFY(cell(m, row, RegistryModel::DateColumn, Qt::ToolTipRole).contains(qs(m.entryAt(row).promotedAt)));
    QCOMPARE(m.headerData(RegistryModel::SpeedupColumn, Qt::Horizontal).toString(), QStringLiteral("Speedup"));
}

void TestRegistryModel::deprecatedRowsAreGreyedWithTheReason()
{
    RegistryModel m;
    m.setEntries(sample());
    const QColor grey = QGuiApplication::palette().color(QPalette::Disabled, QPalette::Text);
    for (int c = 0; c < RegistryModel::ColumnCount; ++c) {
        QCOMPARE(m.index(3, c).data(Qt::ForegroundRole).value<QColor>(), grey);
        QVERIFY2(cell(m, 3, c, Qt::ToolTipRole).contains(QStringLiteral("slower than v2 after the driver update")),
                 qPrintable(cell(m, 3, c, Qt::ToolTipRole)));
        QVERIFY(!m.index(1, c).data(Qt::ForegroundRole).isValid());
    }
}

// What Registry::listing() read from each promotion.json shows in the Status column.
void TestRegistryModel::statusSaysWhatTheSignedRecordSays()
{
    std::vector<RegistryEntry> entries = sample();
    entries[1].unsignedEvidence = true;
    entries[1].recordSignature = kf::protocol::SignatureState::Valid;
    entries[2].recordSignature = kf::protocol::SignatureState::Altered;
    RegistryModel m;
    m.setEntries(entries);
    QCOMPARE(cell(m, 1, RegistryModel::StatusColumn), QStringLiteral("active · unsigned evidence"));
    QVERIFY(cell(m, 1, RegistryModel::StatusColumn, Qt::ToolTipRole).contains(QStringLiteral("--allow-unsigned")));
    QCOMPARE(cell(m, 2, RegistryModel::StatusColumn), QStringLiteral("active · record edited after signing"));
    QVERIFY(cell(m, 2, RegistryModel::StatusColumn, Qt::ToolTipRole).contains(QStringLiteral("signature does NOT hold")));
    QCOMPARE(cell(m, 0, RegistryModel::StatusColumn), QStringLiteral("active"));
    // A record read again that now says so repaints the row.
    QSignalSpy changed(&m, &QAbstractItemModel::dataChanged);
    entries[0].unsignedEvidence = true;
    m.setEntries(entries);
    QCOMPARE(changed.count(), 1);
}

void TestRegistryModel::sortingBySpeedupIsNumeric_data()
{
    QTest::addColumn<int>("column");
    QTest::addColumn<int>("order");
    QTest::addColumn<QStringList>("speedups");
    // As text, "10.20×" would sort before "2.50×"; nan is the worst speedup.
    QTest::newRow("geomean, fastest first") << int(RegistryModel::SpeedupColumn) << int(Qt::DescendingOrder)
                                            << QStringList{"10.20×", "2.50×", "1.36×", "nan"};
    QTest::newRow("geomean, slowest first") << int(RegistryModel::SpeedupColumn) << int(Qt::AscendingOrder)
                                            << QStringList{"nan", "1.36×", "2.50×", "10.20×"};
    QTest::newRow("min speedup, fastest first") << int(RegistryModel::MinSpeedupColumn) << int(Qt::DescendingOrder)
                                                << QStringList{"9.50×", "1.80×", "1.21×", "nan"};
}

void TestRegistryModel::sortingBySpeedupIsNumeric()
{
    QFETCH(int, column);
    QFETCH(int, order);
    QFETCH(QStringList, speedups);
    std::vector<RegistryEntry> entries = sample();
    entries.pop_back();
    entries.push_back(entry("cuda_softmax_a100_fp32_b8192-d4096_v1", std::numeric_limits<double>::quiet_NaN(),
                            std::numeric_limits<double>::quiet_NaN(), "2026-11-18T00:00:00Z", "NVIDIA A100-SXM4-80GB"));
    RegistryModel m;
    RegistryFilterModel f;
    f.setSourceModel(&m);
    QAbstractItemModelTester tester(&f, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.setEntries(entries);
    f.sort(column, Qt::SortOrder(order));
    QStringList actual;
    for (int r = 0; r < f.rowCount(); ++r)
        actual << cell(f, r, column);
    QCOMPARE(actual, speedups);
}

void TestRegistryModel::sortingByDateIsChronological()
{
    // +09:00 makes the first one the earliest instant although its text sorts last.
    std::vector<RegistryEntry> entries = {entry("cuda_softmax_h100_fp32_b1-d1_v1", 1.2, 1.1, "2026-11-22T05:10:00+09:00"),
                                          entry("cuda_softmax_h100_fp32_b1-d1_v2", 1.3, 1.1, "2026-11-21T23:00:00Z"),
                                          entry("cuda_softmax_h100_fp32_b1-d1_v3", 1.4, 1.1, "2025-12-31T23:59:59Z")};
    RegistryModel m;
    RegistryFilterModel f;
    f.setSourceModel(&m);
    m.setEntries(entries);
    QCOMPARE(m.index(0, RegistryModel::DateColumn).data(RegistryModel::SortRole).typeId(), QMetaType::LongLong);
    f.sort(RegistryModel::DateColumn, Qt::AscendingOrder);
    QCOMPARE(ids(f), (QStringList{"cuda_softmax_h100_fp32_b1-d1_v3", "cuda_softmax_h100_fp32_b1-d1_v1",
                                  "cuda_softmax_h100_fp32_b1-d1_v2"}));
}

void TestRegistryModel::sortingByIdPutsV10AfterV9()
{
    RegistryModel m;
    RegistryFilterModel f;
    f.setSourceModel(&m);
    RegistryEntry v10 = entry("cuda_softmax_h100_fp32_b1-d1_v10", 1.2, 1.1, "2026-11-22T05:10:00Z");
    v10.version = 10;
    m.setEntries({v10, entry("cuda_softmax_h100_fp32_b1-d1_v9", 1.2, 1.1, "2026-11-21T05:10:00Z"),
                  entry("cuda_softmax_h100_fp32_b1-d1_v2", 1.2, 1.1, "2026-11-20T05:10:00Z")});
    f.sort(RegistryModel::IdColumn, Qt::AscendingOrder);
    QCOMPARE(ids(f), (QStringList{"cuda_softmax_h100_fp32_b1-d1_v2", "cuda_softmax_h100_fp32_b1-d1_v9",
                                  "cuda_softmax_h100_fp32_b1-d1_v10"}));
}

void TestRegistryModel::filterWordsMustAllMatch_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QStringList>("expected");
    const QString v1 = QStringLiteral("cuda_softmax_h100_fp32_b8192-d4096_v1");
    const QString v2 = QStringLiteral("cuda_softmax_h100_fp32_b8192-d4096_v2");
    const QString ln = QStringLiteral("cuda_layer_norm_rtx4090_fp16_b4096-d1024_v1");
    const QString old = QStringLiteral("cuda_softmax_h100_fp16_b8192-d4096_v1");
    QTest::newRow("empty: everything") << "" << QStringList{v1, v2, ln, old};
    QTest::newRow("op") << "softmax" << QStringList{v1, v2, old};
    QTest::newRow("case does not matter") << "SoftMax FP32" << QStringList{v1, v2};
    QTest::newRow("every word must match") << "softmax fp16" << QStringList{old};
    QTest::newRow("GPU name words") << "geforce 4090" << QStringList{ln};
    QTest::newRow("a shape as the table shows it") << "B=512" << QStringList{ln};
    QTest::newRow("ID suffix") << "_v2" << QStringList{v2};
    QTest::newRow("extra spaces are ignored") << "  h100   fp32  " << QStringList{v1, v2};
    QTest::newRow("nothing matches") << "softmax a100" << QStringList{};
}

void TestRegistryModel::filterWordsMustAllMatch()
{
    QFETCH(QString, text);
    QFETCH(QStringList, expected);
    RegistryModel m;
    RegistryFilterModel f;
    f.setSourceModel(&m);
    QAbstractItemModelTester tester(&f, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.setEntries(sample());
    f.setFilterText(text);
    QStringList actual = ids(f);
    actual.sort();
    expected.sort();
    QCOMPARE(actual, expected);
}

void TestRegistryModel::deprecatedSwitch()
{
    RegistryModel m;
    RegistryFilterModel f;
    f.setSourceModel(&m);
    QAbstractItemModelTester tester(&f, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.setEntries(sample());
    QVERIFY(f.showDeprecated()); // shown (greyed) by default: a deprecated kernel must not look deleted
    QCOMPARE(f.rowCount(), 4);
    f.setShowDeprecated(false);
    QCOMPARE(f.rowCount(), 3);
    QVERIFY(!ids(f).contains(QStringLiteral("cuda_softmax_h100_fp16_b8192-d4096_v1")));
    f.setFilterText(QStringLiteral("fp16 softmax"));
    QCOMPARE(f.rowCount(), 0);
    f.setShowDeprecated(true);
    QCOMPARE(ids(f), QStringList{"cuda_softmax_h100_fp16_b8192-d4096_v1"});
}

void TestRegistryModel::refreshUpdatesInPlaceAndKeepsSelection()
{
    RegistryModel m;
    RegistryFilterModel f;
    f.setSourceModel(&m);
    QAbstractItemModelTester sourceTester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester proxyTester(&f, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.setEntries(sample());
    f.sort(RegistryModel::SpeedupColumn, Qt::DescendingOrder);
    QItemSelectionModel selection(&f);
    const QString picked = QStringLiteral("cuda_softmax_h100_fp32_b8192-d4096_v1");
    const QModelIndex at = f.mapFromSource(m.index(m.rowOf(picked), 0));
    selection.setCurrentIndex(at, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);

    QSignalSpy resets(&m, &QAbstractItemModel::modelReset);
    QSignalSpy inserted(&m, &QAbstractItemModel::rowsInserted);
    QSignalSpy removed(&m, &QAbstractItemModel::rowsRemoved);
    QSignalSpy changed(&m, &QAbstractItemModel::dataChanged);

    // Another process deprecated the picked entry, removed the layernorm and promoted a v3.
    std::vector<RegistryEntry> next = sample();
    next[0] = deprecated(next[0], "superseded by v3");
    next.erase(next.begin() + 2);
    next.push_back(entry("cuda_softmax_h100_fp32_b8192-d4096_v3", 11.0, 10.0, "2026-11-24T05:10:00Z"));
    m.setEntries(next);

    QCOMPARE(resets.count(), 0);
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(removed.count(), 1);
    QCOMPARE(changed.count(), 1); // only the deprecated row repaints
    QCOMPARE(m.rowCount(), 4);
    QVERIFY(selection.currentIndex().isValid());
    QCOMPARE(selection.currentIndex().data(RegistryModel::IdRole).toString(), picked);
    QCOMPARE(selection.selectedRows().size(), 1);
    QCOMPARE(selection.selectedRows().first().data(RegistryModel::IdRole).toString(), picked);
    QCOMPARE(cell(m, m.rowOf(picked), RegistryModel::StatusColumn), QStringLiteral("deprecated"));
    // The same index again changes nothing.
    changed.clear();
    m.setEntries(next);
    QCOMPARE(changed.count(), 0);
    QCOMPARE(resets.count(), 0);
}

void TestRegistryModel::refreshWithNoSurvivingIdResets()
{
    RegistryModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.setEntries(sample());
    QSignalSpy resets(&m, &QAbstractItemModel::modelReset);
    m.setEntries({entry("cuda_gelu_h100_bf16_n1048576_v1", 1.4, 1.3, "2026-11-24T05:10:00Z", "NVIDIA H100 80GB HBM3", "gelu", "bf16")});
    QCOMPARE(resets.count(), 1);
    QCOMPARE(ids(m), QStringList{"cuda_gelu_h100_bf16_n1048576_v1"});
    m.setEntries({});
    QCOMPARE(m.rowCount(), 0);
}

QTEST_MAIN(TestRegistryModel)
#include "tst_registrymodel.moc"
