// A generated candidate comes with its schedule's space (docs/generate.md, "Tuning knobs"): the
// tuner's own enumeration and compile stage (engine/tune/Tuner.h) over a freshly generated
// candidate, for an elementwise tape (every point) and row tapes, the split path for long rows
// among them (points that together try every value of every knob), leaves no point that fails to
// compile or cannot launch; and every point of every test tape's space launches at every shape.
#include "engine/compile/Compiler.h"
#include "engine/core/Files.h"
#include "engine/generate/Generate.h"
#include "engine/task/Task.h"
#include "engine/tune/Tuner.h"
#include "testutil.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <filesystem>
#include <set>

namespace fs = std::filesystem;
using namespace kf;

namespace {

const fs::path kTapes = std::string(KF_TEST_DATA_DIR) + "/generate";

/// Greedy cover: points of `all` until every value of every knob is in one of them. The first
/// point (the candidate's own) is always kept.
std::vector<tune::Point> covering(const std::vector<tune::Point>& all)
{
    std::set<std::pair<std::string, std::string>> missing;
    for (const auto& p : all)
        missing.insert(p.values.begin(), p.values.end());
    std::vector<tune::Point> kept;
    for (size_t best = 0; !missing.empty();) {
        kept.push_back(all[best]);
        for (const auto& v : all[best].values)
            missing.erase(v);
        size_t bestNew = 0;
        for (size_t i = 0; i < all.size(); ++i) {
            size_t fresh = 0;
            for (const auto& v : all[i].values)
                fresh += missing.count(v);
            if (fresh > bestNew) {
                best = i;
                bestNew = fresh;
            }
        }
    }
    return kept;
}

} // namespace

class TestGenerateTune : public QObject {
    Q_OBJECT
private slots:
    void everyPointCompiles_data();
    void everyPointCompiles();
    void everyPointLaunches_data();
    void everyPointLaunches();
};

void TestGenerateTune::everyPointCompiles_data()
{
    QTest::addColumn<QString>("tape");
    QTest::addColumn<bool>("everyPoint");   // false: a cover of every knob's values
    QTest::addColumn<QStringList>("knobs");
    QTest::newRow("elementwise") << "gen_silu_mul_bf16" << true << QStringList{"KF_BLOCK", "KF_CHUNKS"};
    QTest::newRow("softmax, warp and block rows")
        << "gen_scale_softmax_fp32" << false
        << QStringList{"KF_BLOCK", "KF_ROW_LANES", "KF_CACHE_CHUNKS", "KF_MIN_BLOCKS", "KF_PERSIST_BLOCKS"};
    QTest::newRow("add + rms_norm, two outputs")
        << "gen_add_rms_norm_fp16" << false
        << QStringList{"KF_BLOCK", "KF_ROW_LANES", "KF_CACHE_CHUNKS", "KF_MIN_BLOCKS", "KF_PERSIST_BLOCKS"};
    QTest::newRow("log_softmax over long rows, split")
        << "gen_vocab_log_softmax_fp32" << false << QStringList{"KF_BLOCK", "KF_SPLIT", "KF_MIN_BLOCKS"};
}

void TestGenerateTune::everyPointCompiles()
{
    QFETCH(QString, tape);
    QFETCH(bool, everyPoint);
    QFETCH(QStringList, knobs);
    if (!nvrtcVersion())
        QSKIP("NVRTC unavailable");
    QTemporaryDir tmp;
    const fs::path dir = fs::path(tmp.path().toStdString()) / tape.toStdString();
    fs::copy(kTapes / tape.toStdString(), dir, fs::copy_options::recursive);
    auto task = loadTask(dir);
    KF_VERIFY_OK(task);
    auto steps = gen::opReferenceSteps(*task);
    KF_VERIFY_OK(steps);
    gen::GenerateOptions options;
    options.fileName = "fresh.cu";
    auto g = gen::generateCandidate(*task, *steps, options);
    KF_VERIFY_OK(g);
    KF_VERIFY_OK(gen::addGeneratedCandidate(dir, *g));
    auto t = loadTask(dir);
    KF_VERIFY_OK(t);
    const Candidate* c = t->findCandidate("fresh.cu");
    QVERIFY(c);

    // The space names the knobs, and the candidate's defines are its first point.
    QStringList names;
    for (const auto& [name, values] : c->tune.params)
        names << qs(name);
    std::sort(names.begin(), names.end());
    std::sort(knobs.begin(), knobs.end());
    QCOMPARE(names, knobs);
    auto space = tune::enumerate(*t, *c);
    KF_VERIFY_OK(space);
    QVERIFY(space->points.front() == tune::pointOf(*c));

    tune::Outcome out;
    out.candidate = c->file;
    for (const tune::Point& p : everyPoint ? space->points : covering(space->points))
        out.points.push_back({p});
    tune::Settings settings;
    settings.compileThreads = 2;
    settings.cacheDir = dir / "cache";
    tune::compilePoints(*t, *c, "sm_90", settings, out, {}, nullptr);
    for (const tune::PointResult& p : out.points) {
        QVERIFY2(p.compiled, qPrintable(qs(p.point.label() + ": " + p.reason)));
        // Pruned only for spills (the tuner's call), never for a launch the plan cannot make.
        QVERIFY2(p.stage != tune::Stage::Pruned || p.reason.find("spills") != std::string::npos,
                 qPrintable(qs(p.point.label() + ": " + p.reason)));
    }
    QCOMPARE(out.cost.compileFailed, 0);
}

void TestGenerateTune::everyPointLaunches_data()
{
    QTest::addColumn<QString>("tape");
    for (const auto& d : fs::directory_iterator(kTapes))
        if (fs::exists(d.path() / "task.json"))
            QTest::newRow(d.path().filename().string().c_str()) << qs(d.path().filename().string());
}

/// Every point of every test tape's space (its generated.cu entry is the generator's output, as
/// tst_generate's goldenSources checks): each launch fits CUDA's limits at every test and
/// benchmark shape, and the scratch buffer's count evaluates. No compile: the whole space.
void TestGenerateTune::everyPointLaunches()
{
    QFETCH(QString, tape);
    auto task = loadTask(kTapes / tape.toStdString());
    KF_VERIFY_OK(task);
    const Candidate* c = task->findCandidate("generated.cu");
    QVERIFY(c);
    auto space = tune::enumerate(*task, *c, 0);
    KF_VERIFY_OK(space);
    QVERIFY(space->points.size() >= 12);
    std::vector<ShapeBinding> shapes = task->testShapes;
    shapes.insert(shapes.end(), task->benchmarkShapes.begin(), task->benchmarkShapes.end());
    for (const tune::Point& p : space->points) {
        const Candidate point = tune::withPoint(*c, p);
        for (const ShapeBinding& shape : shapes) {
            for (const Launch& l : point.launches) {
                auto g = evaluateLaunch(*task, point, l, shape);
                QVERIFY2(g.ok(), qPrintable(qs(p.label() + " at " + shape.describe() + ": " + (g ? "" : g.error().message()))));
                QVERIFY(g->grid[0] >= 1);
            }
            for (const Scratch& s : point.scratch) {
                auto n = s.count.eval(task->environment(point, shape));
                QVERIFY2(n.ok() && n->asDouble() >= 1, qPrintable(qs(p.label() + " at " + shape.describe())));
            }
        }
    }
}

QTEST_GUILESS_MAIN(TestGenerateTune)
#include "tst_generatetune.moc"
