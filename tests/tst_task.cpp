// task.json schema v1: a valid task loads and round-trips; every class of invalid input is
// rejected with the file, the JSON pointer and the exact sentence a user will read.
#include "engine/task/Task.h"
#include "testutil.h"

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>

using namespace kf;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
json baseTask()
{
    std::ifstream in(std::string(KF_TEST_DATA_DIR) + "/task_valid.json");
    return json::parse(in);
}
} // namespace

class TestTask : public QObject {
    Q_OBJECT
private slots:
    void validTaskLoads();
    void roundTrip();
    void defaultsFollowDtype();
    void rejects_data();
    void rejects();
    void syntaxErrorNamesLineAndColumn();
    void hostileInputIsRefusedWithASentence_data();
    void hostileInputIsRefusedWithASentence();
    void missingCandidateFile();
    void arithmeticEdgesAreRefused_data();
    void arithmeticEdgesAreRefused();
    void compileOptionsAreWhitelisted_data();
    void compileOptionsAreWhitelisted();
    void bundledExamplesLoad_data();
    void bundledExamplesLoad();
    void admits_data();
    void admits();
    void parseShapeText_data();
    void parseShapeText();
    void totalElementsCountsEveryTensor();
};

void TestTask::validTaskLoads()
{
    auto t = parseTask(baseTask(), "task.json");
    KF_VERIFY_OK(t);
    QCOMPARE(qs(t->name), QStringLiteral("rms_norm_test"));
    QCOMPARE(t->inputs.size(), size_t(2));
    QCOMPARE(t->inputs[0].dtype, DType::F16);
    QCOMPARE(t->inputs[0].distributions.size(), size_t(3));
    QVERIFY(std::isnan(t->inputs[0].distributions[2].specialValues[0]));
    QCOMPARE(t->outputs[0].tolerance.rtol, 0.01);
    QCOMPARE(t->testShapes.size(), size_t(2));
    QCOMPARE(qs(t->testShapes[1].label), QStringLiteral("tail"));
    QCOMPARE(qs(t->testShapes[1].describe()), QStringLiteral("B=7 D=4099"));
    QCOMPARE(t->reference.kind, Reference::Kind::Op);
    QCOMPARE(qs(t->reference.steps[0].output), QStringLiteral("y"));
    const Launch& l = t->candidates[0].launches[0];
    Env env = t->environment(t->benchmarkShapes[0]);
    QCOMPARE(*l.grid[0].evalInt(env), std::int64_t(4096));
    QCOMPARE(*l.block[0].evalInt(env), std::int64_t(256));
    QCOMPARE(*l.sharedBytes.evalInt(env), std::int64_t(1024));
    QCOMPARE(t->candidates[0].launches[0].args.size(), size_t(6));
    QCOMPARE(qs(t->compile.defines[0].second), QStringLiteral("8"));
    QCOMPARE(t->bytesFormula.eval(env)->i, std::int64_t(2 * 4096 * 4096 * 2 + 4096 * 2));
    auto ext = t->extents(t->inputs[1], t->testShapes[1]);
    QCOMPARE(ext.value(), (std::vector<std::int64_t>{4099}));
}

void TestTask::roundTrip()
{
    auto t = parseTask(baseTask(), "task.json");
    KF_VERIFY_OK(t);
    json once = taskToJson(t.value());
    auto again = parseTask(once, "roundtrip.json");
    KF_VERIFY_OK(again);
    QCOMPARE(qs(taskToJson(again.value()).dump(1)), qs(once.dump(1)));
}

void TestTask::defaultsFollowDtype()
{
    auto t = parseTask(baseTask(), "task.json");
    KF_VERIFY_OK(t);
    // w gave no distributions: floating inputs cycle four kinds.
    QCOMPARE(t->inputs[1].distributions.size(), size_t(4));
    QCOMPARE(t->inputs[1].distributions[2].kind, Distribution::Kind::HeavyTailed);
    QCOMPARE(Tolerance::defaultFor(DType::F32).rtol, 1.3e-6);
    QCOMPARE(Tolerance::defaultFor(DType::BF16).rtol, 1.6e-2);
    QCOMPARE(Tolerance::defaultFor(DType::I32).atol, 0.0);
    QCOMPARE(Tolerance::defaultFor(DType::F16).atolMode, Tolerance::AtolMode::Rms);
}

void TestTask::rejects_data()
{
    QTest::addColumn<QString>("patch");    // RFC 6902 JSON patch applied to the valid fixture
    QTest::addColumn<QString>("pointer");
    QTest::addColumn<QString>("message");
    auto row = [](const char* name, const char* patch, const char* ptr, const char* msg) {
        QTest::newRow(name) << patch << ptr << msg;
    };
    row("unknown top-level key", R"J([{"op":"add","path":"/shapes_typo","value":1}])J", "/shapes_typo",
        "unknown key \"shapes_typo\"; this object accepts: architectures, candidates, compile, constraints, cost, description, inputs, name, outputs, parameters, reference, schema_version, shapes, symbols");
    row("wrong schema version", R"J([{"op":"replace","path":"/schema_version","value":2}])J", "/schema_version",
        "schema_version 2 is not supported; this KernelForge reads version 1");
    row("missing name", R"J([{"op":"remove","path":"/name"}])J", "/", "missing required key \"name\"");
    row("bad dtype", R"J([{"op":"replace","path":"/inputs/1/dtype","value":"float"}])J", "/inputs/1/dtype",
        "unknown dtype \"float\"; use one of: fp64, fp32, fp16, bf16, int64, int32, int16, int8, uint8, bool");
    row("undeclared shape symbol", R"J([{"op":"replace","path":"/inputs/1/shape","value":["K"]}])J", "/inputs/1/shape/0",
        "shape symbol \"K\" is not declared in /symbols");
    row("negative extent", R"J([{"op":"replace","path":"/inputs/1/shape","value":[-3]}])J", "/inputs/1/shape/0",
        "a fixed extent must be non-negative");
    row("shape not an array", R"J([{"op":"replace","path":"/inputs/0/shape","value":"B,D"}])J", "/inputs/0/shape",
        "expected an array, found a string (\"B,D\")");
    row("duplicate tensor name", R"J([{"op":"replace","path":"/outputs/0/name","value":"x"}])J", "/outputs/0/name",
        "tensor name \"x\" is used twice");
    row("tolerance on an input", R"J([{"op":"add","path":"/inputs/0/tolerance","value":{"rtol":1}}])J", "/inputs/0/tolerance",
        "unknown key \"tolerance\"; this object accepts: distributions, dtype, name, shape");
    row("negative tolerance", R"J([{"op":"replace","path":"/outputs/0/tolerance/rtol","value":-1}])J", "/outputs/0/tolerance",
        "rtol and atol must be finite and non-negative");
    row("unknown distribution", R"J([{"op":"replace","path":"/inputs/0/distributions/0/kind","value":"gaussian"}])J",
        "/inputs/0/distributions/0/kind",
        "unknown distribution \"gaussian\"; use normal, uniform, heavy_tailed, mixed_scales, int_range or special");
    row("uniform low >= high", R"J([{"op":"replace","path":"/inputs/0/distributions/1/low","value":3}])J",
        "/inputs/0/distributions/1", "uniform needs low < high (got 3.000000 and 2.000000)");
    row("int_range on floats", R"J([{"op":"replace","path":"/inputs/0/distributions/0","value":{"kind":"int_range","low":0,"high":3}}])J",
        "/inputs/0/distributions/0", "int_range is for integer and bool inputs; for fp16 use uniform");
    row("bad special value", R"J([{"op":"replace","path":"/inputs/0/distributions/2/values/0","value":"NaN!"}])J",
        "/inputs/0/distributions/2/values/0", "special value \"NaN!\" is not a number, \"nan\", \"inf\" or \"-inf\"");
    row("shape misses a symbol", R"J([{"op":"remove","path":"/shapes/tests/0/D"}])J", "/shapes/tests/0", "missing required key \"D\"");
    row("shape binds unknown symbol", R"J([{"op":"add","path":"/shapes/tests/0/Q","value":3}])J", "/shapes/tests/0/Q",
        "\"Q\" is not a declared symbol (declare it in /symbols)");
    row("shape out of range", R"J([{"op":"replace","path":"/shapes/tests/0/D","value":20000}])J", "/shapes/tests/0/D",
        "D = 20000 is outside its range [1, 16384] declared in /symbols");
    row("shape is not an integer", R"J([{"op":"replace","path":"/shapes/tests/0/D","value":"4"}])J", "/shapes/tests/0/D",
        "expected an integer, found a string (\"4\")");
    row("no test shapes", R"J([{"op":"replace","path":"/shapes/tests","value":[]}])J", "/shapes/tests",
        "give at least one test shape (include awkward sizes: 1, primes, tails)");
    row("constraint violated", R"J([{"op":"replace","path":"/constraints","value":["D % 2 == 0"]}])J", "/shapes/tests/0",
        "this shape (B=1 D=1) violates the constraint \"D % 2 == 0\"");
    row("multiple_of violated", R"J([{"op":"add","path":"/symbols/D/multiple_of","value":8}])J", "/shapes/tests/0/D",
        "D = 1 is not a multiple of 8 as /symbols/D requires");
    row("unknown op", R"J([{"op":"replace","path":"/reference/op","value":"rmsnorm"}])J", "/reference/op",
        "\"rmsnorm\" is not a catalog op; use one of: add, sub, mul, div, neg, abs, exp, log, sqrt, rsqrt, tanh, sigmoid, relu, silu, gelu, softmax, log_softmax, layer_norm, rms_norm, matmul, bmm, transpose, permute, sum, mean, amax, cumsum, to, clone, or a TorchScript reference for anything else");
    row("op input unknown", R"J([{"op":"replace","path":"/reference/inputs/1","value":"weight"}])J", "/reference/inputs/1",
        "\"weight\" is neither a task input nor the output of an earlier step");
    row("op arity", R"J([{"op":"replace","path":"/reference/inputs","value":["x","w","x"]}])J", "/reference/inputs",
        "rms_norm takes 1 to 2 input(s), got 3");
    row("op attr type", R"J([{"op":"replace","path":"/reference/attrs/eps","value":"tiny"}])J", "/reference/attrs/eps",
        "expected a number, found a string (\"tiny\")");
    row("op unknown attr", R"J([{"op":"add","path":"/reference/attrs/epsilon","value":1}])J", "/reference/attrs/epsilon",
        "unknown key \"epsilon\"; this object accepts: eps, normalized_dims");
    row("two reference forms", R"J([{"op":"add","path":"/reference/torchscript","value":"r.pt"}])J", "/reference",
        "give exactly one of \"op\", \"tape\" or \"torchscript\" (found 2)");
    row("tape misses an output", R"J([{"op":"replace","path":"/reference","value":{"tape":[{"op":"add","inputs":["x","x"],"output":"h"}]}}])J",
        "/reference/tape", "no step produces the task output \"y\"");
    row("tape redefines a name", R"J([{"op":"replace","path":"/reference","value":{"tape":[{"op":"relu","inputs":["x"],"output":"x"}]}}])J",
        "/reference/tape/0/output", "\"x\" is already defined; give each step a new name");
    row("unknown architecture", R"J([{"op":"replace","path":"/architectures/1","value":"sm_91"}])J", "/architectures/1",
        "\"sm_91\" is not a known architecture; use one of: sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_100, sm_120");
    row("expression syntax", R"J([{"op":"replace","path":"/candidates/0/launches/0/grid/0","value":"ceil_div(B, "}])J",
        "/candidates/0/launches/0/grid/0", "grid: column 13: expression ends where a value was expected");
    row("expression unknown symbol", R"J([{"op":"replace","path":"/candidates/0/launches/0/grid/0","value":"ceil_div(N, 256)"}])J",
        "/candidates/0/launches/0/grid/0",
        "grid \"ceil_div(N, 256)\" uses unknown symbol 'N'; declare it in /symbols or /parameters (known: B, D, BLOCK, eps)");
    row("block too large", R"J([{"op":"replace","path":"/candidates/0/launches/0/block","value":[64, 32]}])J",
        "/candidates/0/launches/0/block", "for B=1 D=1 the block has 2048 threads; CUDA allows at most 1024");
    row("grid zero for a shape", R"J([{"op":"replace","path":"/candidates/0/launches/0/grid","value":"B / 2"}])J",
        "/candidates/0/launches/0/grid", "for B=1 D=1 grid dimension 0 is 0, outside [1, 2147483647]");
    row("grid is real", R"J([{"op":"replace","path":"/candidates/0/launches/0/grid","value":"B * 0.5"}])J",
        "/candidates/0/launches/0/grid", "for B=1 D=1: the result 0.500000 is not an integer");
    row("arg names unknown tensor", R"J([{"op":"replace","path":"/candidates/0/launches/0/args/2","value":"out"}])J",
        "/candidates/0/launches/0/args/2", "\"out\" is not an input, output or scratch buffer of this task (known: partial, w, x, y)");
    row("scalar type", R"J([{"op":"replace","path":"/candidates/0/launches/0/args/4/type","value":"int"}])J",
        "/candidates/0/launches/0/args/4/type", "scalar type \"int\" is not one of int32, int64, uint32, uint64, fp32, fp64");
    row("candidate not .cu", R"J([{"op":"replace","path":"/candidates/0/file","value":"naive.cpp"}])J", "/candidates/0/file",
        "a candidate is a .cu file");
    row("candidate escapes folder", R"J([{"op":"replace","path":"/candidates/0/file","value":"../x.cu"}])J", "/candidates/0/file",
        "give a file name inside the task folder");
    row("no launches", R"J([{"op":"replace","path":"/candidates/0/launches","value":[]}])J", "/candidates/0/launches",
        "a candidate needs at least one launch");
    row("bad define name", R"J([{"op":"add","path":"/compile/defines/2X","value":"1"}])J", "/compile/defines/2X",
        "macro name \"2X\" is not an identifier");
    row("bad std", R"J([{"op":"replace","path":"/compile/std","value":"c++23"}])J", "/compile/std",
        "std must be one of c++11, c++14, c++17, c++20");
    row("scratch clashes with tensor", R"J([{"op":"replace","path":"/candidates/0/scratch/0/name","value":"y"}])J",
        "/candidates/0/scratch/0/name", "\"y\" is already the name of a tensor");
    row("cost unknown key", R"J([{"op":"add","path":"/cost/time","value":"1"}])J", "/cost/time",
        "unknown key \"time\"; this object accepts: bytes, flops");
}

void TestTask::rejects()
{
    QFETCH(QString, patch);
    QFETCH(QString, pointer);
    QFETCH(QString, message);
    json j = baseTask().patch(json::parse(patch.toStdString()));
    auto t = parseTask(j, "tasks/demo/task.json");
    QVERIFY2(!t, "an invalid task was accepted");
    QCOMPARE(qs(t.error().file), QStringLiteral("tasks/demo/task.json"));
    QCOMPARE(qs(t.error().pointer), pointer);
    QCOMPARE(qs(t.error().why), message);
    // The one-line message a user reads names all three.
    QVERIFY(t.error().message().find("tasks/demo/task.json: at " + pointer.toStdString() + ": ") == 0);
}

// Issue 23: inputs that crashed or hung the parser now get an error naming the file and the place.
void TestTask::hostileInputIsRefusedWithASentence_data()
{
    QTest::addColumn<QString>("text");      // the whole task.json
    QTest::addColumn<QString>("inWhy");
    const std::string valid = baseTask().dump();
    auto withName = [&](const std::string& name) {
        json j = baseTask();
        j["name"] = name;
        return qs(j.dump());
    };
    QTest::newRow("a number out of range") << qs(valid.substr(0, valid.size() - 1) + R"(,"x":1e999})")
                                           << "invalid JSON: number overflow parsing '1e999'";
    QTest::newRow("a 30000-character name") << withName(std::string(30000, 'a')) << "at most 200 characters";
    QTest::newRow("bytes after the closing brace") << qs(valid + " {}") << "invalid JSON";
    QTest::newRow("a key given twice") << qs(valid.substr(0, valid.size() - 1) + R"(,"name":"other"})")
                                       << "the key \"name\" appears twice in one object";
    // Issue 41: what d7527b5 accepted or echoed in full.
    QTest::newRow("NUL bytes after the closing brace") << qs(valid + std::string(3, '\0'))
                                                       << "invalid JSON: a NUL byte follows the end of the JSON value";
    QTest::newRow("a NUL, then more JSON") << qs(valid + std::string(1, '\0') + "{\"name\":\"other\"}")
                                           << "invalid JSON: a NUL byte follows the end of the JSON value";
    auto withShapes = [&](std::size_t count) {
        json j = baseTask();
        j["shapes"]["tests"] = json::array();
        for (std::size_t i = 0; i < count; ++i)
            j["shapes"]["tests"].push_back({{"B", 1 + i % 65536}, {"D", 1 + i % 4096}});
        return qs(j.dump());
    };
    QTest::newRow("100 001 test shapes") << withShapes(100001) // one more than the cap in docs/task-schema.md
                                         << "the task lists 100001 test shapes; a task may list at most 100000";
    json symbol = baseTask();
    symbol["symbols"][std::string(1000000, 's') + "-"] = {{"min", 1}};
    QTest::newRow("a 1 000 000-character symbol name")
        << qs(symbol.dump()) << "symbol name \"" + QString(79, 's') + "…\" (1 000 001 characters) is not an identifier";
}

void TestTask::hostileInputIsRefusedWithASentence()
{
    QFETCH(QString, text);
    QFETCH(QString, inWhy);
    QTemporaryDir dir;
    std::ofstream(fs::path(dir.path().toStdString()) / "task.json") << text.toStdString();
    auto t = loadTask(dir.path().toStdString());
    QVERIFY(!t);
    const std::string sentence = t.error().message();
    QVERIFY2(qs(t.error().why).contains(inWhy), sentence.substr(0, 2000).c_str());
    QVERIFY2(qs(t.error().file).endsWith("task.json"), sentence.substr(0, 2000).c_str());
    // One sentence, not a copy of the input (a megabyte name was repeated in full).
    QVERIFY2(sentence.size() < 1000, sentence.substr(0, 2000).c_str());
}

void TestTask::syntaxErrorNamesLineAndColumn()
{
    QTemporaryDir dir;
    std::ofstream(fs::path(dir.path().toStdString()) / "task.json") << "{\n  \"schema_version\": 1,\n  \"name\": \"x\"\n  \"oops\": 2\n}\n";
    auto t = loadTask(dir.path().toStdString());
    QVERIFY(!t);
    QVERIFY2(t.error().why.rfind("line 4, column 8: invalid JSON: syntax error while parsing object - unexpected string literal; expected '}'", 0) == 0, t.error().why.c_str());
    QCOMPARE(qs(t.error().file), QString(dir.path() + "/task.json"));
}

void TestTask::missingCandidateFile()
{
    QTemporaryDir dir;
    std::ofstream(fs::path(dir.path().toStdString()) / "task.json") << baseTask().dump();
    auto t = loadTask(dir.path().toStdString());
    QVERIFY(!t);
    QCOMPARE(qs(t.error().pointer), QStringLiteral("/candidates/0/file"));
    QVERIFY(t.error().why.find("file \"naive.cu\" does not exist in the task folder") == 0);
    std::ofstream(fs::path(dir.path().toStdString()) / "naive.cu") << "// empty\n";
    KF_VERIFY_OK(loadTask(dir.path().toStdString()));
}

// Issue 23 section 2: values that were silently accepted (and wrapped, truncated or crashed later).
void TestTask::arithmeticEdgesAreRefused_data()
{
    QTest::addColumn<QString>("patch");    // RFC 6902 JSON patch applied to the valid fixture
    QTest::addColumn<QString>("pointer");
    QTest::addColumn<QString>("inWhy");
    QTest::newRow("abs(INT64_MIN)") << R"J([{"op":"replace","path":"/candidates/0/launches/0/grid","value":["abs(-9223372036854775807 - 1)"]}])J"
                                    << "/candidates/0/launches/0/grid" << "abs(-9223372036854775808) does not fit in int64";
    QTest::newRow("1.5 for an int32 scalar") << R"J([{"op":"replace","path":"/candidates/0/launches/0/args/4","value":{"scalar":"1.5","type":"int32"}}])J"
                                             << "/candidates/0/launches/0/args/4" << "evaluates to 1.5, not an integer";
    QTest::newRow("a dim far beyond the rank") << R"J([{"op":"replace","path":"/reference","value":{"op":"softmax","inputs":["x"],"attrs":{"dim":99999999999}}}])J"
                                               << "/reference/attrs/dim" << "is not an axis of \"x\" (rank 2)";
    QTest::newRow("an element count beyond int64")
        << R"J([{"op":"remove","path":"/constraints"},{"op":"replace","path":"/symbols/D/max","value":4611686018427387904},)J"
           R"J({"op":"replace","path":"/shapes/tests/0/D","value":4611686018427387904}])J"
        << "" << "more elements than a 64-bit size can count";
}

void TestTask::arithmeticEdgesAreRefused()
{
    QFETCH(QString, patch);
    QFETCH(QString, pointer);
    QFETCH(QString, inWhy);
    json j = baseTask().patch(json::parse(patch.toStdString()));
    auto t = parseTask(j, "tasks/demo/task.json");
    QVERIFY2(!t, "the task was accepted");
    if (!pointer.isEmpty())
        QCOMPARE(qs(t.error().pointer), pointer);
    QVERIFY2(qs(t.error().why).contains(inWhy), t.error().message().c_str());
}

// Issue 23 section 5: task.json's compile.options cannot make NVRTC read or write other files.
void TestTask::compileOptionsAreWhitelisted_data()
{
    QTest::addColumn<QString>("option");
    QTest::addColumn<bool>("allowed");
    QTest::newRow("register cap") << "-maxrregcount=64" << true;
    QTest::newRow("fast math") << "--use_fast_math" << true;
    QTest::newRow("flush to zero") << "-ftz=true" << true;
    QTest::newRow("a define") << "-DTILE=32" << true;
    QTest::newRow("ptxas -O2") << "-Xptxas=-O2" << true;
    QTest::newRow("pre-include a system file") << "--pre-include=/etc/passwd" << false;
    QTest::newRow("include path /") << "-I/" << false;
    QTest::newRow("include path, long form") << "--include-path=/etc" << false;
    QTest::newRow("a timing file written anywhere") << "--time=/tmp/kf-time.csv" << false;
    QTest::newRow("the architecture (the task picks it)") << "--gpu-architecture=sm_80" << false;
    QTest::newRow("relocatable device code") << "-rdc=true" << false;
    QTest::newRow("register cap that is not a number") << "-maxrregcount=64 -I/" << false;
    QTest::newRow("a define with a space") << "-DX=1 -I/" << false;
}

void TestTask::compileOptionsAreWhitelisted()
{
    QFETCH(QString, option);
    QFETCH(bool, allowed);
    json j = baseTask();
    j["compile"]["options"] = {"-lineinfo", option.toStdString()};
    auto t = parseTask(j, "tasks/demo/task.json");
    QCOMPARE(t.ok(), allowed);
    if (allowed)
        return;
    QCOMPARE(qs(t.error().pointer), QString("/compile/options/1"));
    QVERIFY2(qs(t.error().why).contains("is not an option a task may set"), t.error().why.c_str());
    QVERIFY2(qs(t.error().why).contains("Allowed: -maxrregcount=N"), t.error().why.c_str());
}

void TestTask::bundledExamplesLoad_data()
{
    QTest::addColumn<QString>("dir");
    int n = 0;
    for (const auto& e : fs::directory_iterator(std::string(KF_SOURCE_DIR) + "/resources/examples")) {
        if (fs::exists(e.path() / "task.json")) {
            QTest::newRow(e.path().filename().c_str()) << QString::fromStdString(e.path().string());
            ++n;
        }
    }
    QVERIFY2(n >= 7, "the example workspace must hold at least seven tasks");
}

void TestTask::bundledExamplesLoad()
{
    QFETCH(QString, dir);
    auto t = loadTask(dir.toStdString());
    KF_VERIFY_OK(t);
    QVERIFY(t->candidates.size() >= 2);
    QVERIFY(!t->benchmarkShapes.empty());
    QVERIFY2(t->testShapes.size() >= 3, "tests need several shapes, including awkward sizes");
    bool awkward = false; // at least one size that is not a multiple of 32
    for (const auto& s : t->testShapes)
        for (const auto& [k, v] : s.values)
            awkward |= v % 32 != 0;
    QVERIFY2(awkward, "test shapes must include sizes that are not multiples of a tile");
    QVERIFY(!t->bytesFormula.empty());
    // Canonical JSON re-parses to the same task.
    auto again = parseTask(taskToJson(t.value()), "roundtrip", t->directory);
    KF_VERIFY_OK(again);
}

void TestTask::admits_data()
{
    QTest::addColumn<QString>("patch");    // applied to the valid fixture (B, D; B * D <= 268435456)
    QTest::addColumn<QString>("shape");    // "B=7 D=4099"
    QTest::addColumn<QString>("why");      // empty: admitted
    const char* none = "[]";
    const char* dMultipleOf4 = R"J([{"op":"add","path":"/symbols/D/multiple_of","value":4},
        {"op":"replace","path":"/shapes/tests/0/D","value":4},{"op":"replace","path":"/shapes/tests/1/D","value":4100}])J";
    QTest::newRow("inside every range") << none << "B=7 D=4099" << "";
    QTest::newRow("below min") << none << "B=0 D=4099" << "B = 0 is outside its range [1, 65536]";
    QTest::newRow("above max") << none << "B=7 D=16385" << "D = 16385 is outside its range [1, 16384]";
    QTest::newRow("a multiple") << dMultipleOf4 << "B=7 D=4096" << "";
    QTest::newRow("not a multiple") << dMultipleOf4 << "B=7 D=4098" << "D = 4098 is not a multiple of 4";
    QTest::newRow("constraint violated") << none << "B=65536 D=16384" << "violates the constraint \"B * D <= 268435456\"";
    QTest::newRow("symbol missing") << none << "B=7" << "symbol D is not bound";
}

void TestTask::admits()
{
    QFETCH(QString, patch);
    QFETCH(QString, shape);
    QFETCH(QString, why);
    auto t = parseTask(baseTask().patch(json::parse(patch.toStdString())), "task.json");
    KF_VERIFY_OK(t);
    ShapeBinding b;
    for (const QString& kv : shape.split(' '))
        b.values[kv.section('=', 0, 0).toStdString()] = kv.section('=', 1).toLongLong();
    const Result<void> r = t->admits(b);
    if (why.isEmpty()) {
        KF_VERIFY_OK(r);
        return;
    }
    QVERIFY2(!r, "an illegal shape was admitted");
    QCOMPARE(qs(r.error().why), why);
    QCOMPARE(qs(r.error().what), "check shape " + shape);
}

// What `kforge profile|verify --shrink --shape` and the workbench accept as a shape.
void TestTask::parseShapeText_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<qlonglong>("b");      // expected B and D when accepted
    QTest::addColumn<qlonglong>("d");
    QTest::addColumn<QString>("why");      // a phrase of the error; empty: accepted
    QTest::newRow("commas") << "B=7,D=4099" << 7LL << 4099LL << "";
    QTest::newRow("spaces and a tab") << " D=4099 \tB=7 " << 7LL << 4099LL << "";
    QTest::newRow("a symbol missing") << "B=7" << 0LL << 0LL << "give every symbol of the task; D is missing";
    QTest::newRow("not SYMBOL=VALUE") << "B=7,D" << 0LL << 0LL << "\"D\" is not SYMBOL=VALUE";
    QTest::newRow("not an integer") << "B=7,D=40x" << 0LL << 0LL << "\"40x\" is not an integer";
    QTest::newRow("empty value") << "B=,D=4" << 0LL << 0LL << "\"\" is not an integer";
    QTest::newRow("outside the range") << "B=7,D=16385" << 0LL << 0LL << "D = 16385 is outside its range [1, 16384]";
}

void TestTask::parseShapeText()
{
    QFETCH(QString, text);
    QFETCH(qlonglong, b);
    QFETCH(qlonglong, d);
    QFETCH(QString, why);
    auto t = parseTask(baseTask(), "task.json");
    KF_VERIFY_OK(t);
    const auto shape = kf::parseShapeText(*t, text.toStdString());
    if (why.isEmpty()) {
        KF_VERIFY_OK(shape);
        QCOMPARE(shape->values.at("B"), std::int64_t(b));
        QCOMPARE(shape->values.at("D"), std::int64_t(d));
        return;
    }
    QVERIFY2(!shape, "an illegal shape was accepted");
    QVERIFY2(qs(shape.error().why).contains(why), qPrintable(qs(shape.error().why)));
    QVERIFY2(qs(shape.error().hint).contains("SYMBOL=VALUE"), qPrintable(qs(shape.error().hint)));
}

void TestTask::totalElementsCountsEveryTensor()
{
    auto t = parseTask(baseTask(), "task.json");
    KF_VERIFY_OK(t);
    ShapeBinding b;
    b.values = {{"B", 7}, {"D", 4099}};
    QCOMPARE(t->totalElements(b), std::int64_t(7 * 4099 + 4099 + 7 * 4099)); // x, w, y
    b.values.erase("D");
    QCOMPARE(t->totalElements(b), std::int64_t(-1));
}

QTEST_GUILESS_MAIN(TestTask)
#include "tst_task.moc"
