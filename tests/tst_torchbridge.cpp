// The LibTorch side of the runner in CPU mode: input distributions (docs/verification.md rule 6) by
// their statistics and determinism, every catalog op against hand-computed values, op tapes,
// TorchScript, result copies and the sentences failures produce. The GPU server runs the same
// code in CUDA mode; nothing here needs a GPU.
#include "device/runner/TorchBridge.h"
#include "engine/protocol/VerifyReport.h"
#include "engine/task/OpCatalog.h"
#include "engine/verify/Compare.h"
#include "testutil.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <sys/stat.h>

using namespace kf;
using namespace kf::device;
using nlohmann::json;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// --- fp16 / bf16 bit conversions, so the test needs no ATen headers -------------------------

std::uint16_t toHalf(float f)
{
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    std::uint32_t mant = x & 0x7fffffu;
    const int exp = static_cast<int>((x >> 23) & 0xffu);
    if (exp == 255)
        return static_cast<std::uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
    const int e = exp - 127 + 15;
    if (e >= 31)
        return static_cast<std::uint16_t>(sign | 0x7c00u);
    if (e <= 0) { // subnormal half
        if (e < -10)
            return static_cast<std::uint16_t>(sign);
        mant |= 0x800000u;
        const int shift = 14 - e;
        std::uint32_t h = mant >> shift;
        const std::uint32_t rem = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (h & 1u)))
            ++h;
        return static_cast<std::uint16_t>(sign | h);
    }
    std::uint32_t h = (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
    const std::uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        ++h; // may carry into the exponent, which is the correct rounding
    return static_cast<std::uint16_t>(sign | h);
}

double fromHalf(std::uint16_t h)
{
    const double sign = (h & 0x8000u) ? -1.0 : 1.0;
    const int exp = (h >> 10) & 0x1f;
    const int mant = h & 0x3ff;
    if (exp == 0)
        return sign * std::ldexp(mant, -24);
    if (exp == 31)
        return mant ? kNaN : sign * kInf;
    return sign * std::ldexp(1024 + mant, exp - 25);
}

std::uint16_t toBf16(float f)
{
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    if (std::isnan(f))
        return 0x7fc0;
    x += 0x7fffu + ((x >> 16) & 1u); // round to nearest even
    return static_cast<std::uint16_t>(x >> 16);
}

double fromBf16(std::uint16_t b)
{
    std::uint32_t x = static_cast<std::uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

/// A tensor in host memory the test owns; raw() points a RawTensor at it.
struct HostTensor {
    DType dtype = DType::F32;
    std::vector<std::int64_t> extents;
    std::vector<unsigned char> bytes;

    HostTensor() = default;
    HostTensor(DType t, std::vector<std::int64_t> e) : dtype(t), extents(std::move(e))
    {
        bytes.assign(static_cast<size_t>(raw().bytes()), 0);
    }
    HostTensor(DType t, std::vector<std::int64_t> e, const std::vector<double>& values) : HostTensor(t, std::move(e))
    {
        set(values);
    }
    RawTensor raw()
    {
        RawTensor r;
        r.data = bytes.empty() ? nullptr : bytes.data();
        r.dtype = dtype;
        r.extents = extents;
        r.onDevice = false;
        return r;
    }
    size_t count() const { return bytes.size() / static_cast<size_t>(dtypeSize(dtype)); }

    void set(const std::vector<double>& v)
    {
        QVERIFY(v.size() == count());
        for (size_t i = 0; i < v.size(); ++i) {
            unsigned char* p = bytes.data() + i * static_cast<size_t>(dtypeSize(dtype));
            auto put = [p](auto value) { std::memcpy(p, &value, sizeof value); };
            switch (dtype) {
            case DType::F64: put(v[i]); break;
            case DType::F32: put(static_cast<float>(v[i])); break;
            case DType::F16: put(toHalf(static_cast<float>(v[i]))); break;
            case DType::BF16: put(toBf16(static_cast<float>(v[i]))); break;
            case DType::I64: put(static_cast<std::int64_t>(v[i])); break;
            case DType::I32: put(static_cast<std::int32_t>(v[i])); break;
            case DType::I16: put(static_cast<std::int16_t>(v[i])); break;
            case DType::I8: put(static_cast<std::int8_t>(v[i])); break;
            case DType::U8: put(static_cast<std::uint8_t>(v[i])); break;
            case DType::Bool: put(static_cast<std::uint8_t>(v[i] != 0)); break;
            }
        }
    }
    std::vector<double> values() const
    {
        std::vector<double> out(count());
        for (size_t i = 0; i < out.size(); ++i) {
            const unsigned char* p = bytes.data() + i * static_cast<size_t>(dtypeSize(dtype));
            auto get = [p](auto value) { std::memcpy(&value, p, sizeof value); return static_cast<double>(value); };
            switch (dtype) {
            case DType::F64: out[i] = get(double{}); break;
            case DType::F32: out[i] = get(float{}); break;
            case DType::F16: { std::uint16_t h; std::memcpy(&h, p, 2); out[i] = fromHalf(h); break; }
            case DType::BF16: { std::uint16_t h; std::memcpy(&h, p, 2); out[i] = fromBf16(h); break; }
            case DType::I64: out[i] = get(std::int64_t{}); break;
            case DType::I32: out[i] = get(std::int32_t{}); break;
            case DType::I16: out[i] = get(std::int16_t{}); break;
            case DType::I8: out[i] = get(std::int8_t{}); break;
            case DType::U8: out[i] = get(std::uint8_t{}); break;
            case DType::Bool: out[i] = get(std::uint8_t{}); break;
            }
        }
        return out;
    }
};

// --- tasks built in code (the loader has its own tests) ---------------------------------------

TensorSpec spec(const std::string& name, DType t)
{
    TensorSpec s;
    s.name = name;
    s.dtype = t;
    return s;
}

/// A single-op task: inputs named a, b, c in order, output y.
Task opTask(const std::string& op, const json& attrs, const std::vector<DType>& inputs, DType out)
{
    Task t;
    t.name = "op_" + op;
    OpStep s;
    s.op = op;
    s.attrs = attrs;
    s.output = "y";
    for (size_t i = 0; i < inputs.size(); ++i) {
        std::string name(1, static_cast<char>('a' + i));
        t.inputs.push_back(spec(name, inputs[i]));
        s.inputs.push_back(name);
    }
    t.outputs.push_back(spec("y", out));
    t.reference.kind = Reference::Kind::Op;
    t.reference.steps.push_back(s);
    return t;
}

std::map<std::string, RawTensor> raws(std::map<std::string, HostTensor>& m)
{
    std::map<std::string, RawTensor> r;
    for (auto& [name, t] : m)
        r[name] = t.raw();
    return r;
}

/// prepare + run + resultAsDouble(output), or the error.
Result<std::vector<double>> evaluate(const Task& t, std::map<std::string, HostTensor>& inputs, const std::string& output = "y")
{
    auto ref = TorchBridge::prepareReference(t, raws(inputs));
    if (!ref)
        return ref.error();
    if (auto r = (*ref)->run(); !r)
        return r.error();
    return (*ref)->resultAsDouble(output);
}

QString describe(const std::vector<double>& v)
{
    QStringList parts;
    for (double d : v)
        parts << QString::number(d, 'g', 10);
    return "[" + parts.join(", ") + "]";
}

/// Element-wise closeness (NaN matches NaN, infinities match exactly).
bool close(const std::vector<double>& a, const std::vector<double>& b, double tol)
{
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) || std::isnan(b[i])) {
            if (std::isnan(a[i]) != std::isnan(b[i]))
                return false;
        } else if (std::isinf(a[i]) || std::isinf(b[i])) {
            if (a[i] != b[i])
                return false;
        } else if (std::abs(a[i] - b[i]) > tol * std::max(1.0, std::abs(b[i]))) {
            return false;
        }
    }
    return true;
}

Distribution dist(Distribution::Kind k)
{
    Distribution d;
    d.kind = k;
    if (k == Distribution::Kind::MixedScales)
        d.scales = {1e-3, 1.0, 1e3};
    return d;
}

// --- the op table ------------------------------------------------------------------------------

struct In {
    DType dtype;
    std::vector<std::int64_t> shape;
    std::vector<double> values;
};
struct OpCase {
    const char* row;
    std::string op;
    json attrs;
    std::vector<In> inputs;
    DType out;
    std::vector<double> expected;
    double tol;
};

const std::vector<OpCase>& opCases()
{
    const double ln3 = std::log(3.0), e = std::exp(1.0);
    const DType f32 = DType::F32, f16 = DType::F16, i32 = DType::I32;
    static const std::vector<OpCase> cases = {
        {"add", "add", json::object(), {{f32, {3}, {1, 2, 3}}, {f32, {3}, {10, 20, 30}}}, f32, {11, 22, 33}, 0},
        {"add broadcast", "add", json::object(), {{f32, {2, 2}, {1, 2, 3, 4}}, {f32, {2}, {10, 20}}}, f32, {11, 22, 13, 24}, 0},
        {"add scalar", "add", {{"scalar", 0.5}}, {{f32, {3}, {1, 2, 3}}}, f32, {1.5, 2.5, 3.5}, 0},
        {"sub", "sub", json::object(), {{f32, {2}, {5, 6}}, {f32, {2}, {1, 8}}}, f32, {4, -2}, 0},
        {"sub int scalar stays int", "sub", {{"scalar", 2}}, {{i32, {2}, {5, 6}}}, i32, {3, 4}, 0},
        {"mul", "mul", json::object(), {{f32, {2}, {1, 2}}, {f32, {2}, {3, 4}}}, f32, {3, 8}, 0},
        {"mul scalar", "mul", {{"scalar", -2.0}}, {{f32, {2}, {1.5, 2}}}, f32, {-3, -4}, 0},
        {"div", "div", json::object(), {{f32, {2}, {1, 3}}, {f32, {2}, {2, 4}}}, f32, {0.5, 0.75}, 0},
        {"div int is true division", "div", json::object(), {{i32, {2}, {1, 3}}, {i32, {2}, {2, 4}}}, f32, {0.5, 0.75}, 0},
        {"div scalar", "div", {{"scalar", 4}}, {{f32, {2}, {1, 3}}}, f32, {0.25, 0.75}, 0},
        {"neg", "neg", json::object(), {{f32, {2}, {1, -2}}}, f32, {-1, 2}, 0},
        {"abs", "abs", json::object(), {{f32, {2}, {-1.5, 2}}}, f32, {1.5, 2}, 0},
        {"exp", "exp", json::object(), {{f32, {2}, {0, 1}}}, f32, {1, e}, 1e-6},
        {"log", "log", json::object(), {{f32, {3}, {1, e, 0}}}, f32, {0, 1, -kInf}, 1e-6},
        {"sqrt", "sqrt", json::object(), {{f32, {3}, {4, 9, -1}}}, f32, {2, 3, kNaN}, 0},
        {"rsqrt", "rsqrt", json::object(), {{f32, {2}, {4, 0.25}}}, f32, {0.5, 2}, 1e-6},
        {"tanh", "tanh", json::object(), {{f32, {2}, {0, 1}}}, f32, {0, 0.7615941559557649}, 1e-6},
        {"sigmoid", "sigmoid", json::object(), {{f32, {2}, {0, ln3}}}, f32, {0.5, 0.75}, 1e-6},
        {"relu", "relu", json::object(), {{f32, {3}, {-1, 0, 2}}}, f32, {0, 0, 2}, 0},
        {"silu", "silu", json::object(), {{f32, {3}, {0, 1, -1}}}, f32, {0, 0.7310585786300049, -0.2689414213699951}, 1e-6},
        {"gelu none (erf)", "gelu", json::object(), {{f32, {1}, {1}}}, f32, {0.8413447460685429}, 1e-6},
        {"gelu tanh", "gelu", {{"approximate", "tanh"}}, {{f32, {1}, {1}}}, f32, {0.8411919906082768}, 1e-6},
        {"softmax", "softmax", json::object(), {{f32, {2}, {0, ln3}}}, f32, {0.25, 0.75}, 1e-6},
        {"softmax dim 0", "softmax", {{"dim", 0}}, {{f32, {2, 2}, {0, 5, ln3, 5}}}, f32, {0.25, 0.5, 0.75, 0.5}, 1e-6},
        {"softmax fp16 stays fp16", "softmax", json::object(), {{f16, {2}, {0, ln3}}}, f16, {0.25, 0.75}, 1e-3},
        {"log_softmax", "log_softmax", json::object(), {{f32, {2}, {0, ln3}}}, f32, {std::log(0.25), std::log(0.75)}, 1e-6},
        {"layer_norm", "layer_norm", json::object(), {{f32, {1, 4}, {1, 2, 3, 4}}}, f32,
         {-1.3416354199689269, -0.447211806656309, 0.447211806656309, 1.3416354199689269}, 1e-5},
        {"layer_norm weight bias", "layer_norm", json::object(),
         {{f32, {1, 4}, {1, 2, 3, 4}}, {f32, {4}, {1, 1, 2, 2}}, {f32, {4}, {0, 0, 0, 1}}}, f32,
         {-1.3416354199689269, -0.447211806656309, 0.894423613312618, 3.6832708399378538}, 1e-5},
        {"layer_norm normalized_dims 2", "layer_norm", {{"normalized_dims", 2}}, {{f32, {2, 2}, {1, 2, 3, 4}}}, f32,
         {-1.3416354199689269, -0.447211806656309, 0.447211806656309, 1.3416354199689269}, 1e-5},
        {"layer_norm eps", "layer_norm", {{"eps", 1.0}}, {{f32, {1, 2}, {-1, 1}}}, f32, {-std::sqrt(0.5), std::sqrt(0.5)}, 1e-6},
        {"rms_norm", "rms_norm", {{"eps", 0.0}}, {{f32, {1, 2}, {3, 4}}}, f32, {3 / std::sqrt(12.5), 4 / std::sqrt(12.5)}, 1e-6},
        {"rms_norm weight", "rms_norm", {{"eps", 0.0}}, {{f32, {2, 2}, {3, 4, 1, 1}}, {f32, {2}, {2, 1}}}, f32,
         {6 / std::sqrt(12.5), 4 / std::sqrt(12.5), 2, 1}, 1e-6},
        {"rms_norm eps counts", "rms_norm", {{"eps", 1e-6}}, {{f32, {1, 2}, {1e-3, 1e-3}}}, f32,
         {0.7071067811865476, 0.7071067811865476}, 1e-5},
        // No eps: LibTorch uses the epsilon of the accumulation type (FLT_EPSILON for fp32).
        {"rms_norm default eps", "rms_norm", json::object(), {{f32, {1, 2}, {1e-3, 1e-3}}}, f32,
         {1e-3 / std::sqrt(1e-6 + 1.1920928955078125e-7), 1e-3 / std::sqrt(1e-6 + 1.1920928955078125e-7)}, 1e-5},
        {"matmul", "matmul", json::object(), {{f32, {2, 2}, {1, 2, 3, 4}}, {f32, {2, 2}, {5, 6, 7, 8}}}, f32, {19, 22, 43, 50}, 0},
        {"matmul 2x3 3x1", "matmul", json::object(), {{f32, {2, 3}, {1, 2, 3, 4, 5, 6}}, {f32, {3, 1}, {1, 0, -1}}}, f32, {-2, -2}, 0},
        {"matmul fp16", "matmul", json::object(), {{f16, {2, 2}, {1, 2, 3, 4}}, {f16, {2, 2}, {5, 6, 7, 8}}}, f16, {19, 22, 43, 50}, 0},
        {"bmm", "bmm", json::object(), {{f32, {2, 1, 2}, {1, 2, 5, 6}}, {f32, {2, 2, 1}, {3, 4, 7, 8}}}, f32, {11, 83}, 0},
        {"transpose", "transpose", {{"dim0", 0}, {"dim1", 1}}, {{f32, {2, 3}, {1, 2, 3, 4, 5, 6}}}, f32, {1, 4, 2, 5, 3, 6}, 0},
        {"transpose negative dims", "transpose", {{"dim0", -1}, {"dim1", -2}}, {{f32, {2, 3}, {1, 2, 3, 4, 5, 6}}}, f32, {1, 4, 2, 5, 3, 6}, 0},
        {"permute", "permute", {{"dims", {2, 0, 1}}}, {{f32, {2, 1, 3}, {1, 2, 3, 4, 5, 6}}}, f32, {1, 4, 2, 5, 3, 6}, 0},
        {"sum all", "sum", json::object(), {{f32, {2, 2}, {1, 2, 3, 4}}}, f32, {10}, 0},
        {"sum dim 1", "sum", {{"dim", 1}}, {{f32, {2, 2}, {1, 2, 3, 4}}}, f32, {3, 7}, 0},
        {"sum dim 0 keepdim", "sum", {{"dim", 0}, {"keepdim", true}}, {{f32, {2, 2}, {1, 2, 3, 4}}}, f32, {4, 6}, 0},
        {"sum int32 cast back from int64", "sum", {{"dim", -1}}, {{i32, {2, 2}, {1, 2, 3, 4}}}, i32, {3, 7}, 0},
        {"mean all", "mean", json::object(), {{f32, {2, 2}, {1, 2, 3, 4}}}, f32, {2.5}, 0},
        {"mean dim 0", "mean", {{"dim", 0}}, {{f32, {2, 2}, {1, 2, 3, 4}}}, f32, {2, 3}, 0},
        {"amax all", "amax", json::object(), {{f32, {2, 2}, {1, 4, 3, 2}}}, f32, {4}, 0},
        {"amax dim 1", "amax", {{"dim", 1}}, {{f32, {2, 2}, {1, 4, 3, 2}}}, f32, {4, 3}, 0},
        {"cumsum", "cumsum", {{"dim", 0}}, {{f32, {4}, {1, 2, 3, 4}}}, f32, {1, 3, 6, 10}, 0},
        {"cumsum dim 1", "cumsum", {{"dim", 1}}, {{f32, {2, 2}, {1, 2, 3, 4}}}, f32, {1, 3, 3, 7}, 0},
        {"to fp16", "to", {{"dtype", "fp16"}}, {{f32, {2}, {1.5, 2}}}, f16, {1.5, 2}, 0},
        {"to int32 truncates", "to", {{"dtype", "int32"}}, {{f32, {2}, {1.7, -1.7}}}, i32, {1, -1}, 0},
        {"clone", "clone", json::object(), {{f32, {3}, {1, 2, 3}}}, f32, {1, 2, 3}, 0},
        {"output cast to declared dtype", "mul", json::object(), {{f32, {2}, {1.5, 2}}, {f32, {2}, {2, 2}}}, f16, {3, 4}, 0},
    };
    return cases;
}

Task taskFor(const OpCase& c)
{
    std::vector<DType> types;
    for (const auto& in : c.inputs)
        types.push_back(in.dtype);
    return opTask(c.op, c.attrs, types, c.out);
}

std::map<std::string, HostTensor> inputsFor(const OpCase& c)
{
    std::map<std::string, HostTensor> m;
    for (size_t i = 0; i < c.inputs.size(); ++i)
        m[std::string(1, static_cast<char>('a' + i))] = HostTensor(c.inputs[i].dtype, c.inputs[i].shape, c.inputs[i].values);
    return m;
}
} // namespace

class TestTorchBridge : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cudaRefusedWithoutGpu();
    void distributions_data();
    void distributions();
    void determinism_data();
    void determinism();
    void halfNeverOverflows_data();
    void halfNeverOverflows();
    void fillEdgeShapes();
    void fillErrors_data();
    void fillErrors();
    void ops_data();
    void ops();
    void everyCatalogOpIsCovered();
    void geluVariantsDiffer();
    void resultsNeverAliasInputs();
    void runTwiceReplacesResults();
    void tapeEqualsOpsByHand();
    void torchScript();
    void torchScriptErrors();
    void copyResultsTo();
    void goldenIsFloat64();
    void goldenTorchScript();
    void judgeAgreesWithClassify_data();
    void judgeAgreesWithClassify();
    void fusedMoreAccurateKernelPasses();
    void precisionDowngradeFails();
    void runsAndNegativeControlAgreeWithHost();
    void fingerprintSeesEveryByte_data();
    void fingerprintSeesEveryByte();
    void errors_data();
    void errors();
    void inputErrors();
};

void TestTorchBridge::initTestCase()
{
    KF_VERIFY_OK(TorchBridge::init(false));
    QVERIFY(TorchBridge::torchVersion().starts_with("2."));
    QCOMPARE(TorchBridge::currentStream(), nullptr); // CPU mode has no stream
    TorchBridge::synchronize();                      // and synchronising is a no-op
}

void TestTorchBridge::cudaRefusedWithoutGpu()
{
    if (TorchBridge::cudaAvailable())
        QSKIP("this machine has a GPU; the GPU suite covers CUDA mode");
    auto r = TorchBridge::init(true);
    QVERIFY(!r);
    QVERIFY2(qs(r.error().message()).startsWith("LibTorch " + qs(TorchBridge::torchVersion()) + " sees no CUDA device"),
             r.error().message().c_str());
    QCOMPARE(TorchBridge::currentStream(), nullptr); // still CPU mode
}

// --- distributions -----------------------------------------------------------------------------

void TestTorchBridge::distributions_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("dtype");
    using K = Distribution::Kind;
    for (K k : {K::Normal, K::Uniform, K::HeavyTailed, K::MixedScales, K::Special})
        for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64})
            QTest::addRow("%s/%s", distributionKindName(k).data(), dtypeName(t).data()) << int(k) << int(t);
    for (DType t : {DType::I32, DType::I64, DType::I16, DType::I8, DType::U8, DType::Bool, DType::F32})
        QTest::addRow("int_range/%s", dtypeName(t).data()) << int(K::IntRange) << int(t);
}

void TestTorchBridge::distributions()
{
    QFETCH(int, kind);
    QFETCH(int, dtype);
    const auto k = static_cast<Distribution::Kind>(kind);
    const auto t = static_cast<DType>(dtype);
    const std::int64_t rows = 1000, cols = 100, n = rows * cols;
    HostTensor x(t, {rows, cols});
    Distribution d = dist(k);
    if (k == Distribution::Kind::Uniform)
        d.low = 2, d.high = 5;
    if (k == Distribution::Kind::Special)
        d.specialValues = {kNaN, kInf, -kInf}, d.fraction = 0.01;
    if (k == Distribution::Kind::IntRange) {
        d.low = t == DType::Bool ? 0 : (t == DType::U8 ? 0 : -3);
        d.high = t == DType::Bool ? 1 : 7;
    }
    KF_VERIFY_OK(TorchBridge::fillInput(x.raw(), d, 1234));
    const std::vector<double> v = x.values();

    double sum = 0, sq = 0, lo = kInf, hi = -kInf;
    std::int64_t finite = 0;
    for (double e : v)
        if (std::isfinite(e)) {
            ++finite, sum += e, sq += e * e;
            lo = std::min(lo, e), hi = std::max(hi, e);
        }
    const double mean = sum / double(finite), sd = std::sqrt(sq / double(finite) - mean * mean);
    const QString stats = QString("mean %1 std %2 min %3 max %4").arg(mean).arg(sd).arg(lo).arg(hi);

    switch (k) {
    case Distribution::Kind::Normal:
        QCOMPARE(finite, n);
        QVERIFY2(std::abs(mean) < 0.02 && std::abs(sd - 1) < 0.02, qPrintable(stats));
        break;
    case Distribution::Kind::Uniform:
        QCOMPARE(finite, n);
        QVERIFY2(lo >= 2 && hi <= 5, qPrintable(stats));
        QVERIFY2(lo < 2.01 && hi > 4.99 && std::abs(mean - 3.5) < 0.03, qPrintable(stats));
        QVERIFY2(std::abs(sd - 3 / std::sqrt(12.0)) < 0.02, qPrintable(stats));
        break;
    case Distribution::Kind::HeavyTailed: {
        QCOMPARE(finite, n);
        // Student-t with 3 dof: P(|x| > 3) = 5.8 % (a normal has 0.27 %), median |x| = 0.765.
        std::int64_t tail = std::count_if(v.begin(), v.end(), [](double e) { return std::abs(e) > 3; });
        std::vector<double> a(v.size());
        std::transform(v.begin(), v.end(), a.begin(), [](double e) { return std::abs(e); });
        std::nth_element(a.begin(), a.begin() + n / 2, a.end());
        QVERIFY2(tail > n * 0.045 && tail < n * 0.07, qPrintable(stats + QString(" tail %1").arg(tail)));
        QVERIFY2(std::abs(a[size_t(n / 2)] - 0.765) < 0.03, qPrintable(QString("median |x| %1").arg(a[size_t(n / 2)])));
        break;
    }
    case Distribution::Kind::MixedScales: {
        QCOMPARE(finite, n);
        // Every row's RMS is one of the scales (100 normals: within a factor 2; the scales are
        // 1000x apart), and all occur.
        std::map<int, int> seen;
        for (std::int64_t r = 0; r < rows; ++r) {
            double s2 = 0;
            for (std::int64_t c = 0; c < cols; ++c)
                s2 += v[size_t(r * cols + c)] * v[size_t(r * cols + c)];
            const double rms = std::sqrt(s2 / double(cols));
            int which = -1;
            for (int i = 0; i < 3; ++i)
                if (rms > d.scales[size_t(i)] / 2 && rms < d.scales[size_t(i)] * 2)
                    which = i;
            QVERIFY2(which >= 0, qPrintable(QString("row %1 has rms %2").arg(r).arg(rms)));
            ++seen[which];
        }
        QCOMPARE(seen.size(), size_t(3));
        for (auto [i, count] : seen)
            QVERIFY2(count > 250, qPrintable(QString("scale %1 on %2 rows").arg(d.scales[size_t(i)]).arg(count)));
        break;
    }
    case Distribution::Kind::Special: {
        // Exactly round(fraction * n) specials, cycling through the values; the rest is normal.
        std::int64_t nan = 0, pinf = 0, ninf = 0;
        for (double e : v)
            nan += std::isnan(e), pinf += e == kInf, ninf += e == -kInf;
        QCOMPARE(nan + pinf + ninf, std::int64_t(1000));
        QVERIFY(nan >= 333 && pinf >= 333 && ninf >= 333);
        QVERIFY2(std::abs(mean) < 0.02 && std::abs(sd - 1) < 0.02, qPrintable(stats));
        break;
    }
    case Distribution::Kind::IntRange: {
        std::set<double> distinct(v.begin(), v.end());
        for (double e : v)
            QVERIFY2(e == std::floor(e) && e >= d.low && e <= d.high, qPrintable(QString("value %1").arg(e)));
        // Inclusive at both ends, and every value in between occurs.
        QCOMPARE(int(distinct.size()), int(d.high - d.low + 1));
        QCOMPARE(*distinct.begin(), d.low);
        QCOMPARE(*distinct.rbegin(), d.high);
        if (t == DType::Bool) {
            // Stored bytes are 0 or 1 (a bool other than that is undefined behaviour in a kernel).
            for (unsigned char b : x.bytes)
                QVERIFY(b == 0 || b == 1);
            QVERIFY2(std::abs(mean - 0.5) < 0.01, qPrintable(stats));
        }
        break;
    }
    }
}

void TestTorchBridge::determinism_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("dtype");
    using K = Distribution::Kind;
    for (K k : {K::Normal, K::Uniform, K::HeavyTailed, K::MixedScales, K::Special})
        for (DType t : {DType::F32, DType::F16, DType::BF16})
            QTest::addRow("%s/%s", distributionKindName(k).data(), dtypeName(t).data()) << int(k) << int(t);
    QTest::addRow("int_range/int32") << int(K::IntRange) << int(DType::I32);
    QTest::addRow("int_range/bool") << int(K::IntRange) << int(DType::Bool);
}

void TestTorchBridge::determinism()
{
    QFETCH(int, kind);
    QFETCH(int, dtype);
    const auto t = static_cast<DType>(dtype);
    Distribution d = dist(static_cast<Distribution::Kind>(kind));
    if (d.kind == Distribution::Kind::Special)
        d.specialValues = {kNaN, 7.0};
    if (d.kind == Distribution::Kind::IntRange)
        d.low = t == DType::Bool ? 0 : -100, d.high = t == DType::Bool ? 1 : 100;
    HostTensor a(t, {37, 129}), b(t, {37, 129}), c(t, {37, 129});
    KF_VERIFY_OK(TorchBridge::fillInput(a.raw(), d, 42));
    KF_VERIFY_OK(TorchBridge::fillInput(b.raw(), d, 42));
    KF_VERIFY_OK(TorchBridge::fillInput(c.raw(), d, 43));
    QVERIFY2(a.bytes == b.bytes, "the same seed must give the same bytes");
    QVERIFY2(a.bytes != c.bytes, "a different seed must give different values");
}

void TestTorchBridge::halfNeverOverflows_data()
{
    QTest::addColumn<int>("dtype");
    QTest::addColumn<int>("kind");
    QTest::addColumn<double>("param");
    using K = Distribution::Kind;
    QTest::newRow("fp16 heavy_tailed default") << int(DType::F16) << int(K::HeavyTailed) << 0.0;
    QTest::newRow("fp16 heavy_tailed dof 0.3") << int(DType::F16) << int(K::HeavyTailed) << 0.3;
    QTest::newRow("bf16 heavy_tailed dof 0.05") << int(DType::BF16) << int(K::HeavyTailed) << 0.05;
    QTest::newRow("fp32 heavy_tailed dof 0.05") << int(DType::F32) << int(K::HeavyTailed) << 0.05;
    QTest::newRow("fp16 mixed_scales default") << int(DType::F16) << int(K::MixedScales) << 0.0;
    QTest::newRow("fp16 mixed_scales 1e6") << int(DType::F16) << int(K::MixedScales) << 1e6;
    QTest::newRow("fp16 normal std 1e6") << int(DType::F16) << int(K::Normal) << 1e6;
    QTest::newRow("fp16 uniform to 1e9") << int(DType::F16) << int(K::Uniform) << 1e9;
    QTest::newRow("fp16 special 1e9") << int(DType::F16) << int(K::Special) << 1e9;
}

void TestTorchBridge::halfNeverOverflows()
{
    QFETCH(int, dtype);
    QFETCH(int, kind);
    QFETCH(double, param);
    const auto t = static_cast<DType>(dtype);
    Distribution d = dist(static_cast<Distribution::Kind>(kind));
    if (param != 0) {
        d.dof = param;
        d.scales = {param};
        d.std = param;
        d.low = -param, d.high = param;
        d.specialValues = {param};
        d.fraction = 0.5;
    }
    HostTensor x(t, {64, 1000});
    KF_VERIFY_OK(TorchBridge::fillInput(x.raw(), d, 7));
    double biggest = 0;
    for (double e : x.values()) {
        QVERIFY2(std::isfinite(e), "a draw overflowed to a non-finite value");
        biggest = std::max(biggest, std::abs(e));
    }
    // Clamped to the largest finite value, not merely below it by luck.
    if (param >= 1e6 && t == DType::F16)
        QCOMPARE(biggest, 65504.0);
}

void TestTorchBridge::fillEdgeShapes()
{
    // A 0-d tensor, a 1-d one (one row for mixed_scales) and an empty one.
    HostTensor scalar(DType::F32, {});
    KF_VERIFY_OK(TorchBridge::fillInput(scalar.raw(), dist(Distribution::Kind::MixedScales), 1));
    QVERIFY(std::isfinite(scalar.values()[0]) && scalar.values()[0] != 0);
    HostTensor vec(DType::F16, {17});
    Distribution sp = dist(Distribution::Kind::Special);
    sp.specialValues = {kNaN};
    sp.fraction = 0.001; // rounds to 0 elements of 17, but at least one is always placed
    KF_VERIFY_OK(TorchBridge::fillInput(vec.raw(), sp, 1));
    auto v = vec.values();
    QCOMPARE(std::count_if(v.begin(), v.end(), [](double e) { return std::isnan(e); }), std::ptrdiff_t(1));
    HostTensor empty(DType::F32, {0, 5});
    KF_VERIFY_OK(TorchBridge::fillInput(empty.raw(), dist(Distribution::Kind::Normal), 1));
    // Special values outside the fp16 range stay infinite only when they are infinite.
    HostTensor h(DType::F16, {100});
    sp.specialValues = {kInf, 1e9};
    sp.fraction = 1.0;
    KF_VERIFY_OK(TorchBridge::fillInput(h.raw(), sp, 3));
    auto hv = h.values();
    QCOMPARE(std::count(hv.begin(), hv.end(), kInf), std::ptrdiff_t(50));
    QCOMPARE(std::count(hv.begin(), hv.end(), 65504.0), std::ptrdiff_t(50));
}

void TestTorchBridge::fillErrors_data()
{
    QTest::addColumn<int>("dtype");
    QTest::addColumn<int>("kind");
    QTest::addColumn<double>("low");
    QTest::addColumn<double>("high");
    QTest::addColumn<QString>("message");
    using K = Distribution::Kind;
    QTest::newRow("normal into int32") << int(DType::I32) << int(K::Normal) << 0.0 << 0.0
                                       << "distribution normal needs a floating dtype (use {\"kind\": \"int_range\"";
    QTest::newRow("int8 range outside int8") << int(DType::I8) << int(K::IntRange) << 300.0 << 400.0
                                             << "holds no int8 value";
}

void TestTorchBridge::fillErrors()
{
    QFETCH(int, dtype);
    QFETCH(int, kind);
    QFETCH(double, low);
    QFETCH(double, high);
    QFETCH(QString, message);
    HostTensor x(static_cast<DType>(dtype), {4});
    Distribution d = dist(static_cast<Distribution::Kind>(kind));
    d.low = low, d.high = high;
    auto r = TorchBridge::fillInput(x.raw(), d, 1);
    QVERIFY(!r);
    QVERIFY2(qs(r.error().message()).contains(message), r.error().message().c_str());
}

// --- catalog ops -------------------------------------------------------------------------------

void TestTorchBridge::ops_data()
{
    QTest::addColumn<int>("index");
    for (size_t i = 0; i < opCases().size(); ++i)
        QTest::newRow(opCases()[i].row) << int(i);
}

void TestTorchBridge::ops()
{
    QFETCH(int, index);
    const OpCase& c = opCases()[size_t(index)];
    auto inputs = inputsFor(c);
    auto got = evaluate(taskFor(c), inputs);
    KF_VERIFY_OK(got);
    QVERIFY2(close(*got, c.expected, c.tol), qPrintable("got " + describe(*got) + ", expected " + describe(c.expected)));
}

void TestTorchBridge::everyCatalogOpIsCovered()
{
    std::set<std::string> tested;
    for (const auto& c : opCases())
        tested.insert(c.op);
    for (const auto& op : opCatalog())
        QVERIFY2(tested.count(std::string(op.name)), qPrintable("catalog op " + qs(std::string(op.name)) + " has no test row"));
}

void TestTorchBridge::geluVariantsDiffer()
{
    std::map<std::string, HostTensor> in{{"a", HostTensor(DType::F32, {1}, {1.0})}};
    auto exact = evaluate(opTask("gelu", {{"approximate", "none"}}, {DType::F32}, DType::F32), in);
    auto approx = evaluate(opTask("gelu", {{"approximate", "tanh"}}, {DType::F32}, DType::F32), in);
    KF_VERIFY_OK(exact);
    KF_VERIFY_OK(approx);
    QVERIFY(std::abs((*exact)[0] - (*approx)[0]) > 1e-4);
}

void TestTorchBridge::resultsNeverAliasInputs()
{
    // A transpose over a size-1 dim, a same-dtype `to` and clone are views or no-ops in PyTorch;
    // the reference still produces fresh memory, so the baseline does the work a kernel does.
    struct Row {
        std::string op;
        json attrs;
        std::vector<std::int64_t> shape;
    };
    for (const Row& r : {Row{"transpose", {{"dim0", 0}, {"dim1", 1}}, {1, 3}}, Row{"to", {{"dtype", "fp32"}}, {3}},
                         Row{"clone", json::object(), {3}}, Row{"permute", {{"dims", {1, 0}}}, {3, 1}}}) {
        std::map<std::string, HostTensor> in{{"a", HostTensor(DType::F32, r.shape, {1, 2, 3})}};
        auto ref = TorchBridge::prepareReference(opTask(r.op, r.attrs, {DType::F32}, DType::F32), raws(in));
        KF_VERIFY_OK(ref);
        KF_VERIFY_OK((*ref)->run());
        in["a"].set({9, 9, 9});
        auto v = (*ref)->resultAsDouble("y");
        KF_VERIFY_OK(v);
        QVERIFY2(*v == std::vector<double>({1, 2, 3}), qPrintable(qs(r.op) + " result aliases its input"));
    }
}

void TestTorchBridge::runTwiceReplacesResults()
{
    std::map<std::string, HostTensor> in{{"a", HostTensor(DType::F32, {2}, {1, 2})}};
    auto ref = TorchBridge::prepareReference(opTask("mul", {{"scalar", 10}}, {DType::F32}, DType::F32), raws(in));
    KF_VERIFY_OK(ref);
    KF_VERIFY_OK((*ref)->run());
    in["a"].set({3, 4}); // the reference reads the caller's memory each run (new inputs per sample)
    KF_VERIFY_OK((*ref)->run());
    auto v = (*ref)->resultAsDouble("y");
    KF_VERIFY_OK(v);
    QCOMPARE(*v, std::vector<double>({30, 40}));
}

void TestTorchBridge::tapeEqualsOpsByHand()
{
    const std::vector<std::int64_t> shape{3, 5};
    std::map<std::string, HostTensor> in{{"x", HostTensor(DType::F32, shape)},
                                         {"residual", HostTensor(DType::F32, shape)},
                                         {"w", HostTensor(DType::F32, {5})}};
    KF_VERIFY_OK(TorchBridge::fillInput(in["x"].raw(), dist(Distribution::Kind::Normal), 1));
    KF_VERIFY_OK(TorchBridge::fillInput(in["residual"].raw(), dist(Distribution::Kind::Normal), 2));
    KF_VERIFY_OK(TorchBridge::fillInput(in["w"].raw(), dist(Distribution::Kind::Uniform), 3));

    Task tape;
    tape.name = "add_rms_norm";
    tape.inputs = {spec("x", DType::F32), spec("residual", DType::F32), spec("w", DType::F32)};
    tape.outputs = {spec("h", DType::F32), spec("y", DType::F32)}; // both are results
    tape.reference.kind = Reference::Kind::Tape;
    tape.reference.steps = {OpStep{"add", {"x", "residual"}, json::object(), "h"},
                            OpStep{"rms_norm", {"h", "w"}, {{"eps", 1e-6}}, "y"}};
    auto h = evaluate(tape, in, "h");
    auto y = evaluate(tape, in, "y");
    KF_VERIFY_OK(h);
    KF_VERIFY_OK(y);

    // By hand, in double: h = x + residual; y = h / sqrt(mean(h^2) + eps) * w.
    auto x = in["x"].values(), r = in["residual"].values(), w = in["w"].values();
    std::vector<double> hh(x.size()), yy(x.size());
    for (size_t i = 0; i < x.size(); ++i)
        hh[i] = x[i] + r[i];
    for (size_t row = 0; row < 3; ++row) {
        double ms = 0;
        for (size_t c = 0; c < 5; ++c)
            ms += hh[row * 5 + c] * hh[row * 5 + c] / 5;
        for (size_t c = 0; c < 5; ++c)
            yy[row * 5 + c] = hh[row * 5 + c] / std::sqrt(ms + 1e-6) * w[c];
    }
    QVERIFY2(close(*h, hh, 1e-6), qPrintable(describe(*h) + " vs " + describe(hh)));
    QVERIFY2(close(*y, yy, 1e-5), qPrintable(describe(*y) + " vs " + describe(yy)));

    // The same two steps as separate single-op references give the same values.
    std::map<std::string, HostTensor> addIn{{"a", in["x"]}, {"b", in["residual"]}};
    auto added = evaluate(opTask("add", json::object(), {DType::F32, DType::F32}, DType::F32), addIn);
    KF_VERIFY_OK(added);
    std::map<std::string, HostTensor> normIn{{"a", HostTensor(DType::F32, shape, *added)}, {"b", in["w"]}};
    auto normed = evaluate(opTask("rms_norm", {{"eps", 1e-6}}, {DType::F32, DType::F32}, DType::F32), normIn);
    KF_VERIFY_OK(normed);
    QVERIFY(close(*normed, *y, 0));
}

// --- TorchScript -------------------------------------------------------------------------------

namespace {
/// tests/data/torchbridge_ref.pt (made by torchbridge_ref.py): (x * w + 1, x.sum(-1)).
Task scriptTask(const std::string& file, int outputs)
{
    Task t;
    t.name = "scripted";
    t.directory = KF_TEST_DATA_DIR;
    t.inputs = {spec("x", DType::F32), spec("w", DType::F32)};
    t.outputs.push_back(spec("y", DType::F32));
    if (outputs > 1)
        t.outputs.push_back(spec("s", DType::F64)); // cast from the module's fp32
    t.reference.kind = Reference::Kind::TorchScript;
    t.reference.torchscript = file;
    t.reference.scriptInputs = {"x", "w"};
    return t;
}
} // namespace

void TestTorchBridge::torchScript()
{
    std::map<std::string, HostTensor> in{{"x", HostTensor(DType::F32, {2, 2}, {1, 2, 3, 4})},
                                         {"w", HostTensor(DType::F32, {2}, {10, 100})}};
    auto ref = TorchBridge::prepareReference(scriptTask("torchbridge_ref.pt", 2), raws(in));
    KF_VERIFY_OK(ref);
    KF_VERIFY_OK((*ref)->run());
    auto y = (*ref)->resultAsDouble("y");
    auto s = (*ref)->resultAsDouble("s");
    KF_VERIFY_OK(y);
    KF_VERIFY_OK(s);
    QCOMPARE(*y, std::vector<double>({11, 201, 31, 401}));
    QCOMPARE(*s, std::vector<double>({3, 7}));
    HostTensor sOut(DType::F64, {2});
    KF_VERIFY_OK((*ref)->copyResultsTo({{"s", sOut.raw()}}));
    QCOMPARE(sOut.values(), std::vector<double>({3, 7}));
}

void TestTorchBridge::torchScriptErrors()
{
    std::map<std::string, HostTensor> in{{"x", HostTensor(DType::F32, {2, 2}, {1, 2, 3, 4})},
                                         {"w", HostTensor(DType::F32, {2}, {10, 100})}};
    auto missing = TorchBridge::prepareReference(scriptTask("nope.pt", 2), raws(in));
    QVERIFY(!missing);
    QVERIFY2(qs(missing.error().message()).endsWith("nope.pt: the TorchScript file does not exist (save the module with torch.jit.save into the task folder)"),
             missing.error().message().c_str());

    auto notScript = TorchBridge::prepareReference(scriptTask("task_valid.json", 2), raws(in));
    QVERIFY(!notScript);
    QVERIFY2(qs(notScript.error().message()).contains("load the TorchScript reference failed: "), notScript.error().message().c_str());

    auto ref = TorchBridge::prepareReference(scriptTask("torchbridge_ref.pt", 1), raws(in));
    KF_VERIFY_OK(ref);
    auto r = (*ref)->run();
    QVERIFY(!r);
    QCOMPARE(qs(r.error().message()), QStringLiteral("reference TorchScript module returned 2 tensor(s) but the task has 1 "
                                                     "output(s); they map to the outputs in order"));

    // The module is the task's own regular file (engine/task/TaskFiles.h): a link out of the task
    // folder is refused even when it names a valid module, and a FIFO is refused unread.
    QTemporaryDir tmp;
    const std::filesystem::path root = tmp.path().toStdString();
    std::filesystem::create_directories(root / "task");
    std::filesystem::copy_file(std::filesystem::path(KF_TEST_DATA_DIR) / "torchbridge_ref.pt", root / "outside.pt");
    std::filesystem::create_symlink(root / "outside.pt", root / "task" / "linked.pt");
    QCOMPARE(::mkfifo((root / "task" / "pipe.pt").c_str(), 0600), 0);
    for (const auto& [file, says] : {std::pair<std::string, std::string>{"linked.pt", "linked.pt is a symbolic link to " +
                                                                                        (root / "outside.pt").string() +
                                                                                        ", outside the task folder"},
                                     {"pipe.pt", "pipe.pt: it is not a regular file but a named pipe (FIFO)"}}) {
        Task t = scriptTask(file, 2);
        t.directory = root / "task";
        auto refused = TorchBridge::prepareReference(t, raws(in));
        QVERIFY2(!refused, file.c_str());
        QVERIFY2(qs(refused.error().message()).contains(qs(says)), refused.error().message().c_str());
    }

    std::map<std::string, HostTensor> bad{{"x", HostTensor(DType::F32, {2, 3})}, {"w", HostTensor(DType::F32, {2})}};
    auto ref2 = TorchBridge::prepareReference(scriptTask("torchbridge_ref.pt", 2), raws(bad));
    KF_VERIFY_OK(ref2);
    auto r2 = (*ref2)->run();
    QVERIFY(!r2);
    QVERIFY2(qs(r2.error().message()).startsWith("reference TorchScript module failed: "), r2.error().message().c_str());
}

// --- results and errors ------------------------------------------------------------------------

void TestTorchBridge::copyResultsTo()
{
    std::map<std::string, HostTensor> in{{"a", HostTensor(DType::F16, {2, 3}, {1, 2, 3, 4, 5, 6})}};
    auto ref = TorchBridge::prepareReference(opTask("transpose", {{"dim0", 0}, {"dim1", 1}}, {DType::F16}, DType::F16), raws(in));
    KF_VERIFY_OK(ref);

    HostTensor out(DType::F16, {3, 2}, {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN});
    auto early = (*ref)->copyResultsTo({{"y", out.raw()}});
    QVERIFY(!early);
    QCOMPARE(qs(early.error().message()), QStringLiteral("the reference has not produced \"y\" yet (call run() before reading results)"));

    KF_VERIFY_OK((*ref)->run());
    KF_VERIFY_OK((*ref)->copyResultsTo({{"y", out.raw()}}));
    QCOMPARE(out.values(), std::vector<double>({1, 4, 2, 5, 3, 6}));

    // A destination of another shape but the same count receives the row-major data.
    HostTensor flat(DType::F16, {6});
    KF_VERIFY_OK((*ref)->copyResultsTo({{"y", flat.raw()}}));
    QCOMPARE(flat.values(), std::vector<double>({1, 4, 2, 5, 3, 6}));

    HostTensor wrongType(DType::F32, {3, 2});
    auto r1 = (*ref)->copyResultsTo({{"y", wrongType.raw()}});
    QVERIFY(!r1);
    QCOMPARE(qs(r1.error().message()), QStringLiteral("the destination is fp32 but the reference result is fp16"));
    HostTensor wrongSize(DType::F16, {5});
    auto r2 = (*ref)->copyResultsTo({{"y", wrongSize.raw()}});
    QVERIFY(!r2);
    QCOMPARE(qs(r2.error().message()),
             QStringLiteral("the destination holds 5 elements but the reference result has 6 (shape [3, 2])"));
    auto r3 = (*ref)->copyResultsTo({{"z", out.raw()}});
    QVERIFY(!r3);
    QCOMPARE(qs(r3.error().message()), QStringLiteral("no reference output is named \"z\"; the task's outputs are: y"));
    auto r4 = (*ref)->resultAsDouble("z");
    QVERIFY(!r4);
    QCOMPARE(qs(r4.error().message()), QStringLiteral("no reference output is named \"z\"; the task's outputs are: y"));
}

void TestTorchBridge::errors_data()
{
    QTest::addColumn<QString>("op");
    QTest::addColumn<QString>("attrs");
    QTest::addColumn<int>("inputs");
    QTest::addColumn<QString>("message");
    QTest::addColumn<bool>("atRun");
    QTest::newRow("unknown op") << "frobnicate" << "{}" << 1 << "\"frobnicate\" is not a catalog op" << false;
    QTest::newRow("too many inputs") << "neg" << "{}" << 2 << "neg takes 1 input(s), got 2" << false;
    QTest::newRow("add without scalar") << "add" << "{}" << 1 << "add with one input needs a numeric attribute \"scalar\"" << false;
    QTest::newRow("add with both") << "add" << "{\"scalar\": 1}" << 2
                                   << "add takes either two inputs or one input and the attribute \"scalar\", not both" << false;
    QTest::newRow("transpose without dims") << "transpose" << "{\"dim0\": 0}" << 1 << "transpose: attribute \"dim1\" is required" << false;
    QTest::newRow("dim not an integer") << "softmax" << "{\"dim\": 0.5}" << 1 << "softmax: attribute \"dim\" must be an integer" << false;
    QTest::newRow("bad gelu") << "gelu" << "{\"approximate\": \"fast\"}" << 1
                              << "gelu: approximate must be \"none\" or \"tanh\", not \"fast\"" << false;
    QTest::newRow("bad dtype") << "to" << "{\"dtype\": \"float\"}" << 1 << "to: unknown dtype \"float\"" << false;
    QTest::newRow("matmul shapes") << "matmul" << "{}" << 2 << "reference op matmul failed: " << true;
    QTest::newRow("dim out of range") << "softmax" << "{\"dim\": 5}" << 1 << "reference op softmax failed: Dimension out of range" << true;
    QTest::newRow("normalized_dims too big") << "rms_norm" << "{\"normalized_dims\": 3}" << 1
                                             << "reference op rms_norm failed: rms_norm: normalized_dims is 3 but the input has 2 dimension(s)" << true;
}

void TestTorchBridge::errors()
{
    QFETCH(QString, op);
    QFETCH(QString, attrs);
    QFETCH(int, inputs);
    QFETCH(QString, message);
    QFETCH(bool, atRun);
    std::vector<DType> types(size_t(inputs), DType::F32);
    Task t = opTask(op.toStdString(), json::parse(attrs.toStdString()), types, DType::F32);
    std::map<std::string, HostTensor> in;
    for (int i = 0; i < inputs; ++i)
        in[std::string(1, char('a' + i))] = HostTensor(DType::F32, {2, 3}); // 2x3 @ 2x3 cannot multiply
    auto ref = TorchBridge::prepareReference(t, raws(in));
    if (!atRun) {
        QVERIFY(!ref);
        QVERIFY2(qs(ref.error().message()).startsWith(message), ref.error().message().c_str());
        return;
    }
    KF_VERIFY_OK(ref);
    auto r = (*ref)->run();
    QVERIFY(!r);
    QVERIFY2(qs(r.error().message()).startsWith(message), r.error().message().c_str());
    QVERIFY(!qs(r.error().message()).contains("Exception raised from")); // no C++ backtrace in a report
}

void TestTorchBridge::inputErrors()
{
    Task t = opTask("add", json::object(), {DType::F32, DType::F32}, DType::F32);
    std::map<std::string, HostTensor> stranger{{"a", HostTensor(DType::F32, {2})}, {"q", HostTensor(DType::F32, {2})}};
    auto r1 = TorchBridge::prepareReference(t, raws(stranger));
    QVERIFY(!r1);
    QCOMPARE(qs(r1.error().message()), QStringLiteral("\"q\" is not an input of the task"));

    std::map<std::string, HostTensor> wrongType{{"a", HostTensor(DType::F32, {2})}, {"b", HostTensor(DType::F16, {2})}};
    auto r2 = TorchBridge::prepareReference(t, raws(wrongType));
    QVERIFY(!r2);
    QCOMPARE(qs(r2.error().message()), QStringLiteral("input \"b\" is declared fp32 but was given as fp16"));

    std::map<std::string, HostTensor> missing{{"a", HostTensor(DType::F32, {2})}};
    auto r3 = TorchBridge::prepareReference(t, raws(missing));
    QVERIFY(!r3);
    QCOMPARE(qs(r3.error().message()),
             QStringLiteral("\"b\" is neither a given task input nor the output of an earlier step"));

    Task noOutput = t;
    noOutput.reference.steps[0].output = "z";
    noOutput.outputs.push_back(spec("y2", DType::F32));
    std::map<std::string, HostTensor> ok{{"a", HostTensor(DType::F32, {2})}, {"b", HostTensor(DType::F32, {2})}};
    auto r4 = TorchBridge::prepareReference(noOutput, raws(ok));
    QVERIFY(!r4);
    QCOMPARE(qs(r4.error().message()), QStringLiteral("no step produces the task output \"y\""));
}


// --- Golden results and the comparison where the data is -------------------------------------

namespace {

/// y = gelu(x + b) in fp16 as a two-step tape: LibTorch rounds x + b to fp16 before the GELU.
Task biasGeluTask(DType t)
{
    Task task;
    task.name = "bias_gelu";
    task.inputs = {spec("x", t), spec("b", t)};
    task.outputs = {spec("y", t)};
    task.outputs[0].tolerance = Tolerance::defaultFor(t);
    task.reference.kind = Reference::Kind::Tape;
    task.reference.steps = {OpStep{"add", {"x", "b"}, json::object(), "h"},
                            OpStep{"gelu", {"h"}, json::object(), "y"}};
    return task;
}

double geluExact(double v)
{
    return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
}

struct Judged {
    std::unique_ptr<TorchBridge::Reference> native, golden;
    TorchBridge::Expected expected() const { return {native.get(), golden.get(), {}}; }
};

Judged references(const Task& task, std::map<std::string, HostTensor>& in, bool withGolden)
{
    Judged j;
    auto n = TorchBridge::prepareReference(task, raws(in));
    if (!n || !(*n)->run())
        qFatal("native reference failed");
    j.native = std::move(n.value());
    if (withGolden) {
        auto g = TorchBridge::prepareReference(task, raws(in), TorchBridge::Precision::Golden);
        if (!g || !(*g)->run())
            qFatal("golden reference failed");
        j.golden = std::move(g.value());
    }
    return j;
}

/// The host judgement of every element, with classify() as the runner's documentation defines it.
OutputCheck hostJudge(const Judged& j, const TensorSpec& out, HostTensor& actual, const std::vector<unsigned char>& sentinel)
{
    auto lib = j.native->resultAsDouble(out.name);
    std::vector<double> truth = *lib;
    if (j.golden)
        truth = *j.golden->resultAsDouble(out.name);
    for (size_t i = 0; i < truth.size(); ++i)
        if (!std::isfinite(truth[i]) && std::isfinite((*lib)[i]))
            truth[i] = (*lib)[i];
    OutputCheck c;
    c.referenceRms = rmsOf(truth.data(), std::int64_t(truth.size()));
    c.atolEffective = effectiveAtol(out.tolerance, c.referenceRms);
    const int size = dtypeSize(actual.dtype);
    for (size_t i = 0; i < truth.size(); ++i) {
        std::optional<double> l;
        if (j.golden)
            l = (*lib)[i];
        const ElementVerdict v = classify(actual.dtype, actual.bytes.data() + i * size_t(size), truth[i],
                                          sentinel.empty() ? nullptr : sentinel.data(), c.atolEffective, out.tolerance.rtol, l);
        c.histogram.add(v);
        c.mismatches += v.cls != ElementClass::Ok;
        c.unwritten += v.cls == ElementClass::Unwritten;
        c.nonFiniteMismatches += v.cls == ElementClass::NonFinite;
        if (v.cls != ElementClass::Ok && v.cls != ElementClass::Unwritten && c.firstMismatches.size() < 4)
            c.firstMismatches.push_back({{std::int64_t(i)}, truth[i], v.actual, v.absError, 0});
    }
    return c;
}

} // namespace

// The golden reference computes the same function in float64: no fp16 rounding of x + b.
void TestTorchBridge::goldenIsFloat64()
{
    const std::int64_t n = 257;
    std::map<std::string, HostTensor> in{{"x", HostTensor(DType::F16, {n})}, {"b", HostTensor(DType::F16, {n})}};
    KF_VERIFY_OK(TorchBridge::fillInput(in["x"].raw(), dist(Distribution::Kind::Normal), 11));
    KF_VERIFY_OK(TorchBridge::fillInput(in["b"].raw(), dist(Distribution::Kind::Normal), 12));
    const Task task = biasGeluTask(DType::F16);
    auto golden = TorchBridge::prepareReference(task, raws(in), TorchBridge::Precision::Golden);
    KF_VERIFY_OK(golden);
    KF_VERIFY_OK((*golden)->run());
    auto g = (*golden)->resultAsDouble("y");
    auto native = evaluate(task, in);
    KF_VERIFY_OK(g);
    KF_VERIFY_OK(native);
    const auto x = in["x"].values(), b = in["b"].values();
    int differsFromNative = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const double byHand = geluExact(x[size_t(i)] + b[size_t(i)]);
        QVERIFY2(std::fabs((*g)[size_t(i)] - byHand) <= 1e-12 * std::max(1.0, std::fabs(byHand)),
                 qPrintable(QString("element %1: golden %2, by hand %3").arg(i).arg((*g)[size_t(i)]).arg(byHand)));
        differsFromNative += (*g)[size_t(i)] != (*native)[size_t(i)];
    }
    QVERIFY2(differsFromNative > n / 2, "the golden result should not be LibTorch's fp16 values");

    // An integer output of a golden reference stays what LibTorch computes natively.
    std::map<std::string, HostTensor> ints{{"a", HostTensor(DType::I32, {4}, {1, 2, 3, 4})}};
    auto sum = TorchBridge::prepareReference(opTask("cumsum", {{"dim", 0}}, {DType::I32}, DType::I64), raws(ints),
                                             TorchBridge::Precision::Golden);
    KF_VERIFY_OK(sum);
    KF_VERIFY_OK((*sum)->run());
    QCOMPARE(*(*sum)->resultAsDouble("y"), std::vector<double>({1, 3, 6, 10}));

    // runGolden(): a run golden reference for floating outputs, none (and no note) for integer ones.
    std::string note;
    QVERIFY(TorchBridge::runGolden(task, raws(in), note) != nullptr);
    QVERIFY(note.empty());
    QVERIFY(TorchBridge::runGolden(opTask("cumsum", {{"dim", 0}}, {DType::I32}, DType::I64), raws(ints), note) == nullptr);
    QVERIFY(note.empty());
}

void TestTorchBridge::goldenTorchScript()
{
    std::map<std::string, HostTensor> in{{"x", HostTensor(DType::F32, {2, 2}, {1, 2, 3, 4})},
                                         {"w", HostTensor(DType::F32, {2}, {10, 100})}};
    auto ref = TorchBridge::prepareReference(scriptTask("torchbridge_ref.pt", 2), raws(in), TorchBridge::Precision::Golden);
    KF_VERIFY_OK(ref);
    KF_VERIFY_OK((*ref)->run());
    QCOMPARE(*(*ref)->resultAsDouble("y"), std::vector<double>({11, 201, 31, 401}));
}

// The comparison on the compute device and classify() on the host give the same verdict for
// every element: counts, histogram, first mismatches.
void TestTorchBridge::judgeAgreesWithClassify_data()
{
    QTest::addColumn<int>("dtype");
    QTest::addColumn<bool>("golden");
    QTest::addColumn<QString>("damage");
    for (DType t : {DType::F32, DType::F16, DType::BF16})
        for (bool golden : {false, true})
            for (const char* damage : {"none", "scaled", "nan", "unwritten", "inf"}) {
                const std::string name = std::string(dtypeName(t)) + (golden ? " golden " : " libtorch ") + damage;
                QTest::newRow(name.c_str()) << int(t) << golden << QString(damage);
            }
}

void TestTorchBridge::judgeAgreesWithClassify()
{
    QFETCH(int, dtype);
    QFETCH(bool, golden);
    QFETCH(QString, damage);
    const DType t = DType(dtype);
    const std::vector<std::int64_t> shape{7, 37};
    const std::int64_t n = 7 * 37;
    std::map<std::string, HostTensor> in{{"x", HostTensor(t, shape)}, {"b", HostTensor(t, shape)}};
    KF_VERIFY_OK(TorchBridge::fillInput(in["x"].raw(), dist(Distribution::Kind::Normal), 21));
    KF_VERIFY_OK(TorchBridge::fillInput(in["b"].raw(), dist(Distribution::Kind::Normal), 22));
    const Task task = biasGeluTask(t);
    Judged j = references(task, in, golden);

    // The candidate: LibTorch's own values, then damaged.
    HostTensor actual(t, shape, *j.native->resultAsDouble("y"));
    std::vector<double> v = actual.values();
    const std::vector<unsigned char> sentinel = sentinelBytes(t, 0, 99);
    if (damage == "scaled")
        for (std::int64_t i = 3; i < n; i += 17)
            v[size_t(i)] *= 1.05;
    if (damage == "nan")
        v[5] = kNaN;
    if (damage == "inf")
        v[8] = -kInf;
    actual.set(v);
    if (damage == "unwritten")
        for (std::int64_t i = 40; i < 50; ++i)
            std::memcpy(actual.bytes.data() + i * dtypeSize(t), sentinel.data(), sentinel.size());

    const OutputCheck host = hostJudge(j, task.outputs[0], actual, sentinel);
    Result<OutputCheck> device = Error{};
    // Both places a comparison can run, each against classify() element by element.
    for (auto at : {TorchBridge::CompareAt::Device, TorchBridge::CompareAt::Host}) {
        const char* where = at == TorchBridge::CompareAt::Device ? "device" : "host";
        device = TorchBridge::judgeOutput(j.expected(), task.outputs[0], actual.raw(), sentinel.data(), 4, at);
        KF_VERIFY_OK(device);
        QVERIFY2(device->mismatches == host.mismatches, where);
        QVERIFY2(device->unwritten == host.unwritten, where);
        QVERIFY2(device->nonFiniteMismatches == host.nonFiniteMismatches, where);
        QVERIFY2(device->passed == (host.mismatches == 0), where);
        QVERIFY2(device->golden.available == golden, where);
        QVERIFY2(std::fabs(device->atolEffective - host.atolEffective) <= 1e-12 * std::max(1.0, host.atolEffective), where);
        QVERIFY2(device->histogram.exact == host.histogram.exact, where);
        QVERIFY2(device->histogram.below == host.histogram.below, where);
        QVERIFY2(device->histogram.above == host.histogram.above, where);
        for (int b = 0; b < ErrorHistogram::kBins; ++b)
            QVERIFY2(device->histogram.bins[b] == host.histogram.bins[b], where);
        QVERIFY2(device->firstMismatches.size() == host.firstMismatches.size(), where);
        for (size_t k = 0; k < host.firstMismatches.size(); ++k) {
            const auto& idx = device->firstMismatches[k].index;
            QCOMPARE(idx.size(), size_t(2));
            QVERIFY2(idx[0] * 37 + idx[1] == host.firstMismatches[k].index[0], where);
        }
    }
    // The golden facts agree between the two places too.
    if (golden) {
        auto onDevice = TorchBridge::judgeOutput(j.expected(), task.outputs[0], actual.raw(), sentinel.data(), 4,
                                                 TorchBridge::CompareAt::Device);
        KF_VERIFY_OK(onDevice);
        const GoldenErrors &d = onDevice->golden, &h = device->golden;
        auto near = [](double x, double y) { return x == y || std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y)); };
        QVERIFY2(near(d.candidateMaxError, h.candidateMaxError), qPrintable(QString("%1 vs %2").arg(d.candidateMaxError).arg(h.candidateMaxError)));
        QVERIFY2(near(d.candidateRmsError, h.candidateRmsError), qPrintable(QString("%1 vs %2").arg(d.candidateRmsError).arg(h.candidateRmsError)));
        QVERIFY2(near(d.libtorchMaxError, h.libtorchMaxError), "libtorch max");
        QVERIFY2(near(d.libtorchRmsError, h.libtorchRmsError), "libtorch rms");
        QCOMPARE(d.rescued, h.rescued);
    }
    if (damage == "none")
        QCOMPARE(device->mismatches, std::int64_t(0));
    else
        QVERIFY2(device->mismatches > 0, qPrintable(damage));
    if (damage == "unwritten") {
        QCOMPARE(device->firstUnwritten.size(), size_t(4));
        QCOMPARE(device->firstUnwritten.front(), std::vector<std::int64_t>({1, 3})); // flat 40 = row 1, column 3
    }
    // The axis summaries point at the damaged rows and columns only when something failed.
    if (!device->passed) {
        QCOMPARE(device->rows.count, std::int64_t(7));
        QCOMPARE(device->columns.count, std::int64_t(37));
        std::int64_t rowBad = 0, colBad = 0;
        for (auto m : device->rows.mismatches)
            rowBad += m;
        for (auto m : device->columns.mismatches)
            colBad += m;
        QCOMPARE(rowBad, device->mismatches);
        QCOMPARE(colBad, device->mismatches);
    }
}

// Issue #14's false failure: a fused fp16 bias+GELU that keeps x + b in fp32 and rounds once is
// more accurate than LibTorch's two roundings. Against LibTorch alone it fails the default fp16
// tolerance; against the golden result it passes, with its error below LibTorch's.
void TestTorchBridge::fusedMoreAccurateKernelPasses()
{
    const std::vector<std::int64_t> shape{64, 1024};
    std::map<std::string, HostTensor> in{{"x", HostTensor(DType::F16, shape)}, {"b", HostTensor(DType::F16, shape)}};
    KF_VERIFY_OK(TorchBridge::fillInput(in["x"].raw(), dist(Distribution::Kind::Normal), 31));
    KF_VERIFY_OK(TorchBridge::fillInput(in["b"].raw(), dist(Distribution::Kind::Normal), 32));
    const Task task = biasGeluTask(DType::F16);
    const auto x = in["x"].values(), b = in["b"].values();
    std::vector<double> fused(x.size());
    for (size_t i = 0; i < x.size(); ++i)
        fused[i] = geluExact(double(float(x[i]) + float(b[i])));
    HostTensor actual(DType::F16, shape, fused); // rounded to fp16 once

    Judged lib = references(task, in, false);
    auto against = TorchBridge::judgeOutput(lib.expected(), task.outputs[0], actual.raw(), nullptr, 4);
    KF_VERIFY_OK(against);
    QVERIFY2(against->mismatches > 0, "the fused kernel should fail against LibTorch's rounded result alone");

    Judged gold = references(task, in, true);
    auto judged = TorchBridge::judgeOutput(gold.expected(), task.outputs[0], actual.raw(), nullptr, 4);
    KF_VERIFY_OK(judged);
    QCOMPARE(judged->mismatches, std::int64_t(0));
    QVERIFY(judged->golden.available);
    QVERIFY2(judged->golden.ratio() < 1.0, qPrintable(QString::number(judged->golden.ratio())));
    QVERIFY(judged->golden.libtorchMaxError > 0);
    const json j = kf::protocol::toJson(*judged);
    QVERIFY(j["golden"]["available"] == json(true));
    QVERIFY(j["golden"]["error_ratio"].get<double>() < 1.0);
}

// An fp32 task computed in fp16 inside must still fail with the golden result in place.
void TestTorchBridge::precisionDowngradeFails()
{
    const std::vector<std::int64_t> shape{16, 512};
    std::map<std::string, HostTensor> in{{"x", HostTensor(DType::F32, shape)}, {"b", HostTensor(DType::F32, shape)}};
    KF_VERIFY_OK(TorchBridge::fillInput(in["x"].raw(), dist(Distribution::Kind::Normal), 41));
    KF_VERIFY_OK(TorchBridge::fillInput(in["b"].raw(), dist(Distribution::Kind::Normal), 42));
    const Task task = biasGeluTask(DType::F32);
    const auto x = in["x"].values(), b = in["b"].values();
    std::vector<double> lowered(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
        const double h = fromHalf(toHalf(float(fromHalf(toHalf(float(x[i]))) + fromHalf(toHalf(float(b[i]))))));
        lowered[i] = fromHalf(toHalf(float(geluExact(h))));
    }
    HostTensor actual(DType::F32, shape, lowered);
    Judged gold = references(task, in, true);
    auto judged = TorchBridge::judgeOutput(gold.expected(), task.outputs[0], actual.raw(), nullptr, 4);
    KF_VERIFY_OK(judged);
    QVERIFY2(judged->mismatches > 0, "fp16 arithmetic in an fp32 task must fail");
    QVERIFY(judged->golden.ratio() > 10.0);
}

void TestTorchBridge::runsAndNegativeControlAgreeWithHost()
{
    const std::vector<std::int64_t> shape{5, 41};
    std::map<std::string, HostTensor> in{{"x", HostTensor(DType::F32, shape)}, {"b", HostTensor(DType::F32, shape)}};
    KF_VERIFY_OK(TorchBridge::fillInput(in["x"].raw(), dist(Distribution::Kind::Normal), 51));
    KF_VERIFY_OK(TorchBridge::fillInput(in["b"].raw(), dist(Distribution::Kind::Normal), 52));
    const Task task = biasGeluTask(DType::F32);
    Judged j = references(task, in, true);
    const auto truth = *j.golden->resultAsDouble("y");
    HostTensor first(DType::F32, shape, truth), second(DType::F32, shape, truth);
    auto v = second.values();
    v[3] += 1.0;
    v[9] = kNaN;
    second.set(v);
    double hostDiff = 0;
    auto trial = TorchBridge::judgeTrial(j.expected(), task.outputs[0], first.raw(), second.raw(), nullptr, 4, false,
                                         TorchBridge::CompareAt::Device);
    KF_VERIFY_OK(trial);
    const std::int64_t d = trial->runDisagreements;
    const double deviceDiff = trial->runMaxAbsDiff;
    const auto h = countDisagreements(DType::F32, first.bytes.data(), second.bytes.data(), 5 * 41, task.outputs[0].tolerance,
                                      truth.data(), &hostDiff);
    QCOMPARE(d, h);
    QCOMPARE(d, std::int64_t(2));
    QCOMPARE(deviceDiff, hostDiff);

    auto nc = TorchBridge::negativeControl(j.expected(), task.outputs[0], TorchBridge::CompareAt::Device);
    KF_VERIFY_OK(nc);
    const NegativeControl hostNc = negativeControl("y", DType::F32, truth.data(), shape, task.outputs[0].tolerance);
    QCOMPARE(nc->zerosPass, hostNc.zerosPass);
    QCOMPARE(nc->constantPass, hostNc.constantPass);
    QCOMPARE(nc->constantApplicable, hostNc.constantApplicable);
    QVERIFY(std::fabs(nc->constant - hostNc.constant) < 1e-12);
    QVERIFY(nc->discriminates());
}

// The benchmark's re-checks compare inputs by keyed fingerprints instead of host copies.
void TestTorchBridge::fingerprintSeesEveryByte_data()
{
    QTest::addColumn<int>("dtype");
    QTest::addColumn<int>("elements");
    QTest::newRow("fp32 even") << int(DType::F32) << 1024;
    QTest::newRow("fp16 odd count") << int(DType::F16) << 1023;
    QTest::newRow("bf16 prime") << int(DType::BF16) << 97;
    QTest::newRow("fp64 one") << int(DType::F64) << 1;
}

void TestTorchBridge::fingerprintSeesEveryByte()
{
    QFETCH(int, dtype);
    QFETCH(int, elements);
    HostTensor t(DType(dtype), {elements});
    KF_VERIFY_OK(TorchBridge::fillInput(t.raw(), dist(Distribution::Kind::Uniform), 61));
    auto base = TorchBridge::fingerprint(t.raw(), 0x1234);
    KF_VERIFY_OK(base);
    QCOMPARE(TorchBridge::fingerprint(t.raw(), 0x1234).value(), base.value());  // deterministic
    QVERIFY(TorchBridge::fingerprint(t.raw(), 0x4321).value() != base.value()); // keyed
    for (size_t byte : {size_t(0), t.bytes.size() / 2, t.bytes.size() - 1}) {
        HostTensor changed = t;
        changed.bytes[byte] ^= 0x01;
        QVERIFY2(TorchBridge::fingerprint(changed.raw(), 0x1234).value() != base.value(), qPrintable(QString::number(byte)));
    }
    if (t.bytes.size() >= 2) { // swapping two different bytes is seen too
        HostTensor swapped = t;
        swapped.bytes[0] = 1;
        swapped.bytes[1] = 2;
        HostTensor other = swapped;
        std::swap(other.bytes[0], other.bytes[1]);
        QVERIFY(TorchBridge::fingerprint(swapped.raw(), 7).value() != TorchBridge::fingerprint(other.raw(), 7).value());
    }
}

QTEST_GUILESS_MAIN(TestTorchBridge)
#include "tst_torchbridge.moc"
