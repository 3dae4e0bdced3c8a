// The inspector's models and its data pass: the pass counts exactly what the runner counted, the
// mismatch list reads lazily in chunks of 1000, and both models satisfy QAbstractItemModelTester.
#include "casefixture.h"
#include "testutil.h"

#include "widgets/inspect/CaseData.h"
#include "widgets/inspect/CaseTensorsModel.h"
#include "widgets/inspect/MismatchListModel.h"
#include "widgets/inspect/OutputAnalysis.h"

#include <QAbstractItemModelTester>
#include <QFileInfo>
#include <QTemporaryDir>

using kf::ui::CaseData;
using kf::ui::CaseTensorsModel;
using kf::ui::MismatchListModel;
using kf::ui::TensorAnalysis;

namespace {

std::shared_ptr<const CaseData> load(const QString& dir)
{
    auto r = CaseData::load(dir);
    if (!r)
        qFatal("cannot load %s: %s", qPrintable(dir), r.error().message().c_str());
    return std::move(r).value();
}

std::shared_ptr<const TensorAnalysis> analyse(const CaseData& data, int output = 0, int tensor = -1)
{
    const std::atomic<std::uint64_t> gen{1};
    return kf::ui::analyseTensor(data, output, tensor, gen, 1, {});
}

} // namespace

class TestInspectModels : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void passCountsWhatTheRunnerCounted_data();
    void passCountsWhatTheRunnerCounted();
    void passIsCancelledByANewerGeneration();
    void tensorsModelListsEveryTensor();
    void mismatchListFetchesInChunks_data();
    void mismatchListFetchesInChunks();
    void mismatchRowsShowTheElement_data();
    void mismatchRowsShowTheElement();
    void rowOfFetchesAsFarAsNeeded();

private:
    QTemporaryDir m_tmp;
    QString m_planted, m_many, m_clean, m_tampered, m_golden;
};

void TestInspectModels::initTestCase()
{
    QVERIFY(m_tmp.isValid());
    m_planted = m_tmp.filePath(QStringLiteral("planted"));
    KF_VERIFY_OK(fixture::plantedCase().write(m_planted));
    fixture::CaseBuilder many({100, 50});
    for (std::int64_t i = 1; i < 5000; i += 2)
        many.outside({i / 50, i % 50});
    m_many = m_tmp.filePath(QStringLiteral("many"));
    KF_VERIFY_OK(many.write(m_many));
    m_clean = m_tmp.filePath(QStringLiteral("clean"));
    KF_VERIFY_OK(fixture::CaseBuilder({7, 9}).write(m_clean));
    m_tampered = m_tmp.filePath(QStringLiteral("tampered"));
    KF_VERIFY_OK(fixture::plantedCase().write(m_tampered, [](nlohmann::json& c) { c["non_finite_mismatches"] = 0; }));
    // A golden case: two elements outside the tolerance but no worse than LibTorch pass; one worse fails.
    fixture::CaseBuilder golden({7, 9});
    golden.libtorch = golden.expected;
    for (std::vector<std::int64_t> idx : {std::vector<std::int64_t>{1, 2}, std::vector<std::int64_t>{5, 0}}) {
        golden.libtorch[size_t(golden.flat(idx))] += 0.3;
        golden.outside(idx, 0.2);
    }
    golden.libtorch[size_t(golden.flat({3, 4}))] += 0.01;
    golden.outside({3, 4}, 0.5);
    m_golden = m_tmp.filePath(QStringLiteral("golden"));
    KF_VERIFY_OK(golden.write(m_golden));
}

void TestInspectModels::passCountsWhatTheRunnerCounted_data()
{
    QTest::addColumn<QString>("which");
    QTest::addColumn<qint64>("outside");
    QTest::addColumn<qint64>("nonFinite");
    QTest::addColumn<qint64>("unwritten");
    QTest::addColumn<QString>("disagreement");
    QTest::newRow("planted: one of each, NaN == NaN is fine") << "planted" << 1LL << 2LL << 1LL << "";
    QTest::newRow("every other element outside") << "many" << 2500LL << 0LL << 0LL << "";
    QTest::newRow("a clean output") << "clean" << 0LL << 0LL << 0LL << "";
    QTest::newRow("golden: no worse than LibTorch passes") << "golden" << 1LL << 0LL << 0LL << "";
    QTest::newRow("report edited: the pass says so") << "tampered" << 1LL << 2LL << 1LL << "non-finite mismatches: report 0, files 2";
}

void TestInspectModels::passCountsWhatTheRunnerCounted()
{
    QFETCH(QString, which);
    QFETCH(qint64, outside);
    QFETCH(qint64, nonFinite);
    QFETCH(qint64, unwritten);
    QFETCH(QString, disagreement);
    const QString dir = which == QLatin1String("planted") ? m_planted : which == QLatin1String("many") ? m_many
                      : which == QLatin1String("clean")   ? m_clean
                      : which == QLatin1String("golden")  ? m_golden : m_tampered;
    auto data = load(dir);
    auto a = analyse(*data);
    QVERIFY(a);
    QCOMPARE(a->outside, outside);
    QCOMPARE(a->nonFinite, nonFinite);
    QCOMPARE(a->unwritten, unwritten);
    QCOMPARE(a->disagreement, disagreement);
    // The histogram is the runner's, bin for bin.
    const nlohmann::json& h = data->check(0)["error_histogram"];
    const nlohmann::json ours = kf::protocol::toJson(a->histogram);
    QVERIFY2(ours == h, (ours.dump() + " vs " + h.dump()).c_str());
    QVERIFY(a->valueMax > a->valueMin);
}

void TestInspectModels::passIsCancelledByANewerGeneration()
{
    auto data = load(m_many);
    std::atomic<std::uint64_t> gen{2};
    int calls = 0;
    auto a = kf::ui::analyseTensor(*data, 0, -1, gen, 1, [&](int) { ++calls; });
    QVERIFY(!a);
    QCOMPARE(calls, 0);
}

void TestInspectModels::tensorsModelListsEveryTensor()
{
    CaseTensorsModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(m.rowCount(), 0);
    m.setCase(load(m_planted));
    QCOMPARE(m.rowCount(), 3);
    QCOMPARE(m.columnCount(), 4);
    const QStringList expected[] = {{"x", "input", "fp32", "[48, 64]"}, {"y", "expected", "fp64", "[48, 64]"}, {"y", "actual", "fp32", "[48, 64]"}};
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 4; ++c)
            QCOMPARE(m.index(r, c).data().toString(), expected[r][c]);
        QVERIFY(QFileInfo::exists(m.index(r, 0).data(Qt::ToolTipRole).toString()));
    }
    m.setCase(nullptr);
    QCOMPARE(m.rowCount(), 0);
}

void TestInspectModels::mismatchListFetchesInChunks_data()
{
    QTest::addColumn<QString>("which");
    QTest::addColumn<QList<int>>("rowsAfterEachFetch");
    QTest::newRow("2500 mismatches: three fetches") << "many" << QList<int>{1000, 2000, 2500};
    QTest::newRow("4 mismatches: one fetch") << "planted" << QList<int>{4};
    QTest::newRow("no mismatches") << "clean" << QList<int>{0};
}

void TestInspectModels::mismatchListFetchesInChunks()
{
    QFETCH(QString, which);
    QFETCH(QList<int>, rowsAfterEachFetch);
    auto data = load(which == QLatin1String("many") ? m_many : which == QLatin1String("planted") ? m_planted : m_clean);
    MismatchListModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(!m.canFetchMore({}));
    m.setSource(data, analyse(*data));
    QCOMPARE(m.rowCount(), 0);
    for (int rows : rowsAfterEachFetch) {
        QVERIFY(m.canFetchMore({}));
        m.fetchMore({});
        QCOMPARE(m.rowCount(), rows);
    }
    QVERIFY(!m.canFetchMore({}));
    // In C order: flat indices only grow.
    for (int r = 1; r < m.rowCount(); ++r)
        QVERIFY(m.flatIndex(r) > m.flatIndex(r - 1));
    m.setSource(nullptr, nullptr);
    QCOMPARE(m.rowCount(), 0);
}

void TestInspectModels::mismatchRowsShowTheElement_data()
{
    QTest::addColumn<int>("row");
    QTest::addColumn<QStringList>("cells");  // index, expected (prefix), actual, abs, rel, class
    QTest::newRow("outside tolerance") << 0 << QStringList{"[3, 5]", "", "", "0.5", "", "outside tolerance"};
    QTest::newRow("NaN for a finite reference") << 1 << QStringList{"[10, 7]", "", "nan", "inf", "inf", "NaN/Inf mismatch"};
    QTest::newRow("+Inf") << 2 << QStringList{"[11, 2]", "", "inf", "inf", "inf", "NaN/Inf mismatch"};
    QTest::newRow("never written") << 3 << QStringList{"[20, 30]", "", "never written", "—", "—", "never written"};
}

void TestInspectModels::mismatchRowsShowTheElement()
{
    QFETCH(int, row);
    QFETCH(QStringList, cells);
    auto data = load(m_planted);
    MismatchListModel m;
    m.setSource(data, analyse(*data));
    m.fetchMore({});
    QCOMPARE(m.rowCount(), 4);
    for (int c = 0; c < cells.size(); ++c) {
        const QString text = m.index(row, c).data().toString();
        if (!cells[c].isEmpty())
            QVERIFY2(text.startsWith(cells[c]), qPrintable(QStringLiteral("column %1: %2").arg(c).arg(text)));
        else
            QVERIFY(!text.isEmpty());
    }
    QCOMPARE(m.index(row, 0).data(MismatchListModel::FlatIndexRole).toLongLong(), m.flatIndex(row));
    QCOMPARE(m.headerData(MismatchListModel::RelErrorColumn, Qt::Horizontal).toString(), QStringLiteral("Rel error"));
}

void TestInspectModels::rowOfFetchesAsFarAsNeeded()
{
    auto data = load(m_many);
    MismatchListModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.setSource(data, analyse(*data));
    QCOMPARE(m.rowOf(2 * 1799 + 1), 1799);  // the 1800th mismatch is at flat 3599
    QCOMPARE(m.rowCount(), 2000);
    QCOMPARE(m.rowOf(2), -1);  // within tolerance
    QCOMPARE(m.rowOf(4999), 2499);
    QCOMPARE(m.rowCount(), 2500);
}

QTEST_MAIN(TestInspectModels)
#include "tst_inspectmodels.moc"
