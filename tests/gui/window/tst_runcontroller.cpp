// RunController: the workbench's run policy and its routing into the Runs panel, against a
// scripted runner process (tests/fakerunner.h). The policy itself (held-out shapes, tolerance
// override) is resolved by the engine's RunSession; these rows show the workbench's choices
// reach the request, and the typed report reaches the panel and the promote controller's signal.
// A run another thread submits to the same service (the Assistant's) is shown, not taken as ours.
#include "app/gui/window/RunController.h"
#include "app/gui/window/StatusBar.h"
#include "fakerunner.h"
#include "testutil.h"
#include "widgets/runs/ResultsModel.h"
#include "widgets/runs/RunPanel.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <future>

#include <nlohmann/json.hpp>

using namespace kf;
using kf::app::RunController;
using kf::test::FakeRunner;
using nlohmann::json;

class TestRunController : public QObject {
    Q_OBJECT
private slots:
    void verifyFillsThePanelAndSendsThePolicy_data();
    void verifyFillsThePanelAndSendsThePolicy();
    void aTaskWithoutShapesCannotBeProfiled();
    void theAssistantsRunIsShownNotTaken();
    void aRefusalIsNotPaintedOverByTheAssistantsRun();
};

void TestRunController::verifyFillsThePanelAndSendsThePolicy_data()
{
    QTest::addColumn<int>("heldOut");
    QTest::addColumn<double>("rtol");       // 0: no override
    QTest::addColumn<QString>("titleNote");
    QTest::addColumn<bool>("hostHasSanitizer");   // the runner's hello names compute-sanitizer
    QTest::addColumn<bool>("sanitize");           // Settings: compute-sanitizer where the host has it
    QTest::addColumn<int>("tools");               // compute-sanitizer tools the request asks for
    QTest::newRow("promotion policy: two held-out shapes") << 2 << 0.0 << "" << false << true << 0;
    QTest::newRow("tolerance override is named in the title") << 0 << 0.5 << "tolerance override (rtol 0.5" << false << true << 0;
    // The sanitizer gate asks for a run where the host has the tool: F5 does one.
    QTest::newRow("promotion policy: compute-sanitizer where the host has it") << 2 << 0.0 << "" << true << true << 4;
    QTest::newRow("compute-sanitizer turned off in the settings") << 2 << 0.0 << "" << true << false << 0;
}

void TestRunController::verifyFillsThePanelAndSendsThePolicy()
{
    QFETCH(int, heldOut);
    QFETCH(double, rtol);
    QFETCH(QString, titleNote);
    QFETCH(bool, hostHasSanitizer);
    QFETCH(bool, sanitize);
    QFETCH(int, tools);
    FakeRunner fake(FakeRunner::Behaviour::Pass, hostHasSanitizer);
    QTemporaryDir cache;
    kf::ui::RunPanel panel;
    kf::app::StatusBar status;
    kf::app::RunService::Options o;
    o.runnerPath = fake.path();
    o.cacheDir = cache.path();
    RunController controller(o, &panel, &status);
    RunController::Settings s;
    s.heldOutShapes = heldOut;
    s.sanitizeIfAvailable = sanitize;
    if (rtol > 0)
        s.rtol = rtol;
    controller.setSettings(s);
    QSignalSpy reports(&controller, &RunController::reportReceived);
    QSignalSpy finished(&controller, &RunController::finished);

    QVERIFY(controller.startTask(RunKind::Verify, kf::test::vectorAddTask(), "naive.cu", {}));
    QVERIFY(panel.isRunning());
    QVERIFY2(panel.title().contains(titleNote), qPrintable(panel.title()));
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    if (finished.first().at(1).toString().contains("NVRTC"))
        QSKIP(qPrintable("NVRTC unavailable: " + finished.first().at(1).toString()));
    QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));

    // The typed report reached the table and the promote controller's signal.
    QCOMPARE(reports.count(), 1);
    QCOMPARE(qs(qvariant_cast<kf::protocol::RunReport>(reports.first().at(1)).header().verdict), QString("pass"));
    QCOMPARE(panel.model()->rowCount(), 1);
    QVERIFY2(panel.bannerText().startsWith("PASS · 1/1 shapes"), qPrintable(panel.bannerText()));
    QCOMPARE(panel.progressPermille(), 1000);
    QVERIFY(!panel.isRunning());

    const QStringList sent = fake.requests();
    QCOMPARE(sent.size(), 1);
    const json req = json::parse(sent[0].toStdString());
    QCOMPARE(req.contains("held_out_shapes") ? int(req["held_out_shapes"].size()) : 0, heldOut);
    QCOMPARE(req.contains("sanitize") ? int(req["sanitize"]["tools"].size()) : 0, tools);
    const json::json_pointer rtolAt("/task/outputs/0/tolerance/rtol");
    if (rtol > 0) {
        QVERIFY2(req.contains(rtolAt), req["task"].dump().c_str());
        QCOMPARE(req.at(rtolAt).get<double>(), rtol);
    } else {
        QVERIFY(!req.contains(rtolAt) || req.at(rtolAt).get<double>() != 0.5);
    }
}

void TestRunController::aTaskWithoutShapesCannotBeProfiled()
{
    FakeRunner fake(FakeRunner::Behaviour::Pass);
    kf::ui::RunPanel panel;
    kf::app::StatusBar status;
    kf::app::RunService::Options o;
    o.runnerPath = fake.path();
    RunController controller(o, &panel, &status);
    Task task = kf::test::vectorAddTask();
    task.testShapes.clear();
    task.benchmarkShapes.clear();
    QVERIFY(!controller.startTask(RunKind::Profile, task, "naive.cu", {}));
    QVERIFY2(panel.bannerText().contains("has no shapes to profile"), qPrintable(panel.bannerText()));
    QVERIFY(fake.requests().isEmpty());
}

// The Runs panel shows the Assistant's run while it is on the runner; F5 meanwhile is queued
// (the status bar says behind what) and starts when it ends. Only F5's report is promotion
// evidence (reportReceived).
void TestRunController::theAssistantsRunIsShownNotTaken()
{
    FakeRunner fake(FakeRunner::Behaviour::SlowPass);
    QTemporaryDir cache;
    kf::ui::RunPanel panel;
    kf::app::StatusBar status;
    kf::app::RunService::Options o;
    o.runnerPath = fake.path();
    o.cacheDir = cache.path();
    RunController controller(o, &panel, &status);
    QSignalSpy running(&controller, &RunController::runningChanged);
    QSignalSpy reports(&controller, &RunController::reportReceived);
    QSignalSpy finished(&controller, &RunController::finished);
    kf::app::RunService::Submission s;
    s.task = kf::test::vectorAddTask();
    s.candidateFile = "naive.cu";
    s.title = "Assistant: verify naive.cu";
    CancelToken never;
    auto assistant = std::async(std::launch::async, [&] { return controller.service()->runAndWait(s, never); });
    QTRY_COMPARE_WITH_TIMEOUT(panel.title(), QString("Assistant: verify naive.cu"), 60000);
    QVERIFY(panel.isRunning());
    QVERIFY(running.isEmpty());   // not a run of ours: the Run menu stays as it is

    QVERIFY(controller.startTask(RunKind::Verify, kf::test::vectorAddTask(), "naive.cu", {}));
    QCOMPARE(running.count(), 1);
    QVERIFY2(status.currentMessage().contains("waits for the runner: Assistant: verify naive.cu is on it"),
             qPrintable(status.currentMessage()));
    QCOMPARE(panel.title(), QString("Assistant: verify naive.cu"));   // still the Assistant's run
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    if (finished.first().at(1).toString().contains("NVRTC"))
        QSKIP(qPrintable("NVRTC unavailable: " + finished.first().at(1).toString()));
    QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
    QVERIFY2(panel.title().startsWith("Verify"), qPrintable(panel.title()));
    QCOMPARE(reports.count(), 1);   // F5's report only
    QVERIFY(assistant.get());
}

// The panel shows why an F5 did not start while the Assistant's run goes on: that run's progress
// and ending no longer paint over the sentence.
void TestRunController::aRefusalIsNotPaintedOverByTheAssistantsRun()
{
    FakeRunner fake(FakeRunner::Behaviour::SlowPass);
    QTemporaryDir cache;
    kf::ui::RunPanel panel;
    kf::app::StatusBar status;
    kf::app::RunService::Options o;
    o.runnerPath = fake.path();
    o.cacheDir = cache.path();
    RunController controller(o, &panel, &status);
    QSignalSpy serviceFinished(controller.service(), &kf::app::RunService::runFinished);
    kf::app::RunService::Submission s;
    s.task = kf::test::vectorAddTask();
    s.candidateFile = "naive.cu";
    s.title = "Assistant: verify naive.cu";
    CancelToken never;
    auto assistant = std::async(std::launch::async, [&] { return controller.service()->runAndWait(s, never); });
    QTRY_COMPARE_WITH_TIMEOUT(panel.title(), QString("Assistant: verify naive.cu"), 60000);
    Task noShapes = kf::test::vectorAddTask();
    noShapes.testShapes.clear();
    noShapes.benchmarkShapes.clear();
    QVERIFY(!controller.startTask(RunKind::Profile, noShapes, "naive.cu", {}));
    QVERIFY2(panel.bannerText().contains("has no shapes to profile"), qPrintable(panel.bannerText()));
    QTRY_COMPARE_WITH_TIMEOUT(serviceFinished.count(), 1, 60000);
    QVERIFY(assistant.get());
    QCOMPARE(panel.title(), QString("Profile naive.cu"));
    QVERIFY2(panel.bannerText().contains("has no shapes to profile"), qPrintable(panel.bannerText()));
}

QTEST_MAIN(TestRunController)
#include "tst_runcontroller.moc"
