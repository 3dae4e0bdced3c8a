// The verdict arithmetic (docs/verification.md rules 2, 7, 8, 9, 10) without a GPU: each row is a way
// a kernel can be wrong, or a way a naive harness would be fooled.
#include "engine/protocol/VerifyReport.h"
#include "engine/verify/Compare.h"
#include "testutil.h"

#include <QTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace kf;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

std::vector<unsigned char> floats(const std::vector<double>& v)
{
    std::vector<unsigned char> b(v.size() * 4);
    for (size_t i = 0; i < v.size(); ++i) {
        float f = static_cast<float>(v[i]);
        std::memcpy(b.data() + i * 4, &f, 4);
    }
    return b;
}

Tolerance tol(double rtol, double atol, bool rms = true)
{
    return {rtol, atol, rms ? Tolerance::AtolMode::Rms : Tolerance::AtolMode::Absolute};
}

// fp16 bits of v, rounded to nearest (ties away); enough to build test data, and exact for
// every value fp16 holds.
std::uint16_t halfBits(double v)
{
    if (std::isnan(v))
        return 0x7e00;
    const std::uint16_t s = std::signbit(v) ? 0x8000 : 0;
    const double a = std::fabs(v);
    if (a < std::ldexp(1.0, -14)) // subnormal; 1024 ulps carry into the smallest normal
        return static_cast<std::uint16_t>(s | std::llround(std::ldexp(a, 24)));
    int e = 0;
    const double m = std::frexp(a, &e); // a = m * 2^e, m in [0.5, 1)
    int biased = e - 1 + 15;
    long long man = std::llround((2 * m - 1) * 1024);
    if (man == 1024) {
        man = 0;
        ++biased;
    }
    if (biased >= 31 || std::isinf(a))
        return static_cast<std::uint16_t>(s | 0x7c00);
    return static_cast<std::uint16_t>(s | biased << 10 | man);
}

// One element of `t` holding v (truncated to bf16, rounded to fp16/fp32).
std::vector<unsigned char> element(DType t, double v)
{
    std::vector<unsigned char> b(static_cast<size_t>(dtypeSize(t)));
    auto put = [&](auto x) { std::memcpy(b.data(), &x, sizeof x); };
    switch (t) {
    case DType::F64: put(v); break;
    case DType::F32: put(static_cast<float>(v)); break;
    case DType::F16: put(halfBits(v)); break;
    case DType::BF16: {
        const float f = static_cast<float>(v);
        std::uint32_t bits;
        std::memcpy(&bits, &f, 4);
        put(static_cast<std::uint16_t>(bits >> 16));
        break;
    }
    default: break; // only floating outputs are built here
    }
    return b;
}

double decoded(DType t, const std::vector<unsigned char>& b)
{
    double v = 0;
    toDouble(t, b.data(), 1, &v);
    return v;
}
} // namespace

class TestCompare : public QObject {
    Q_OBJECT
private slots:
    void decodesHalfTypes_data();
    void decodesHalfTypes();
    void verdicts_data();
    void verdicts();
    void unwrittenElementsAreNamed();
    void sentinelsDiffer_data();
    void sentinelsDiffer();
    void mismatchIndicesAreRowMajor();
    void halfPrecisionCheatFailsScaledTolerance();
    void runsAgree();
    void negativeControl_data();
    void negativeControl();
    void constantReferenceIsNotAControl();

    void classify_data();
    void classify();
    void ulp_data();
    void ulp();
    void histogramBinsAtTheEdges();
    void classCountsMatchCompareOutput_data();
    void classCountsMatchCompareOutput();
    void histogramBins_data();
    void histogramBins();
    void histogramOfCompareOutput();
    void axisSummary_data();
    void axisSummary();
    void summariesInJson_data();
    void summariesInJson();
};

void TestCompare::decodesHalfTypes_data()
{
    QTest::addColumn<int>("dtype");
    QTest::addColumn<int>("bits");
    QTest::addColumn<double>("value");
    QTest::newRow("fp16 one") << int(DType::F16) << 0x3c00 << 1.0;
    QTest::newRow("fp16 -2") << int(DType::F16) << 0xc000 << -2.0;
    QTest::newRow("fp16 max") << int(DType::F16) << 0x7bff << 65504.0;
    QTest::newRow("fp16 smallest subnormal") << int(DType::F16) << 0x0001 << std::ldexp(1.0, -24);
    QTest::newRow("fp16 inf") << int(DType::F16) << 0x7c00 << kInf;
    QTest::newRow("bf16 one") << int(DType::BF16) << 0x3f80 << 1.0;
    QTest::newRow("bf16 -0.5") << int(DType::BF16) << 0xbf00 << -0.5;
    QTest::newRow("bf16 3.140625") << int(DType::BF16) << 0x4049 << 3.140625;
}

void TestCompare::decodesHalfTypes()
{
    QFETCH(int, dtype);
    QFETCH(int, bits);
    QFETCH(double, value);
    std::uint16_t raw = static_cast<std::uint16_t>(bits);
    double out = 0;
    toDouble(static_cast<DType>(dtype), &raw, 1, &out);
    QCOMPARE(out, value);
}

void TestCompare::verdicts_data()
{
    QTest::addColumn<QVector<double>>("expected");
    QTest::addColumn<QVector<double>>("actual");
    QTest::addColumn<double>("rtol");
    QTest::addColumn<double>("atol");
    QTest::addColumn<bool>("passed");
    QTest::addColumn<int>("mismatches");
    QTest::newRow("identical") << QVector<double>{1, 2, 3} << QVector<double>{1, 2, 3} << 1e-6 << 1e-5 << true << 0;
    QTest::newRow("within rtol") << QVector<double>{100, 200} << QVector<double>{100.05, 200} << 1e-3 << 0.0 << true << 0;
    QTest::newRow("outside rtol") << QVector<double>{100, 200} << QVector<double>{100.5, 200} << 1e-3 << 0.0 << false << 1;
    QTest::newRow("NaN where finite expected fails regardless of tolerance")
        << QVector<double>{1, 2} << QVector<double>{kNaN, 2} << 1e9 << 1e9 << false << 1;
    QTest::newRow("NaN matches NaN") << QVector<double>{kNaN, 2} << QVector<double>{kNaN, 2} << 0.0 << 0.0 << true << 0;
    QTest::newRow("finite where NaN expected fails") << QVector<double>{kNaN} << QVector<double>{0} << 1e9 << 1e9 << false << 1;
    QTest::newRow("Inf sign must match") << QVector<double>{kInf} << QVector<double>{-kInf} << 1e9 << 1e9 << false << 1;
    QTest::newRow("Inf matches Inf") << QVector<double>{kInf, 1} << QVector<double>{kInf, 1} << 0.0 << 0.0 << true << 0;
    QTest::newRow("Inf where finite expected") << QVector<double>{3e38} << QVector<double>{kInf} << 1.0 << 1.0 << false << 1;
    QTest::newRow("atol scales with RMS: tiny outputs") // rms 1e-4 -> atol_eff 1e-9: 1e-6 error fails
        << QVector<double>{1e-4, -1e-4} << QVector<double>{1e-4 + 1e-6, -1e-4} << 0.0 << 1e-5 << false << 1;
}

void TestCompare::verdicts()
{
    QFETCH(QVector<double>, expected);
    QFETCH(QVector<double>, actual);
    QFETCH(double, rtol);
    QFETCH(double, atol);
    QFETCH(bool, passed);
    QFETCH(int, mismatches);
    auto raw = floats(std::vector<double>(actual.begin(), actual.end()));
    std::vector<double> exp(expected.begin(), expected.end());
    for (auto& e : exp) // compare against what fp32 can hold, as the runner does
        e = std::isfinite(e) ? static_cast<double>(static_cast<float>(e)) : e;
    auto c = compareOutput("y", DType::F32, raw.data(), exp.data(), {std::int64_t(exp.size())}, tol(rtol, atol), nullptr);
    QCOMPARE(c.passed, passed);
    QCOMPARE(c.mismatches, std::int64_t(mismatches));
    QCOMPARE(int(c.firstMismatches.size()), mismatches);
}

void TestCompare::unwrittenElementsAreNamed()
{
    auto sentinel = sentinelBytes(DType::F32, 0, 42);
    std::vector<double> exp(10, 1.0);
    auto raw = floats(exp);
    // The kernel forgot the tail: elements 8 and 9 still hold the sentinel.
    std::memcpy(raw.data() + 8 * 4, sentinel.data(), 4);
    std::memcpy(raw.data() + 9 * 4, sentinel.data(), 4);
    auto c = compareOutput("y", DType::F32, raw.data(), exp.data(), {2, 5}, tol(1e-6, 1e-5), sentinel.data());
    QVERIFY(!c.passed);
    QCOMPARE(c.unwritten, std::int64_t(2));
    QCOMPARE(c.firstUnwritten.size(), size_t(2));
    QCOMPARE(c.firstUnwritten[0], (std::vector<std::int64_t>{1, 3}));
    QCOMPARE(c.firstUnwritten[1], (std::vector<std::int64_t>{1, 4}));
    // A kernel that computes NaN itself writes the canonical NaN, which is not our sentinel.
    std::uint32_t canonical = 0x7fffffff;
    std::memcpy(raw.data() + 9 * 4, &canonical, 4);
    auto c2 = compareOutput("y", DType::F32, raw.data(), exp.data(), {10}, tol(1e-6, 1e-5), sentinel.data());
    QCOMPARE(c2.unwritten, std::int64_t(1));
    QCOMPARE(c2.nonFiniteMismatches, std::int64_t(1));
}

void TestCompare::sentinelsDiffer_data()
{
    QTest::addColumn<int>("dtype");
    for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32, DType::I8, DType::U8, DType::Bool})
        QTest::newRow(std::string(dtypeName(t)).c_str()) << int(t);
}

void TestCompare::sentinelsDiffer()
{
    QFETCH(int, dtype);
    DType t = static_cast<DType>(dtype);
    auto a = sentinelBytes(t, 0, 7), b = sentinelBytes(t, 1, 7);
    QCOMPARE(int(a.size()), dtypeSize(t));
    QVERIFY2(a != b, "the two runs must use different sentinels (rule 9)");
    if (isFloating(t)) {
        double v = 0;
        toDouble(t, a.data(), 1, &v);
        QVERIFY(std::isnan(v));
    }
    // Integer sentinels are secret: they depend on the seed.
    if (!isFloating(t) && t != DType::Bool && dtypeSize(t) >= 4)
        QVERIFY(sentinelBytes(t, 0, 8) != a);
}

void TestCompare::mismatchIndicesAreRowMajor()
{
    std::vector<double> exp(3 * 4, 0.5);
    auto raw = floats(exp);
    float bad = 9.0f;
    std::memcpy(raw.data() + (2 * 4 + 3) * 4, &bad, 4); // [2, 3]
    auto c = compareOutput("y", DType::F32, raw.data(), exp.data(), {3, 4}, tol(1e-6, 1e-5), nullptr);
    QCOMPARE(c.firstMismatches.size(), size_t(1));
    QCOMPARE(c.firstMismatches[0].index, (std::vector<std::int64_t>{2, 3}));
    QCOMPARE(c.firstMismatches[0].expected, 0.5);
    QCOMPARE(c.firstMismatches[0].actual, 9.0);
    QCOMPARE(c.maxAbsError, 8.5);
}

void TestCompare::halfPrecisionCheatFailsScaledTolerance()
{
    // docs/verification.md rule 7: outputs of size 5e-5 computed in half precision (10 % relative
    // error) pass a fixed atol = 1e-5, but not an atol scaled by the outputs' RMS.
    std::vector<double> exp(1000), act(1000);
    for (int i = 0; i < 1000; ++i) {
        exp[i] = 5e-5 * (1.0 + (i % 7) * 0.1);
        act[i] = exp[i] * 1.1;
    }
    auto raw = floats(act);
    for (auto& e : exp)
        e = static_cast<double>(static_cast<float>(e));
    auto fixed = compareOutput("y", DType::F32, raw.data(), exp.data(), {1000}, tol(1.3e-6, 1e-5, false), nullptr);
    QVERIFY2(fixed.passed, "a fixed atol is fooled; this row documents why we scale it");
    auto scaled = compareOutput("y", DType::F32, raw.data(), exp.data(), {1000}, tol(1.3e-6, 1e-5, true), nullptr);
    QVERIFY(!scaled.passed);
    QCOMPARE(scaled.mismatches, std::int64_t(1000));
}

void TestCompare::runsAgree()
{
    std::vector<double> exp = {1, 2, 3, 4};
    auto a = floats({1, 2, 3, 4});
    auto b = floats({1, 2, 3 + 1e-7, 4}); // last-bit noise of an atomic reduction: agrees
    double diff = 0;
    QCOMPARE(countDisagreements(DType::F32, a.data(), b.data(), 4, tol(1.3e-6, 1e-5), exp.data(), &diff), std::int64_t(0));
    auto c = floats({1, 2, 3.5, kNaN}); // a race: disagrees in two places
    QCOMPARE(countDisagreements(DType::F32, a.data(), c.data(), 4, tol(1.3e-6, 1e-5), exp.data(), &diff), std::int64_t(2));
    QCOMPARE(diff, 0.5);
}

void TestCompare::negativeControl_data()
{
    QTest::addColumn<QVector<double>>("expected");
    QTest::addColumn<double>("rtol");
    QTest::addColumn<double>("atol");
    QTest::addColumn<bool>("rms");
    QTest::addColumn<bool>("zerosPass");
    QTest::addColumn<bool>("constantPass");
    QTest::newRow("healthy task discriminates") << QVector<double>{1, -2, 3, 0.5} << 1e-3 << 1e-5 << true << false << false;
    // KernelBench issue 165: tiny outputs with a fixed absolute tolerance let zeros pass.
    QTest::newRow("fixed atol on tiny outputs lets zeros pass") << QVector<double>{1e-6, -2e-6, 3e-6} << 1e-3 << 1e-5 << false << true << true;
    QTest::newRow("loose atol on a large offset lets a constant pass") << QVector<double>{100, 101, 102} << 0.0 << 0.01 << true << false << true;
    QTest::newRow("all-zero reference lets zeros pass") << QVector<double>{0, 0, 0} << 1e-3 << 1e-5 << true << true << true;
    QTest::newRow("huge rtol lets everything pass") << QVector<double>{1, 2, 3} << 10.0 << 0.0 << true << true << true;
}

void TestCompare::negativeControl()
{
    QFETCH(QVector<double>, expected);
    QFETCH(double, rtol);
    QFETCH(double, atol);
    QFETCH(bool, rms);
    QFETCH(bool, zerosPass);
    QFETCH(bool, constantPass);
    std::vector<double> e(expected.begin(), expected.end());
    auto nc = kf::negativeControl("y", DType::F32, e.data(), {std::int64_t(e.size())}, tol(rtol, atol, rms));
    QCOMPARE(nc.zerosPass, zerosPass);
    QCOMPARE(nc.constantPass, constantPass);
    QCOMPARE(nc.discriminates(), !zerosPass && !constantPass);
}

void TestCompare::constantReferenceIsNotAControl()
{
    // Softmax over one column is all ones, a one-element output is its own mean: a constant
    // output is then correct, so that control cannot judge the tolerance, and must not flag it.
    for (std::vector<double> e : {std::vector<double>{1, 1, 1, 1}, std::vector<double>{0.37}}) {
        auto nc = kf::negativeControl("y", DType::F32, e.data(), {std::int64_t(e.size())}, tol(1e-6, 1e-5));
        QVERIFY(!nc.constantApplicable);
        QVERIFY(nc.constantPass);
        QVERIFY(!nc.zerosPass);
        QVERIFY(nc.discriminates());
    }
}

void TestCompare::classify_data()
{
    QTest::addColumn<int>("dtype");
    QTest::addColumn<double>("actual");
    QTest::addColumn<double>("expected");
    QTest::addColumn<double>("atol");
    QTest::addColumn<double>("rtol");
    QTest::addColumn<bool>("unwritten");  // the element holds the run-0 sentinel instead of `actual`
    QTest::addColumn<int>("cls");
    QTest::addColumn<double>("ratio");
    const int f64 = int(DType::F64), f32 = int(DType::F32), f16 = int(DType::F16), bf16 = int(DType::BF16);
    const int ok = int(ElementClass::Ok), out = int(ElementClass::OutsideTolerance);
    const int nonFinite = int(ElementClass::NonFinite), unwritten = int(ElementClass::Unwritten);
    QTest::newRow("fp32 exact match") << f32 << 1.5 << 1.5 << 1e-5 << 1e-3 << false << ok << 0.0;
    QTest::newRow("fp32 within atol") << f32 << 100.0625 << 100.0 << 0.125 << 0.0 << false << ok << 0.5;
    QTest::newRow("fp32 at the tolerance edge") << f32 << 100.125 << 100.0 << 0.125 << 0.0 << false << ok << 1.0;
    QTest::newRow("fp32 outside atol") << f32 << 100.5 << 100.0 << 0.125 << 0.0 << false << out << 4.0;
    QTest::newRow("fp32 rtol scales with |expected|") << f32 << -201.0 << -200.0 << 0.0 << 0.01 << false << ok << 0.5;
    QTest::newRow("fp32 NaN vs NaN") << f32 << kNaN << kNaN << 0.0 << 0.0 << false << ok << 0.0;
    QTest::newRow("fp32 NaN where finite expected") << f32 << kNaN << 1.0 << 1e9 << 1e9 << false << nonFinite << kInf;
    QTest::newRow("fp32 finite where NaN expected") << f32 << 0.0 << kNaN << 1e9 << 1e9 << false << nonFinite << kInf;
    QTest::newRow("fp32 +Inf vs +Inf") << f32 << kInf << kInf << 0.0 << 0.0 << false << ok << 0.0;
    QTest::newRow("fp32 +Inf where finite expected") << f32 << kInf << 3e38 << 1e9 << 1e9 << false << nonFinite << kInf;
    QTest::newRow("fp32 -Inf where +Inf expected") << f32 << -kInf << kInf << 1e9 << 1e9 << false << nonFinite << kInf;
    QTest::newRow("fp32 finite where +Inf expected") << f32 << std::ldexp(1.0, 127) << kInf << 1e9 << 1e9 << false << nonFinite << kInf;
    QTest::newRow("fp32 sentinel") << f32 << 0.0 << 1.0 << 1e9 << 1e9 << true << unwritten << kNaN;
    QTest::newRow("fp32 sentinel where NaN expected") << f32 << 0.0 << kNaN << 0.0 << 0.0 << true << unwritten << kNaN;
    QTest::newRow("fp32 zero tolerance, exact") << f32 << 2.0 << 2.0 << 0.0 << 0.0 << false << ok << 0.0;
    // Zero tolerance still allows one ulp of the dtype (2^-22 at 2.0): 0.5 off is 2^21 of them.
    QTest::newRow("fp32 zero tolerance, any error") << f32 << 2.5 << 2.0 << 0.0 << 0.0 << false << out << 2097152.0;
    QTest::newRow("fp32 zero tolerance, one ulp") << f32 << 2.0000002384185791 << 2.0 << 0.0 << 0.0 << false << ok << 1.0;
    QTest::newRow("fp64 exact match") << f64 << 0.1 << 0.1 << 0.0 << 0.0 << false << ok << 0.0;
    QTest::newRow("fp64 outside rtol") << f64 << 1.03 << 1.0 << 0.0 << 0.01 << false << out << 3.0;
    QTest::newRow("fp16 exact match") << f16 << 1.5 << 1.5 << 1e-5 << 1e-3 << false << ok << 0.0;
    QTest::newRow("fp16 one ulp within rtol") << f16 << 1.0009765625 << 1.0 << 0.0 << 0.001953125 << false << ok << 0.5;
    QTest::newRow("fp16 eight ulps outside rtol") << f16 << 1.0078125 << 1.0 << 0.0 << 0.001953125 << false << out << 4.0;
    // The ulp floor (issue 23): a correct fp16 RMSNorm landed one subnormal ulp (2^-24) from the
    // float64 truth where atol + rtol·|e| was below one ulp.
    QTest::newRow("fp16 subnormal one ulp off, tolerance below an ulp") << f16 << std::ldexp(2.0, -24) << std::ldexp(1.0, -24) << 1e-9 << 1e-3 << false << ok << 1.0;
    QTest::newRow("fp16 subnormal two ulps off") << f16 << std::ldexp(3.0, -24) << std::ldexp(1.0, -24) << 1e-9 << 1e-3 << false << out << 2.0;
    QTest::newRow("fp16 overflow to Inf where finite expected") << f16 << kInf << 70000.0 << 1e9 << 1e9 << false << nonFinite << kInf;
    QTest::newRow("fp16 NaN vs NaN") << f16 << kNaN << kNaN << 0.0 << 0.0 << false << ok << 0.0;
    QTest::newRow("fp16 -Inf vs -Inf") << f16 << -kInf << -kInf << 0.0 << 0.0 << false << ok << 0.0;
    QTest::newRow("fp16 sentinel") << f16 << 0.0 << 1.0 << 1e9 << 1e9 << true << unwritten << kNaN;
    QTest::newRow("bf16 exact match") << bf16 << 3.140625 << 3.140625 << 0.0 << 0.0 << false << ok << 0.0;
    QTest::newRow("bf16 one ulp within rtol") << bf16 << 1.0078125 << 1.0 << 0.0 << 0.015625 << false << ok << 0.5;
    QTest::newRow("bf16 outside rtol") << bf16 << 1.0625 << 1.0 << 0.0 << 0.015625 << false << out << 4.0;
    QTest::newRow("bf16 +Inf vs +Inf") << bf16 << kInf << kInf << 0.0 << 0.0 << false << ok << 0.0;
    QTest::newRow("bf16 NaN where finite expected") << bf16 << kNaN << 2.0 << 1.0 << 1.0 << false << nonFinite << kInf;
    QTest::newRow("bf16 sentinel") << bf16 << 0.0 << 1.0 << 1e9 << 1e9 << true << unwritten << kNaN;
}

void TestCompare::ulp_data()
{
    QTest::addColumn<int>("dtype");
    QTest::addColumn<double>("x");
    QTest::addColumn<double>("ulp");
    const auto row = [](const char* name, DType t, double x, double u) { QTest::newRow(name) << int(t) << x << u; };
    row("fp16 at 1", DType::F16, 1.0, std::ldexp(1.0, -10));
    row("fp16 just below 2", DType::F16, std::nextafter(2.0, 0.0), std::ldexp(1.0, -10));
    row("fp16 at 2", DType::F16, 2.0, std::ldexp(1.0, -9));
    row("fp16 negative", DType::F16, -1000.0, std::ldexp(1.0, -1));
    row("fp16 subnormal range", DType::F16, 1e-6, std::ldexp(1.0, -24));
    row("fp16 zero", DType::F16, 0.0, std::ldexp(1.0, -24));
    row("fp32 at 1", DType::F32, 1.0, std::ldexp(1.0, -23));
    row("bf16 at 3", DType::BF16, 3.0, std::ldexp(1.0, -6));
    row("fp64 at 1", DType::F64, 1.0, std::ldexp(1.0, -52));
    row("fp64 zero", DType::F64, 0.0, std::ldexp(1.0, -1074));
    row("fp32 infinity", DType::F32, std::numeric_limits<double>::infinity(), std::ldexp(1.0, -149));
    row("int32 has none", DType::I32, 5.0, 0.0);
}

void TestCompare::ulp()
{
    QFETCH(int, dtype);
    QFETCH(double, x);
    QFETCH(double, ulp);
    QCOMPARE(kf::ulpAt(DType(dtype), x), ulp);
}

// The histogram's bins are floor((log10(ratio) + 8) / 0.5) exactly, also at and beside the edges.
void TestCompare::histogramBinsAtTheEdges()
{
    for (int k = -2; k <= ErrorHistogram::kBins + 2; ++k) {
        const double edge = std::pow(10.0, ErrorHistogram::kLo + k * ErrorHistogram::kWidth);
        for (double r : {std::nextafter(edge, 0.0), edge, std::nextafter(edge, 1e300), edge * 1.3}) {
            ErrorHistogram h;
            ElementVerdict v;
            v.ratio = r;
            h.add(v);
            const double b = std::floor((std::log10(r) - ErrorHistogram::kLo) / ErrorHistogram::kWidth);
            const QString what = QString("ratio %1").arg(r, 0, 'g', 17);
            if (b < 0)
                QVERIFY2(h.below == 1, qPrintable(what));
            else if (b >= ErrorHistogram::kBins)
                QVERIFY2(h.above == 1, qPrintable(what));
            else
                QVERIFY2(h.bins[int(b)] == 1, qPrintable(what));
        }
    }
}

void TestCompare::classify()
{
    QFETCH(int, dtype);
    QFETCH(double, actual);
    QFETCH(double, expected);
    QFETCH(double, atol);
    QFETCH(double, rtol);
    QFETCH(bool, unwritten);
    QFETCH(int, cls);
    QFETCH(double, ratio);
    const DType t = static_cast<DType>(dtype);
    const auto sentinel = sentinelBytes(t, 0, 7);
    const auto el = unwritten ? sentinel : element(t, actual);
    if (!unwritten)
        QCOMPARE(decoded(t, el), actual); // the row's value must be one the dtype holds exactly
    const ElementVerdict v = kf::classify(t, el.data(), expected, sentinel.data(), atol, rtol);
    QCOMPARE(elementClassName(v.cls), elementClassName(static_cast<ElementClass>(cls)));
    QCOMPARE(v.ratio, ratio);
    if (unwritten) {
        QVERIFY(std::isnan(v.actual));
        QVERIFY(std::isnan(v.absError));
    } else {
        QCOMPARE(v.actual, actual);
        if (std::isfinite(actual) && std::isfinite(expected))
            QCOMPARE(v.absError, std::fabs(actual - expected));
    }
    // The run-1 sentinel is not the run-0 one: a second run's leftover is judged as a value.
    if (unwritten) {
        const auto other = sentinelBytes(t, 1, 7);
        QVERIFY(kf::classify(t, other.data(), expected, sentinel.data(), atol, rtol).cls != ElementClass::Unwritten);
    }
    // compareOutput judges the same element the same way (an absolute atol keeps it as given).
    const auto c = compareOutput("y", t, el.data(), &expected, {1}, tol(rtol, atol, false), sentinel.data());
    QCOMPARE(c.passed, v.cls == ElementClass::Ok);
    QCOMPARE(c.unwritten, std::int64_t(v.cls == ElementClass::Unwritten));
    QCOMPARE(c.nonFiniteMismatches, std::int64_t(v.cls == ElementClass::NonFinite));
}

void TestCompare::classCountsMatchCompareOutput_data()
{
    QTest::addColumn<int>("dtype");
    QTest::addColumn<bool>("rms");
    QTest::newRow("fp32, rms atol") << int(DType::F32) << true;
    QTest::newRow("fp32, absolute atol") << int(DType::F32) << false;
    QTest::newRow("fp64") << int(DType::F64) << true;
    QTest::newRow("fp16") << int(DType::F16) << true;
    QTest::newRow("bf16") << int(DType::BF16) << true;
}

void TestCompare::classCountsMatchCompareOutput()
{
    QFETCH(int, dtype);
    QFETCH(bool, rms);
    const DType t = static_cast<DType>(dtype);
    const std::vector<std::int64_t> extents = {64, 50};
    const std::int64_t n = 64 * 50;
    const int size = dtypeSize(t);
    const auto sentinel = sentinelBytes(t, 0, 99);
    std::mt19937_64 rng(20240611);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<double> exp(static_cast<size_t>(n));
    std::vector<unsigned char> raw(static_cast<size_t>(n * size));
    for (std::int64_t i = 0; i < n; ++i) {
        double e = normal(rng);
        double a = e * (1 + 1e-3 * normal(rng));
        if (i % 13 == 0)
            a = 1.5 * e + 0.5;                    // clearly wrong
        if (i % 97 == 0)
            a = kNaN;                             // NaN where finite expected
        if (i % 101 == 0)
            e = kNaN, a = i % 202 == 0 ? kNaN : a; // NaN expected: half matched, half not
        if (i % 89 == 0)
            a = kInf;                             // overflow
        if (i % 83 == 0)
            e = a = -kInf;                        // a matching infinity
        exp[size_t(i)] = e;
        auto b = element(t, a);
        std::memcpy(raw.data() + i * size, b.data(), size_t(size));
        if (i % 71 == 0)
            std::memcpy(raw.data() + i * size, sentinel.data(), size_t(size));
    }
    const auto c = compareOutput("y", t, raw.data(), exp.data(), extents, tol(2e-3, 1e-3, rms), sentinel.data());

    std::int64_t counts[4] = {};
    ErrorHistogram h;
    for (std::int64_t i = 0; i < n; ++i) {
        const auto v = kf::classify(t, raw.data() + i * size, exp[size_t(i)], sentinel.data(), c.atolEffective, c.rtol);
        ++counts[int(v.cls)];
        h.add(v);
    }
    const std::int64_t ok = counts[int(ElementClass::Ok)], outside = counts[int(ElementClass::OutsideTolerance)];
    const std::int64_t nonFinite = counts[int(ElementClass::NonFinite)], unwritten = counts[int(ElementClass::Unwritten)];
    // Every class is present, so the comparisons below can fail.
    QVERIFY2(ok > 0 && outside > 0 && nonFinite > 0 && unwritten > 0,
             qPrintable(QString("ok %1 outside %2 non-finite %3 unwritten %4").arg(ok).arg(outside).arg(nonFinite).arg(unwritten)));
    QCOMPARE(c.elements, n);
    QCOMPARE(c.mismatches, outside + nonFinite + unwritten);
    QCOMPARE(c.unwritten, unwritten);
    QCOMPARE(c.nonFiniteMismatches, nonFinite);
    QVERIFY(!c.passed);
    QCOMPARE(c.histogram.total(), n);
    QCOMPARE(c.histogram.unwritten, unwritten);
    QCOMPARE(c.histogram.nonFinite, nonFinite);
    QCOMPARE(c.histogram.exact, h.exact);
    QCOMPARE(c.histogram.below, h.below);
    QCOMPARE(c.histogram.above, h.above);
    for (int b = 0; b < ErrorHistogram::kBins; ++b)
        QCOMPARE(c.histogram.bins[b], h.bins[b]);
    // The axis summaries see every mismatch once.
    std::int64_t rowSum = 0, colSum = 0;
    for (auto m : c.rows.mismatches)
        rowSum += m;
    for (auto m : c.columns.mismatches)
        colSum += m;
    QCOMPARE(rowSum, c.mismatches);
    QCOMPARE(colSum, c.mismatches);
}

void TestCompare::histogramBins_data()
{
    QTest::addColumn<double>("ratio");
    QTest::addColumn<int>("cls");
    QTest::addColumn<QString>("bucket");
    const int ok = int(ElementClass::Ok), out = int(ElementClass::OutsideTolerance);
    // bin = floor((log10(ratio) - kLo) / kWidth) with kLo = -8, kWidth = 0.5.
    QTest::newRow("ratio 2 -> bin 16") << 2.0 << out << "16";
    QTest::newRow("ratio 0.5 -> bin 15") << 0.5 << ok << "15";
    QTest::newRow("tolerance edge, ratio 1 -> bin 16") << 1.0 << ok << "16";
    QTest::newRow("ratio 3 -> bin 16") << 3.0 << out << "16";
    QTest::newRow("ratio 4 -> bin 17") << 4.0 << out << "17";
    QTest::newRow("ratio 1.5e-8 -> bin 0") << 1.5e-8 << ok << "0";
    QTest::newRow("ratio 5e-9 -> below") << 5e-9 << ok << "below";
    QTest::newRow("ratio 5e7 -> bin 31") << 5e7 << out << "31";
    QTest::newRow("ratio 2e8 -> above") << 2e8 << out << "above";
    QTest::newRow("zero tolerance, ratio inf -> above") << kInf << out << "above";
    QTest::newRow("ratio 0 -> exact") << 0.0 << ok << "exact";
    QTest::newRow("non-finite") << kInf << int(ElementClass::NonFinite) << "non_finite";
    QTest::newRow("unwritten") << kNaN << int(ElementClass::Unwritten) << "unwritten";
}

void TestCompare::histogramBins()
{
    QFETCH(double, ratio);
    QFETCH(int, cls);
    QFETCH(QString, bucket);
    ErrorHistogram h;
    ElementVerdict v;
    v.cls = static_cast<ElementClass>(cls);
    v.ratio = ratio;
    h.add(v);
    QCOMPARE(h.total(), std::int64_t(1));
    QString got;
    for (int b = 0; b < ErrorHistogram::kBins; ++b)
        if (h.bins[b])
            got = QString::number(b);
    if (h.exact)
        got = "exact";
    if (h.below)
        got = "below";
    if (h.above)
        got = "above";
    if (h.nonFinite)
        got = "non_finite";
    if (h.unwritten)
        got = "unwritten";
    QCOMPARE(got, bucket);
}

void TestCompare::histogramOfCompareOutput()
{
    // atol 0.125 absolute, rtol 0: errors 0, 0.0625, 0.25 are ratios 0, 0.5, 2.
    std::vector<double> exp = {100, 100, 100, 100};
    auto raw = floats({100, 100.0625, 100.25, kNaN});
    auto c = compareOutput("y", DType::F32, raw.data(), exp.data(), {4}, tol(0.0, 0.125, false), nullptr);
    QCOMPARE(c.histogram.total(), std::int64_t(4));
    QCOMPARE(c.histogram.exact, std::int64_t(1));
    QCOMPARE(c.histogram.bins[15], std::int64_t(1));
    QCOMPARE(c.histogram.bins[16], std::int64_t(1));
    QCOMPARE(c.histogram.nonFinite, std::int64_t(1));
    const auto j = kf::protocol::toJson(c.histogram);
    QCOMPARE(j["bins"].size(), size_t(ErrorHistogram::kBins));
    QCOMPARE(j["bins"][16].get<std::int64_t>(), std::int64_t(1));
    QCOMPARE(j["log10_ratio_lo"].get<double>(), -8.0);
    QCOMPARE(j["bin_width"].get<double>(), 0.5);
}

void TestCompare::axisSummary_data()
{
    QTest::addColumn<QVector<qint64>>("extents");
    QTest::addColumn<qint64>("badRow");
    QTest::addColumn<qint64>("badCol");      // -1: the whole row
    QTest::addColumn<bool>("unwritten");     // bad elements hold the sentinel, else a ratio-2 error
    QTest::addColumn<qint64>("rows");
    QTest::addColumn<qint64>("rowsPerEntry");
    QTest::addColumn<qint64>("rowEntry");
    QTest::addColumn<qint64>("rowEntryMismatches");
    QTest::addColumn<qint64>("cols");
    QTest::addColumn<qint64>("colsPerEntry");
    QTest::addColumn<qint64>("colEntry");    // -1: every entry
    QTest::addColumn<qint64>("colEntryMismatches");
    // 1000 rows fold 4 to an entry (ceil(1000 / 256)): row 777 lands in entry 777 / 4 = 194.
    QTest::newRow("1000x8, row 777 wrong") << QVector<qint64>{1000, 8} << 777ll << -1ll << false
                                           << 1000ll << 4ll << 194ll << 8ll << 8ll << 1ll << -1ll << 1ll;
    QTest::newRow("1000x8, element [777, 3] wrong") << QVector<qint64>{1000, 8} << 777ll << 3ll << false
                                                    << 1000ll << 4ll << 194ll << 1ll << 8ll << 1ll << 3ll << 1ll;
    QTest::newRow("1000x8, element [777, 3] unwritten") << QVector<qint64>{1000, 8} << 777ll << 3ll << true
                                                        << 1000ll << 4ll << 194ll << 1ll << 8ll << 1ll << 3ll << 1ll;
    QTest::newRow("10x100x8: leading dimensions flatten into rows") << QVector<qint64>{10, 100, 8} << 777ll << -1ll << false
                                                                   << 1000ll << 4ll << 194ll << 8ll << 8ll << 1ll << -1ll << 1ll;
    QTest::newRow("256 rows: one row per entry") << QVector<qint64>{256, 4} << 255ll << 0ll << false
                                                 << 256ll << 1ll << 255ll << 1ll << 4ll << 1ll << 0ll << 1ll;
    QTest::newRow("257 rows: two rows per entry") << QVector<qint64>{257, 4} << 256ll << 0ll << false
                                                  << 257ll << 2ll << 128ll << 1ll << 4ll << 1ll << 0ll << 1ll;
    // 1000 columns fold 4 to an entry too: a wrong row marks each of the 250 column entries 4 times.
    QTest::newRow("3x1000, row 1 wrong") << QVector<qint64>{3, 1000} << 1ll << -1ll << false
                                         << 3ll << 1ll << 1ll << 1000ll << 1000ll << 4ll << -1ll << 4ll;
    QTest::newRow("3x1000, element [2, 999] wrong") << QVector<qint64>{3, 1000} << 2ll << 999ll << false
                                                    << 3ll << 1ll << 2ll << 1ll << 1000ll << 4ll << 249ll << 1ll;
}

void TestCompare::axisSummary()
{
    QFETCH(QVector<qint64>, extents);
    QFETCH(qint64, badRow);
    QFETCH(qint64, badCol);
    QFETCH(bool, unwritten);
    QFETCH(qint64, rows);
    QFETCH(qint64, rowsPerEntry);
    QFETCH(qint64, rowEntry);
    QFETCH(qint64, rowEntryMismatches);
    QFETCH(qint64, cols);
    QFETCH(qint64, colsPerEntry);
    QFETCH(qint64, colEntry);
    QFETCH(qint64, colEntryMismatches);
    const std::vector<std::int64_t> ext(extents.begin(), extents.end());
    std::int64_t n = 1;
    for (auto e : ext)
        n *= e;
    const std::int64_t width = ext.back();
    std::vector<double> exp(static_cast<size_t>(n), 1.0), act(static_cast<size_t>(n), 1.0);
    std::vector<std::int64_t> bad;
    for (std::int64_t col = 0; col < width; ++col)
        if (badCol < 0 || col == badCol)
            bad.push_back(badRow * width + col);
    for (auto i : bad)
        act[size_t(i)] = 3.0; // error 2 with atol 1: ratio 2
    auto raw = floats(act);
    const auto sentinel = sentinelBytes(DType::F32, 0, 1);
    if (unwritten)
        for (auto i : bad)
            std::memcpy(raw.data() + i * 4, sentinel.data(), 4);
    const auto c = compareOutput("y", DType::F32, raw.data(), exp.data(), ext, tol(0.0, 1.0, false), sentinel.data());
    const double badRatio = unwritten ? kInf : 2.0; // an unwritten element counts as inf
    QCOMPARE(c.mismatches, std::int64_t(bad.size()));

    QCOMPARE(c.rows.count, rows);
    QCOMPARE(c.rows.perEntry, rowsPerEntry);
    const auto rowEntries = (rows + rowsPerEntry - 1) / rowsPerEntry;
    QCOMPARE(qint64(c.rows.maxRatio.size()), rowEntries);
    QCOMPARE(qint64(c.rows.mismatches.size()), rowEntries);
    QVERIFY(rowEntries <= AxisSummary::kMaxEntries);
    for (qint64 k = 0; k < rowEntries; ++k) {
        const bool hit = k == rowEntry;
        QVERIFY2(c.rows.mismatches[size_t(k)] == (hit ? rowEntryMismatches : 0),
                 qPrintable(QString("row entry %1 has %2 mismatches").arg(k).arg(c.rows.mismatches[size_t(k)])));
        QCOMPARE(c.rows.maxRatio[size_t(k)], hit ? badRatio : 0.0);
    }

    QCOMPARE(c.columns.count, cols);
    QCOMPARE(c.columns.perEntry, colsPerEntry);
    const auto colEntries = (cols + colsPerEntry - 1) / colsPerEntry;
    QCOMPARE(qint64(c.columns.mismatches.size()), colEntries);
    for (qint64 k = 0; k < colEntries; ++k) {
        const bool hit = colEntry < 0 || k == colEntry;
        QVERIFY2(c.columns.mismatches[size_t(k)] == (hit ? colEntryMismatches : 0),
                 qPrintable(QString("column entry %1 has %2 mismatches").arg(k).arg(c.columns.mismatches[size_t(k)])));
        QCOMPARE(c.columns.maxRatio[size_t(k)], hit ? badRatio : 0.0);
    }
}

void TestCompare::summariesInJson_data()
{
    QTest::addColumn<QVector<qint64>>("extents");
    QTest::addColumn<bool>("failing");
    QTest::addColumn<bool>("rowSummary");
    QTest::addColumn<bool>("colSummary");
    QTest::newRow("rank 2, failing") << QVector<qint64>{4, 3} << true << true << true;
    QTest::newRow("rank 2, passing") << QVector<qint64>{4, 3} << false << false << false;
    QTest::newRow("rank 3, failing") << QVector<qint64>{2, 2, 3} << true << true << true;
    QTest::newRow("rank 1, failing: columns only") << QVector<qint64>{12} << true << false << true;
    QTest::newRow("rank 1, passing") << QVector<qint64>{12} << false << false << false;
    QTest::newRow("rank 0, failing: neither") << QVector<qint64>{} << true << false << false;
}

void TestCompare::summariesInJson()
{
    QFETCH(QVector<qint64>, extents);
    QFETCH(bool, failing);
    QFETCH(bool, rowSummary);
    QFETCH(bool, colSummary);
    const std::vector<std::int64_t> ext(extents.begin(), extents.end());
    std::int64_t n = 1;
    for (auto e : ext)
        n *= e;
    std::vector<double> exp(static_cast<size_t>(n), 0.5);
    auto raw = floats(exp);
    const auto sentinel = sentinelBytes(DType::F32, 0, 3);
    if (failing) // element 0 never written: its ratio is inf
        std::memcpy(raw.data(), sentinel.data(), 4);
    const auto c = compareOutput("y", DType::F32, raw.data(), exp.data(), ext, tol(1e-6, 1e-5), sentinel.data());
    QCOMPARE(c.passed, !failing);
    const auto j = kf::protocol::toJson(c);
    QVERIFY2(j.contains("error_histogram"), j.dump().c_str());
    QCOMPARE(j["error_histogram"]["unwritten"].get<std::int64_t>(), std::int64_t(failing));
    QCOMPARE(j.contains("row_summary"), rowSummary);
    QCOMPARE(j.contains("col_summary"), colSummary);
    if (rowSummary) {
        QCOMPARE(j["row_summary"]["count"].get<std::int64_t>(), n / ext.back());
        QCOMPARE(j["row_summary"]["max_ratio"][0].get<std::string>(), std::string("inf"));
    }
    if (colSummary) {
        QCOMPARE(j["col_summary"]["count"].get<std::int64_t>(), ext.back());
        QCOMPARE(j["col_summary"]["per_entry"].get<std::int64_t>(), std::int64_t(1));
        QCOMPARE(j["col_summary"]["max_ratio"][0].get<std::string>(), std::string("inf"));
        QCOMPARE(j["col_summary"]["mismatches"][0].get<std::int64_t>(), std::int64_t(1));
    }
}

QTEST_GUILESS_MAIN(TestCompare)
#include "tst_compare.moc"
