// The tuner (engine/tune/): the "tune" block in task.json, launch plans that name a candidate's
// defines, the space, compiling and pruning with the real NVRTC, the budgeted search, the
// re-measure and the write-back. The search's runs go through `RunFn`; here it is a scripted test
// fixture (ScriptedRuns) that answers with report values computed from the point's defines, so
// the search's decisions can be checked exactly. The real runner is exercised by tests/gpu.
#include "engine/core/Files.h"
#include "engine/compile/Compiler.h"
#include "engine/task/Task.h"
#include "engine/tune/Tuner.h"
#include "reportutil.h"
#include "testutil.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <functional>
#include <map>
#include <set>

using namespace kf;
using Json = nlohmann::json;

namespace {

const char* kScaleSource = R"(
#ifndef BLOCK
#define BLOCK 256
#endif
#if VEC == 3
#error "VEC 3 is not a width this kernel supports"
#endif
extern "C" __global__ void __launch_bounds__(BLOCK) scale(const float* x, float* y, long long n)
{
    long long i = (long long)(blockIdx.x * BLOCK + threadIdx.x) * VEC;
    for (int k = 0; k < VEC; ++k)
        if (i + k < n)
            y[i + k] = 2.0f * x[i + k];
}
)";

/// A task "y = 2x" whose candidate k.cu has BLOCK and VEC as defines and a tune block `tune`.
Json scaleTask(const Json& tune, const Json& defines = {{"BLOCK", 256}, {"VEC", 1}})
{
    Json cand = {{"file", "k.cu"},
                 {"defines", defines},
                 {"launches",
                  {{{"kernel", "scale"},
                    {"grid", "ceil_div(N, BLOCK * VEC)"},
                    {"block", "BLOCK"},
                    {"args", {"x", "y", {{"scalar", "N"}, {"type", "int64"}}}}}}}};
    if (!tune.is_null())
        cand["tune"] = tune;
    return {{"schema_version", 1},
            {"name", "scale"},
            {"architectures", {"sm_90"}},
            {"symbols", {{"N", {{"min", 1}, {"max", 1 << 30}}}}},
            {"inputs", {{{"name", "x"}, {"dtype", "fp32"}, {"shape", {"N"}}}}},
            {"outputs", {{{"name", "y"}, {"dtype", "fp32"}, {"shape", {"N"}}}}},
            {"shapes", {{"tests", {{{"N", 7}}, {{"N", 4099}}}}, {"benchmarks", {{{"label", "16M"}, {"N", 16777216}}, {{"N", 1 << 26}}}}}},
            {"reference", {{"op", "mul"}, {"inputs", {"x"}}, {"attrs", {{"scalar", 2.0}}}}},
            {"candidates", {cand}},
            {"cost", {{"bytes", "8 * N"}}}};
}

/// Writes the task and its source into `dir` and loads it the way every command does.
Result<Task> writeTask(const QTemporaryDir& dir, const Json& j)
{
    const std::filesystem::path d = dir.path().toStdString();
    if (auto w = writeFileAtomic(d / "task.json", j.dump(2)); !w)
        return w.error();
    if (auto w = writeFileAtomic(d / "k.cu", std::string(kScaleSource)); !w)
        return w.error();
    return loadTask(d);
}

/// Test fixture: answers the tuner's verify and bench plans with report values, as a runner
/// would, from a function of the point's defines. It records every plan it was given.
struct ScriptedRuns {
    /// Per point label: the median time in ms for bench call number `n` of that point.
    std::function<double(const std::string& label, int n)> timeMs;
    std::function<bool(const std::string& label)> verifies = [](const std::string&) { return true; };
    std::vector<std::pair<std::string, std::string>> calls;   ///< (kind, point label)
    std::map<std::string, int> benchCalls;

    static std::string labelOf(const Task& t, const std::string& file)
    {
        const Candidate* c = t.findCandidate(file);
        tune::Point p;
        for (const auto& [name, values] : c->tune.params)
            p.values.emplace_back(name, *c->define(name));
        return p.label();
    }

    Result<RunOutcome> operator()(const Task& t, const RunPlan& plan, const CancelToken*)
    {
        const std::string label = labelOf(t, plan.candidateFile);
        const Json header = {{"schema_version", 1},
                             {"task", {{"name", t.name}, {"hash", "h"}}},
                             {"candidate", {{"file", plan.candidateFile}, {"source_hash", "s"}, {"arch", "sm_90"}}},
                             {"environment", {{"gpu", "scripted"}, {"peak_bandwidth_gbs", 3350.0}}}};
        RunOutcome o;
        Json r = header;
        if (plan.kind == RunKind::Verify) {
            calls.emplace_back("verify", label);
            const bool ok = verifies(label);
            r.update({{"kind", "correctness"}, {"verdict", ok ? "pass" : "fail"}, {"summary", ok ? "all shapes pass" : "y differs at 3 of 7 elements"},
                      {"trials_per_shape", 1}, {"discriminates", true}, {"seeds", {"0x1"}}, {"shapes", Json::array()}});
        } else {
            calls.emplace_back("bench", label);
            const int n = benchCalls[label]++;
            Json shapes = Json::array();
            for (const ShapeBinding& b : t.benchmarkShapes) {
                const double scale = double(b.values.at("N")) / 16777216.0;
                const double ms = timeMs(label, n) * scale, eager = 0.2 * scale;
                shapes.push_back({{"shape", {{"N", b.values.at("N")}}}, {"label", b.label}, {"set", "benchmarks"},
                                  {"candidate", {{"median_ms", ms}, {"samples", 20}}}, {"baseline", {{"median_ms", eager}, {"samples", 20}}},
                                  {"speedup", eager / ms}, {"bytes", 8.0 * double(b.values.at("N"))},
                                  {"pct_peak_bandwidth", 100.0 * 8.0 * double(b.values.at("N")) / (ms * 1e-3) / 3350e9},
                                  {"below_floor", false}, {"recheck", {{"checked", 2}, {"passed", true}, {"failure", ""}}}, {"flags", Json::array()}});
            }
            r.update({{"kind", "performance"}, {"verdict", "ok"}, {"summary", "timed"}, {"shapes", shapes}});
        }
        o.report = test::report(r);
        return o;
    }
};

tune::RunFn runsOf(ScriptedRuns& s)
{
    return [&s](const Task& t, const RunPlan& p, const CancelToken* c) { return s(t, p, c); };
}

} // namespace

class TestTune : public QObject {
    Q_OBJECT
private slots:
    void spaceIsEnumerated_data();
    void spaceIsEnumerated();
    void badTuneBlockIsRefused_data();
    void badTuneBlockIsRefused();
    void launchPlanNamesDefines();
    void tuneBlockRoundTrips();
    void compileAndPrune();
    void searchHalvesVerifiesAndRemeasures_data();
    void searchHalvesVerifiesAndRemeasures();
    void budgetStopsTheSearch();
    void winnerIsWrittenBack();
};

void TestTune::spaceIsEnumerated_data()
{
    QTest::addColumn<QString>("tune");
    QTest::addColumn<int>("points");
    QTest::addColumn<int>("excluded");
    QTest::addColumn<QString>("first");
    QTest::newRow("one define") << R"({"space": {"BLOCK": [128, 256, 512]}})" << 3 << 0 << "BLOCK=256";
    QTest::newRow("product") << R"({"space": {"BLOCK": [128, 256, 512], "VEC": [1, 2, 4]}})" << 9 << 0 << "BLOCK=256 VEC=1";
    QTest::newRow("where leaves some out") << R"({"space": {"BLOCK": [128, 256, 512], "VEC": [1, 2, 4]}, "where": ["BLOCK * VEC <= 1024"]})"
                                          << 8 << 1 << "BLOCK=256 VEC=1";
    QTest::newRow("own point not in the space")
        << R"({"space": {"BLOCK": [64, 1024]}})" << 2 << 0 << "BLOCK=64";
}

void TestTune::spaceIsEnumerated()
{
    QFETCH(QString, tune);
    QFETCH(int, points);
    QFETCH(int, excluded);
    QFETCH(QString, first);
    QTemporaryDir dir;
    auto task = writeTask(dir, scaleTask(Json::parse(tune.toStdString())));
    KF_VERIFY_OK(task);
    auto space = tune::enumerate(*task, task->candidates.front());
    KF_VERIFY_OK(space);
    QCOMPARE(int(space->points.size()), points);
    QCOMPARE(int(space->excluded), excluded);
    QCOMPARE(QString::fromStdString(space->points.front().label()), first);
    auto sampled = tune::enumerate(*task, task->candidates.front(), 2);
    KF_VERIFY_OK(sampled);
    QCOMPARE(int(sampled->points.size()), std::min(points, 2));
    QCOMPARE(int(sampled->sampledOut), points - std::min(points, 2));
}

void TestTune::badTuneBlockIsRefused_data()
{
    QTest::addColumn<QString>("tune");
    QTest::addColumn<QString>("pointer");
    QTest::addColumn<QString>("says");
    QTest::newRow("not a define") << R"({"space": {"WARPS": [1, 2]}})" << "/candidates/0/tune/space/WARPS" << "not one of this candidate's defines";
    QTest::newRow("empty list") << R"({"space": {"BLOCK": []}})" << "/candidates/0/tune/space/BLOCK" << "at least one value";
    QTest::newRow("repeat") << R"({"space": {"BLOCK": [128, 128]}})" << "/candidates/0/tune/space/BLOCK/1" << "listed twice";
    QTest::newRow("no space") << R"({"where": ["BLOCK > 0"]})" << "/candidates/0/tune" << "space";
    QTest::newRow("empty space") << R"({"space": {}})" << "/candidates/0/tune/space" << "at least one define";
    QTest::newRow("unknown name in where") << R"({"space": {"BLOCK": [128]}, "where": ["WARPS > 1"]})" << "/candidates/0/tune/where/0"
                                           << "unknown symbol 'WARPS'";
    QTest::newRow("unknown key") << R"({"space": {"BLOCK": [128]}, "budget": 5})" << "/candidates/0/tune" << "budget";
    QTest::newRow("object value") << R"({"space": {"BLOCK": [{"x": 1}]}})" << "/candidates/0/tune/space/BLOCK/0" << "a number or a string";
}

void TestTune::badTuneBlockIsRefused()
{
    QFETCH(QString, tune);
    QFETCH(QString, pointer);
    QFETCH(QString, says);
    QTemporaryDir dir;
    auto task = writeTask(dir, scaleTask(Json::parse(tune.toStdString())));
    QVERIFY(!task);
    QVERIFY2(QString::fromStdString(task.error().pointer).startsWith(pointer), task.error().pointer.c_str());
    QVERIFY2(QString::fromStdString(task.error().message()).contains(says), task.error().message().c_str());
    QVERIFY2(QString::fromStdString(task.error().file).endsWith("task.json"), task.error().file.c_str());
}

void TestTune::launchPlanNamesDefines()
{
    QTemporaryDir dir;
    auto task = writeTask(dir, scaleTask(Json(nullptr)));
    KF_VERIFY_OK(task);
    const ShapeBinding& n = task->testShapes.back();   // N=4099
    const Candidate& c = task->candidates.front();
    auto g = evaluateLaunch(*task, c, c.launches.front(), n);
    KF_VERIFY_OK(g);
    QCOMPARE(g->block[0], 256);
    QCOMPARE(g->grid[0], (4099 + 255) / 256);
    const Task point = tune::taskWithPoint(*task, "k.cu", {{{"BLOCK", "128"}, {"VEC", "4"}}});
    const Candidate& pc = *point.findCandidate("k.cu");
    auto pg = evaluateLaunch(point, pc, pc.launches.front(), n);
    KF_VERIFY_OK(pg);
    QCOMPARE(pg->block[0], 128);
    QCOMPARE(pg->grid[0], (4099 + 511) / 512);
    // A launch that names a name that is neither a symbol, a parameter nor a numeric define.
    Json j = scaleTask(Json(nullptr), {{"BLOCK", "256u"}, {"VEC", 1}});
    auto bad = writeTask(dir, j);
    QVERIFY(!bad);
    QVERIFY2(QString::fromStdString(bad.error().message()).contains("unknown symbol 'BLOCK'"), bad.error().message().c_str());
}

void TestTune::tuneBlockRoundTrips()
{
    QTemporaryDir dir;
    auto task = writeTask(dir, scaleTask(Json::parse(R"({"space": {"BLOCK": [128, 256], "VEC": [1, "2"]}, "where": ["BLOCK * VEC <= 1024"]})")));
    KF_VERIFY_OK(task);
    const Json once = taskToJson(*task);
    QCOMPARE(once["candidates"][0]["tune"], Json::parse(R"({"space": {"BLOCK": [128, 256], "VEC": [1, 2]}, "where": ["BLOCK * VEC <= 1024"]})"));
    auto again = parseTask(once, "round trip", task->directory);
    KF_VERIFY_OK(again);
    QCOMPARE(taskToJson(*again), once);
}

void TestTune::compileAndPrune()
{
    if (auto v = nvrtcVersion(); !v)
        QSKIP(("NVRTC is not available: " + v.error().why).c_str());
    QTemporaryDir dir, cache;
    // VEC=3 does not compile (#error); BLOCK=2048 cannot launch (over 1024 threads per block).
    auto task = writeTask(dir, scaleTask(Json::parse(R"({"space": {"BLOCK": [256, 2048], "VEC": [1, 3]}})")));
    KF_VERIFY_OK(task);
    tune::Settings s;
    s.cacheDir = cache.path().toStdString();
    s.compileThreads = 2;
    tune::Outcome out;
    auto space = tune::enumerate(*task, task->candidates.front());
    KF_VERIFY_OK(space);
    for (const auto& p : space->points)
        out.points.push_back({p});
    int progressCalls = 0;
    tune::compilePoints(*task, task->candidates.front(), "sm_90", s, out, [&](const tune::Progress&) { ++progressCalls; }, nullptr);
    QCOMPARE(progressCalls, 4);
    std::map<std::string, const tune::PointResult*> by;
    for (const auto& p : out.points)
        by[p.point.label()] = &p;
    QCOMPARE(by["BLOCK=256 VEC=1"]->stage, tune::Stage::NotReached);
    QVERIFY(by["BLOCK=256 VEC=1"]->compiled);
    QVERIFY(by["BLOCK=256 VEC=1"]->registers > 0);
    QVERIFY(by["BLOCK=256 VEC=1"]->occupancy.has_value());
    QCOMPARE(by["BLOCK=256 VEC=3"]->stage, tune::Stage::CompileFailed);
    QVERIFY2(QString::fromStdString(by["BLOCK=256 VEC=3"]->reason).contains("VEC 3 is not a width"), by["BLOCK=256 VEC=3"]->reason.c_str());
    QCOMPARE(by["BLOCK=2048 VEC=1"]->stage, tune::Stage::Pruned);
    QVERIFY2(QString::fromStdString(by["BLOCK=2048 VEC=1"]->reason).contains("2048"), by["BLOCK=2048 VEC=1"]->reason.c_str());
    QCOMPARE(out.cost.compiled, 2);
    QCOMPARE(out.cost.compileFailed, 2);
    QCOMPARE(out.cost.pruned, 1);
}

void TestTune::searchHalvesVerifiesAndRemeasures_data()
{
    QTest::addColumn<int>("eta");
    QTest::addColumn<QString>("winner");
    QTest::addColumn<int>("rounds");
    // Nine points; BLOCK=512 VEC=2 fails verify; BLOCK=128 VEC=4 is lucky in its first timings
    // (0.01 ms) and slow in every re-measure (0.5 ms); the true best is BLOCK=256 VEC=4 (0.05).
    QTest::newRow("eta 3") << 3 << "BLOCK=256 VEC=4" << 2;
    QTest::newRow("eta 2") << 2 << "BLOCK=256 VEC=4" << 2;
}

void TestTune::searchHalvesVerifiesAndRemeasures()
{
    if (auto v = nvrtcVersion(); !v)
        QSKIP(("NVRTC is not available: " + v.error().why).c_str());
    QFETCH(int, eta);
    QFETCH(QString, winner);
    QFETCH(int, rounds);
    QTemporaryDir dir, cache;
    auto task = writeTask(dir, scaleTask(Json::parse(R"({"space": {"BLOCK": [128, 256, 512], "VEC": [1, 2, 4]}})")));
    KF_VERIFY_OK(task);
    ScriptedRuns runs;
    runs.verifies = [](const std::string& l) { return l != "BLOCK=512 VEC=2"; };
    runs.timeMs = [](const std::string& l, int n) {
        if (l == "BLOCK=128 VEC=4")
            return n < 2 ? 0.01 : 0.5;
        if (l == "BLOCK=256 VEC=4")
            return 0.05;
        return 0.1 + 0.01 * double(l.size() % 7);
    };
    tune::Settings s;
    s.cacheDir = cache.path().toStdString();
    s.eta = eta;
    s.finalists = 2;
    s.remeasureRounds = 3;
    std::vector<std::string> stages;
    auto out = tune::search(*task, "k.cu", "sm_90", s, runsOf(runs), [&](const tune::Progress& p) { stages.push_back(p.stage); });
    KF_VERIFY_OK(out);
    QVERIFY(out->best());
    QCOMPARE(QString::fromStdString(out->best()->point.label()), winner);
    QCOMPARE(out->best()->stage, tune::Stage::Winner);
    QCOMPARE(int(out->best()->remeasureMs.size()), 3);
    // The point that failed verify was never timed and says why.
    for (const auto& p : out->points)
        if (p.point.label() == "BLOCK=512 VEC=2") {
            QCOMPARE(p.stage, tune::Stage::VerifyFailed);
            QVERIFY(!p.timed());
            QVERIFY2(QString::fromStdString(p.reason).contains("differs"), p.reason.c_str());
        }
    for (const auto& [kind, label] : runs.calls)
        QVERIFY2(!(kind == "bench" && label == "BLOCK=512 VEC=2"), "a point that failed verify was timed");
    // Every timed point was verified before its first timing.
    std::set<std::string> verified;
    for (const auto& [kind, label] : runs.calls) {
        if (kind == "verify")
            verified.insert(label);
        else
            QVERIFY2(verified.count(label), label.c_str());
    }
    // Halving: every verified point timed once, then fewer; the finalists re-measured interleaved.
    QCOMPARE(out->cost.verified, 9);
    QCOMPARE(out->cost.verifyFailed, 1);
    QCOMPARE(out->cost.timed, 8);
    int maxRounds = 0;
    for (const auto& p : out->points)
        maxRounds = std::max(maxRounds, p.rounds);
    QCOMPARE(maxRounds, rounds);
    QCOMPARE(out->cost.remeasureRuns, 2 * 3);
    const auto last = std::vector(runs.calls.end() - 6, runs.calls.end());
    QVERIFY(last[0].second != last[1].second);   // interleaved, not one point three times
    QVERIFY(last[0].second != last[2].second || last[1].second != last[3].second);
    QCOMPARE(std::count(stages.begin(), stages.end(), std::string("re-measure")), 6);
    // The lucky point reached the finals and lost there.
    for (const auto& p : out->points)
        if (p.point.label() == "BLOCK=128 VEC=4") {
            QCOMPARE(p.stage, tune::Stage::Finalist);
            QVERIFY(*p.finalMs > *out->best()->finalMs);
        }
    const Json j = out->toJson();
    QCOMPARE(j["winner"], Json(winner.toStdString()));
    QCOMPARE(j["cost"]["verify_failed"], 1);
    QCOMPARE(j["points"].size(), 9u);
    QVERIFY(out->eagerMs[0].has_value());
    QCOMPARE(out->peakGbs, 3350.0);
}

void TestTune::budgetStopsTheSearch()
{
    if (auto v = nvrtcVersion(); !v)
        QSKIP(("NVRTC is not available: " + v.error().why).c_str());
    QTemporaryDir dir, cache;
    auto task = writeTask(dir, scaleTask(Json::parse(R"({"space": {"BLOCK": [128, 256, 512], "VEC": [1, 2, 4]}})")));
    KF_VERIFY_OK(task);
    ScriptedRuns runs;
    runs.timeMs = [](const std::string&, int) { return 0.1; };
    tune::Settings s;
    s.cacheDir = cache.path().toStdString();
    s.budgetS = 1e-6;   // spent by the compile stage
    auto out = tune::search(*task, "k.cu", "sm_90", s, runsOf(runs));
    KF_VERIFY_OK(out);
    QVERIFY(out->cost.budgetSpent);
    QVERIFY(runs.calls.empty());
    QVERIFY(!out->best());
    for (const auto& p : out->points)
        QCOMPARE(p.stage, tune::Stage::NotReached);
    // Cancel before the search: nothing runs, the outcome says so.
    CancelToken cancel;
    cancel.cancel();
    s.budgetS = 100;
    auto cancelled = tune::search(*task, "k.cu", "sm_90", s, runsOf(runs), {}, &cancel);
    KF_VERIFY_OK(cancelled);
    QVERIFY(cancelled->cancelled);
    QVERIFY(runs.calls.empty());
}

void TestTune::winnerIsWrittenBack()
{
    QTemporaryDir dir;
    auto task = writeTask(dir, scaleTask(Json::parse(R"({"space": {"BLOCK": [128, 256], "VEC": [1, 4]}})")));
    KF_VERIFY_OK(task);
    const std::string name = tune::tunedFileName(*task, "k.cu");
    QCOMPARE(QString::fromStdString(name), "k_tuned.cu");
    auto written = tune::writeBack(*task, "k.cu", {{{"BLOCK", "128"}, {"VEC", "4"}}}, name, "tuned from k.cu");
    KF_VERIFY_OK(written);
    auto again = loadTask(task->directory);
    KF_VERIFY_OK(again);
    const Candidate* c = again->findCandidate("k_tuned.cu");
    QVERIFY(c);
    QCOMPARE(*c->define("BLOCK"), std::string("128"));
    QCOMPARE(*c->define("VEC"), std::string("4"));
    QCOMPARE(c->description, std::string("tuned from k.cu"));
    QVERIFY(!c->tune.empty());   // it can be tuned again
    auto src = readFileBytes(*written);
    KF_VERIFY_OK(src);
    QCOMPARE(*src, std::string(kScaleSource));
    QCOMPARE(QString::fromStdString(tune::tunedFileName(*again, "k.cu")), "k_tuned2.cu");
    // The same name again is refused and task.json is left as it was.
    const auto before = readFileBytes(task->directory / "task.json");
    auto twice = tune::writeBack(*again, "k.cu", {{{"BLOCK", "256"}, {"VEC", "1"}}}, "k_tuned.cu", "again");
    QVERIFY(!twice);
    QCOMPARE(*readFileBytes(task->directory / "task.json"), *before);
}

QTEST_GUILESS_MAIN(TestTune)
#include "tst_tune.moc"
