// The Tune view (widgets/tune): the table of points, the chart's marks and lines, progress while a
// search runs, and Open as Candidate, fed a hand-made tune::Outcome whose numbers are easy to
// check by hand (a search over BLOCK × VEC of a memory-bound kernel on two shapes). None of its
// times is a measurement; the search that makes real ones is tested in tests/tst_tune.cpp and
// through RunService in tests/gui/services/tst_runservice.cpp.
#include "widgets/common/StatusColors.h"
#include "widgets/tune/TuneChart.h"
#include "widgets/tune/TuneFigures.h"
#include "widgets/tune/TuneTableModel.h"
#include "widgets/tune/TuneView.h"

#include <QApplication>
#include <QDir>
#include <QLabel>
#include <QLineSeries>
#include <QPushButton>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <QValueAxis>

using namespace kf;
using kf::tune::PointResult;
using kf::tune::Stage;
using kf::ui::TuneChart;
using kf::ui::TuneTableModel;
using kf::ui::TuneView;

Q_DECLARE_METATYPE(kf::tune::Point)

namespace {

kf::tune::Point point(int block, int vec) { return {{{"BLOCK", std::to_string(block)}, {"VEC", std::to_string(vec)}}}; }

PointResult timed(int block, int vec, double ms, Stage stage = Stage::Timed)
{
    PointResult p{point(block, vec)};
    p.stage = stage;
    p.compiled = true;
    p.registers = 16 + 4 * vec;
    p.occupancy = block >= 256 ? 1.0 : 0.5;
    p.verified = true;
    p.rounds = stage == Stage::Timed ? 1 : 2;
    p.shapeMs = {ms / 2, ms * 2};
    p.geomeanMs = ms;
    p.speedupEager = 0.6 / ms;
    p.pctPeak = 100 * 0.3 / ms;
    if (stage != Stage::Timed) {
        p.remeasureMs = {ms * 1.01, ms, ms * 1.02};
        p.finalMs = ms * 1.01;
    }
    return p;
}

PointResult stopped(int block, int vec, Stage stage, const std::string& reason)
{
    PointResult p{point(block, vec)};
    p.stage = stage;
    p.reason = reason;
    p.compiled = stage != Stage::CompileFailed;
    p.registers = p.compiled ? 40 : 0;
    p.verified = stage == Stage::VerifyFailed ? std::optional(false) : std::nullopt;
    return p;
}

/// Nine points: six timed (two finalists, one the winner at 0.32 ms), one that failed verify, one
/// pruned for its spills, one that did not compile. Eager 0.6 ms; the floor 0.3 ms (1.005e9 and
/// 1.005e9 bytes at 3350 GB/s).
kf::tune::Outcome outcome()
{
    kf::tune::Outcome o;
    o.candidate = "k.cu";
    o.arch = "sm_90";
    o.points = {timed(256, 1, 0.52),
                timed(128, 1, 0.61),
                timed(512, 1, 0.55),
                timed(256, 2, 0.41),
                timed(256, 4, 0.3168, Stage::Winner),
                timed(512, 4, 0.35, Stage::Finalist),
                stopped(128, 4, Stage::VerifyFailed, "shape N=4099: y differs from the reference at 3 of 4099 elements"),
                stopped(1024, 8, Stage::Pruned, "spills 96 bytes per thread"),
                stopped(128, 8, Stage::CompileFailed, "k.cu(9): error: VEC 8 is not a width this kernel supports")};
    o.winner = 4;
    o.eagerMs = {0.3, 1.2};
    o.bytes = {0.5025e9, 2.01e9};
    o.peakGbs = 3350;
    o.space.combinations = 9;
    o.cost = {9, 8, 1, 1, 7, 1, 6, 10, 6, 2.5, 3.0, 9.0, 15.2, false};
    return o;
}

} // namespace

class TestTuneView : public QObject {
    Q_OBJECT
private slots:
    void tableRows_data();
    void tableRows();
    void chartMarksEveryPoint();
    void chartLines_data();
    void chartLines();
    void progressWhileSearching();
    void openAsCandidate();
    void screenshots();
};

void TestTuneView::tableRows_data()
{
    QTest::addColumn<int>("row");
    QTest::addColumn<QString>("parameters");
    QTest::addColumn<QString>("stage");
    QTest::addColumn<QString>("time");
    QTest::addColumn<QString>("pctPeak");
    QTest::addColumn<QString>("reason");
    QTest::addColumn<bool>("red");
    QTest::newRow("the candidate's own point, timed once") << 0 << "BLOCK=256 VEC=1" << "timed" << "0.52 ms" << "57.7 %" << "" << false;
    QTest::newRow("the winner shows its re-measured median") << 4 << "BLOCK=256 VEC=4" << "winner" << "0.32 ms" << "94.7 %" << "" << false;
    QTest::newRow("a finalist that lost") << 5 << "BLOCK=512 VEC=4" << "finalist" << "0.3535 ms" << "85.7 %" << "" << false;
    QTest::newRow("a point that failed verify is never timed")
        << 6 << "BLOCK=128 VEC=4" << "verify failed" << "–" << "–" << "shape N=4099: y differs from the reference at 3 of 4099 elements" << true;
    QTest::newRow("a point pruned for its spills") << 7 << "BLOCK=1024 VEC=8" << "pruned" << "–" << "–" << "spills 96 bytes per thread" << true;
    QTest::newRow("a point that did not compile") << 8 << "BLOCK=128 VEC=8" << "did not compile" << "–" << "–"
                                                   << "k.cu(9): error: VEC 8 is not a width this kernel supports" << true;
}

void TestTuneView::tableRows()
{
    QFETCH(int, row);
    QFETCH(QString, parameters);
    QFETCH(QString, stage);
    QFETCH(QString, time);
    QFETCH(QString, pctPeak);
    QFETCH(QString, reason);
    QFETCH(bool, red);
    TuneView view;
    view.setOutcome(outcome());
    TuneTableModel* m = view.model();
    QCOMPARE(m->rowCount(), 9);
    auto cell = [&](int column) { return m->index(row, column).data().toString(); };
    QCOMPARE(cell(TuneTableModel::Number), QString::number(row + 1));
    QCOMPARE(cell(TuneTableModel::Parameters), parameters);
    QCOMPARE(cell(TuneTableModel::Stage), stage);
    QCOMPARE(cell(TuneTableModel::Time), time);
    QCOMPARE(cell(TuneTableModel::PctPeak), pctPeak);
    QCOMPARE(cell(TuneTableModel::Reason), reason);
    const QVariant colour = m->index(row, TuneTableModel::Stage).data(Qt::ForegroundRole);
    QCOMPARE(colour.isValid() && colour.value<QColor>() == kf::ui::verdictstyle::color(kf::ui::Tone::Bad, QGuiApplication::palette()), red);
    QCOMPARE(m->index(row, 0).data(Qt::FontRole).value<QFont>().bold(), stage == "winner");
    // The winner is selected when the search ends, and the rows sort by time with the untimed last.
    QCOMPARE(view.table()->selectionModel()->selectedRows().front().data().toInt(), 5);
    view.table()->sortByColumn(TuneTableModel::Time, Qt::AscendingOrder);
    QCOMPARE(view.table()->model()->index(0, TuneTableModel::Parameters).data().toString(), QString("BLOCK=256 VEC=4"));
    QCOMPARE(view.table()->model()->index(8, TuneTableModel::Time).data().toString(), QString("–"));
}

void TestTuneView::chartMarksEveryPoint()
{
    TuneView view;
    view.setOutcome(outcome());
    TuneChart* c = view.chart();
    QCOMPARE(c->marks(TuneChart::Marks::Timed)->count(), 4);
    QCOMPARE(c->marks(TuneChart::Marks::Finalists)->count(), 1);
    QCOMPARE(c->marks(TuneChart::Marks::Finalists)->at(0), QPointF(6, 0.35 * 1.01));
    QCOMPARE(c->marks(TuneChart::Marks::Winner)->count(), 1);
    QCOMPARE(c->marks(TuneChart::Marks::Winner)->at(0), QPointF(5, 0.3168 * 1.01));
    QCOMPARE(c->winnerLabel(), QString("winner #5 · 0.32 ms"));
    // The three that never got a time: red, in a row above the slowest, each saying why on hover.
    QScatterSeries* failed = c->marks(TuneChart::Marks::Failed);
    QCOMPARE(failed->count(), 3);
    QCOMPARE(failed->color(), kf::ui::errorColor(c->palette()));
    QCOMPARE(failed->at(0).x(), 7.0);
    QVERIFY(failed->at(0).y() > 0.61);
    QVERIFY2(c->tipOf(7).contains("differs from the reference"), qPrintable(c->tipOf(7)));
    QVERIFY2(c->tipOf(9).contains("VEC 8 is not a width"), qPrintable(c->tipOf(9)));
    QVERIFY2(c->tipOf(5).contains("winner"), qPrintable(c->tipOf(5)));
    QVERIFY(c->axisY()->max() > 0.61);
    QCOMPARE(c->axisY()->min(), 0.0);
}

void TestTuneView::chartLines_data()
{
    QTest::addColumn<double>("peakGbs");
    QTest::addColumn<bool>("withCompile");
    QTest::addColumn<QString>("floor");
    QTest::addColumn<QString>("compile");
    QTest::newRow("the search ended: floor and eager") << 3350.0 << false << "roofline floor 0.3 ms" << "";
    QTest::newRow("the winner's bench measured torch.compile") << 3350.0 << true << "roofline floor 0.3 ms" << "torch.compile 0.33 ms";
    QTest::newRow("a runner that reports no peak: no floor") << 0.0 << true << "" << "torch.compile 0.33 ms";
}

void TestTuneView::chartLines()
{
    QFETCH(double, peakGbs);
    QFETCH(bool, withCompile);
    QFETCH(QString, floor);
    QFETCH(QString, compile);
    kf::tune::Outcome o = outcome();
    o.peakGbs = peakGbs;
    TuneView view;
    view.setOutcome(o);
    if (withCompile) {
        // torch.compile's best mode per shape from the winner's bench report: 0.165 and 0.66 ms.
        kf::protocol::BenchReport bench;
        for (double ms : {0.165, 0.66}) {
            kf::protocol::BenchShape s;
            s.compile = kf::protocol::CompileComparison{};
            s.compile->measured = true;
            s.compile->bestMs = ms;
            bench.shapes.push_back(s);
        }
        view.setCompileMs(kf::ui::tunefig::compileMs(bench));
    }
    TuneChart* c = view.chart();
    QCOMPARE(c->labelText(TuneChart::Line::Floor), floor);
    QCOMPARE(c->line(TuneChart::Line::Floor) != nullptr, !floor.isEmpty());
    QCOMPARE(c->labelText(TuneChart::Line::Eager), QString("eager (LibTorch) 0.6 ms"));
    QCOMPARE(c->line(TuneChart::Line::Eager)->at(0).y(), 0.6);
    QCOMPARE(c->labelText(TuneChart::Line::Compile), compile);
    QCOMPARE(c->line(TuneChart::Line::Compile) != nullptr, withCompile);
}

void TestTuneView::progressWhileSearching()
{
    TuneView view;
    view.setTarget("scale / k.cu");
    auto* start = view.findChild<QPushButton*>("tuneStart");
    auto* cancel = view.findChild<QPushButton*>("tuneCancel");
    QSignalSpy started(&view, &TuneView::startRequested);
    QSignalSpy cancelled(&view, &TuneView::cancelRequested);
    view.setBudgetS(30);
    start->click();
    QCOMPARE(started.count(), 1);
    QCOMPARE(started.first().at(0).toDouble(), 30.0);
    view.begin();
    QVERIFY(!start->isEnabled());
    QVERIFY(cancel->isEnabled());
    view.step("compile", 1, 9, 0.5, outcome().points[8]);
    view.step("verify", 1, 8, 2, std::nullopt);
    view.step("time", 1, 7, 6, timed(256, 1, 0.52));
    QCOMPARE(view.model()->rowCount(), 2);
    QCOMPARE(view.chart()->marks(TuneChart::Marks::Failed)->count(), 1);
    QCOMPARE(view.chart()->marks(TuneChart::Marks::Timed)->count(), 1);
    // A later step of the same point replaces its row.
    view.step("time", 2, 7, 8, timed(256, 1, 0.50));
    QCOMPARE(view.model()->rowCount(), 2);
    QCOMPARE(view.model()->index(1, TuneTableModel::Time).data().toString(), QString("0.5 ms"));
    QCOMPARE(view.findChild<QLabel*>("tuneStage")->text(), QString("time 2 of 7 · 8 s of 30 s"));
    cancel->click();
    QCOMPARE(cancelled.count(), 1);
    view.setOutcome(outcome());
    view.finish(true, "tuned BLOCK=256 VEC=4");
    QVERIFY(start->isEnabled());
    QVERIFY(!cancel->isEnabled());
    // Nothing to tune: Tune is off and the view says why.
    view.setTarget({}, "no candidate of this task has a \"tune\" block");
    QVERIFY(!start->isEnabled());
    QCOMPARE(view.findChild<QLabel*>("tuneTarget")->text(), QString("no candidate of this task has a \"tune\" block"));
}

void TestTuneView::openAsCandidate()
{
    TuneView view;
    QSignalSpy open(&view, &TuneView::openRequested);
    view.setOutcome(outcome());
    QVERIFY(view.openButton()->isEnabled());   // the winner is selected
    view.selectPoint(4);
    view.openButton()->click();
    QCOMPARE(open.count(), 1);
    QCOMPARE(open.first().at(0).value<kf::tune::Point>().label(), std::string("BLOCK=256 VEC=2"));
    view.selectPoint(9);   // did not compile: nothing to open
    QVERIFY(!view.openButton()->isEnabled());
}

void TestTuneView::screenshots()
{
    const QString dir = qEnvironmentVariable("KF_SCREENSHOT_DIR");
    if (dir.isEmpty())
        QSKIP("set KF_SCREENSHOT_DIR to save the Tune view's screenshots");
    for (const bool dark : {false, true}) {
        TuneView view;
        if (dark)
            view.setPalette(kf::ui::workbenchDarkPalette());
        view.resize(1100, 720);
        view.setTarget("scale / k.cu · 9 points of BLOCK × VEC");
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setOutcome(outcome());
        view.setCompileMs(0.33);
        view.finish(true, "tuned BLOCK=256 VEC=4: 0.32 ms geomean, written as k_tuned.cu; its verify and bench passed");
        QApplication::processEvents();
        QVERIFY(view.grab().save(QDir(dir).filePath(dark ? "tune-view-dark.png" : "tune-view.png")));
    }
}

QTEST_MAIN(TestTuneView)
#include "tst_tuneview.moc"
