// RunService: the workbench's owner of the runner, against a scripted runner process
// (tests/fakerunner.h). What matters here is the thread hop and the types: every signal arrives
// on the UI thread with typed values (no runner JSON), in order, and the runner state follows.
// Runs another thread submits (the Assistant's, runAndWait) share the one runner with the
// workbench's own and never overlap them; an endpoint with shared_fs false is sent the task's
// files (tests/fixtures/endpoints/staging-runner).
#include "app/gui/services/RunService.h"
#include "engine/compile/Compiler.h"
#include "fakerunner.h"
#include "engine/core/Files.h"
#include "testutil.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <filesystem>
#include <algorithm>
#include <future>
#include <map>

using namespace kf;
using kf::app::RunService;
using kf::test::FakeRunner;

namespace {


RunService::Options optionsFor(const FakeRunner& fake, const QTemporaryDir& cache)
{
    RunService::Options o;
    o.runnerPath = fake.path();
    o.cacheDir = cache.path();
    return o;
}

// An endpoint of kind command that starts the scripted runner through sh: a remote endpoint as
// far as the supervisor knows (a lost connection is told apart from a crash), on this machine.
kf::Endpoint commandEndpoint(const std::string& name, const FakeRunner& fake)
{
    kf::Endpoint e;
    e.name = name;
    e.kind = kf::Endpoint::Kind::Command;
    e.command = {"sh", "-c", "exec \"$0\"", "{runner}"};
    e.runner = fake.path().toStdString();
    e.sharedFs = true;
    e.heartbeatTimeoutS = 1;
    e.launchLatencyMs = 0;
    return e;
}

// The run needs a cubin: on a machine without NVRTC the row says so and skips.
#define SKIP_WITHOUT_NVRTC(finishedSpy)                                                                   \
    do {                                                                                                  \
        const QString s_ = (finishedSpy).first().at(2).toString();                                        \
        if (s_.contains("NVRTC"))                                                                         \
            QSKIP(qPrintable("NVRTC unavailable: " + s_));                                                \
    } while (0)

// What the Assistant submits for vector_add's naive.cu.
RunService::Submission assistantVerify()
{
    RunService::Submission s;
    s.kind = RunKind::Verify;
    s.task = kf::test::vectorAddTask();
    s.candidateFile = "naive.cu";
    s.title = "Assistant: verify naive.cu";
    return s;
}

// vector_add copied into `dir` with a "tune" block on naive.cu: BLOCK in {128, 256}, the launch's block size.
Task tunableVectorAdd(const QTemporaryDir& dir)
{
    const std::filesystem::path from = std::string(KF_SOURCE_DIR) + "/resources/examples/vector_add";
    const std::filesystem::path to = dir.path().toStdString();
    for (const char* file : {"naive.cu", "optimized.cu"})
        std::filesystem::copy_file(from / file, to / file);
    auto j = nlohmann::json::parse(*kf::readFileBytes(from / "task.json"));
    auto& naive = j["candidates"][0];
    naive["defines"] = {{"BLOCK", 256}};
    naive["launches"][0]["grid"] = "ceil_div(N, BLOCK)";
    naive["launches"][0]["block"] = "BLOCK";
    naive["tune"] = {{"space", {{"BLOCK", {128, 256}}}}};
    if (!kf::writeFileAtomic(to / "task.json", j.dump(2)))
        qFatal("cannot write the tunable task");
    auto t = loadTask(to);
    if (!t)
        qFatal("%s", t.error().message().c_str());
    return t.value();
}

// "start <title>" and "end <title>" of every run, in the order the UI thread saw them.
struct RunOrder {
    QStringList events;
    std::map<quint64, QString> titles;

    void watch(RunService& service)
    {
        QObject::connect(&service, &RunService::runStarted, &service, [this](quint64 id, const QString& title) {
            titles[id] = title;
            events << "start " + title;
        });
        QObject::connect(&service, &RunService::runFinished, &service,
                         [this](quint64 id, bool, const QString&) { events << "end " + titles[id]; });
    }
};

} // namespace

class TestRunService : public QObject {
    Q_OBJECT
private slots:
    void probeNamesTheGpu();
    void runEmitsTypedSignalsInOrder();
    void crashGivesAnErrorReportAndRestarts();
    void oneRunAtATime();
    void benchAlsoTimesTorchCompile_data();
    void benchAlsoTimesTorchCompile();
    void statusNamesTheEndpointAndItsGpu_data();
    void statusNamesTheEndpointAndItsGpu();
    void newOptionsTakeEffectAtTheNextRun();
    void aLostConnectionIsSaid();
    void anEndpointWithoutSharedFilesGetsTheFiles();
    void submittedAndOwnRunsNeverOverlap_data();
    void submittedAndOwnRunsNeverOverlap();
    void closingAnswersAWaitingSubmission();
    void aSubmissionFromTheUiThreadIsRefused();
    void extraNvrtcOptionsArePerRun();
    void cancelStopsASubmittedRun();
    void aTuneGoesThroughTheQueue_data();
    void aTuneGoesThroughTheQueue();
    void cancelStopsATune();
};

void TestRunService::probeNamesTheGpu()
{
    FakeRunner fake(FakeRunner::Behaviour::Pass);
    QTemporaryDir cache;
    RunService service(optionsFor(fake, cache));
    QSignalSpy state(&service, &RunService::stateChanged);
    service.probe();
    QTRY_COMPARE(service.state(), RunService::RunnerState::Ready);
    QCOMPARE(service.stateText(), QString("local · Fake GPU · GPU-1a2b3c4d · sm_90"));
    QCOMPARE(service.architecture(), QString("sm_90"));
    // The tooltip has what the bar has no room for.
    QVERIFY2(service.stateDetail().contains("Host: fake-host"), qPrintable(service.stateDetail()));
    QVERIFY2(service.stateDetail().contains("compute-sanitizer 2025.3.1.0"), qPrintable(service.stateDetail()));
    QVERIFY2(service.stateDetail().contains("GPU-1a2b3c4d-0000-4000-8000-00000000fa4e"), qPrintable(service.stateDetail()));
    QVERIFY(service.hello());
    QCOMPARE(qs(service.hello()->host), QString("fake-host"));
    QVERIFY(state.count() >= 2); // starting, then ready
}

void TestRunService::runEmitsTypedSignalsInOrder()
{
    FakeRunner fake(FakeRunner::Behaviour::Pass);
    QTemporaryDir cache;
    RunService service(optionsFor(fake, cache));
    QSignalSpy started(&service, &RunService::runStarted);
    QSignalSpy progress(&service, &RunService::progress);
    QSignalSpy launch(&service, &RunService::launchChanged);
    QSignalSpy log(&service, &RunService::log);
    QSignalSpy report(&service, &RunService::reportReady);
    QSignalSpy failed(&service, &RunService::failed);
    QSignalSpy finished(&service, &RunService::runFinished);

    const quint64 id = service.run(RunKind::Verify, kf::test::vectorAddTask(), "naive.cu", RunSettings{});
    QVERIFY(id != 0);
    QCOMPARE(started.count(), 1);
    QCOMPARE(started.first().at(1).toString(), QString("Verify vector_add/naive.cu"));
    QVERIFY(service.isRunning());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    SKIP_WITHOUT_NVRTC(finished);
    QCOMPARE(finished.first().at(0).toULongLong(), id);
    QVERIFY2(finished.first().at(1).toBool(), qPrintable(finished.first().at(2).toString()));
    QCOMPARE(finished.first().at(2).toString(), QString("fake pass"));
    QVERIFY(!service.isRunning());
    QCOMPARE(failed.count(), 0);

    // starting the runner, compiling for sm_90, then the runner's two progress events.
    QCOMPARE(progress.count(), 4);
    QCOMPARE(progress.at(1).at(2).toString(), QString("compiling for sm_90"));
    QCOMPARE(progress.at(2).at(1).toInt(), 250);
    QCOMPARE(progress.last().at(1).toInt(), 1000);
    QCOMPARE(launch.count(), 2);
    QCOMPARE(launch.at(0).at(1).toString(), QString("launch 1 (vector_add)"));
    QCOMPARE(launch.at(1).at(1).toString(), QString()); // launch_end clears it
    QCOMPARE(log.count(), 1);
    QCOMPARE(qvariant_cast<kf::protocol::Event::Level>(log.first().at(1)), kf::protocol::Event::Level::Warning);
    QCOMPARE(report.count(), 1);
    const auto r = qvariant_cast<kf::protocol::RunReport>(report.first().at(1));
    QVERIFY(r.verify());
    QCOMPARE(qs(r.header().verdict), QString("pass"));
    QCOMPARE(r.verify()->shapes.at(0).summary().elements, std::int64_t(4099));
    QTRY_COMPARE(service.state(), RunService::RunnerState::Ready);
}

void TestRunService::crashGivesAnErrorReportAndRestarts()
{
    FakeRunner fake(FakeRunner::Behaviour::Crash);
    QTemporaryDir cache;
    RunService service(optionsFor(fake, cache));
    QSignalSpy report(&service, &RunService::reportReady);
    QSignalSpy finished(&service, &RunService::runFinished);
    service.run(RunKind::Verify, kf::test::vectorAddTask(), "naive.cu", RunSettings{});
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    SKIP_WITHOUT_NVRTC(finished);
    QVERIFY(!finished.first().at(1).toBool());
    QVERIFY2(finished.first().at(2).toString().contains("SIGSEGV"), qPrintable(finished.first().at(2).toString()));
    QCOMPARE(report.count(), 1);
    const auto r = qvariant_cast<kf::protocol::RunReport>(report.first().at(1));
    QVERIFY(r.isError());
    QVERIFY(qs(r.header().errorSentence()).contains("SIGSEGV"));
    // The supervisor put the runner down; the service starts a fresh one at once.
    QTRY_COMPARE(service.restarts(), 1);
    QTRY_COMPARE(service.state(), RunService::RunnerState::Ready);
}

void TestRunService::oneRunAtATime()
{
    FakeRunner fake(FakeRunner::Behaviour::Pass);
    QTemporaryDir cache;
    RunService service(optionsFor(fake, cache));
    QSignalSpy finished(&service, &RunService::runFinished);
    QVERIFY(service.run(RunKind::Verify, kf::test::vectorAddTask(), "naive.cu", RunSettings{}) != 0);
    QCOMPARE(service.run(RunKind::Bench, kf::test::vectorAddTask(), "naive.cu", RunSettings{}), quint64(0));
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
}

void TestRunService::benchAlsoTimesTorchCompile_data()
{
    QTest::addColumn<bool>("asked");
    QTest::newRow("asked for") << true;
    QTest::newRow("not asked for") << false;
}

// The second baseline runs on the worker after the runner's benchmark, through the harness
// process: here the scripted stand-in (tests/data/harness/scripted_harness.py), which checks the
// spec and the PYTHONPATH the service gives it.
void TestRunService::benchAlsoTimesTorchCompile()
{
    QFETCH(bool, asked);
    qputenv("KF_BASELINE_PYTHON", QByteArray(KF_TEST_DATA_DIR) + "/harness/scripted_harness.py");
    qputenv("KF_SCRIPTED_HARNESS", "measured");
    FakeRunner fake(FakeRunner::Behaviour::BenchOk);
    QTemporaryDir cache;
    RunService service(optionsFor(fake, cache));
    QSignalSpy report(&service, &RunService::reportReady);
    QSignalSpy finished(&service, &RunService::runFinished);
    RunSettings s;
    s.compileBaseline = asked;
    QVERIFY(service.run(RunKind::Bench, kf::test::vectorAddTask(), "naive.cu", s) != 0);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    QCOMPARE(report.count(), 1);
    const auto r = report.first().at(1).value<kf::protocol::RunReport>();
    QVERIFY(r.bench());
    QCOMPARE(r.bench()->compileBaseline.has_value(), asked);
    if (asked) {
        QVERIFY2(r.bench()->compileBaseline->measured, r.bench()->compileBaseline->reason.c_str());
        QVERIFY(r.bench()->compileSpeedup());
        QVERIFY(r.document().contains("compile_baseline"));
    }
    qunsetenv("KF_BASELINE_PYTHON");
}

void TestRunService::statusNamesTheEndpointAndItsGpu_data()
{
    QTest::addColumn<QString>("endpoint"); // empty: no endpoint (the plain local runner)
    QTest::addColumn<QString>("text");
    QTest::newRow("the local runner") << "" << "local · Fake GPU · GPU-1a2b3c4d · sm_90";
    QTest::newRow("an endpoint of runners.json") << "box" << "box · Fake GPU · GPU-1a2b3c4d · sm_90";
}

void TestRunService::statusNamesTheEndpointAndItsGpu()
{
    QFETCH(QString, endpoint);
    QFETCH(QString, text);
    FakeRunner fake(FakeRunner::Behaviour::Pass);
    QTemporaryDir cache;
    RunService::Options o = optionsFor(fake, cache);
    if (!endpoint.isEmpty())
        o.endpoint = commandEndpoint(endpoint.toStdString(), fake);
    RunService service(o);
    QCOMPARE(service.endpointName(), endpoint.isEmpty() ? QString("local") : endpoint);
    service.probe();
    QTRY_COMPARE(service.state(), RunService::RunnerState::Ready);
    QCOMPARE(service.stateText(), text);
}

// Settings ▸ Runners chose another endpoint: nothing happens until the next job, which stops the
// old runner and starts the new endpoint's.
void TestRunService::newOptionsTakeEffectAtTheNextRun()
{
    FakeRunner fake(FakeRunner::Behaviour::Pass);
    QTemporaryDir cache;
    RunService service(optionsFor(fake, cache));
    service.probe();
    QTRY_COMPARE(service.state(), RunService::RunnerState::Ready);
    QVERIFY(service.stateText().startsWith("local · "));

    QVERIFY(!service.setOptions(optionsFor(fake, cache))); // the same options change nothing
    QCOMPARE(service.state(), RunService::RunnerState::Ready);

    RunService::Options o = optionsFor(fake, cache);
    o.endpoint = commandEndpoint("box", fake);
    QSignalSpy state(&service, &RunService::stateChanged);
    QVERIFY(service.setOptions(o));
    QCOMPARE(service.state(), RunService::RunnerState::NotStarted);
    QCOMPARE(service.stateText(), QString("box · runner not started (the next run starts it)"));
    QVERIFY(!service.hello());

    QSignalSpy finished(&service, &RunService::runFinished);
    QVERIFY(service.run(RunKind::Verify, kf::test::vectorAddTask(), "naive.cu", RunSettings{}) != 0);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    SKIP_WITHOUT_NVRTC(finished);
    QVERIFY2(finished.first().at(1).toBool(), qPrintable(finished.first().at(2).toString()));
    QTRY_COMPARE(service.stateText(), QString("box · Fake GPU · GPU-1a2b3c4d · sm_90"));
    // The local runner was only started and stopped (a shutdown is not recorded): the one request
    // is the verify the endpoint's runner got.
    const QStringList requests = fake.requests();
    QCOMPARE(requests.size(), 1);
    QVERIFY(requests.first().contains("\"type\":\"verify\""));
}

void TestRunService::aLostConnectionIsSaid()
{
    FakeRunner fake(FakeRunner::Behaviour::Freeze);
    QTemporaryDir cache;
    RunService::Options o = optionsFor(fake, cache);
    o.endpoint = commandEndpoint("box", fake);
    RunService service(o);
    QSignalSpy failed(&service, &RunService::failed);
    QSignalSpy finished(&service, &RunService::runFinished);
    QVERIFY(service.run(RunKind::Verify, kf::test::vectorAddTask(), "naive.cu", RunSettings{}) != 0);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    SKIP_WITHOUT_NVRTC(finished);
    QVERIFY(!finished.first().at(1).toBool());
    QTRY_COMPARE(service.state(), RunService::RunnerState::Unavailable);
    QVERIFY2(service.stateText().startsWith("box: connection lost — no message from box"), qPrintable(service.stateText()));
    QVERIFY2(service.stateText().contains("the connection is presumed lost"), qPrintable(service.stateText()));
    QCOMPARE(failed.count(), 0); // the run has a report (verdict error), not a failure of the service
}

// shared_fs false: the workbench stages the task's files as `kforge verify` does, here on the
// staging-runner fixture, which refuses a request naming a task folder and rebuilds the task from
// what it was sent.
void TestRunService::anEndpointWithoutSharedFilesGetsTheFiles()
{
    QTemporaryDir cache, runnerSide;
    kf::Endpoint e;
    e.name = "staged";
    e.kind = kf::Endpoint::Kind::Command;
    e.command = {"sh", "-c", "cd / && exec \"$0\"", "{runner}"};
    e.runner = std::string(KF_SOURCE_DIR) + "/tests/fixtures/endpoints/staging-runner";
    e.env = {{"STAGING_RUNNER_DIR", runnerSide.path().toStdString()}};
    e.sharedFs = false;
    RunService::Options o;
    o.cacheDir = cache.path();
    o.endpoint = e;
    RunService service(o);
    QSignalSpy failed(&service, &RunService::failed);
    QSignalSpy finished(&service, &RunService::runFinished);
    QVERIFY(service.run(RunKind::Verify, kf::test::vectorAddTask(), "naive.cu", RunSettings{}) != 0);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    SKIP_WITHOUT_NVRTC(finished);
    const QString sentence = finished.first().at(2).toString();
    QVERIFY2(finished.first().at(1).toBool(), qPrintable(sentence));
    QVERIFY2(sentence.startsWith("staging-runner fixture: the task's files arrived"), qPrintable(sentence));
    QCOMPARE(failed.count(), 0);
    QFile log(runnerSide.filePath("log.jsonl"));
    QVERIFY(log.open(QIODevice::ReadOnly));
    int verifies = 0;
    for (const QByteArray& line : log.readAll().split('\n')) {
        const QJsonObject m = QJsonDocument::fromJson(line).object();
        if (m["type"] != "verify")
            continue;
        ++verifies;
        QVERIFY2(!m.contains("task_dir"), "a staged request named a task folder");
        QVERIFY(m["task_files"].toObject().contains("naive.cu"));
    }
    QCOMPARE(verifies, 1);
    QTRY_COMPARE(service.stateText(), QString("staged · Fixture GPU · sm_90"));
}

void TestRunService::submittedAndOwnRunsNeverOverlap_data()
{
    QTest::addColumn<bool>("assistantFirst");
    QTest::newRow("F5 while the Assistant's run is on the GPU") << true;
    QTest::newRow("the Assistant's run while F5's is on the GPU") << false;
}

// One runner, one run at a time: whichever comes second starts (in the signals the Runs panel and
// the status bar follow, too) only after the first finished. F5 behind the Assistant's run is
// queued, not refused.
void TestRunService::submittedAndOwnRunsNeverOverlap()
{
    QFETCH(bool, assistantFirst);
    FakeRunner fake(FakeRunner::Behaviour::SlowPass);
    QTemporaryDir cache;
    RunOrder order;
    RunService service(optionsFor(fake, cache));
    order.watch(service);
    QSignalSpy started(&service, &RunService::runStarted);
    QSignalSpy queued(&service, &RunService::runQueued);
    QSignalSpy finished(&service, &RunService::runFinished);
    CancelToken never;
    auto submit = [&] { return std::async(std::launch::async, [&] { return service.runAndWait(assistantVerify(), never); }); };

    std::future<Result<protocol::RunReport>> assistant;
    quint64 own = 0;
    if (assistantFirst) {
        assistant = submit();
        QTRY_COMPARE_WITH_TIMEOUT(started.count(), 1, 60000);   // the Assistant's run is on the runner
        QVERIFY(service.isSubmitted(started.first().at(0).toULongLong()));
        own = service.run(RunKind::Verify, kf::test::vectorAddTask(), "naive.cu", RunSettings{});
        QVERIFY(own != 0);                                        // queued, not refused
        QCOMPARE(started.count(), 1);                             // and not started yet
        QCOMPARE(queued.count(), 1);
        QCOMPARE(queued.first().at(2).toString(), QString("Assistant: verify naive.cu"));
    } else {
        own = service.run(RunKind::Verify, kf::test::vectorAddTask(), "naive.cu", RunSettings{});
        QVERIFY(own != 0);
        assistant = submit();
        QTRY_COMPARE(service.submittedRuns(), 1);
    }
    QVERIFY(service.isRunning());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 60000);
    SKIP_WITHOUT_NVRTC(finished);
    const QStringList assistantRun{"start Assistant: verify naive.cu", "end Assistant: verify naive.cu"};
    const QStringList ownRun{"start Verify vector_add/naive.cu", "end Verify vector_add/naive.cu"};
    QCOMPARE(order.events, assistantFirst ? assistantRun + ownRun : ownRun + assistantRun);
    const Result<protocol::RunReport> report = assistant.get();
    QVERIFY2(report, report ? "" : report.error().message().c_str());
    QCOMPARE(qs(report->header().verdict), QString("pass"));
    QVERIFY(!service.isRunning());
    QCOMPARE(service.submittedRuns(), 0);
    QCOMPARE(fake.requests().size(), 2);   // both on the one runner
}

// Closing the workbench while the Assistant waits for its run behind another: the waiting thread
// gets an Error at once, and nothing hangs.
void TestRunService::closingAnswersAWaitingSubmission()
{
    FakeRunner fake(FakeRunner::Behaviour::Freeze);   // the run in flight never ends by itself
    QTemporaryDir cache;
    auto service = std::make_unique<RunService>(optionsFor(fake, cache));
    QSignalSpy started(service.get(), &RunService::runStarted);
    QVERIFY(service->run(RunKind::Verify, kf::test::vectorAddTask(), "naive.cu", RunSettings{}) != 0);
    CancelToken never;
    auto assistant = std::async(std::launch::async, [&, s = service.get()] { return s->runAndWait(assistantVerify(), never); });
    QTRY_COMPARE(service->submittedRuns(), 1);
    service.reset();
    QCOMPARE(assistant.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    const Result<protocol::RunReport> report = assistant.get();
    QVERIFY(!report);
    QCOMPARE(qs(report.error().why), QString("the workbench is closing"));
    QCOMPARE(started.count(), 1);   // the Assistant's run never started
}

void TestRunService::aSubmissionFromTheUiThreadIsRefused()
{
    FakeRunner fake(FakeRunner::Behaviour::Pass);
    QTemporaryDir cache;
    RunService service(optionsFor(fake, cache));
    CancelToken never;
    const Result<protocol::RunReport> r = service.runAndWait(assistantVerify(), never);
    QVERIFY(!r);
    QVERIFY2(qs(r.error().why).contains("from the UI thread"), qPrintable(qs(r.error().why)));
    QCOMPARE(service.submittedRuns(), 0);
}

// Settings' extra NVRTC options build the workbench's own runs; a submission that asks for the
// task's own build (synthesis measures what it adds) is compiled without them, on the same runner.
void TestRunService::extraNvrtcOptionsArePerRun()
{
    FakeRunner fake(FakeRunner::Behaviour::Pass);
    QTemporaryDir cache;
    RunService::Options o = optionsFor(fake, cache);
    o.extraNvrtcOptions = {"-DKF_EXPLORATION_BUILD=1"};
    RunService service(o);
    QSignalSpy finished(&service, &RunService::runFinished);
    CancelToken never;
    RunService::Submission taskBuild = assistantVerify();
    taskBuild.workbenchNvrtcOptions = false;
    auto assistant = std::async(std::launch::async, [&] { return service.runAndWait(taskBuild, never); });
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    SKIP_WITHOUT_NVRTC(finished);
    QVERIFY(assistant.get());
    QVERIFY(service.run(RunKind::Verify, kf::test::vectorAddTask(), "naive.cu", RunSettings{}) != 0);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 60000);
    const QStringList requests = fake.requests();
    QCOMPARE(requests.size(), 2);
    QVERIFY(!requests[0].contains("KF_EXPLORATION_BUILD"));
    QVERIFY(requests[1].contains("KF_EXPLORATION_BUILD"));
}

// Cancel in the Runs panel stops the submitted run on the runner, and its caller gets an Error
// (the synthesis ends), not a report without a verdict.
void TestRunService::cancelStopsASubmittedRun()
{
    if (!kf::nvrtcVersion())
        QSKIP("NVRTC is not available on this machine: the run must compile before it reaches the runner");
    FakeRunner fake(FakeRunner::Behaviour::Freeze);
    QTemporaryDir cache;
    RunService service(optionsFor(fake, cache));
    QSignalSpy progress(&service, &RunService::progress);
    QSignalSpy finished(&service, &RunService::runFinished);
    CancelToken never;
    auto assistant = std::async(std::launch::async, [&] { return service.runAndWait(assistantVerify(), never); });
    QTRY_VERIFY_WITH_TIMEOUT(!progress.isEmpty() && progress.last().at(2).toString() == "shape 1/1", 60000);   // on the runner
    service.cancel();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
    QCOMPARE(assistant.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    const Result<protocol::RunReport> r = assistant.get();
    QVERIFY(!r);
    QCOMPARE(qs(r.error().why), QString("cancelled in the Runs panel"));
    QVERIFY(!finished.first().at(1).toBool());
}

void TestRunService::aTuneGoesThroughTheQueue_data()
{
    QTest::addColumn<bool>("behindTheAssistant");
    QTest::newRow("Run ▸ Tune on an idle runner") << false;
    QTest::newRow("Run ▸ Tune while the Assistant's run is on the GPU") << true;
}

// A tune is a run of the workbench's own: it waits behind a submitted run, its points' verify and
// bench go to the one runner from the worker, its steps and its outcome come to the UI thread.
// The scripted runner answers every request with a correctness report, so each point passes
// verify and its bench is refused: no winner, nothing written, every point says why.
void TestRunService::aTuneGoesThroughTheQueue()
{
    QFETCH(bool, behindTheAssistant);
    FakeRunner fake(FakeRunner::Behaviour::SlowPass);
    QTemporaryDir cache, dir;
    const Task task = tunableVectorAdd(dir);
    RunOrder order;
    RunService service(optionsFor(fake, cache));
    order.watch(service);
    QSignalSpy steps(&service, &RunService::tuneProgress);
    QSignalSpy tuned(&service, &RunService::tuneFinished);
    QSignalSpy finished(&service, &RunService::runFinished);
    QSignalSpy reports(&service, &RunService::reportReady);
    CancelToken never;
    std::future<Result<protocol::RunReport>> assistant;
    if (behindTheAssistant) {
        QSignalSpy started(&service, &RunService::runStarted);
        assistant = std::async(std::launch::async, [&] { return service.runAndWait(assistantVerify(), never); });
        QTRY_COMPARE_WITH_TIMEOUT(started.count(), 1, 60000);
    }
    RunService::TuneRequest request;
    request.settings.budgetS = 60;
    request.settings.compileThreads = 1;
    const quint64 id = service.tune(task, "naive.cu", request);
    QVERIFY(id != 0);
    QCOMPARE(service.run(RunKind::Verify, task, "naive.cu", RunSettings{}), quint64(0));   // one run of the UI thread at a time
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), behindTheAssistant ? 2 : 1, 120000);
    SKIP_WITHOUT_NVRTC(finished);
    QStringList expected{"start Tune vector_add/naive.cu", "end Tune vector_add/naive.cu"};
    if (behindTheAssistant)
        expected = QStringList{"start Assistant: verify naive.cu", "end Assistant: verify naive.cu"} + expected;
    QCOMPARE(order.events, expected);
    QCOMPARE(tuned.count(), 1);
    QCOMPARE(tuned.first().at(0).toULongLong(), id);
    const auto outcome = tuned.first().at(1).value<kf::tune::Outcome>();
    QCOMPARE(tuned.first().at(2).toString(), QString());   // no winner, nothing written
    QCOMPARE(int(outcome.points.size()), 2);
    QVERIFY(!outcome.best());
    QCOMPARE(outcome.arch, std::string("sm_90"));
    for (const kf::tune::PointResult& p : outcome.points) {
        QCOMPARE(p.stage, kf::tune::Stage::BenchFailed);
        QVERIFY(p.verified.value_or(false));
        QVERIFY(!p.reason.empty());
    }
    QVERIFY(steps.count() >= 4);   // two compiled, two verified
    QCOMPARE(reports.count(), behindTheAssistant ? 1 : 0);   // the search's own runs are not the Runs panel's
    const QString ending = finished.last().at(2).toString();
    QVERIFY2(ending.contains("no point passed verify and was timed"), qPrintable(ending));
    // Both points verified, then timed, on the one runner.
    int verifies = 0, benches = 0;
    for (const QString& line : fake.requests()) {
        const QJsonObject m = QJsonDocument::fromJson(line.toUtf8()).object();
        verifies += m["type"] == "verify";
        benches += m["type"] == "bench";
    }
    QCOMPARE(verifies, behindTheAssistant ? 3 : 2);
    QCOMPARE(benches, 2);
    if (behindTheAssistant)
        QVERIFY(assistant.get());
    QVERIFY(!service.isRunning());
}

// Cancel in the middle of a search: the run in flight is stopped through the search's token, the
// outcome says it was cancelled, no point is timed after it, and the runner is ready again.
void TestRunService::cancelStopsATune()
{
    FakeRunner fake(FakeRunner::Behaviour::SlowPass);
    QTemporaryDir cache, dir;
    const Task task = tunableVectorAdd(dir);
    RunService service(optionsFor(fake, cache));
    QSignalSpy steps(&service, &RunService::tuneProgress);
    QSignalSpy tuned(&service, &RunService::tuneFinished);
    QSignalSpy finished(&service, &RunService::runFinished);
    RunService::TuneRequest request;
    request.settings.compileThreads = 1;
    QVERIFY(service.tune(task, "naive.cu", request) != 0);
    auto stage = [&](const char* name) {
        return std::count_if(steps.begin(), steps.end(), [&](const QList<QVariant>& s) {
            return s.at(1).value<kf::app::TuneStep>().stage == name;
        });
    };
    // The first point verified and timed (a step "time"); the second's verify is on the runner.
    QTRY_VERIFY_WITH_TIMEOUT(stage("time") >= 1 || finished.count() == 1, 60000);
    if (finished.count() == 1)
        SKIP_WITHOUT_NVRTC(finished);
    QCOMPARE(stage("time"), 1);
    service.cancel();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    QCOMPARE(tuned.count(), 1);
    const auto outcome = tuned.first().at(1).value<kf::tune::Outcome>();
    QVERIFY(outcome.cancelled);
    QVERIFY(!outcome.best());
    QCOMPARE(finished.first().at(1).toBool(), false);
    QVERIFY2(finished.first().at(2).toString().startsWith("tune cancelled"), qPrintable(finished.first().at(2).toString()));
    QCOMPARE(stage("time"), 1);   // nothing timed after the cancel
    QCOMPARE(outcome.points[1].stage, kf::tune::Stage::NotReached);
    QTRY_COMPARE_WITH_TIMEOUT(service.state(), RunService::RunnerState::Ready, 60000);
}

QTEST_MAIN(TestRunService)
#include "tst_runservice.moc"
