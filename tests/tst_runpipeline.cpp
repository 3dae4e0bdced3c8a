// RunPipeline (engine/pipeline/RunPipeline.h): the one place a run is decided. The candidate check
// every caller shares, and the torch.compile comparison that follows a benchmark — once, with the
// cubin the runner timed, and never beside a kernel timed on another host — against a scripted
// runner (tests/fakerunner.h) and the scripted harness (tests/data/harness/scripted_harness.py).
#include "engine/pipeline/RunPipeline.h"
#include "fakerunner.h"
#include "testutil.h"

#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

using namespace kf;
using kf::test::FakeRunner;
using nlohmann::json;

namespace {

#define START_OR_SKIP(pipeline)                                                                             \
    do {                                                                                                   \
        auto s_ = (pipeline).start();                                                                      \
        if (!s_ && s_.error().why.find("NVRTC") != std::string::npos)                                       \
            QSKIP(qPrintable("NVRTC unavailable: " + qs(s_.error().message())));                            \
        KF_VERIFY_OK(s_);                                                                                  \
    } while (0)

Task twoCandidates()
{
    Task t = kf::test::vectorAddTask();
    t.candidates.resize(1);   // naive.cu
    Candidate second = t.candidates.front();
    second.file = "other.cu";
    t.candidates.push_back(second);
    return t;
}

} // namespace

class TestRunPipeline : public QObject {
    Q_OBJECT
private slots:
    void init() { qputenv("KF_BASELINE_PYTHON", (QString(KF_TEST_DATA_DIR) + "/harness/scripted_harness.py").toUtf8()); }
    void cleanup() { qunsetenv("KF_BASELINE_PYTHON"); }
    void candidatesAreCheckedOnce_data();
    void candidatesAreCheckedOnce();
    void aTaskWithoutCandidatesSaysWhatToDo();
    void comparisonFollowsABenchmark_data();
    void comparisonFollowsABenchmark();
    void aCandidateOutsideTheTaskIsRefusedBeforeTheRunner();
};

void TestRunPipeline::candidatesAreCheckedOnce_data()
{
    QTest::addColumn<QStringList>("names");
    QTest::addColumn<QStringList>("resolved");   // empty: an error
    QTest::newRow("none named: every candidate, in task order") << QStringList{} << QStringList{"naive.cu", "other.cu"};
    QTest::newRow("one named") << QStringList{"other.cu"} << QStringList{"other.cu"};
    QTest::newRow("named twice: run once") << QStringList{"other.cu", "naive.cu", "other.cu"} << QStringList{"other.cu", "naive.cu"};
    QTest::newRow("a file that is not a candidate") << QStringList{"naive.cu", "stray.cu"} << QStringList{};
}

void TestRunPipeline::candidatesAreCheckedOnce()
{
    QFETCH(QStringList, names);
    QFETCH(QStringList, resolved);
    std::vector<std::string> asked;
    for (const QString& n : names)
        asked.push_back(n.toStdString());
    const Task task = twoCandidates();
    auto got = resolveCandidates(task, asked);
    if (resolved.isEmpty()) {
        QVERIFY(!got);
        QVERIFY2(qs(got.error().why).contains("stray.cu is not a candidate of task vector_add"), qPrintable(qs(got.error().message())));
        QCOMPARE(qs(got.error().pointer), QString("/candidates"));
        QVERIFY(qs(got.error().hint).contains("task.json"));
        return;
    }
    KF_VERIFY_OK(got);
    QStringList files;
    for (const Candidate* c : got.value())
        files << qs(c->file);
    QCOMPARE(files, resolved);
}

void TestRunPipeline::aTaskWithoutCandidatesSaysWhatToDo()
{
    Task task = kf::test::vectorAddTask();
    task.candidates.clear();
    auto got = resolveCandidates(task, {});
    QVERIFY(!got);
    QVERIFY2(qs(got.error().why).contains("has no candidates yet"), qPrintable(qs(got.error().message())));
    QVERIFY(qs(got.error().hint).contains("kforge candidate add"));
}

void TestRunPipeline::comparisonFollowsABenchmark_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<bool>("asked");
    QTest::addColumn<bool>("remote");
    QTest::addColumn<QString>("expect");   // "": no comparison; "measured"; else a reason it was not
    QTest::newRow("a benchmark asking for it, here") << int(RunKind::Bench) << true << false << "measured";
    QTest::newRow("a benchmark not asking") << int(RunKind::Bench) << false << false << "";
    QTest::newRow("a verification never compares") << int(RunKind::Verify) << true << false << "";
    QTest::newRow("a benchmark on another host") << int(RunKind::Bench) << true << true << "ran on";
}

void TestRunPipeline::comparisonFollowsABenchmark()
{
    QFETCH(int, kind);
    QFETCH(bool, asked);
    QFETCH(bool, remote);
    QFETCH(QString, expect);
    FakeRunner fake(RunKind(kind) == RunKind::Bench ? FakeRunner::Behaviour::BenchOk : FakeRunner::Behaviour::Pass);
    QTemporaryDir cache;
    RunPipeline::Options o;
    o.runnerPath = fake.path().toStdString();
    o.cacheDir = cache.path().toStdString();
    if (remote) {
        // A command endpoint runs the runner behind a command the client does not look into: for
        // the pipeline, another host (its files shared, so nothing is staged).
        Endpoint e;
        e.name = "box";
        e.kind = Endpoint::Kind::Command;
        e.runner = fake.path().toStdString();
        e.command = {"{runner}"};
        e.sharedFs = true;
        o.endpoint = e;
    }
    RunPipeline pipeline(o);
    START_OR_SKIP(pipeline);
    RunPlan plan{RunKind(kind), "naive.cu", RunSettings{}, std::nullopt, {}};
    plan.settings.compileBaseline = asked;
    std::vector<std::string> stages;
    auto outcome = pipeline.run(kf::test::vectorAddTask(), plan, [&](const protocol::Event& e) {
        if (e.kind == protocol::Event::Kind::Progress)
            stages.push_back(e.stage);
    });
    KF_VERIFY_OK(outcome);
    QVERIFY2(!outcome->failure, outcome->failure ? outcome->failure->message().c_str() : "");
    QVERIFY(outcome->passed());
    const json& doc = outcome->report.document();
    if (expect.isEmpty()) {
        QVERIFY(!doc.contains("compile_baseline"));
        return;
    }
    const auto& bench = outcome->report.bench();
    QVERIFY(bench && bench->compileBaseline);
    // The typed view and the document agree: the edit made a new report, read again.
    QCOMPARE(doc["compile_baseline"]["measured"].get<bool>(), bench->compileBaseline->measured);
    if (expect == "measured") {
        QVERIFY2(bench->compileBaseline->measured, bench->compileBaseline->reason.c_str());
        QVERIFY(std::find(stages.begin(), stages.end(), "timing against torch.compile") != stages.end());
        // The harness was handed the runner's cubin (the scripted harness refuses a tiny image):
        // no second compile, and the report the runner sent is otherwise unchanged.
        QCOMPARE(doc["geomean_speedup"].get<double>(), 1.25);
    } else {
        QVERIFY(!bench->compileBaseline->measured);
        QVERIFY2(qs(bench->compileBaseline->reason).contains(expect), bench->compileBaseline->reason.c_str());
        QVERIFY(qs(bench->compileBaseline->reason).contains("box"));
    }
}

void TestRunPipeline::aCandidateOutsideTheTaskIsRefusedBeforeTheRunner()
{
    FakeRunner fake(FakeRunner::Behaviour::Pass);
    QTemporaryDir cache;
    RunPipeline::Options o;
    o.runnerPath = fake.path().toStdString();
    o.cacheDir = cache.path().toStdString();
    RunPipeline pipeline(o);
    auto outcome = pipeline.run(kf::test::vectorAddTask(), RunPlan{RunKind::Verify, "stray.cu", RunSettings{}, std::nullopt, {}});
    QVERIFY(!outcome);
    QVERIFY(qs(outcome.error().why).contains("not a candidate"));
    QVERIFY(fake.requests().isEmpty());
}

QTEST_GUILESS_MAIN(TestRunPipeline)
#include "tst_runpipeline.moc"
