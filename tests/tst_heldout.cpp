// Held-out shapes: valid for the task (ranges, multiples, constraints), never one of the listed
// test shapes, no bigger than what the tests already ask of the GPU, and replayable from a seed.
#include "testutil.h"

#include "engine/task/HeldOut.h"

#include <QTemporaryDir>

#include <set>

using namespace kf;
using Json = nlohmann::json;

namespace {

std::int64_t elements(const Task& t, const ShapeBinding& b)
{
    std::int64_t total = 0;
    for (const auto* list : {&t.inputs, &t.outputs})
        for (const TensorSpec& s : *list) {
            std::int64_t n = 1;
            // Keep the Result alive: value() of a temporary is a reference into it, and a
            // range-for over it would read a destroyed vector (GCC's -Wmaybe-uninitialized).
            const auto extents = t.extents(s, b);
            for (std::int64_t e : extents.value())
                n *= e;
            total += n;
        }
    return total;
}

} // namespace

class TestHeldOut : public QObject {
    Q_OBJECT

private slots:
    void validForEveryExample_data();
    void validForEveryExample();
    void sameSeedSameShapesOtherSeedOtherShapes();
    void multiplesAndConstraintsAreHonoured();
    void noRoomMeansNoShapes();
    void requestCarriesThemAsHeldOut();
};

void TestHeldOut::validForEveryExample_data()
{
    QTest::addColumn<QString>("example");
    for (const char* e : {"vector_add", "softmax_fp32", "layer_norm_bf16", "rms_norm_fp16", "fused_add_rms_norm_fp16",
                          "transpose_fp32", "cumsum_fp32", "gemm_fp16"})
        QTest::newRow(e) << e;
}

void TestHeldOut::validForEveryExample()
{
    QFETCH(QString, example);
    auto t = loadTask((QString(KF_SOURCE_DIR) + "/resources/examples/").toStdString() + example.toStdString());
    KF_VERIFY_OK(t);
    const Task& task = t.value();
    std::int64_t budget = 0;
    for (const ShapeBinding& b : task.testShapes)
        budget = std::max(budget, elements(task, b));
    for (std::uint64_t seed : {1ull, 2ull, 0xdeadbeefull}) {
        const auto shapes = deriveHeldOutShapes(task, seed, 2);
        QCOMPARE(int(shapes.size()), 2);
        QVERIFY(shapes[0].values != shapes[1].values);
        for (const ShapeBinding& b : shapes) {
            for (const SymbolSpec& s : task.symbols) {
                const std::int64_t v = b.values.at(s.name);
                QVERIFY2(v >= s.min && v <= s.max && v % s.multipleOf == 0, b.describe().c_str());
            }
            for (const Expr& c : task.constraints)
                QVERIFY2(c.eval(task.environment(b))->asDouble() != 0, b.describe().c_str());
            for (const ShapeBinding& test : task.testShapes)
                QVERIFY2(test.values != b.values, b.describe().c_str());
            QVERIFY2(elements(task, b) <= budget, b.describe().c_str());
            QVERIFY(qs(b.label).startsWith("held-out"));
            // The task's own validator accepts it as a shape binding, and every launch fits CUDA's limits.
            for (const Candidate& c : task.candidates)
                for (const Launch& l : c.launches)
                    KF_VERIFY_OK(evaluateLaunch(task, c, l, b));
        }
    }
}

void TestHeldOut::sameSeedSameShapesOtherSeedOtherShapes()
{
    auto t = loadTask(std::string(KF_SOURCE_DIR) + "/resources/examples/softmax_fp32");
    KF_VERIFY_OK(t);
    const auto a = deriveHeldOutShapes(t.value(), 7, 2);
    const auto b = deriveHeldOutShapes(t.value(), 7, 2);
    QCOMPARE(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
        QVERIFY(a[i].values == b[i].values);
    std::set<std::string> seen;
    for (std::uint64_t seed = 1; seed <= 20; ++seed)
        for (const ShapeBinding& s : deriveHeldOutShapes(t.value(), seed, 2))
            seen.insert(s.describe());
    QVERIFY2(seen.size() >= 30, "held-out shapes must not be guessable from a handful of seeds");
}

void TestHeldOut::multiplesAndConstraintsAreHonoured()
{
    const Json task = {
        {"schema_version", 1}, {"name", "tiles"}, {"architectures", {"sm_90"}},
        {"symbols", {{"M", {{"min", 16}, {"max", 4096}, {"multiple_of", 16}}}, {"K", {{"min", 1}, {"max", 999}}}}},
        {"constraints", {"M >= K"}},
        {"inputs", {{{"name", "x"}, {"dtype", "fp32"}, {"shape", {"M", "K"}}}}},
        {"outputs", {{{"name", "y"}, {"dtype", "fp32"}, {"shape", {"M", "K"}}}}},
        {"shapes", {{"tests", {{{"M", 16}, {"K", 3}}, {{"M", 1024}, {"K", 999}}}}, {"benchmarks", Json::array()}}},
        {"reference", {{"op", "relu"}, {"inputs", {"x"}}}},
        {"candidates", {{{"file", "k.cu"}, {"launches", {{{"kernel", "k"}, {"grid", "M"}, {"block", 256}, {"args", {"x", "y"}}}}}}}}};
    auto t = parseTask(task, "tiles");
    KF_VERIFY_OK(t);
    for (std::uint64_t seed = 1; seed <= 50; ++seed)
        for (const ShapeBinding& b : deriveHeldOutShapes(t.value(), seed, 3)) {
            QCOMPARE(b.values.at("M") % 16, std::int64_t(0));
            QVERIFY2(b.values.at("M") >= b.values.at("K"), b.describe().c_str());
            QVERIFY(b.values.at("M") <= 1024);
        }
}

void TestHeldOut::noRoomMeansNoShapes()
{
    const Json task = {
        {"schema_version", 1}, {"name", "fixed"}, {"architectures", {"sm_90"}},
        {"symbols", {{"N", {{"min", 1}, {"max", 2}}}}},
        {"inputs", {{{"name", "x"}, {"dtype", "fp32"}, {"shape", {"N"}}}}},
        {"outputs", {{{"name", "y"}, {"dtype", "fp32"}, {"shape", {"N"}}}}},
        {"shapes", {{"tests", {{{"N", 1}}, {{"N", 2}}}}, {"benchmarks", Json::array()}}},
        {"reference", {{"op", "relu"}, {"inputs", {"x"}}}},
        {"candidates", {{{"file", "k.cu"}, {"launches", {{{"kernel", "k"}, {"grid", 1}, {"block", 32}, {"args", {"x", "y"}}}}}}}}};
    auto t = parseTask(task, "fixed");
    KF_VERIFY_OK(t);
    QVERIFY(deriveHeldOutShapes(t.value(), 1, 2).empty()); // every valid N is already a test shape
}

void TestHeldOut::requestCarriesThemAsHeldOut()
{
    auto t = loadTask(std::string(KF_SOURCE_DIR) + "/resources/examples/vector_add");
    KF_VERIFY_OK(t);
    const auto shapes = deriveHeldOutShapes(t.value(), 3, 2);
    const Json j = heldOutJson(shapes);
    QCOMPARE(int(j.size()), 2);
    QCOMPARE(qs(j[0]["label"].get<std::string>()), QString("held-out 1"));
    QVERIFY(j[1]["N"].get<std::int64_t>() == shapes[1].values.at("N"));
}

QTEST_GUILESS_MAIN(TestHeldOut)
#include "tst_heldout.moc"
