// The results table: what a user reads in each column for real reports, how a verify and a bench
// of the same shape share a row, and how stale or broken evidence is shown or dropped.
#include "reportutil.h"
#include "testutil.h"

#include "widgets/runs/ResultsModel.h"

#include <QAbstractItemModelTester>
#include <QFile>
#include <QIcon>
#include <QSortFilterProxyModel>

#include <nlohmann/json.hpp>

using kf::ui::ResultRow;
using kf::ui::ResultsModel;
using nlohmann::json;

namespace {

json loadReport(const QString& name)
{
    QFile f(QString(KF_TEST_DATA_DIR) + "/reports/" + name);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot open test report %s", qPrintable(f.fileName()));
    return json::parse(f.readAll().toStdString());
}

QString cell(const ResultsModel& m, int row, int column, int role = Qt::DisplayRole)
{
    return m.data(m.index(row, column), role).toString();
}

} // namespace

class TestResultsModel : public QObject {
    Q_OBJECT

private slots:
    void rowsFromEachReport_data();
    void rowsFromEachReport();
    void verifyAndBenchMergeIntoOneRow_data();
    void verifyAndBenchMergeIntoOneRow();
    void rerunReplacesRowInsteadOfAddingOne();
    void newSourceDropsStaleEvidence();
    void goodReportClearsEarlierErrorRow();
    void nonFiniteNumbersShowAsNanAndInf_data();
    void nonFiniteNumbersShowAsNanAndInf();
    void sortingByErrorPutsNanWithTheWorst();
    void tooltipsCarryTheEvidence();
    void compileColumnExplainsItself();
    void verdictIsColouredAndMarked();
    void malformedReportsAddNothingAndDoNotThrow();
    void modelTesterAcceptsEveryChange();
    void caseFoldersOfFailingTrials_data();
    void caseFoldersOfFailingTrials();
    void sanitizerRow_data();
    void sanitizerRow();
    void nextVerificationReplacesTheSanitizerRow();
    void ranOnColumnShowsThePlacement_data();
    void ranOnColumnShowsThePlacement();
};

void TestResultsModel::compileColumnExplainsItself()
{
    ResultsModel m;
    m.addReport(kf::test::report(loadReport(QStringLiteral("bench_softmax_compile.json"))));
    const int flagged = m.findRow(QStringLiteral("optimized.cu"), QStringLiteral("4k-rows-of-8k"));
    QVERIFY(flagged >= 0);
    QCOMPARE(cell(m, flagged, ResultsModel::CompileSpeedupColumn), QStringLiteral("1.05×"));
    const QString tip = m.index(flagged, ResultsModel::CompileSpeedupColumn).data(Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains("faster mode (max-autotune-no-cudagraphs)") && tip.contains("default: ") &&
                 tip.contains("compiled in 5.19 s") && tip.contains("differs from the runner's by -3.3 %"),
             qPrintable(tip));
    // A report that was not compared shows nothing there, and a failed comparison says so.
    json j = loadReport(QStringLiteral("bench_softmax_compile.json"));
    j["shapes"][0]["compile"] = {{"measured", false}, {"reason", "the harness failed: RuntimeError: boom"}};
    ResultsModel m2;
    m2.addReport(kf::test::report(j));
    const int row = m2.findRow(QStringLiteral("optimized.cu"), QStringLiteral("8k-rows-of-4k"));
    QCOMPARE(cell(m2, row, ResultsModel::CompileSpeedupColumn), QStringLiteral("not measured"));
    QVERIFY(m2.index(row, ResultsModel::CompileSpeedupColumn).data(Qt::ToolTipRole).toString().contains("boom"));
    ResultsModel m3;
    m3.addReport(kf::test::report(loadReport(QStringLiteral("bench_softmax_ok.json"))));
    QCOMPARE(cell(m3, 0, ResultsModel::CompileSpeedupColumn), QString());
}

void TestResultsModel::rowsFromEachReport_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("rows");
    QTest::addColumn<QString>("shape"); // label, or empty for the error row
    QTest::addColumn<QStringList>("cells"); // Shape, Set, Verdict, abs, rel, vs LibTorch, mismatches, cand, base, speedup, vs compile, GB/s
    QTest::addColumn<QString>("detailsStart");

    QTest::newRow("passing verify: every shape passes") << "verify_softmax_pass.json" << 3 << "scalar-path-long"
        << QStringList{"scalar-path-long (B=5 D=4099)", "tests", "pass", "5.89e-10", "2.98e-07", "", "0 of 61485", "", "", "", "", ""}
        << "";
    QTest::newRow("failing verify: wrong tail elements, one nan trial") << "verify_softmax_fail.json" << 3 << "scalar-path-long"
        << QStringList{"scalar-path-long (B=5 D=4099)", "tests", "FAIL", "0.000391", "inf", "", "42 of 61485", "", "", "", "", ""}
        << "trial 0: y: 15 of 20495 elements outside tolerance (max abs error 0.000391";
    QTest::newRow("failing verify: write past the end of y") << "verify_softmax_fail.json" << 3 << "vector-path"
        << QStringList{"vector-path (B=11 D=4096)", "tests", "FAIL", "2.1e-09", "3.9e-07", "", "0 of 135168", "", "", "", "", ""}
        << "trial 0: guard violation: y was written past its end";
    QTest::newRow("failing verify: a shape that passed stays green") << "verify_softmax_fail.json" << 3 << "primes"
        << QStringList{"primes (B=3 D=97)", "tests", "pass", "7.35e-08", "3.57e-07", "", "0 of 873", "", "", "", "", ""} << "";
    QTest::newRow("run that could not be done: one error row") << "verify_softmax_error.json" << 1 << ""
        << QStringList{"—", "", "error", "", "", "", "", "", "", "", "", ""}
        << "an illegal memory access was encountered in launch 1 (softmax_block<512, 4>)";
    QTest::newRow("benchmark: timings and speedup") << "bench_softmax_ok.json" << 2 << "8k-rows-of-4k"
        << QStringList{"8k-rows-of-4k (B=8192 D=4096)", "benchmarks", "ok", "", "", "", "", "98.7", "134.2", "1.36×", "", "2719.7"}
        << "";
    QTest::newRow("benchmark against torch.compile too") << "bench_softmax_compile.json" << 2 << "8k-rows-of-4k"
        << QStringList{"8k-rows-of-4k (B=8192 D=4096)", "benchmarks", "ok", "", "", "", "", "98.7", "134.2", "1.36×", "0.95×", "2719.7"}
        << "";
}

void TestResultsModel::rowsFromEachReport()
{
    QFETCH(QString, file);
    QFETCH(int, rows);
    QFETCH(QString, shape);
    QFETCH(QStringList, cells);
    QFETCH(QString, detailsStart);

    ResultsModel m;
    m.addReport(kf::test::report(loadReport(file)));
    QCOMPARE(m.rowCount(), rows);
    const int row = m.findRow(QStringLiteral("optimized.cu"), shape);
    QVERIFY(row >= 0);
    QCOMPARE(cell(m, row, ResultsModel::CandidateColumn), QStringLiteral("optimized.cu"));
    QStringList actual;
    for (int c = ResultsModel::ShapeColumn; c <= ResultsModel::BandwidthColumn; ++c)
        actual << cell(m, row, c);
    QCOMPARE(actual, cells);
    const QString details = cell(m, row, ResultsModel::DetailsColumn);
    if (detailsStart.isEmpty())
        QCOMPARE(details, QString());
    else
        QVERIFY2(details.startsWith(detailsStart), qPrintable(details));
}

void TestResultsModel::verifyAndBenchMergeIntoOneRow_data()
{
    QTest::addColumn<bool>("benchFirst");
    QTest::newRow("verify, then bench") << false;
    QTest::newRow("bench, then verify") << true;
}

void TestResultsModel::verifyAndBenchMergeIntoOneRow()
{
    QFETCH(bool, benchFirst);
    ResultsModel m;
    const json verify = loadReport(QStringLiteral("verify_softmax_benchmarks_pass.json"));
    const json bench = loadReport(QStringLiteral("bench_softmax_ok.json"));
    m.addReport(kf::test::report(benchFirst ? bench : verify));
    m.addReport(kf::test::report(benchFirst ? verify : bench));

    QCOMPARE(m.rowCount(), 2);
    const int row = m.findRow(QStringLiteral("optimized.cu"), QStringLiteral("4k-rows-of-8k"));
    QVERIFY(row >= 0);
    // Verdict and errors from the verify, timings from the bench, side by side.
    QCOMPARE(cell(m, row, ResultsModel::VerdictColumn), QStringLiteral("pass"));
    QCOMPARE(cell(m, row, ResultsModel::MismatchesColumn), QStringLiteral("0 of 100663296"));
    QCOMPARE(cell(m, row, ResultsModel::CandidateMedianColumn), QStringLiteral("99.4"));
    QCOMPARE(cell(m, row, ResultsModel::BaselineMedianColumn), QStringLiteral("138.8"));
    QCOMPARE(cell(m, row, ResultsModel::SpeedupColumn), QStringLiteral("1.40×"));
    QCOMPARE(cell(m, row, ResultsModel::SetColumn), QStringLiteral("benchmarks"));
}

void TestResultsModel::rerunReplacesRowInsteadOfAddingOne()
{
    ResultsModel m;
    json report = loadReport(QStringLiteral("bench_softmax_ok.json"));
    m.addReport(kf::test::report(report));
    report["shapes"][0]["speedup"] = 1.52;
    m.addReport(kf::test::report(report));
    QCOMPARE(m.rowCount(), 2);
    QCOMPARE(cell(m, m.findRow(QStringLiteral("optimized.cu"), QStringLiteral("8k-rows-of-4k")), ResultsModel::SpeedupColumn),
             QStringLiteral("1.52×"));
}

void TestResultsModel::newSourceDropsStaleEvidence()
{
    ResultsModel m;
    m.addReport(kf::test::report(loadReport(QStringLiteral("verify_softmax_benchmarks_pass.json"))));
    m.addReport(kf::test::report(loadReport(QStringLiteral("bench_softmax_ok.json"))));
    QCOMPARE(m.rowCount(), 2);
    // The candidate was edited (another source hash): the old timings and verdicts must not stand
    // next to the new verdicts as if they described the same code.
    m.addReport(kf::test::report(loadReport(QStringLiteral("verify_softmax_fail.json"))));
    QCOMPARE(m.rowCount(), 3);
    QCOMPARE(m.findRow(QStringLiteral("optimized.cu"), QStringLiteral("8k-rows-of-4k")), -1);
    // Another candidate is left alone.
    json other = loadReport(QStringLiteral("bench_softmax_ok.json"));
    other["candidate"]["file"] = "naive.cu";
    m.addReport(kf::test::report(other));
    QCOMPARE(m.rowCount(), 5);
    m.addReport(kf::test::report(loadReport(QStringLiteral("verify_softmax_pass.json"))));
    QCOMPARE(m.rowCount(), 5);
    QCOMPARE(cell(m, m.findRow(QStringLiteral("optimized.cu"), QStringLiteral("vector-path")), ResultsModel::VerdictColumn),
             QStringLiteral("pass"));
    QCOMPARE(cell(m, m.findRow(QStringLiteral("naive.cu"), QStringLiteral("8k-rows-of-4k")), ResultsModel::SpeedupColumn),
             QStringLiteral("1.36×"));
}

void TestResultsModel::goodReportClearsEarlierErrorRow()
{
    ResultsModel m;
    m.addReport(kf::test::report(loadReport(QStringLiteral("verify_softmax_error.json"))));
    QCOMPARE(m.rowCount(), 1);
    QCOMPARE(m.findRow(QStringLiteral("optimized.cu"), QString()), 0);
    // A bench of the same source does not say the verify works now: the error row stays.
    json bench = loadReport(QStringLiteral("bench_softmax_ok.json"));
    bench["candidate"]["source_hash"] = loadReport(QStringLiteral("verify_softmax_error.json"))["candidate"]["source_hash"];
    m.addReport(kf::test::report(bench));
    QCOMPARE(m.rowCount(), 3);
    QVERIFY(m.findRow(QStringLiteral("optimized.cu"), QString()) >= 0);
    // A finished verify of the same source replaces the error with its rows.
    m.addReport(kf::test::report(loadReport(QStringLiteral("verify_softmax_fail.json"))));
    QCOMPARE(m.findRow(QStringLiteral("optimized.cu"), QString()), -1);
    QCOMPARE(m.rowCount(), 5);
}

void TestResultsModel::nonFiniteNumbersShowAsNanAndInf_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("pointer");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("shape");
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("expected");

    // NaN in one trial beats larger finite errors in the others: a user must see it.
    QTest::newRow("nan abs error in one trial") << "verify_softmax_fail.json" << "/shapes/1/trials/1/outputs/0/max_abs_error"
                                                << "nan" << "scalar-path-long" << int(ResultsModel::MaxAbsErrorColumn) << "nan";
    QTest::newRow("inf rel error") << "verify_softmax_pass.json" << "/shapes/0/trials/2/outputs/0/max_rel_error" << "inf"
                                   << "primes" << int(ResultsModel::MaxRelErrorColumn) << "inf";
    QTest::newRow("nan candidate median") << "bench_softmax_ok.json" << "/shapes/0/candidate/median_ms" << "nan"
                                          << "8k-rows-of-4k" << int(ResultsModel::CandidateMedianColumn) << "nan";
    QTest::newRow("inf speedup") << "bench_softmax_ok.json" << "/shapes/1/speedup" << "inf" << "4k-rows-of-8k"
                                 << int(ResultsModel::SpeedupColumn) << "inf";
    QTest::newRow("-inf bandwidth") << "bench_softmax_ok.json" << "/shapes/1/achieved_gbs" << "-inf" << "4k-rows-of-8k"
                                    << int(ResultsModel::BandwidthColumn) << "-inf";
    QTest::newRow("nan speedup") << "bench_softmax_ok.json" << "/shapes/0/speedup" << "nan" << "8k-rows-of-4k"
                                 << int(ResultsModel::SpeedupColumn) << "nan";
}

void TestResultsModel::nonFiniteNumbersShowAsNanAndInf()
{
    QFETCH(QString, file);
    QFETCH(QString, pointer);
    QFETCH(QString, value);
    QFETCH(QString, shape);
    QFETCH(int, column);
    QFETCH(QString, expected);

    json report = loadReport(file);
    report[json::json_pointer(pointer.toStdString())] = value.toStdString();
    ResultsModel m;
    m.addReport(kf::test::report(report));
    const int row = m.findRow(QStringLiteral("optimized.cu"), shape);
    QVERIFY(row >= 0);
    QCOMPARE(cell(m, row, column), expected);
}

void TestResultsModel::sortingByErrorPutsNanWithTheWorst()
{
    json report = loadReport(QStringLiteral("verify_softmax_pass.json"));
    report["shapes"][1]["trials"][0]["outputs"][0]["max_abs_error"] = "nan";
    ResultsModel m;
    m.addReport(kf::test::report(report));
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&m);
    proxy.setSortRole(ResultsModel::SortRole);
    proxy.sort(ResultsModel::MaxAbsErrorColumn, Qt::AscendingOrder);
    QStringList order;
    for (int r = 0; r < proxy.rowCount(); ++r)
        order << proxy.index(r, ResultsModel::MaxAbsErrorColumn).data().toString();
    // As numbers, not text: "6.56e-08" sorts after "1.51e-09"; nan is last.
    QCOMPARE(order, (QStringList{"1.51e-09", "6.56e-08", "nan"}));

    proxy.sort(ResultsModel::ShapeColumn, Qt::DescendingOrder);
    QCOMPARE(proxy.index(0, ResultsModel::ShapeColumn).data().toString(), QStringLiteral("vector-path (B=11 D=4096)"));
}

void TestResultsModel::tooltipsCarryTheEvidence()
{
    ResultsModel m;
    m.addReport(kf::test::report(loadReport(QStringLiteral("verify_softmax_fail.json"))));
    m.addReport(kf::test::report(loadReport(QStringLiteral("verify_softmax_error.json"))));
    const int guard = m.findRow(QStringLiteral("optimized.cu"), QStringLiteral("vector-path"));
    QVERIFY(cell(m, guard, ResultsModel::VerdictColumn, Qt::ToolTipRole)
                .contains(QStringLiteral("out-of-bounds write: y, after the buffer, at byte offset 0")));
    const int tail = m.findRow(QStringLiteral("optimized.cu"), QStringLiteral("scalar-path-long"));
    const QString tip = cell(m, tail, ResultsModel::VerdictColumn, Qt::ToolTipRole);
    QVERIFY2(tip.contains(QStringLiteral("y[0, 4097]: expected")), qPrintable(tip));
    QVERIFY2(cell(m, tail, ResultsModel::MismatchesColumn, Qt::ToolTipRole)
                 .contains(QStringLiteral("trial 1 (seed 0x9f3a61c07d2e4b16): FAIL — 15 of 20495 mismatches")),
             qPrintable(cell(m, tail, ResultsModel::MismatchesColumn, Qt::ToolTipRole)));
    const int error = m.findRow(QStringLiteral("optimized.cu"), QString());
    QVERIFY(cell(m, error, ResultsModel::DetailsColumn, Qt::ToolTipRole)
                .contains(QStringLiteral("What to do: an out-of-bounds index is the usual cause")));

    ResultsModel bench;
    bench.addReport(kf::test::report(loadReport(QStringLiteral("bench_softmax_ok.json"))));
    const QString timing = cell(bench, 0, ResultsModel::CandidateMedianColumn, Qt::ToolTipRole);
    QVERIFY2(timing.contains(QStringLiteral("140 samples")) && timing.contains(QStringLiteral("median spread 0.41 %")),
             qPrintable(timing));
    QVERIFY(cell(bench, 0, ResultsModel::BandwidthColumn, Qt::ToolTipRole).startsWith(QStringLiteral("81.1 %")));
}

void TestResultsModel::verdictIsColouredAndMarked()
{
    ResultsModel m;
    m.addReport(kf::test::report(loadReport(QStringLiteral("verify_softmax_fail.json"))));
    const QModelIndex pass = m.index(m.findRow(QStringLiteral("optimized.cu"), QStringLiteral("primes")), ResultsModel::VerdictColumn);
    const QModelIndex fail = m.index(m.findRow(QStringLiteral("optimized.cu"), QStringLiteral("vector-path")), ResultsModel::VerdictColumn);
    const QColor passColour = pass.data(Qt::ForegroundRole).value<QColor>();
    const QColor failColour = fail.data(Qt::ForegroundRole).value<QColor>();
    QVERIFY(passColour.isValid() && failColour.isValid());
    QVERIFY(passColour != failColour);
    QVERIFY(failColour.red() > failColour.green());
    QVERIFY(passColour.green() > passColour.red());
    QVERIFY(!fail.data(Qt::DecorationRole).value<QIcon>().isNull());

    // A bench slower than LibTorch is amber, not green.
    json slow = loadReport(QStringLiteral("bench_softmax_ok.json"));
    slow["shapes"][0]["speedup"] = 0.82;
    ResultsModel b;
    b.addReport(kf::test::report(slow));
    const QColor slowColour = b.index(0, ResultsModel::SpeedupColumn).data(Qt::ForegroundRole).value<QColor>();
    const QColor fastColour = b.index(1, ResultsModel::SpeedupColumn).data(Qt::ForegroundRole).value<QColor>();
    QVERIFY(slowColour != fastColour);
    // A timing below the roofline floor is not trustworthy: the row fails with the flag shown.
    slow["shapes"][1]["below_floor"] = true;
    b.addReport(kf::test::report(slow));
    QCOMPARE(cell(b, 1, ResultsModel::VerdictColumn), QStringLiteral("FAIL"));
    QCOMPARE(cell(b, 1, ResultsModel::DetailsColumn), QStringLiteral("below roofline floor"));
}

void TestResultsModel::malformedReportsAddNothingAndDoNotThrow()
{
    // A malformed report never reaches the table: the protocol refuses it with the pointer of
    // what is wrong, and only a report it read is ever added.
    struct Row {
        json report;
        const char* pointer;
    };
    const Row rows[] = {{json(), "/"},
                        {json::array({1, 2}), "/"},
                        {json{{"kind", "correctness"}, {"verdict", "pass"}, {"shapes", 7}}, "/shapes"},
                        {json{{"kind", "correctness"}, {"verdict", "ok"}}, "/verdict"},
                        {json{{"kind", "correctness"},
                              {"verdict", "fail"},
                              {"shapes", json::array({json{{"shape", {{"N", 5}}}, {"passed", "yes"}}})}},
                         "/shapes/0/passed"}};
    for (const Row& r : rows) {
        auto read = kf::protocol::RunReport::fromJson(r.report);
        QVERIFY(!read);
        QCOMPARE(qs(read.error().pointer), QString::fromLatin1(r.pointer));
    }
    // A report with only some fields still fills what it has.
    ResultsModel m;
    m.addReport(kf::test::report(json{{"kind", "correctness"}, {"verdict", "fail"}, {"shapes", json::array({json{{"shape", {{"N", 5}}}}})}}));
    QCOMPARE(m.rowCount(), 1);
    QCOMPARE(cell(m, 0, ResultsModel::CandidateColumn), QStringLiteral("?"));
    QCOMPARE(cell(m, 0, ResultsModel::ShapeColumn), QStringLiteral("N=5"));
    QCOMPARE(cell(m, 0, ResultsModel::VerdictColumn), QStringLiteral("FAIL"));
}

void TestResultsModel::caseFoldersOfFailingTrials_data()
{
    QTest::addColumn<QString>("dumpDir");   // empty: no "dump_dir" in the report
    QTest::addColumn<QStringList>("cases"); // "case" of trials 0, 1, 2 of scalar-path-long; empty: none
    QTest::addColumn<QString>("shape");
    QTest::addColumn<QStringList>("expected");
    QTest::addColumn<bool>("inspectable");

    QTest::newRow("two failing trials saved") << "/tmp/kf-dumps/run-7" << QStringList{"01-scalar-path-long-t0", "", "01-scalar-path-long-t2"}
        << "scalar-path-long" << QStringList{"/tmp/kf-dumps/run-7/01-scalar-path-long-t0", "/tmp/kf-dumps/run-7/01-scalar-path-long-t2"} << true;
    QTest::newRow("report without saved tensors") << "" << QStringList{} << "scalar-path-long" << QStringList{} << false;
    QTest::newRow("cases but no dump_dir: nowhere to look") << "" << QStringList{"01-scalar-path-long-t0", "", ""}
        << "scalar-path-long" << QStringList{} << false;
    QTest::newRow("an absolute case folder is kept") << "/tmp/kf-dumps/run-7" << QStringList{"/data/cases/t0", "", ""}
        << "scalar-path-long" << QStringList{"/data/cases/t0"} << true;
    QTest::newRow("a passing shape has nothing to inspect") << "/tmp/kf-dumps/run-7" << QStringList{"01-scalar-path-long-t0", "", ""}
        << "primes" << QStringList{} << false;
}

void TestResultsModel::caseFoldersOfFailingTrials()
{
    QFETCH(QString, dumpDir);
    QFETCH(QStringList, cases);
    QFETCH(QString, shape);
    QFETCH(QStringList, expected);
    QFETCH(bool, inspectable);
    json report = loadReport(QStringLiteral("verify_softmax_fail.json"));
    if (!dumpDir.isEmpty())
        report["dump_dir"] = dumpDir.toStdString();
    for (auto& s : report["shapes"])
        if (s["label"] == "scalar-path-long")
            for (int t = 0; t < cases.size(); ++t)
                if (!cases[t].isEmpty())
                    s["trials"][static_cast<size_t>(t)]["case"] = cases[t].toStdString();
    ResultsModel m;
    m.addReport(kf::test::report(report));
    const int row = m.findRow(QStringLiteral("optimized.cu"), shape);
    QVERIFY(row >= 0);
    QCOMPARE(m.rowAt(row).correctness.caseDirs, expected);
    QCOMPARE(m.rowAt(row).canInspect(), inspectable);
}

void TestResultsModel::modelTesterAcceptsEveryChange()
{
    ResultsModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&m);
    proxy.setSortRole(ResultsModel::SortRole);
    proxy.sort(ResultsModel::SpeedupColumn);
    QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    for (const char* file : {"verify_softmax_benchmarks_pass.json", "bench_softmax_ok.json", "verify_softmax_fail.json",
                             "verify_softmax_error.json", "verify_softmax_pass.json", "bench_softmax_ok.json"})
        m.addReport(kf::test::report(loadReport(QString::fromLatin1(file))));
    QVERIFY(m.rowCount() > 0);
    for (int r = 0; r < m.rowCount(); ++r)
        for (int c = 0; c < m.columnCount(); ++c)
            for (int role : {int(Qt::DisplayRole), int(Qt::ToolTipRole), int(ResultsModel::SortRole)})
                m.data(m.index(r, c), role);
    m.clear();
    QCOMPARE(m.rowCount(), 0);
}

void TestResultsModel::sanitizerRow_data()
{
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("verdict");
    QTest::addColumn<QString>("details");
    QTest::newRow("clean") << 0 << "clean"
                           << "compute-sanitizer 2025.3.1.0: clean — memcheck, racecheck, initcheck, synccheck on 2 shapes (2.4 s)";
    QTest::newRow("three findings, the first one shown") << 1 << "FAIL"
        << "compute-sanitizer 2025.3.1.0: 3 findings — first: memcheck: out-of-bounds read of 4 bytes in softmax_block at "
           "optimized.cu:12, block (0,0,0) thread (96,0,0) (2.4 s)";
    QTest::newRow("one finding") << 2 << "FAIL"
        << "compute-sanitizer 2025.3.1.0: 1 finding — memcheck: out-of-bounds read of 4 bytes in softmax_block at "
           "optimized.cu:30, block (0,0,0) thread (96,0,0) (2.4 s)";
    QTest::newRow("a tool that failed") << 3 << "error"
        << "compute-sanitizer 2025.3.1.0: 1 tool failed — initcheck: did not finish within 120 s (2.4 s)";
    QTest::newRow("not run") << 4 << "not run" << "compute-sanitizer: not run: compute-sanitizer was not found on gpu-box";
}

void TestResultsModel::sanitizerRow()
{
    QFETCH(int, which);
    QFETCH(QString, verdict);
    QFETCH(QString, details);
    json report = loadReport(QStringLiteral("verify_softmax_pass.json"));
    switch (which) {
    case 0: report["sanitizer"] = kf::test::sanitizerSectionJson({}); break;
    case 1: report["sanitizer"] = kf::test::sanitizerSectionJson({12, 30, 41}); break;
    case 2: report["sanitizer"] = kf::test::sanitizerSectionJson({30}); break;
    case 3:
        report["sanitizer"] = kf::test::sanitizerSectionJson({});
        report["sanitizer"]["tools"][2]["ran"] = false;
        report["sanitizer"]["tools"][2]["error"] = "did not finish within 120 s";
        break;
    default:
        report["sanitizer"] = {{"ran", false}, {"reason", "compute-sanitizer was not found on gpu-box"}};
        break;
    }
    ResultsModel m;
    m.addReport(kf::test::report(report));
    QCOMPARE(m.rowCount(), 4); // three shapes and the sanitizer's row
    const int row = m.findSanitizerRow(QStringLiteral("optimized.cu"));
    QVERIFY(row >= 0);
    QVERIFY(m.rowAt(row).isSanitizerRow);
    QCOMPARE(cell(m, row, ResultsModel::SetColumn), QStringLiteral("compute-sanitizer"));
    QCOMPARE(cell(m, row, ResultsModel::ShapeColumn), which == 4 ? QStringLiteral("—") : QStringLiteral("B=3 D=97 · B=5 D=4099"));
    QCOMPARE(cell(m, row, ResultsModel::VerdictColumn), verdict);
    QCOMPARE(cell(m, row, ResultsModel::DetailsColumn), details);
    QCOMPARE(cell(m, row, ResultsModel::MismatchesColumn), QString());
    // The tooltip lists every tool and finding.
    const QString tip = cell(m, row, ResultsModel::DetailsColumn, Qt::ToolTipRole);
    QVERIFY2(tip.startsWith(details), qPrintable(tip));
    if (which == 1) {
        QVERIFY2(tip.contains("memcheck: 3 finding(s) in 2.0 s"), qPrintable(tip));
        QVERIFY2(tip.contains("optimized.cu:41"), qPrintable(tip));
    }
    // Red for findings and failed tools, green when clean, plain when it did not run.
    const QVariant colour = m.data(m.index(row, ResultsModel::VerdictColumn), Qt::ForegroundRole);
    QCOMPARE(colour.isValid(), which != 4);
    // findRow() is about shapes: it never answers with the sanitizer's row.
    QCOMPARE(m.findRow(QStringLiteral("optimized.cu"), QString()), -1);
}

void TestResultsModel::nextVerificationReplacesTheSanitizerRow()
{
    ResultsModel m;
    json findings = loadReport(QStringLiteral("verify_softmax_pass.json"));
    findings["sanitizer"] = kf::test::sanitizerSectionJson({12, 30, 41});
    m.addReport(kf::test::report(findings));
    QCOMPARE(m.rowCount(), 4);
    // A benchmark of the same source says nothing about the tools: the row stays.
    json bench = loadReport(QStringLiteral("bench_softmax_ok.json"));
    bench["candidate"]["source_hash"] = findings["candidate"]["source_hash"];
    m.addReport(kf::test::report(bench));
    QVERIFY(m.findSanitizerRow(QStringLiteral("optimized.cu")) >= 0);
    // The next verification under the tools replaces it; one without them removes it.
    json clean = loadReport(QStringLiteral("verify_softmax_pass.json"));
    clean["sanitizer"] = kf::test::sanitizerSectionJson({});
    m.addReport(kf::test::report(clean));
    int row = m.findSanitizerRow(QStringLiteral("optimized.cu"));
    QVERIFY(row >= 0);
    QCOMPARE(cell(m, row, ResultsModel::VerdictColumn), QStringLiteral("clean"));
    int sanitizerRows = 0;
    for (int r = 0; r < m.rowCount(); ++r)
        sanitizerRows += m.rowAt(r).isSanitizerRow ? 1 : 0;
    QCOMPARE(sanitizerRows, 1);
    m.addReport(kf::test::report(loadReport(QStringLiteral("verify_softmax_pass.json"))));
    QCOMPARE(m.findSanitizerRow(QStringLiteral("optimized.cu")), -1);
    // Another candidate's row is its own; an edit of the source (another hash) drops it.
    json other = findings;
    other["candidate"]["file"] = "naive.cu";
    m.addReport(kf::test::report(other));
    QVERIFY(m.findSanitizerRow(QStringLiteral("naive.cu")) >= 0);
    json edited = loadReport(QStringLiteral("bench_softmax_ok.json"));
    edited["candidate"]["file"] = "naive.cu";
    edited["candidate"]["source_hash"] = "0000000000000000000000000000beef";
    m.addReport(kf::test::report(edited));
    QCOMPARE(m.findSanitizerRow(QStringLiteral("naive.cu")), -1);
}

void TestResultsModel::ranOnColumnShowsThePlacement_data()
{
    QTest::addColumn<QString>("endpoint");
    QTest::addColumn<int>("attempt");
    QTest::addColumn<QString>("text");
    QTest::newRow("an endpoint of runners.json") << "box" << 1 << "box · gpu-box · GPU-ac7d9fee";
    QTest::newRow("the plain local runner") << "" << 1 << "local · gpu-box · GPU-ac7d9fee";
    QTest::newRow("a pool's second attempt") << "node/1" << 2 << "node/1 · gpu-box · GPU-ac7d9fee · attempt 2";
}

void TestResultsModel::ranOnColumnShowsThePlacement()
{
    QFETCH(QString, endpoint);
    QFETCH(int, attempt);
    QFETCH(QString, text);
    const json placement = {{"endpoint", endpoint.toStdString()}, {"attempt", attempt}, {"host", "gpu-box"},
                            {"gpu_uuid", "GPU-ac7d9fee-1c2d-4e5f-8a9b-0c1d2e3f4a5b"}, {"pci_bus_id", "0000:18:00.0"},
                            {"visible_devices", "1"}};
    json verify = loadReport(QStringLiteral("verify_softmax_benchmarks_pass.json"));
    verify["placement"] = placement;
    ResultsModel m;
    m.addReport(kf::test::report(verify));
    const int row = m.findRow(QStringLiteral("optimized.cu"), QStringLiteral("4k-rows-of-8k"));
    QVERIFY(row >= 0);
    QCOMPARE(m.headerData(ResultsModel::PlacementColumn, Qt::Horizontal).toString(), QStringLiteral("Ran on"));
    QCOMPARE(cell(m, row, ResultsModel::PlacementColumn), text);
    const QString tip = cell(m, row, ResultsModel::PlacementColumn, Qt::ToolTipRole);
    QVERIFY2(tip.contains("GPU UUID: GPU-ac7d9fee-1c2d-4e5f-8a9b-0c1d2e3f4a5b"), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("Attempt: %1").arg(attempt)), qPrintable(tip));
    QVERIFY2(tip.contains("PCI bus: 0000:18:00.0"), qPrintable(tip));
    QVERIFY2(tip.contains("CUDA_VISIBLE_DEVICES: 1"), qPrintable(tip));
    // A benchmark of the same shape elsewhere: the row says both.
    json bench = loadReport(QStringLiteral("bench_softmax_ok.json"));
    bench["candidate"]["source_hash"] = verify["candidate"]["source_hash"];
    bench["placement"] = {{"endpoint", "local"}, {"attempt", 1}, {"host", "workstation"}};
    m.addReport(kf::test::report(bench));
    QCOMPARE(cell(m, row, ResultsModel::PlacementColumn), QStringLiteral("verify: %1 / bench: local · workstation").arg(text));
    // A report without a placement block (an older runner) leaves the column empty.
    ResultsModel old;
    old.addReport(kf::test::report(loadReport(QStringLiteral("verify_softmax_pass.json"))));
    QCOMPARE(cell(old, 0, ResultsModel::PlacementColumn), QString());
}

QTEST_MAIN(TestResultsModel)
#include "tst_resultsmodel.moc"
