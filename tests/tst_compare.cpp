// The verdict arithmetic (VERIFICATION.md rules 2, 7, 8, 9, 10) without a GPU: each row is a way
// a kernel can be wrong, or a way a naive harness would be fooled.
#include "engine/verify/Compare.h"
#include "testutil.h"

#include <QTest>

#include <cmath>
#include <cstring>
#include <limits>

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
    // VERIFICATION.md rule 7: outputs of size 5e-5 computed in half precision (10 % relative
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

QTEST_GUILESS_MAIN(TestCompare)
#include "tst_compare.moc"
