// The Run panel as a user drives it: the bar and stage follow the runner's events, Cancel works
// once and only while running, and the banner says how the run ended.
#include "reportutil.h"
#include "testutil.h"

#include "widgets/runs/ResultsModel.h"
#include "widgets/runs/RunLogView.h"
#include "widgets/runs/RunPanel.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QMenu>
#include <QSortFilterProxyModel>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTableView>
#include <QTextBlock>

#include <memory>

#include <nlohmann/json.hpp>

using kf::ui::ResultsModel;
using kf::ui::RunLogView;
using kf::ui::RunPanel;
using kf::ui::Tone;
using nlohmann::json;

Q_DECLARE_METATYPE(kf::ui::Tone)
Q_DECLARE_METATYPE(kf::ui::RunLogView::Level)

namespace {

json loadReport(const QString& name)
{
    QFile f(QString(KF_TEST_DATA_DIR) + "/reports/" + name);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot open test report %s", qPrintable(f.fileName()));
    return json::parse(f.readAll().toStdString());
}

// A runner event as RunController routes it: decoded by the protocol, then to the panel's typed
// slots. An event the protocol refuses never reaches the panel.
void feed(RunPanel& panel, const json& j)
{
    auto e = kf::protocol::Event::fromJson(j);
    if (!e)
        return;
    switch (e->kind) {
    case kf::protocol::Event::Kind::Progress: panel.setProgress(e->permille, QString::fromStdString(e->stage)); break;
    case kf::protocol::Event::Kind::LaunchBegin: panel.setLaunch(QString::fromStdString(e->label)); break;
    case kf::protocol::Event::Kind::LaunchEnd: panel.setLaunch({}); break;
    case kf::protocol::Event::Kind::Log: panel.appendLog(e->level, QString::fromStdString(e->text)); break;
    }
}

json parse(const QString& text)
{
    return json::parse(text.toStdString());
}

} // namespace

class TestRunPanel : public QObject {
    Q_OBJECT

private slots:
    void compileComparisonScreenshot();
    void eventsMoveBarAndStage_data();
    void eventsMoveBarAndStage();
    void beginResetsTheLastRun();
    void cancelEmitsOnceWhileRunning();
    void cancelIsDisabledOutsideARun();
    void promoteButtonFollowsTheGates_data();
    void promoteButtonFollowsTheGates();
    void finishShowsTheVerdict_data();
    void finishShowsTheVerdict();
    void failShowsTheRunnerSentence();
    void sanitizerFindingsFailTheRunAndAreLogged_data();
    void sanitizerFindingsFailTheRunAndAreLogged();
    void columnsWithoutValuesAreHidden();
    void logLinesFromEventsAndReports();
    void benchSampleCountsAreLoggedOnce();
    void logKeepsAtMostMaxLines();
    void layoutFitsInASmallDock_data();
    void layoutFitsInASmallDock();
    void inspectFromTheResultsTable_data();
    void inspectFromTheResultsTable();
};

void TestRunPanel::eventsMoveBarAndStage_data()
{
    QTest::addColumn<QStringList>("events");
    QTest::addColumn<int>("permille");
    QTest::addColumn<QString>("stage");

    const QString trial = R"({"type":"progress","id":3,"permille":412,"stage":"shape 2/3 scalar-path-long (B=5 D=4099) trial 2/3"})";
    const QString launch =
        R"({"type":"launch_begin","id":3,"label":"launch 1 (softmax_block<512, 4>) shape scalar-path-long (B=5 D=4099) trial 1 run 0","timeout_ms":10000})";
    QTest::newRow("nothing yet: starting") << QStringList{} << 0 << "starting";
    QTest::newRow("verify trial under way") << QStringList{trial} << 412 << "shape 2/3 scalar-path-long (B=5 D=4099) trial 2/3";
    QTest::newRow("launch in flight is named")
        << QStringList{trial, launch} << 412
        << "shape 2/3 scalar-path-long (B=5 D=4099) trial 2/3 · launch 1 (softmax_block<512, 4>) shape scalar-path-long (B=5 D=4099) trial 1 run 0";
    QTest::newRow("launch finished") << QStringList{trial, launch, R"({"type":"launch_end","id":3})"} << 412
                                     << "shape 2/3 scalar-path-long (B=5 D=4099) trial 2/3";
    // The protocol refuses these (engine/protocol/Messages.h): nothing reaches the panel.
    QTest::newRow("permille past 1000 is refused")
        << QStringList{trial, R"({"type":"progress","id":3,"permille":1500,"stage":"done"})"} << 412
        << "shape 2/3 scalar-path-long (B=5 D=4099) trial 2/3";
    QTest::newRow("progress without permille is refused")
        << QStringList{trial, R"({"type":"progress","id":3,"stage":"reference"})"} << 412
        << "shape 2/3 scalar-path-long (B=5 D=4099) trial 2/3";
    QTest::newRow("unknown event changes nothing")
        << QStringList{trial, R"({"type":"telemetry","id":3,"clock_mhz":1980})"} << 412
        << "shape 2/3 scalar-path-long (B=5 D=4099) trial 2/3";
}

void TestRunPanel::eventsMoveBarAndStage()
{
    QFETCH(QStringList, events);
    QFETCH(int, permille);
    QFETCH(QString, stage);

    RunPanel panel;
    panel.begin(QStringLiteral("Verify softmax_fp32/optimized.cu"));
    for (const QString& e : events)
        feed(panel, parse(e));
    QCOMPARE(panel.progressPermille(), permille);
    QCOMPARE(panel.stageText(), stage);
    QVERIFY(panel.isRunning());
}

void TestRunPanel::beginResetsTheLastRun()
{
    RunPanel panel;
    panel.begin(QStringLiteral("Verify softmax_fp32/optimized.cu"));
    feed(panel, parse(R"({"type":"progress","id":1,"permille":700,"stage":"shape 3/3 vector-path (B=11 D=4096) trial 1/3"})"));
    panel.addReport(kf::test::report(loadReport(QStringLiteral("verify_softmax_fail.json"))));
    panel.finish(true, {});
    QCOMPARE(panel.progressPermille(), 1000);

    panel.begin(QStringLiteral("Benchmark softmax_fp32/optimized.cu"));
    QCOMPARE(panel.title(), QStringLiteral("Benchmark softmax_fp32/optimized.cu"));
    QCOMPARE(panel.progressPermille(), 0);
    QCOMPARE(panel.stageText(), QStringLiteral("starting"));
    QCOMPARE(panel.bannerText(), QStringLiteral("running…"));
    QVERIFY(panel.cancelButton()->isEnabled());
    // The banner of the new run speaks only for the new run's reports.
    panel.addReport(kf::test::report(loadReport(QStringLiteral("bench_softmax_ok.json"))));
    panel.finish(true, {});
    QCOMPARE(panel.bannerText(), QStringLiteral("OK · 2 shapes timed · 1.38× faster than LibTorch (geomean)"));
}

void TestRunPanel::cancelEmitsOnceWhileRunning()
{
    RunPanel panel;
    panel.resize(900, 500);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QSignalSpy spy(&panel, &RunPanel::cancelRequested);
    panel.begin(QStringLiteral("Verify softmax_fp32/optimized.cu"));
    QVERIFY(panel.cancelButton()->isEnabled());

    QTest::mouseClick(panel.cancelButton(), Qt::LeftButton);
    QCOMPARE(spy.count(), 1);
    QVERIFY(!panel.cancelButton()->isEnabled());
    QCOMPARE(panel.stageText(), QStringLiteral("cancelling…"));
    QTest::mouseClick(panel.cancelButton(), Qt::LeftButton);
    QCOMPARE(spy.count(), 1);

    panel.finish(false, QStringLiteral("cancelled"));
    QVERIFY(!panel.isRunning());
    QVERIFY(!panel.cancelButton()->isEnabled());
    QCOMPARE(panel.bannerText(), QStringLiteral("cancelled"));
    QCOMPARE(panel.bannerTone(), Tone::Bad);
}

void TestRunPanel::cancelIsDisabledOutsideARun()
{
    RunPanel panel;
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QSignalSpy spy(&panel, &RunPanel::cancelRequested);
    QVERIFY(!panel.cancelButton()->isEnabled());
    QTest::mouseClick(panel.cancelButton(), Qt::LeftButton);
    QCOMPARE(spy.count(), 0);

    panel.begin(QStringLiteral("Verify softmax_fp32/optimized.cu"));
    panel.finish(true, {});
    QVERIFY(!panel.cancelButton()->isEnabled());
    QTest::mouseClick(panel.cancelButton(), Qt::LeftButton);
    QCOMPARE(spy.count(), 0);
}

void TestRunPanel::finishShowsTheVerdict_data()
{
    QTest::addColumn<QStringList>("reports");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<QString>("sentence");
    QTest::addColumn<QString>("banner");
    QTest::addColumn<Tone>("tone");

    QTest::newRow("every shape passes") << QStringList{"verify_softmax_pass.json"} << true << ""
                                        << "PASS · 3/3 shapes" << Tone::Good;
    QTest::newRow("two shapes fail") << QStringList{"verify_softmax_fail.json"} << true << ""
                                     << "FAIL · 2 of 3 shapes failed" << Tone::Bad;
    QTest::newRow("verify and bench") << QStringList{"verify_softmax_benchmarks_pass.json", "bench_softmax_ok.json"} << true << ""
                                      << "PASS · 2/2 shapes · 1.38× faster than LibTorch (geomean)" << Tone::Good;
    QTest::newRow("run could not be done")
        << QStringList{"verify_softmax_error.json"} << true << ""
        << "ERROR · an illegal memory access was encountered in launch 1 (softmax_block<512, 4>) at vector-path (B=11 D=4096)"
        << Tone::Bad;
    QTest::newRow("cancelled after one candidate passed")
        << QStringList{"verify_softmax_pass.json"} << false << "cancelled" << "PASS · 3/3 shapes · cancelled" << Tone::Warning;
    QTest::newRow("no reports, caller's sentence") << QStringList{} << true << "nothing to run: the task has no candidates"
                                                   << "nothing to run: the task has no candidates" << Tone::Good;
}

void TestRunPanel::finishShowsTheVerdict()
{
    QFETCH(QStringList, reports);
    QFETCH(bool, ok);
    QFETCH(QString, sentence);
    QFETCH(QString, banner);
    QFETCH(Tone, tone);

    RunPanel panel;
    QSignalSpy spy(&panel, &RunPanel::cancelRequested);
    panel.begin(QStringLiteral("Verify softmax_fp32"));
    for (const QString& r : reports)
        panel.addReport(kf::test::report(loadReport(r)));
    panel.finish(ok, sentence);
    QCOMPARE(panel.bannerText(), banner);
    QCOMPARE(panel.bannerTone(), tone);
    QVERIFY(!panel.isRunning());
    QVERIFY(!panel.cancelButton()->isEnabled());
    QCOMPARE(panel.log()->lastMessage(), banner);
    QCOMPARE(spy.count(), 0);
}

void TestRunPanel::sanitizerFindingsFailTheRunAndAreLogged_data()
{
    QTest::addColumn<QList<int>>("lines"); // lines of the findings; none: clean
    QTest::addColumn<QString>("banner");
    QTest::addColumn<Tone>("tone");
    QTest::addColumn<QString>("logged");
    QTest::addColumn<RunLogView::Level>("level");
    QTest::newRow("clean: the verdict stands")
        << QList<int>{}
        << "PASS · 3/3 shapes · compute-sanitizer 2025.3.1.0: clean — memcheck, racecheck, initcheck, synccheck on 2 shapes (2.4 s)"
        << Tone::Good
        << "softmax_fp32/optimized.cu: compute-sanitizer 2025.3.1.0: clean — memcheck, racecheck, initcheck, synccheck on 2 shapes (2.4 s)"
        << RunLogView::Level::Info;
    QTest::newRow("findings fail a run whose shapes all passed")
        << QList<int>{12, 30}
        << "FAIL · 3/3 shapes passed · compute-sanitizer 2025.3.1.0: 2 findings — first: memcheck: out-of-bounds read of 4 bytes in softmax_block at optimized.cu:12, block (0,0,0) thread (96,0,0) (2.4 s)"
        << Tone::Bad
        << "softmax_fp32/optimized.cu: compute-sanitizer 2025.3.1.0: 2 findings — first: memcheck: out-of-bounds read of 4 bytes in softmax_block at optimized.cu:12, block (0,0,0) thread (96,0,0) (2.4 s)"
        << RunLogView::Level::Error;
}

void TestRunPanel::sanitizerFindingsFailTheRunAndAreLogged()
{
    QFETCH(QList<int>, lines);
    QFETCH(QString, banner);
    QFETCH(Tone, tone);
    QFETCH(QString, logged);
    QFETCH(RunLogView::Level, level);
    json report = loadReport("verify_softmax_pass.json");
    report["sanitizer"] = kf::test::sanitizerSectionJson(std::vector<int>(lines.begin(), lines.end()));
    if (!lines.isEmpty())
        report["verdict"] = "fail";
    RunPanel panel;
    panel.begin(QStringLiteral("Verify softmax_fp32/optimized.cu · under compute-sanitizer"));
    panel.addReport(kf::test::report(report));
    QCOMPARE(panel.log()->lastMessage(), logged);
    QCOMPARE(panel.log()->lastLevel(), level);
    QCOMPARE(panel.model()->rowCount(), 4);
    QVERIFY(panel.model()->findSanitizerRow("optimized.cu") >= 0);
    // A verification has no timings and this report no placement: those columns are hidden.
    QVERIFY(!panel.resultsView()->isColumnHidden(ResultsModel::MaxAbsErrorColumn));
    QVERIFY(!panel.resultsView()->isColumnHidden(ResultsModel::DetailsColumn));
    QVERIFY(panel.resultsView()->isColumnHidden(ResultsModel::SpeedupColumn));
    QVERIFY(panel.resultsView()->isColumnHidden(ResultsModel::PlacementColumn));
    panel.finish(true, {});
    QCOMPARE(panel.bannerText(), banner);
    QCOMPARE(panel.bannerTone(), tone);
}

void TestRunPanel::columnsWithoutValuesAreHidden()
{
    RunPanel panel;
    const QTableView* view = panel.resultsView();
    auto hidden = [&](int c) { return view->isColumnHidden(c); };
    QVERIFY(hidden(ResultsModel::MaxAbsErrorColumn) && hidden(ResultsModel::SpeedupColumn) && hidden(ResultsModel::PlacementColumn));
    QVERIFY(!hidden(ResultsModel::VerdictColumn) && !hidden(ResultsModel::DetailsColumn));
    panel.begin(QStringLiteral("Verify softmax_fp32/optimized.cu"));
    panel.addReport(kf::test::report(loadReport("verify_softmax_benchmarks_pass.json")));
    QVERIFY(!hidden(ResultsModel::MaxAbsErrorColumn) && !hidden(ResultsModel::MismatchesColumn));
    QVERIFY(hidden(ResultsModel::CandidateMedianColumn) && hidden(ResultsModel::SpeedupColumn) && hidden(ResultsModel::BandwidthColumn));
    panel.addReport(kf::test::report(loadReport("bench_softmax_ok.json")));
    QVERIFY(!hidden(ResultsModel::CandidateMedianColumn) && !hidden(ResultsModel::SpeedupColumn) && !hidden(ResultsModel::BandwidthColumn));
    QVERIFY(hidden(ResultsModel::CompileSpeedupColumn)); // not compared with torch.compile
    panel.addReport(kf::test::report(loadReport("bench_softmax_compile.json")));
    QVERIFY(!hidden(ResultsModel::CompileSpeedupColumn));
    QVERIFY(hidden(ResultsModel::PlacementColumn));
    json placed = loadReport("verify_softmax_pass.json");
    placed["placement"] = {{"endpoint", "box"}, {"attempt", 1}, {"host", "gpu-box"}};
    panel.addReport(kf::test::report(placed));
    QVERIFY(!hidden(ResultsModel::PlacementColumn));
}

void TestRunPanel::failShowsTheRunnerSentence()
{
    RunPanel panel;
    panel.begin(QStringLiteral("Verify softmax_fp32/optimized.cu"));
    feed(panel, parse(R"({"type":"progress","id":2,"permille":250,"stage":"shape 1/3 primes (B=3 D=97) trial 1/3"})"));
    const QString sentence = QStringLiteral(
        "the candidate did not finish within 10 s in launch 1 (softmax_block<512, 4>) shape primes (B=3 D=97) trial 0 run 0 — "
        "an infinite loop or a deadlock? The runner was restarted.");
    panel.fail(sentence);
    QCOMPARE(panel.bannerText(), sentence);
    QCOMPARE(panel.bannerTone(), Tone::Bad);
    QCOMPARE(panel.log()->lastMessage(), sentence);
    QCOMPARE(panel.log()->lastLevel(), RunLogView::Level::Error);
    QVERIFY(!panel.isRunning());
    QVERIFY(!panel.cancelButton()->isEnabled());
    QCOMPARE(panel.progressPermille(), 250); // where it stopped
}

void TestRunPanel::logLinesFromEventsAndReports()
{
    RunPanel panel;
    panel.begin(QStringLiteral("Verify softmax_fp32/optimized.cu"));
    feed(panel, parse(R"({"type":"log","id":1,"level":"warning","text":"persisting L2 lines could not be reset"})"));
    QCOMPARE(panel.log()->lastMessage(), QStringLiteral("persisting L2 lines could not be reset"));
    QCOMPARE(panel.log()->lastLevel(), RunLogView::Level::Warning);

    panel.addReport(kf::test::report(loadReport(QStringLiteral("verify_softmax_fail.json"))));
    QVERIFY(panel.log()->lastMessage().startsWith(
        QStringLiteral("softmax_fp32/optimized.cu: correctness fail — 2 of 3 shapes failed; first: shape scalar-path-long")));
    QCOMPARE(panel.log()->lastLevel(), RunLogView::Level::Warning);
    QCOMPARE(panel.model()->rowCount(), 3);
    QCOMPARE(panel.resultsView()->model()->rowCount(), 3);

    panel.addReport(kf::test::report(loadReport(QStringLiteral("verify_softmax_error.json"))));
    QCOMPARE(panel.log()->lastLevel(), RunLogView::Level::Error);
    // Every line carries a time stamp and its level, so a user can tell how long a stage took.
    const QString line = panel.log()->document()->lastBlock().text();
    QVERIFY2(QRegularExpression(QStringLiteral(R"(^\d\d:\d\d:\d\d\.\d\d\d  error   softmax_fp32/)")).match(line).hasMatch(),
             qPrintable(line));
}

void TestRunPanel::benchSampleCountsAreLoggedOnce()
{
    RunPanel panel;
    panel.begin(QStringLiteral("Benchmark softmax_fp32/optimized.cu"));
    const int before = panel.log()->document()->blockCount();
    for (int n : {10, 20, 30})
        feed(panel, json{{"type", "progress"},
                               {"id", 4},
                               {"permille", n * 3},
                               {"stage", "benchmark 8k-rows-of-4k (B=8192 D=4096): " + std::to_string(n) + " samples"}});
    QCOMPARE(panel.log()->document()->blockCount(), before + 1);
    QCOMPARE(panel.stageText(), QStringLiteral("benchmark 8k-rows-of-4k (B=8192 D=4096): 30 samples"));
    feed(panel, json{{"type", "progress"}, {"id", 4}, {"permille", 520}, {"stage", "benchmark 4k-rows-of-8k (B=4096 D=8192): 1 samples"}});
    QCOMPARE(panel.log()->document()->blockCount(), before + 2);
}

void TestRunPanel::logKeepsAtMostMaxLines()
{
    RunLogView log(nullptr, 3);
    for (int i = 1; i <= 5; ++i)
        log.appendLine(RunLogView::Level::Info, QStringLiteral("line %1\nsecond half").arg(i));
    QCOMPARE(log.document()->blockCount(), 3);
    QVERIFY(log.document()->firstBlock().text().endsWith(QStringLiteral("line 3 second half")));
    QVERIFY(log.isReadOnly());
}

void TestRunPanel::layoutFitsInASmallDock_data()
{
    QTest::addColumn<bool>("dark");
    QTest::newRow("light palette") << false;
    QTest::newRow("dark palette") << true;
}

void TestRunPanel::layoutFitsInASmallDock()
{
    QFETCH(bool, dark);
    const QPalette original = QApplication::palette();
    if (dark) {
        QPalette p;
        p.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
        p.setColor(QPalette::WindowText, QColor(0xdd, 0xdd, 0xdd));
        p.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
        p.setColor(QPalette::AlternateBase, QColor(0x26, 0x26, 0x26));
        p.setColor(QPalette::Text, QColor(0xdd, 0xdd, 0xdd));
        p.setColor(QPalette::Button, QColor(0x35, 0x35, 0x35));
        p.setColor(QPalette::ButtonText, QColor(0xdd, 0xdd, 0xdd));
        p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x70, 0x70, 0x70));
        p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(0x70, 0x70, 0x70));
        QApplication::setPalette(p);
    }
    RunPanel panel;
    panel.resize(720, 420);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.begin(QStringLiteral("Verify + benchmark softmax_fp32/optimized.cu"));
    // One source (one hash) throughout, so every row stays: failures, an error and timings.
    const json failed = loadReport(QStringLiteral("verify_softmax_fail.json"));
    json bench = loadReport(QStringLiteral("bench_softmax_ok.json"));
    bench["candidate"]["source_hash"] = failed["candidate"]["source_hash"];
    panel.addReport(kf::test::report(failed));
    panel.addReport(kf::test::report(bench));
    panel.addReport(kf::test::report(loadReport(QStringLiteral("verify_softmax_error.json"))));
    QCOMPARE(panel.model()->rowCount(), 6);
    feed(panel, parse(R"({"type":"progress","id":3,"permille":640,"stage":"benchmark 4k-rows-of-8k (B=4096 D=8192): 88 samples"})"));
    feed(panel, parse(
        R"({"type":"launch_begin","id":3,"label":"launch 1 (softmax_block<512, 4>) shape 4k-rows-of-8k (B=4096 D=8192) trial 0 run 0","timeout_ms":10000})"));

    // A long stage never pushes Cancel out of the panel.
    const QRect cancel(panel.cancelButton()->mapTo(&panel, QPoint(0, 0)), panel.cancelButton()->size());
    QVERIFY2(panel.rect().contains(cancel), "the Cancel button is clipped");
    const QString banner = panel.bannerText();
    QVERIFY(banner == QStringLiteral("running…"));
    // The banner colour follows the palette: a failing red must be light on a dark window.
    panel.finish(true, {});
    QCOMPARE(panel.bannerTone(), Tone::Bad);
    const QColor red = kf::ui::verdictstyle::color(Tone::Bad, panel.palette());
    QCOMPARE(red.lightness() > 128, dark);
    // The long error sentence wraps inside the banner instead of running off the right edge.
    auto* bannerLabel = panel.findChild<QLabel*>(QStringLiteral("runBanner"));
    QVERIFY(bannerLabel);
    QTRY_VERIFY(bannerLabel->height() >= bannerLabel->heightForWidth(bannerLabel->width()));
    if (const QByteArray dir = qgetenv("KF_SAVE_GRABS"); !dir.isEmpty())
        panel.grab().save(QDir(QString::fromLocal8Bit(dir)).filePath(dark ? "runpanel-dark.png" : "runpanel-light.png"));
    QVERIFY(bannerLabel->height() > 2 * bannerLabel->fontMetrics().height() - 2);

    QApplication::setPalette(original);
}

void TestRunPanel::promoteButtonFollowsTheGates_data()
{
    QTest::addColumn<bool>("enabled");
    QTest::addColumn<QString>("tooltip");
    QTest::addColumn<int>("emitted");
    QTest::newRow("blocked") << false << "Blocked by the gate \"Geometric-mean speedup\"" << 0;
    QTest::newRow("gates pass") << true << "Promote optimized.cu: it passed all 9 gates" << 1;
}

void TestRunPanel::promoteButtonFollowsTheGates()
{
    QFETCH(bool, enabled);
    QFETCH(QString, tooltip);
    QFETCH(int, emitted);
    kf::ui::RunPanel panel;
    QVERIFY(!panel.promoteButton()->isEnabled()); // nothing to promote before any evidence
    QVERIFY(panel.promoteButton()->toolTip().contains("F5"));
    QSignalSpy spy(&panel, &kf::ui::RunPanel::promoteRequested);
    panel.setPromoteState(enabled, tooltip);
    QCOMPARE(panel.promoteButton()->isEnabled(), enabled);
    QCOMPARE(panel.promoteButton()->toolTip(), tooltip);
    panel.show();
    QTest::mouseClick(panel.promoteButton(), Qt::LeftButton);
    QCOMPARE(spy.count(), emitted);
}

void TestRunPanel::inspectFromTheResultsTable_data()
{
    QTest::addColumn<QString>("shape");
    QTest::addColumn<bool>("saved");
    QTest::addColumn<QString>("caseDir");  // what inspectRequested carries; empty: not emitted
    QTest::addColumn<QString>("why");      // the disabled action's tooltip starts with this

    QTest::newRow("failing shape with saved tensors") << "scalar-path-long" << true << "/tmp/kf-dumps/run-7/01-scalar-path-long-t0" << "";
    QTest::newRow("failing shape, tensors not saved") << "scalar-path-long" << false << "" << "No tensors were saved";
    QTest::newRow("passing shape") << "primes" << true << "" << "Only a shape that failed";
}

void TestRunPanel::inspectFromTheResultsTable()
{
    QFETCH(QString, shape);
    QFETCH(bool, saved);
    QFETCH(QString, caseDir);
    QFETCH(QString, why);
    json report = loadReport(QStringLiteral("verify_softmax_fail.json"));
    if (saved) {
        report["dump_dir"] = "/tmp/kf-dumps/run-7";
        for (auto& s : report["shapes"])
            for (auto& t : s["trials"])
                if (t["passed"] == false || s["label"] == "primes")
                    t["case"] = "01-" + s["label"].get<std::string>() + "-t" + std::to_string(t["trial"].get<int>());
    }
    RunPanel panel;
    panel.resize(1000, 600);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.begin(QStringLiteral("Verify softmax_fp32/optimized.cu"));
    panel.addReport(kf::test::report(report));
    panel.finish(true, {});
    // Sorted by mismatches, most first: the signal still names the model's row, not the view's.
    QTableView* view = panel.resultsView();
    view->sortByColumn(ResultsModel::MismatchesColumn, Qt::DescendingOrder);
    const int row = panel.model()->findRow(QStringLiteral("optimized.cu"), shape);
    QVERIFY(row >= 0);
    auto* proxy = qobject_cast<QSortFilterProxyModel*>(view->model());
    QVERIFY(proxy);
    const QModelIndex viewIndex = proxy->mapFromSource(panel.model()->index(row, ResultsModel::VerdictColumn));
    if (shape == QLatin1String("scalar-path-long")) {
        QCOMPARE(row, 1);
        QCOMPARE(viewIndex.row(), 0);
    }

    QSignalSpy spy(&panel, &RunPanel::inspectRequested);
    const QPoint at = view->visualRect(viewIndex).center();
    QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::NoModifier, at);  // Qt 6's double-click needs the press first
    QTest::mouseDClick(view->viewport(), Qt::LeftButton, Qt::NoModifier, at);
    std::unique_ptr<QMenu> menu(panel.createRowMenu(viewIndex));
    QAction* inspect = menu->actions().value(0);
    QVERIFY(inspect);
    QCOMPARE(inspect->text(), QStringLiteral("Inspect tensors…"));
    if (caseDir.isEmpty()) {
        QCOMPARE(spy.count(), 0);
        QVERIFY(!inspect->isEnabled());
        QVERIFY2(inspect->toolTip().startsWith(why), qPrintable(inspect->toolTip()));
        return;
    }
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).toInt(), row);
    QCOMPARE(spy.at(0).at(1).toString(), caseDir);
    QVERIFY(inspect->isEnabled());
    inspect->trigger();
    QCOMPARE(spy.count(), 2);
    QCOMPARE(spy.at(1).at(1).toString(), caseDir);
    // Its other two trials failed too: each has an action of its own.
    QCOMPARE(menu->actions().size(), 3);
    QAction* third = menu->actions().value(2);
    QVERIFY(third->text().contains(QStringLiteral("01-scalar-path-long-t2")));
    third->trigger();
    QCOMPARE(spy.at(2).at(1).toString(), QStringLiteral("/tmp/kf-dumps/run-7/01-scalar-path-long-t2"));
}

// The Runs panel with a benchmark compared with torch.compile too (a report of the shape kforge
// writes; docs/screenshots/benchmark-compile.png). Checks what the banner and table say.
void TestRunPanel::compileComparisonScreenshot()
{
    RunPanel panel;
    panel.resize(1250, 330);
    panel.begin(QStringLiteral("Benchmark softmax_fp32/optimized.cu"));
    panel.addReport(kf::test::report(loadReport(QStringLiteral("bench_softmax_compile.json"))));
    panel.finish(true, {});
    auto* banner = panel.findChild<QLabel*>(QStringLiteral("runBanner"));
    QVERIFY(banner);
    // geometric mean of 0.946 and 1.047 over torch.compile
    QVERIFY2(banner->text().contains(QStringLiteral("1.00× torch.compile")), qPrintable(banner->text()));
    const QString dir = qEnvironmentVariable("KF_SCREENSHOT_DIR");
    if (dir.isEmpty())
        return;
    panel.resize(1500, 330);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    // A benchmark has no correctness columns to read: show the timing columns.
    auto* table = panel.findChild<QTableView*>();
    QVERIFY(table);
    for (int c = kf::ui::ResultsModel::MaxAbsErrorColumn; c <= kf::ui::ResultsModel::MismatchesColumn; ++c)
        table->setColumnHidden(c, true);
    QDir().mkpath(dir);
    QVERIFY(panel.grab().save(QDir(dir).filePath(QStringLiteral("benchmark-compile.png"))));
}

QTEST_MAIN(TestRunPanel)
#include "tst_runpanel.moc"
