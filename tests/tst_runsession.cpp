// RunSession: the one run path of the workbench and kforge, against a scripted runner process
// (tests/fakerunner.h). The candidate is compiled with the real NVRTC, so the request carries a
// real cubin; rows skip, saying so, on a machine without NVRTC.
#include "engine/runner/RunSession.h"
#include "fakerunner.h"
#include "testutil.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

using namespace kf;
using kf::test::FakeRunner;
using nlohmann::json;

namespace {


RunSession::Options optionsFor(const FakeRunner& fake, const QTemporaryDir& cache)
{
    RunSession::Options o;
    o.runnerPath = fake.path().toStdString();
    o.cacheDir = cache.path().toStdString();
    return o;
}

// Skips the row when this machine cannot compile (no NVRTC): the session needs a cubin to send.
#define START_OR_SKIP(session)                                                                              \
    do {                                                                                                   \
        auto s_ = (session).start();                                                                       \
        if (!s_ && s_.error().why.find("NVRTC") != std::string::npos)                                       \
            QSKIP(qPrintable("NVRTC unavailable: " + qs(s_.error().message())));                            \
        KF_VERIFY_OK(s_);                                                                                  \
    } while (0)

} // namespace

class TestRunSession : public QObject {
    Q_OBJECT
private slots:
    void passingRunGivesTypedEventsAndReport();
    void policyReachesTheRequest_data();
    void policyReachesTheRequest();
    void compileErrorIsAnErrorReportWithoutARequest();
    void crashIsAnErrorReportAndTheRunnerRestarts();
    void malformedMessagesAreProtocolErrors_data();
    void malformedMessagesAreProtocolErrors();
    void otherProtocolVersionIsRefusedAtStart();
    void aRunnerTooOldToBeSentFilesIsRefused();
    void aFrozenRunnerIsFoundInSeconds();
    void benchReportIsTyped();
};

void TestRunSession::passingRunGivesTypedEventsAndReport()
{
    FakeRunner fake(FakeRunner::Behaviour::Pass);
    QTemporaryDir cache;
    RunSession session(optionsFor(fake, cache));
    START_OR_SKIP(session);
    QCOMPARE(qs(session.arch()), QString("sm_90"));
    QCOMPARE(qs(session.hello().device->gpu), QString("Fake GPU"));

    std::vector<protocol::Event> events;
    auto outcome = session.run(kf::test::vectorAddTask(), RunSession::Plan{RunKind::Verify, "naive.cu", RunSettings{}, std::nullopt, {}}, [&](const protocol::Event& e) { events.push_back(e); });
    KF_VERIFY_OK(outcome);
    QVERIFY2(!outcome->failure, outcome->failure ? outcome->failure->message().c_str() : "");
    QVERIFY(outcome->compiled.success);
    // Ours first (starting, compiling), then the runner's, in order and typed.
    using K = protocol::Event::Kind;
    std::vector<K> kinds;
    for (const auto& e : events)
        kinds.push_back(e.kind);
    QCOMPARE(kinds, (std::vector<K>{K::Progress, K::Progress, K::Progress, K::LaunchBegin, K::LaunchEnd, K::Log, K::Progress}));
    QCOMPARE(qs(events[1].stage), QString("compiling for sm_90"));
    QCOMPARE(events[2].permille, 250);
    QCOMPARE(qs(events[3].label), QString("launch 1 (vector_add)"));
    QCOMPARE(events[3].timeoutMs, std::int64_t(5000));
    QCOMPARE(events[5].level, protocol::Event::Level::Warning);
    QCOMPARE(events.back().permille, 1000);

    const protocol::RunReport& r = outcome->report;
    QCOMPARE(r.kind(), protocol::ReportKind::Correctness);
    QVERIFY(r.verify());
    QCOMPARE(qs(r.header().verdict), QString("pass"));
    QCOMPARE(r.verify()->shapes.size(), size_t(1));
    const protocol::ShapeSummary sum = r.verify()->shapes[0].summary();
    QVERIFY(sum.passed);
    QCOMPARE(sum.elements, std::int64_t(4099));
    QVERIFY(sum.errorRatio && std::abs(*sum.errorRatio - 0.5) < 1e-12);

    // One request went out, a typed RunRequest on the wire: protocol 2, a cubin, the candidate.
    const QStringList sent = fake.requests();
    QCOMPARE(sent.size(), 1);
    const json req = json::parse(sent[0].toStdString());
    QCOMPARE(req["protocol_version"].get<int>(), protocol::kVersion);
    auto back = protocol::RunRequest::fromJson(req);
    KF_VERIFY_OK(back);
    QCOMPARE(qs(back->candidateFile), QString("naive.cu"));
    QCOMPARE(qs(back->arch), QString("sm_90"));
    QVERIFY(back->cubin.size() > 4 && back->cubin.compare(0, 4, "\x7f" "ELF") == 0);
    QCOMPARE(back->trials, 3);

    // The runner stays warm for the next run.
    auto again = session.run(kf::test::vectorAddTask(), RunSession::Plan{RunKind::Verify, "naive.cu", RunSettings{}, std::nullopt, {}});
    KF_VERIFY_OK(again);
    QCOMPARE(session.restarts(), 0);
    QCOMPARE(fake.requests().size(), 2);
}

void TestRunSession::policyReachesTheRequest_data()
{
    QTest::addColumn<QString>("policy");
    QTest::addColumn<QString>("pointer");   // a JSON pointer into the request
    QTest::addColumn<QString>("expected");  // its value as JSON; "absent" when it must not be sent
    QTest::newRow("held-out shapes are derived") << "held_out" << "/held_out_shapes/0/N" << "present";
    QTest::newRow("tolerance override changes the task sent") << "rtol" << "/task/outputs/0/tolerance/rtol" << "0.25";
    QTest::newRow("profile runs the largest benchmark shape") << "profile" << "/only_shapes/0/label" << R"("256M")";
    QTest::newRow("profile names the set it came from") << "profile" << "/set_name" << R"("benchmarks")";
    QTest::newRow("bench sends no verify-only field") << "bench" << "/held_out_shapes" << "absent";
    // compute-sanitizer where the runner's host has it (its hello names the tool): what `kforge
    // promote` and the workbench's F5 ask for, so the sanitizer gate gets a run.
    QTest::newRow("sanitize if available: the host has it") << "sanitize-if-available" << "/sanitize/tools/0" << R"("memcheck")";
    QTest::newRow("sanitize if available: every tool") << "sanitize-if-available" << "/sanitize/tools/3" << R"("synccheck")";
    QTest::newRow("sanitize if available: the host has none") << "sanitize-if-available-no-tool" << "/sanitize" << "absent";
    QTest::newRow("not asked, though the host has it") << "sanitize-not-asked" << "/sanitize" << "absent";
    QTest::newRow("sanitize if available: never for bench") << "sanitize-if-available-bench" << "/sanitize" << "absent";
}

void TestRunSession::policyReachesTheRequest()
{
    QFETCH(QString, policy);
    QFETCH(QString, pointer);
    QFETCH(QString, expected);
    const bool hostHasSanitizer = policy.startsWith("sanitize") && !policy.endsWith("no-tool");
    FakeRunner fake(FakeRunner::Behaviour::Pass, hostHasSanitizer);
    QTemporaryDir cache;
    RunSession session(optionsFor(fake, cache));
    START_OR_SKIP(session);
    RunSettings s;
    RunKind kind = RunKind::Verify;
    s.sanitizeIfAvailable = policy.startsWith("sanitize-if-available");
    if (policy == "sanitize-if-available-bench")
        kind = RunKind::Bench;
    if (policy == "held_out") {
        s.heldOutCount = 2;
    } else if (policy == "rtol") {
        s.rtol = 0.25;
    } else if (policy == "profile") {
        kind = RunKind::Profile;
    } else if (policy == "bench") {
        kind = RunKind::Bench;
        s.heldOutCount = 2;
    }
    auto outcome = session.run(kf::test::vectorAddTask(), RunSession::Plan{kind, "naive.cu", s, std::nullopt, {}});
    KF_VERIFY_OK(outcome);
    const QStringList sent = fake.requests();
    QCOMPARE(sent.size(), 1);
    const json req = json::parse(sent[0].toStdString());
    const json::json_pointer ptr(pointer.toStdString());
    if (expected == "absent") {
        QVERIFY2(!req.contains(ptr), req.dump().c_str());
    } else {
        QVERIFY2(req.contains(ptr), qPrintable(pointer));
        if (expected != "present")
            QCOMPARE(qs(req.at(ptr).dump()), expected);
    }
}

void TestRunSession::compileErrorIsAnErrorReportWithoutARequest()
{
    FakeRunner fake(FakeRunner::Behaviour::Pass);
    QTemporaryDir cache;
    RunSession session(optionsFor(fake, cache));
    START_OR_SKIP(session);
    auto outcome = session.run(kf::test::vectorAddTask(), RunSession::Plan{RunKind::Verify, "naive.cu", RunSettings{}, std::string("__global__ void vector_add( { this is not C++ }\n"), {}}, {}, nullptr);
    KF_VERIFY_OK(outcome);
    QVERIFY(outcome->failure);
    QVERIFY(!outcome->runnerRestarted);
    QVERIFY(!outcome->compiled.success);
    QVERIFY(!outcome->compiled.diagnostics.empty());
    QVERIFY(outcome->report.isError());
    QVERIFY2(qs(outcome->report.header().errorSentence()).startsWith("the candidate does not compile: "),
             outcome->report.header().errorSentence().c_str());
    QCOMPARE(qs(outcome->report.header().candidate.file), QString("naive.cu"));
    QCOMPARE(qs(outcome->report.header().environment.gpu), QString("Fake GPU"));
    QVERIFY(fake.requests().isEmpty());
}

void TestRunSession::crashIsAnErrorReportAndTheRunnerRestarts()
{
    FakeRunner fake(FakeRunner::Behaviour::Crash);
    QTemporaryDir cache;
    RunSession session(optionsFor(fake, cache));
    START_OR_SKIP(session);
    auto outcome = session.run(kf::test::vectorAddTask(), RunSession::Plan{RunKind::Verify, "naive.cu", RunSettings{}, std::nullopt, {}});
    KF_VERIFY_OK(outcome);
    QVERIFY(outcome->failure);
    QVERIFY(outcome->runnerRestarted);
    const QString why = qs(outcome->failure->why);
    QVERIFY2(why.contains("SIGSEGV") && why.contains("launch 1 (vector_add)"), qPrintable(why));
    QVERIFY(outcome->report.isError());
    QCOMPARE(qs(outcome->report.header().errorSentence()), why);
    // The next run starts a fresh runner (which crashes again, but it was started).
    auto again = session.run(kf::test::vectorAddTask(), RunSession::Plan{RunKind::Verify, "naive.cu", RunSettings{}, std::nullopt, {}});
    KF_VERIFY_OK(again);
    QCOMPARE(fake.requests().size(), 2);
}

void TestRunSession::malformedMessagesAreProtocolErrors_data()
{
    QTest::addColumn<int>("behaviour");
    QTest::addColumn<QString>("inWhy");
    QTest::newRow("not JSON") << int(FakeRunner::Behaviour::Garbage) << "malformed message (malformed JSON line";
    QTest::newRow("an event type protocol 2 lacks") << int(FakeRunner::Behaviour::UnknownEvent)
                                                    << "unknown message type \"telemetry\" at /type";
}

void TestRunSession::malformedMessagesAreProtocolErrors()
{
    QFETCH(int, behaviour);
    QFETCH(QString, inWhy);
    FakeRunner fake(static_cast<FakeRunner::Behaviour>(behaviour));
    QTemporaryDir cache;
    RunSession session(optionsFor(fake, cache));
    START_OR_SKIP(session);
    auto outcome = session.run(kf::test::vectorAddTask(), RunSession::Plan{RunKind::Verify, "naive.cu", RunSettings{}, std::nullopt, {}});
    KF_VERIFY_OK(outcome);
    QVERIFY(outcome->failure);
    QVERIFY(outcome->runnerRestarted);
    QVERIFY2(qs(outcome->failure->why).contains(inWhy), outcome->failure->why.c_str());
    QVERIFY(outcome->report.isError());
}

void TestRunSession::otherProtocolVersionIsRefusedAtStart()
{
    FakeRunner fake(FakeRunner::Behaviour::OldProtocol);
    QTemporaryDir cache;
    RunSession session(optionsFor(fake, cache));
    auto s = session.start();
    QVERIFY(!s);
    QCOMPARE(qs(s.error().why), QString("the runner speaks protocol 1 and this KernelForge speaks protocol 3"));
    auto outcome = session.run(kf::test::vectorAddTask(), RunSession::Plan{RunKind::Verify, "naive.cu", RunSettings{}, std::nullopt, {}});
    QVERIFY(!outcome);
    QVERIFY(fake.requests().isEmpty());
}

// An endpoint that does not share this machine's files needs a runner that takes them (hello
// feature "stage"): one without it is refused at start, before anything is compiled or sent.
void TestRunSession::aRunnerTooOldToBeSentFilesIsRefused()
{
    FakeRunner fake(FakeRunner::Behaviour::Pass);   // its hello lists no "stage"
    QTemporaryDir cache;
    RunSession::Options o = optionsFor(fake, cache);
    Endpoint e;
    e.name = "box";
    e.kind = Endpoint::Kind::Command;
    e.command = {"sh", "-c", "exec \"$0\"", "{runner}"};
    e.runner = fake.path().toStdString();
    e.sharedFs = false;
    o.endpoint = e;
    RunSession session(o);
    QVERIFY(session.stagesFiles());
    auto s = session.start();
    QVERIFY(!s);
    QVERIFY2(qs(s.error().why).startsWith("the runner there is too old to be sent the task's files"), qPrintable(qs(s.error().why)));
    QVERIFY2(qs(s.error().what).contains("box (command sh)"), qPrintable(qs(s.error().what)));
    QVERIFY(qs(s.error().hint).contains("shared_fs"));
    auto outcome = session.run(kf::test::vectorAddTask(), RunSession::Plan{RunKind::Verify, "naive.cu", RunSettings{}, std::nullopt, {}});
    QVERIFY(!outcome);
    QVERIFY(fake.requests().isEmpty());
    // The same runner behind an endpoint that shares the files is used as before.
    e.sharedFs = true;
    o.endpoint = e;
    RunSession shared(o);
    QVERIFY(!shared.stagesFiles());
    START_OR_SKIP(shared);
}

void TestRunSession::benchReportIsTyped()
{
    FakeRunner fake(FakeRunner::Behaviour::BenchOk);
    QTemporaryDir cache;
    RunSession session(optionsFor(fake, cache));
    START_OR_SKIP(session);
    auto outcome = session.run(kf::test::vectorAddTask(), RunSession::Plan{RunKind::Bench, "naive.cu", RunSettings{}, std::nullopt, {}});
    KF_VERIFY_OK(outcome);
    QVERIFY(!outcome->failure);
    QVERIFY(outcome->report.bench());
    QCOMPARE(outcome->report.bench()->geomeanSpeedup.value_or(0), 1.25);
    QCOMPARE(outcome->report.bench()->shapes.at(0).candidate.samples, std::int64_t(40));
    QVERIFY(outcome->report.bench()->shapes.at(0).trustworthy());
    const json req = json::parse(fake.requests().at(0).toStdString());
    QCOMPARE(qs(req["type"].get<std::string>()), QString("bench"));
    QCOMPARE(req["trials"].get<int>(), 1);
}

// Issue 23: a runner that stops (SIGSTOP; a stuck process) is noticed by its missing heartbeat
// in seconds, not at the 10-minute idle timeout, and is restarted with a sentence.
void TestRunSession::aFrozenRunnerIsFoundInSeconds()
{
    FakeRunner fake(FakeRunner::Behaviour::Freeze);
    QTemporaryDir cache;
    RunSession session(optionsFor(fake, cache));
    START_OR_SKIP(session);
    QElapsedTimer timer;
    timer.start();
    auto outcome = session.run(kf::test::vectorAddTask(), RunSession::Plan{RunKind::Verify, "naive.cu", RunSettings{}, std::nullopt, {}});
    KF_VERIFY_OK(outcome);
    QVERIFY(outcome->failure);
    QVERIFY(outcome->runnerRestarted);
    QVERIFY2(qs(outcome->failure->why).contains("gave no sign of life for 5 s"), outcome->failure->why.c_str());
    QVERIFY2(timer.elapsed() < 30000, qPrintable(QString("took %1 ms").arg(timer.elapsed())));
    QVERIFY(outcome->report.isError());
}

QTEST_GUILESS_MAIN(TestRunSession)
#include "tst_runsession.moc"
