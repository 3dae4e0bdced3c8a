// engine/generate (docs/generate.md): the golden sources of the examples and the test tapes, their
// compile with NVRTC (no warning, no spill, the launch plan's arguments matching the kernel's
// parameters), the refusals word for word, writing a candidate into a task, and 400 random tapes
// that must generate deterministically into a plan the engine accepts for every shape.
#include "engine/cast/ReferenceSteps.h"
#include "engine/compile/CompileCache.h"
#include "engine/compile/Compiler.h"
#include "engine/core/FileLock.h"
#include "engine/core/Files.h"
#include "engine/generate/Generate.h"
#include "engine/task/Task.h"
#include "testutil.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace kf;
using Json = nlohmann::json;

namespace {

/// NVRTC's results for these sources, kept outside the clone (docs/test-loop.md): the key is the
/// source, the options and NVRTC's version, so a machine that ran the test before reads each
/// build back instead of compiling ~140 kernels again; a changed generator is a new key.
const kf::CompileCache& testCache()
{
    static const kf::CompileCache cache(std::filesystem::path(KF_TEST_CACHE_DIR) / "generate-compile");
    return cache;
}

const fs::path kExamples = std::string(KF_SOURCE_DIR) + "/resources/examples";
const fs::path kTapes = std::string(KF_TEST_DATA_DIR) + "/generate";

Result<gen::Generated> generateFor(const Task& task, gen::GenerateOptions options = {})
{
    auto steps = cast::referenceSteps(task);
    if (!steps)
        return steps.error();
    return gen::generateCandidate(task, *steps, options);
}

/// SplitMix64: the random tapes are the same on every machine.
struct Rng {
    std::uint64_t s;
    std::uint64_t next()
    {
        std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
    bool chance(int percent) { return below(100) < percent; }
    template <class T>
    const T& pick(const std::vector<T>& v) { return v[static_cast<size_t>(below(static_cast<int>(v.size())))]; }
};

/// A random task the generator supports: 0-3 elementwise steps, maybe one row op, 0-2 steps
/// after it, intermediates written as outputs now and then. Values stay in tame ranges (log and
/// sqrt only after abs + 1, exp only after tanh or sigmoid), as a real tape would.
Json randomTask(std::uint64_t seed)
{
    Rng r{seed};
    const std::vector<std::string> dtypes = {"fp32", "fp16", "bf16"};
    const std::string dt = r.pick(dtypes);
    const bool rank3 = r.chance(40);
    std::vector<Json> full = rank3 ? std::vector<Json>{"B", "S", "D"} : std::vector<Json>{"B", "D"};
    std::vector<Json> perRow = full;
    perRow.back() = 1;
    const std::vector<std::pair<int, int>> ranges = {{1, 1024}, {1, 65536}, {2048, 65536}, {1, 512}};
    const auto [dmin, dmax] = r.pick(ranges);
    Json t = {{"schema_version", 1}, {"name", "random_" + std::to_string(seed)}, {"architectures", {"sm_90"}}};
    t["symbols"] = {{"B", {{"min", 1}, {"max", 4096}}}, {"D", {{"min", dmin}, {"max", dmax}}}};
    if (rank3)
        t["symbols"]["S"] = {{"min", 1}, {"max", 64}};
    t["inputs"] = Json::array({{{"name", "x"}, {"dtype", dt}, {"shape", full}}});
    std::vector<std::string> operands = {"x"};
    if (r.chance(50)) {
        t["inputs"].push_back({{"name", "r"}, {"dtype", r.pick(dtypes)}, {"shape", full}});
        operands.push_back("r");
    }
    if (r.chance(50)) {
        t["inputs"].push_back({{"name", "b"}, {"dtype", dt}, {"shape", {"D"}}});
        operands.push_back("b");
    }
    if (r.chance(30)) {
        t["inputs"].push_back({{"name", "s"}, {"dtype", "fp32"}, {"shape", perRow}});
        operands.push_back("s");
    }
    Json tape = Json::array();
    std::vector<std::pair<std::string, Json>> values; // step outputs: name -> shape
    std::string cur = "x";
    int n = 0;
    bool bounded = false; // the current value lies in [-1, 1] or [0, 1]
    auto step = [&](const std::string& op, std::vector<std::string> ins, Json attrs, Json shape) {
        std::string out = "t" + std::to_string(++n);
        Json s = {{"op", op}, {"inputs", ins}, {"output", out}};
        if (!attrs.empty())
            s["attrs"] = attrs;
        tape.push_back(s);
        values.emplace_back(out, shape);
        cur = out;
    };
    auto elementwise = [&](int count, const Json& shape, bool fullRank) {
        for (int i = 0; i < count; ++i) {
            switch (r.below(fullRank ? 9 : 4)) {
            case 0: step(r.pick(std::vector<std::string>{"add", "sub", "mul"}), {cur}, {{"scalar", 0.5 + r.below(4)}}, shape); bounded = false; break;
            case 1: step(r.pick(std::vector<std::string>{"tanh", "sigmoid"}), {cur}, {}, shape); bounded = true; break;
            case 2: step(r.pick(std::vector<std::string>{"relu", "silu", "neg", "gelu"}), {cur}, {}, shape); break;
            case 3:
                if (bounded)
                    step("exp", {cur}, {}, shape);
                else
                    step("abs", {cur}, {}, shape);
                break;
            case 4:
                step("to", {cur}, {{"dtype", r.pick(dtypes)}}, shape);
                break;
            default: {
                const std::string other = r.pick(operands);
                step(r.pick(std::vector<std::string>{"add", "mul", "sub"}), {cur, other}, {}, shape);
                bounded = false;
            }
            }
        }
    };
    elementwise(r.below(4), full, true);
    Json outShape = full;
    if (r.chance(75)) {
        const std::vector<std::string> rowOps = {"softmax", "log_softmax", "rms_norm", "layer_norm", "sum", "mean", "amax"};
        const std::string op = r.pick(rowOps);
        std::vector<std::string> ins = {cur};
        Json attrs = Json::object();
        if (op == "rms_norm" || op == "layer_norm") {
            if (std::find(operands.begin(), operands.end(), "b") != operands.end() && r.chance(70)) {
                ins.push_back("b");
                if (op == "layer_norm" && r.chance(50))
                    ins.push_back("b");
            }
            if (r.chance(50))
                attrs["eps"] = 1e-5;
        } else {
            attrs["dim"] = -1;
        }
        if (op == "sum" || op == "mean" || op == "amax") {
            const bool keep = r.chance(50);
            attrs["keepdim"] = keep;
            outShape = full;
            if (keep)
                outShape.back() = 1;
            else
                outShape.erase(outShape.end() - 1);
        }
        step(op, ins, attrs, outShape);
        bounded = op == "softmax";
        // After a per-element result, epilogue steps may read the other tensors too.
        elementwise(r.below(3), outShape, outShape == Json(full));
    }
    // Outputs: the last value, and each earlier one with probability 1/4.
    Json outputs = Json::array();
    for (size_t i = 0; i + 1 < values.size(); ++i)
        if (r.chance(25))
            outputs.push_back({{"name", values[i].first}, {"dtype", r.pick(dtypes)}, {"shape", values[i].second}});
    if (values.empty())
        step("clone", {cur}, {}, full);
    outputs.push_back({{"name", values.back().first}, {"dtype", r.pick(dtypes)}, {"shape", values.back().second}});
    t["outputs"] = outputs;
    Json shapes = Json::array();
    for (int i = 0; i < 3; ++i) {
        Json s = {{"B", 1 + r.below(9)}, {"D", dmin + r.below(std::min(dmax - dmin, 5000) + 1)}};
        if (rank3)
            s["S"] = 1 + r.below(5);
        shapes.push_back(s);
    }
    t["shapes"] = {{"tests", shapes}};
    t["reference"] = {{"tape", tape}};
    t["candidates"] = Json::array({{{"file", "placeholder.cu"},
                                    {"launches", Json::array({{{"kernel", "k"}, {"grid", 1}, {"block", 32}, {"args", Json::array()}}})}}});
    return t;
}

QString readText(const fs::path& p)
{
    auto b = readFileBytes(p);
    return b ? QString::fromStdString(*b) : QString();
}

} // namespace

class TestGenerate : public QObject {
    Q_OBJECT
private slots:
    void goldenSources_data();
    void goldenSources();
    void goldenCompile_data();
    void goldenCompile();
    void refusals_data();
    void refusals();
    void torchScriptRefusalNamesTheModule();
    void corners_data();
    void corners();
    void writesIntoTheTask();
    void randomTapes();
};

void TestGenerate::goldenSources_data()
{
    QTest::addColumn<QString>("task");
    QTest::addColumn<QString>("golden");
    for (const char* e : {"vector_add", "softmax_fp32", "rms_norm_fp16", "fused_add_rms_norm_fp16", "layer_norm_bf16"})
        QTest::newRow(e) << qs((kExamples / e).string()) << qs((kTapes / "examples" / (std::string(e) + ".cu")).string());
    for (const auto& d : fs::directory_iterator(kTapes))
        if (fs::exists(d.path() / "task.json"))
            QTest::newRow(d.path().filename().string().c_str()) << qs(d.path().string()) << qs((d.path() / "generated.cu").string());
}

/// The generated source is the golden file byte for byte (KF_UPDATE_GOLDEN=1 rewrites the goldens).
/// For the test tapes the golden is the task's own candidate, and its plan the task's entry.
void TestGenerate::goldenSources()
{
    QFETCH(QString, task);
    QFETCH(QString, golden);
    auto t = loadTask(task.toStdString());
    KF_VERIFY_OK(t);
    auto g = generateFor(*t);
    KF_VERIFY_OK(g);
    if (qEnvironmentVariableIsSet("KF_UPDATE_GOLDEN"))
        KF_VERIFY_OK(writeFileAtomic(golden.toStdString(), g->source));
    QCOMPARE(qs(g->source), readText(golden.toStdString()));
    // Deterministic: a second run gives the same bytes.
    auto again = generateFor(*t);
    KF_VERIFY_OK(again);
    QVERIFY(again->source == g->source);
    if (const Candidate* c = t->findCandidate("generated.cu")) {
        auto raw = readFileBytes(t->directory / "task.json");
        KF_VERIFY_OK(raw);
        const Json doc = Json::parse(*raw);
        Json entry;
        for (const auto& e : doc["candidates"])
            if (e["file"] == "generated.cu")
                entry = e;
        QVERIFY2(entry == Json::parse(g->candidate.dump()), qPrintable(qs(entry.dump() + "\n" + g->candidate.dump())));
        // One launch; two on the split path for long rows (phase 1 writes the records phase 2 reads).
        QCOMPARE(c->launches.size(), g->candidate["launches"].size());
        QCOMPARE(c->launches.size(), size_t(c->scratch.empty() ? 1 : 2));
    }
}

void TestGenerate::goldenCompile_data()
{
    QTest::addColumn<QString>("task");
    QTest::addColumn<QString>("arch");
    for (const char* arch : {"sm_80", "sm_90"}) {
        for (const char* e : {"vector_add", "softmax_fp32", "rms_norm_fp16", "fused_add_rms_norm_fp16", "layer_norm_bf16"})
            QTest::addRow("%s %s", e, arch) << qs((kExamples / e).string()) << arch;
        for (const auto& d : fs::directory_iterator(kTapes))
            if (fs::exists(d.path() / "task.json"))
                QTest::addRow("%s %s", d.path().filename().string().c_str(), arch) << qs(d.path().string()) << arch;
    }
}

/// Compiles cleanly: no error, no warning, no spill; the plan's kernel is found and its
/// parameters take as many bytes as the plan's arguments (8 for each pointer and int64).
void TestGenerate::goldenCompile()
{
    QFETCH(QString, task);
    QFETCH(QString, arch);
    if (!nvrtcVersion())
        QSKIP("NVRTC unavailable");
    auto t = loadTask(testpaths::cloneRelative(task.toStdString()));
    KF_VERIFY_OK(t);
    auto g = generateFor(*t);
    KF_VERIFY_OK(g);
    auto r = gen::compileGenerated(*t, *g, arch.toStdString(), &testCache());
    KF_VERIFY_OK(r);
    QVERIFY2(r->success, r->log.c_str());
    QCOMPARE(r->warningCount(), 0);
    // The check needs no disassembly: none is run.
    QVERIFY(r->sass.empty());
    QCOMPARE(qs(r->sassUnavailableReason), QString("SASS not requested"));
    auto lowered = r->loweredNames.find(g->kernel);
    QVERIFY(lowered != r->loweredNames.end());
    const KernelResources* k = nullptr;
    for (const auto& kr : r->kernels)
        if (kr.name == lowered->second)
            k = &kr;
    QVERIFY(k);
    // Every kernel of the file (the split path has two) keeps its registers.
    for (const auto& kr : r->kernels)
        QVERIFY2(kr.spillStoreBytes <= 0 && kr.spillLoadBytes <= 0,
                 qPrintable(QStringLiteral("%1 spills %2 B").arg(qs(kr.name)).arg(kr.spillStoreBytes)));
    QCOMPARE(k->paramBytes, static_cast<int>(8 * g->candidate["launches"][0]["args"].size()));
}

void TestGenerate::refusals_data()
{
    QTest::addColumn<QString>("tape");      // JSON of the reference's tape
    QTest::addColumn<QString>("message");   // Error::message() after the task.json path
    QTest::newRow("matmul") << R"([{"op": "matmul", "inputs": ["x", "x"], "output": "y"}])"
                            << "at /reference/tape/0: step 1 (y = matmul(x, x)) cannot be fused: matmul is not supported";
    QTest::newRow("transpose") << R"([{"op": "transpose", "inputs": ["x"], "attrs": {"dim0": 0, "dim1": 1}, "output": "y"}])"
                               << "at /reference/tape/0: step 1 (y = transpose(x)) cannot be fused: transpose is not supported";
    QTest::newRow("cumsum after a supported step")
        << R"([{"op": "exp", "inputs": ["x"], "output": "e"}, {"op": "cumsum", "inputs": ["e"], "attrs": {"dim": -1}, "output": "y"}])"
        << "at /reference/tape/1: step 2 (y = cumsum(e)) cannot be fused: cumsum is not supported";
    QTest::newRow("sum over everything")
        << R"([{"op": "sum", "inputs": ["x"], "output": "y"}])"
        << "at /reference/tape/0: step 1 (y = sum(x)) cannot be fused: sum over all dimensions is not supported; give \"dim\": -1 (a reduction over the last dimension)";
    QTest::newRow("softmax over dim 0")
        << R"([{"op": "softmax", "inputs": ["x"], "attrs": {"dim": 0}, "output": "y"}])"
        << "at /reference/tape/0: step 1 (y = softmax(x)) cannot be fused: softmax over dim 0 is not supported; the generator reduces over the last dimension (dim -1)";
    QTest::newRow("reduce a reduced value")
        << R"([{"op": "sum", "inputs": ["x"], "attrs": {"dim": -1, "keepdim": true}, "output": "s"}, {"op": "amax", "inputs": ["s"], "attrs": {"dim": -1}, "output": "y"}])"
        << "at /reference/tape/1: step 2 (y = amax(s)) cannot be fused: it reduces s, which is already reduced to one value per row";
    QTest::newRow("norm weight of the wrong shape")
        << R"([{"op": "rms_norm", "inputs": ["x", "x"], "output": "y"}])"
        << "at /reference/tape/0: step 1 (y = rms_norm(x, x)) cannot be fused: rms_norm: x [B, D] must have the normalized shape [D]";
    QTest::newRow("output holds one value per column")
        << R"([{"op": "exp", "inputs": ["x"], "output": "e"}, {"op": "mul", "inputs": ["b"], "attrs": {"scalar": 2.0}, "output": "y"}])"
        << "at /reference: the reference cannot be fused: output y holds one value per column; the generator writes outputs over the elements or the rows of [B, D]";
}

/// One sentence at the first unsupported step, with the list of what is supported as the hint.
void TestGenerate::refusals()
{
    QFETCH(QString, tape);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const fs::path d = dir.path().toStdString();
    Json t = {{"schema_version", 1}, {"name", "refused"}, {"architectures", {"sm_90"}},
              {"symbols", {{"B", {{"min", 1}, {"max", 64}}}, {"D", {{"min", 1}, {"max", 64}}}}},
              {"inputs", {{{"name", "x"}, {"dtype", "fp32"}, {"shape", {"B", "D"}}}, {{"name", "b"}, {"dtype", "fp32"}, {"shape", {"D"}}}}},
              {"outputs", {{{"name", "y"}, {"dtype", "fp32"}, {"shape", {"B", "D"}}}}},
              {"shapes", {{"tests", {{{"B", 2}, {"D", 3}}}}}},
              {"reference", {{"tape", Json::parse(tape.toStdString())}}},
              {"candidates", {{{"file", "k.cu"}, {"launches", {{{"kernel", "k"}, {"grid", 1}, {"block", 32}, {"args", Json::array()}}}}}}}};
    if (message.contains("sum(x)") || message.contains("amax(s)"))
        t["outputs"][0]["shape"] = {"B"};
    if (message.contains("per column"))
        t["outputs"][0]["shape"] = {"D"};
    KF_VERIFY_OK(writeFileAtomic(d / "k.cu", "extern \"C\" __global__ void k() {}\n"));
    KF_VERIFY_OK(writeFileAtomic(d / "task.json", t.dump(2)));
    auto task = loadTask(d);
    KF_VERIFY_OK(task);
    auto g = generateFor(*task);
    QVERIFY(!g);
    const std::string expected = (d / "task.json").string() + ": " + message.toStdString() + " (" + gen::supportedSummary() + ")";
    QCOMPARE(qs(g.error().message()), qs(expected));
}

/// A TorchScript reference whose tape has a step the generator cannot fuse is refused like a
/// tape, naming the module's file and its code.
void TestGenerate::torchScriptRefusalNamesTheModule()
{
    QTemporaryDir dir;
    const fs::path d = dir.path().toStdString();
    fs::copy_file(fs::path(KF_TEST_DATA_DIR) / "scripttape" / "cumsum.pt", d / "ref.pt");
    Json t = {{"schema_version", 1}, {"name", "scripted"}, {"architectures", {"sm_90"}},
              {"symbols", {{"B", {{"min", 1}, {"max", 64}}}, {"D", {{"min", 1}, {"max", 64}}}}},
              {"inputs", {{{"name", "x"}, {"dtype", "fp32"}, {"shape", {"B", "D"}}}}},
              {"outputs", {{{"name", "y"}, {"dtype", "fp32"}, {"shape", {"B", "D"}}}}},
              {"shapes", {{"tests", {{{"B", 2}, {"D", 3}}}}}},
              {"reference", {{"torchscript", "ref.pt"}, {"inputs", {"x"}}}},
              {"candidates", {{{"file", "k.cu"}, {"launches", {{{"kernel", "k"}, {"grid", 1}, {"block", 32}, {"args", Json::array()}}}}}}}};
    KF_VERIFY_OK(writeFileAtomic(d / "k.cu", "extern \"C\" __global__ void k() {}\n"));
    KF_VERIFY_OK(writeFileAtomic(d / "task.json", t.dump(2)));
    auto task = loadTask(d);
    KF_VERIFY_OK(task);
    auto g = generateFor(*task);
    QVERIFY(!g);
    QCOMPARE(qs(g.error().message()), qs((d / "ref.pt").string() + ": at forward: step 1 (y = cumsum(x)) cannot be "
                                                                 "fused: cumsum is not supported (" + gen::supportedSummary() + ")"));
}

void TestGenerate::corners_data()
{
    QTest::addColumn<QString>("inputs");    // JSON
    QTest::addColumn<QString>("outputs");   // JSON
    QTest::addColumn<QString>("tape");      // JSON
    QTest::addColumn<QString>("expect");    // "source:<text>" the source contains it; "refused:<text>"
    const QString x = R"([{"name": "x", "dtype": "fp32", "shape": ["B", "D"]}])";
    QTest::newRow("outputs y and y_out: each keeps its own identifier")
        << x << R"([{"name": "y", "dtype": "fp32", "shape": ["B", "D"]}, {"name": "y_out", "dtype": "fp32", "shape": ["B", "D"]}, {"name": "s", "dtype": "fp32", "shape": ["B"]}])"
        << R"([{"op": "mul", "inputs": ["x"], "attrs": {"scalar": 2}, "output": "y"}, {"op": "mul", "inputs": ["x"], "attrs": {"scalar": 3}, "output": "y_out"}, {"op": "sum", "inputs": ["x"], "attrs": {"dim": -1}, "output": "s"}])"
        << "source:kf::store_floats<W>(y_out_t + base + e, y_out_t_out);";
    QTest::newRow("softmax and log_softmax of one row")
        << x << R"([{"name": "y", "dtype": "fp32", "shape": ["B", "D"]}, {"name": "z", "dtype": "fp32", "shape": ["B", "D"]}])"
        << R"([{"op": "softmax", "inputs": ["x"], "output": "y"}, {"op": "log_softmax", "inputs": ["x"], "output": "z"}])"
        << "source:float z_cmax = z_in[0];";
    QTest::newRow("two layer_norms")
        << x << R"([{"name": "y", "dtype": "fp32", "shape": ["B", "D"]}])"
        << R"([{"op": "layer_norm", "inputs": ["x"], "output": "a"}, {"op": "layer_norm", "inputs": ["a"], "attrs": {"eps": 1e-50}, "output": "y"}])"
        << "source:constexpr float kStep2Eps = 0.0f;";
    QTest::newRow("a per-row step no output needs")
        << x << R"([{"name": "y", "dtype": "fp32", "shape": ["B", "D"]}])"
        << R"([{"op": "sum", "inputs": ["x"], "attrs": {"dim": -1, "keepdim": true}, "output": "s"}, {"op": "mul", "inputs": ["s"], "attrs": {"scalar": 2}, "output": "s2"}, {"op": "sub", "inputs": ["x", "s"], "output": "y"}])"
        << "source:fp32 [B, 1]  unused: no output needs it";
    QTest::newRow("a NaN in a softmax row makes the row NaN")
        << x << R"([{"name": "y", "dtype": "fp32", "shape": ["B", "D"]}])"
        << R"([{"op": "softmax", "inputs": ["x"], "output": "y"}])"
        << "source:y_tnan |= x_j != x_j;";
    QTest::newRow("a tape output is read back in its declared dtype")
        << x << R"([{"name": "h", "dtype": "fp16", "shape": ["B", "D"]}, {"name": "y", "dtype": "fp32", "shape": ["B", "D"]}])"
        << R"([{"op": "mul", "inputs": ["x"], "attrs": {"scalar": 2}, "output": "h"}, {"op": "add", "inputs": ["h", "x"], "output": "y"}])"
        << "source:const float h_j = kf::to_float(kf::from_float<__half>(x_j * kStep1Scalar));";
    QTest::newRow("a rounded mean read by a later step")
        << R"([{"name": "x", "dtype": "fp16", "shape": ["B", "D"]}])"
        << R"([{"name": "m", "dtype": "fp16", "shape": ["B", 1]}, {"name": "y", "dtype": "fp16", "shape": ["B", "D"]}])"
        << R"([{"op": "mean", "inputs": ["x"], "attrs": {"dim": -1, "keepdim": true}, "output": "m"}, {"op": "sub", "inputs": ["x", "m"], "output": "y"}])"
        << "source:const float m_r = kf::to_float(kf::from_float<__half>(row_sum<Block>(m_acc) / static_cast<float>(cols)));";
    QTest::newRow("a per-row scale first")
        << R"([{"name": "s", "dtype": "fp32", "shape": ["B", 1]}, {"name": "x", "dtype": "fp32", "shape": ["B", "D"]}])"
        << R"([{"name": "y", "dtype": "fp32", "shape": ["B", "D"]}])"
        << R"([{"op": "mul", "inputs": ["s", "x"], "output": "y"}])"
        << "source:const float s_r = kf::to_float(s[i / cols]);";
    QTest::newRow("tensors named like our constants and keywords")
        << R"([{"name": "kVec", "dtype": "fp32", "shape": ["B", "D"]}, {"name": "static_cast", "dtype": "fp32", "shape": ["D"]}])"
        << R"([{"name": "row", "dtype": "fp32", "shape": ["B", "D"]}, {"name": "row_t_r", "dtype": "fp32", "shape": ["B", 1]}])"
        << R"([{"op": "add", "inputs": ["kVec", "static_cast"], "output": "row"}, {"op": "sum", "inputs": ["row"], "attrs": {"dim": -1, "keepdim": true}, "output": "row_t_r"}])"
        << "source:const float* __restrict__ t_kVec,";
    QTest::newRow("a single row: a keepdim max against a vector")
        << R"([{"name": "x", "dtype": "fp32", "shape": ["D"]}])" << R"([{"name": "y", "dtype": "fp32", "shape": ["D"]}])"
        << R"([{"op": "amax", "inputs": ["x"], "attrs": {"dim": -1, "keepdim": true}, "output": "m"}, {"op": "sub", "inputs": ["x", "m"], "output": "y"}])"
        << "source:const float y_j = x_j - m_r;";
    QTest::newRow("a reduction without keepdim against the rows")
        << R"([{"name": "x", "dtype": "fp32", "shape": ["N", "N"]}])" << R"([{"name": "y", "dtype": "fp32", "shape": ["N", "N"]}])"
        << R"([{"op": "amax", "inputs": ["x"], "attrs": {"dim": -1}, "output": "m"}, {"op": "sub", "inputs": ["x", "m"], "output": "y"}])"
        << "refused:step 2 (y = sub(x, m)) cannot be fused: m [N] holds one value per row but broadcasts as [N, N] against x [N, N]; give its reduction \"keepdim\": true";
    QTest::newRow("an outer sum of two row values")
        << x << R"([{"name": "y", "dtype": "fp32", "shape": ["B", "B"]}])"
        << R"([{"op": "sum", "inputs": ["x"], "attrs": {"dim": -1}, "output": "m1"}, {"op": "sum", "inputs": ["x"], "attrs": {"dim": -1, "keepdim": true}, "output": "m2"}, {"op": "add", "inputs": ["m1", "m2"], "output": "y"}])"
        << "refused:m1 [B] holds one value per row but broadcasts as [B, B] against m2 [B, 1]";
    QTest::newRow("a scalar beyond fp32")
        << x << R"([{"name": "y", "dtype": "fp32", "shape": ["B", "D"]}])"
        << R"([{"op": "mul", "inputs": ["x"], "attrs": {"scalar": 1e39}, "output": "y"}])"
        << "refused:the scalar 1e+39 is outside fp32's range";
}

/// Tapes at the edges of what the generator handles (each once miscompiled or refused wrongly):
/// identifiers that would clash, two statistics of one kind, dead steps, out-of-range literals,
/// NaN propagation, dtypes read back, operand order, per-row values that do not broadcast per row.
/// What generates must also compile cleanly.
void TestGenerate::corners()
{
    QFETCH(QString, inputs);
    QFETCH(QString, outputs);
    QFETCH(QString, tape);
    QFETCH(QString, expect);
    // A folder of its own per row outside the clone, the same on every run: the source file's
    // path is part of the compile cache's key, so a temporary folder would compile every row again.
    std::string tag = QTest::currentDataTag();
    std::replace_if(tag.begin(), tag.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
    const fs::path d = fs::path(KF_TEST_CACHE_DIR) / "generate-corners" / tag;
    fs::create_directories(d);
    Json t = {{"schema_version", 1}, {"name", "row"}, {"architectures", {"sm_90"}},
              {"symbols", {{"B", {{"min", 1}, {"max", 64}}}, {"D", {{"min", 1}, {"max", 4096}}}, {"N", {{"min", 1}, {"max", 64}}}}},
              {"inputs", Json::parse(inputs.toStdString())},
              {"outputs", Json::parse(outputs.toStdString())},
              {"shapes", {{"tests", {{{"B", 2}, {"D", 3}, {"N", 3}}}}}},
              {"reference", {{"tape", Json::parse(tape.toStdString())}}},
              {"candidates", {{{"file", "k.cu"}, {"launches", {{{"kernel", "k"}, {"grid", 1}, {"block", 32}, {"args", Json::array()}}}}}}}};
    KF_VERIFY_OK(writeFileAtomic(d / "k.cu", "extern \"C\" __global__ void k() {}\n"));
    KF_VERIFY_OK(writeFileAtomic(d / "task.json", t.dump(2)));
    auto task = loadTask(d);
    KF_VERIFY_OK(task);
    auto g = generateFor(*task);
    if (expect.startsWith("refused:")) {
        QVERIFY(!g);
        QVERIFY2(qs(g.error().why).contains(expect.mid(8)), g.error().why.c_str());
        return;
    }
    KF_VERIFY_OK(g);
    QVERIFY2(qs(g->source).contains(expect.mid(7)), g->source.c_str());
    QCOMPARE(qs(g->kernel), QString("generated_row_kernel")); // the task is named "row": not the helper's name
    if (!nvrtcVersion())
        return;
    auto r = gen::compileGenerated(*task, *g, "sm_90", &testCache());
    KF_VERIFY_OK(r);
    QVERIFY2(r->success && r->warningCount() == 0, r->log.c_str());
}

/// The candidate lands in the task: the source file and the plan, validated by the engine; a
/// name that is taken or not a plain file name is refused, leaving the task as it was.
void TestGenerate::writesIntoTheTask()
{
    QTemporaryDir dir;
    const fs::path d = fs::path(dir.path().toStdString()) / "softmax_fp32";
    fs::copy(kExamples / "softmax_fp32", d, fs::copy_options::recursive);
    auto t = loadTask(d);
    KF_VERIFY_OK(t);
    auto g = generateFor(*t);
    KF_VERIFY_OK(g);
    auto written = gen::addGeneratedCandidate(d, *g);
    KF_VERIFY_OK(written);
    QCOMPARE(qs(written->string()), qs((d / "generated.cu").string()));
    QCOMPARE(readText(*written), qs(g->source));
    auto reloaded = loadTask(d);
    KF_VERIFY_OK(reloaded);
    QCOMPARE(reloaded->candidates.size(), t->candidates.size() + 1);
    QVERIFY(reloaded->findCandidate("generated.cu"));

    const QString before = readText(d / "task.json");
    auto taken = gen::addGeneratedCandidate(d, *g);
    QVERIFY(!taken);
    QVERIFY2(qs(taken.error().message()).contains("generated.cu already exists in the task folder (choose another name with --name)"),
             taken.error().message().c_str());
    gen::Generated bad = *g;
    bad.candidate["file"] = "../escape.cu";
    auto refused = gen::addGeneratedCandidate(d, bad);
    QVERIFY(!refused);
    QVERIFY(qs(refused.error().message()).contains("\"../escape.cu\" is not a plain file name"));
    QCOMPARE(readText(d / "task.json"), before);
    QVERIFY(!fs::exists(d.parent_path() / "escape.cu"));
}

/// 400 random tapes: each generates, twice to the same bytes, and the plan with the source
/// written beside it passes the engine's validation, which evaluates the launch for every test
/// shape. Every 4th is compiled with NVRTC: no error, no warning.
void TestGenerate::randomTapes()
{
    // The task folder is an include directory, so its path and files are part of each build's
    // cache key: a fixed folder beside the test cache (emptied first, locked against another
    // clone's run) lets a machine that ran this before read the 100 builds back.
    const fs::path d = fs::path(KF_TEST_CACHE_DIR) / "random-tapes";
    std::error_code ec;
    fs::create_directories(d.parent_path(), ec);
    auto lock = FileLock::acquire(d.parent_path() / "random-tapes.lock", std::chrono::minutes(10));
    KF_VERIFY_OK(lock);
    fs::remove_all(d, ec);
    fs::create_directories(d, ec);
    KF_VERIFY_OK(writeFileAtomic(d / "placeholder.cu", "extern \"C\" __global__ void k() {}\n"));
    const bool nvrtc = nvrtcVersion().ok();
    int generated = 0, compiled = 0;
    for (std::uint64_t seed = 1; seed <= 400; ++seed) {
        Json tj = randomTask(seed);
        auto task = parseTask(tj, "random task " + std::to_string(seed), d);
        QVERIFY2(task, qPrintable(qs(task ? "" : task.error().message() + "\n" + tj.dump())));
        auto g = generateFor(*task);
        QVERIFY2(g, qPrintable(qs(g ? "" : g.error().message() + "\n" + tj.dump(1))));
        auto again = generateFor(*task);
        QVERIFY(again && again->source == g->source);
        KF_VERIFY_OK(writeFileAtomic(d / "generated.cu", g->source));
        Json withPlan = tj;
        withPlan["candidates"].push_back(Json::parse(g->candidate.dump()));
        auto check = parseTask(withPlan, "random task " + std::to_string(seed), d);
        QVERIFY2(check, qPrintable(qs(check ? "" : check.error().message() + "\n" + g->candidate.dump())));
        ++generated;
        if (nvrtc && seed % 4 == 0) {
            auto r = gen::compileGenerated(*task, *g, "sm_90", &testCache());
            KF_VERIFY_OK(r);
            QVERIFY2(r->success && r->warningCount() == 0, qPrintable(qs(r->log + "\n" + tj.dump(1))));
            ++compiled;
        }
    }
    QCOMPARE(generated, 400);
    qInfo("400 random tapes generated, %d compiled", compiled);
}

QTEST_GUILESS_MAIN(TestGenerate)
#include "tst_generate.moc"
