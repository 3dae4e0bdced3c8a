#include "engine/verify/Compare.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace kf {

namespace {

double halfToDouble(std::uint16_t h)
{
    const int sign = (h >> 15) & 1;
    const int exp = (h >> 10) & 0x1f;
    const int man = h & 0x3ff;
    double v;
    if (exp == 0)
        v = std::ldexp(static_cast<double>(man), -24);                  // subnormal
    else if (exp == 31)
        v = man ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    else
        v = std::ldexp(static_cast<double>(man | 0x400), exp - 25);
    return sign ? -v : v;
}

double bf16ToDouble(std::uint16_t b)
{
    std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

template <class T>
T load(const unsigned char* p)
{
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

double elementToDouble(DType t, const unsigned char* p)
{
    switch (t) {
    case DType::F64: return load<double>(p);
    case DType::F32: return load<float>(p);
    case DType::F16: return halfToDouble(load<std::uint16_t>(p));
    case DType::BF16: return bf16ToDouble(load<std::uint16_t>(p));
    case DType::I64: return static_cast<double>(load<std::int64_t>(p));
    case DType::I32: return load<std::int32_t>(p);
    case DType::I16: return load<std::int16_t>(p);
    case DType::I8: return load<std::int8_t>(p);
    case DType::U8: return load<std::uint8_t>(p);
    case DType::Bool: return load<std::uint8_t>(p) ? 1.0 : 0.0;
    }
    return 0;
}

std::uint64_t splitmix(std::uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

bool withinTolerance(double a, double e, double atol, double rtol, double floor = 0)
{
    if (std::isnan(e) || std::isnan(a))
        return std::isnan(e) && std::isnan(a);
    if (std::isinf(e) || std::isinf(a))
        return a == e;
    return std::fabs(a - e) <= std::max(atol + rtol * std::fabs(e), floor);
}

/// The number of elements of a tensor with `extents` (1 for a 0-dimensional one).
std::int64_t elementCount(const std::vector<std::int64_t>& extents)
{
    std::int64_t n = 1;
    for (auto e : extents)
        n *= e;
    return n;
}

/// Sizes `c`'s per-column summary (an output with dimensions) and per-row summary (two or more)
/// for `extents`; `c.elements` must be set. Returns the row width (the last extent, at least 1).
std::int64_t resetAxisSummaries(OutputCheck& c, const std::vector<std::int64_t>& extents)
{
    const std::int64_t width = extents.empty() ? 1 : std::max<std::int64_t>(extents.back(), 1);
    if (!extents.empty())
        c.columns.reset(width);
    if (extents.size() >= 2)
        c.rows.reset(c.elements / width);
    return width;
}

} // namespace

std::vector<std::int64_t> unflattenIndex(std::int64_t i, const std::vector<std::int64_t>& extents)
{
    std::vector<std::int64_t> idx(extents.size(), 0);
    for (size_t d = extents.size(); d-- > 0;) {
        std::int64_t e = extents[d] > 0 ? extents[d] : 1;
        idx[d] = i % e;
        i /= e;
    }
    return idx;
}

void toDouble(DType t, const void* raw, std::int64_t n, double* out)
{
    const auto* p = static_cast<const unsigned char*>(raw);
    const int size = dtypeSize(t);
    for (std::int64_t i = 0; i < n; ++i)
        out[i] = elementToDouble(t, p + i * size);
}

std::vector<unsigned char> sentinelBytes(DType t, int variant, std::uint64_t seed)
{
    std::vector<unsigned char> b(static_cast<size_t>(dtypeSize(t)));
    auto put = [&](auto v) { std::memcpy(b.data(), &v, sizeof v); };
    const bool second = variant % 2 != 0;
    switch (t) {
    // Quiet NaNs with payloads no arithmetic produces (the GPU's canonical NaN is all ones).
    case DType::F64: put(second ? std::uint64_t{0x7ff85a5a5a5a5a5aull} : std::uint64_t{0x7ff8a5a5a5a5a5a5ull}); break;
    case DType::F32: put(second ? std::uint32_t{0x7fca5a5au} : std::uint32_t{0x7fc5a5a5u}); break;
    case DType::F16: put(second ? std::uint16_t{0x7ea5} : std::uint16_t{0x7e5a}); break;
    case DType::BF16: put(second ? std::uint16_t{0x7fda} : std::uint16_t{0x7fe5}); break;
    case DType::Bool: b[0] = second ? 0x5a : 0xa5; break; // not a valid bool: no kernel writes it
    default: {
        // Integers: a secret random value per run; the two runs' values always differ.
        std::uint64_t r = splitmix(seed ^ (0x1234567ull * static_cast<std::uint64_t>(variant + 1)));
        if (second)
            r = ~splitmix(seed ^ 0x1234567ull);
        std::memcpy(b.data(), &r, b.size());
        break;
    }
    }
    return b;
}

double rmsOf(const double* v, std::int64_t n)
{
    long double s = 0;
    std::int64_t k = 0;
    for (std::int64_t i = 0; i < n; ++i)
        if (std::isfinite(v[i])) {
            s += static_cast<long double>(v[i]) * v[i];
            ++k;
        }
    return k ? static_cast<double>(std::sqrt(s / k)) : 0.0;
}

double effectiveAtol(const Tolerance& tol, double referenceRms)
{
    return tol.atolMode == Tolerance::AtolMode::Rms ? tol.atol * referenceRms : tol.atol;
}

std::string_view elementClassName(ElementClass c)
{
    switch (c) {
    case ElementClass::Ok: return "ok";
    case ElementClass::OutsideTolerance: return "outside_tolerance";
    case ElementClass::NonFinite: return "non_finite";
    case ElementClass::Unwritten: return "unwritten";
    }
    return "ok";
}

double ulpAt(DType t, double x)
{
    int mantissa = 0, minExp = 0;
    switch (t) {
    case DType::F64: mantissa = 52, minExp = -1022; break;
    case DType::F32: mantissa = 23, minExp = -126; break;
    case DType::F16: mantissa = 10, minExp = -14; break;
    case DType::BF16: mantissa = 7, minExp = -126; break;
    default: return 0;
    }
    // floor(log2 |x|) from the exponent bits (zero, subnormal, inf and NaN take the smallest
    // normal exponent), then 2^(e − mantissa) built the same way: no libm call per element.
    std::uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    const int field = static_cast<int>((bits >> 52) & 0x7ff);
    const int e = field == 0 || field == 0x7ff ? minExp : std::max(field - 1023, minExp);
    const int p = e - mantissa;
    if (p < -1022)
        return std::ldexp(1.0, p); // below float64's normal range (float64 ulps near its smallest normal)
    bits = static_cast<std::uint64_t>(p + 1023) << 52;
    double ulp;
    std::memcpy(&ulp, &bits, sizeof ulp);
    return ulp;
}

ElementVerdict classify(DType t, const unsigned char* el, double e, const void* sentinel, double atol, double rtol,
                        std::optional<double> libtorch)
{
    constexpr double inf = std::numeric_limits<double>::infinity();
    ElementVerdict v;
    if (sentinel && std::memcmp(el, sentinel, static_cast<size_t>(dtypeSize(t))) == 0) {
        v.cls = ElementClass::Unwritten;
        v.actual = v.absError = v.ratio = std::numeric_limits<double>::quiet_NaN();
        return v;
    }
    v.actual = elementToDouble(t, el);
    const double a = v.actual;
    auto sameClass = [](double x, double y) { return std::isnan(x) || std::isnan(y) ? std::isnan(x) && std::isnan(y) : x == y; };
    // Where the golden result is not finite but LibTorch's is, LibTorch's value is the truth.
    if (libtorch && !std::isfinite(e) && std::isfinite(*libtorch))
        e = *libtorch;
    if (!(std::isfinite(a) && std::isfinite(e))) {
        const bool same = sameClass(a, e) || (libtorch && !std::isfinite(a) && sameClass(a, *libtorch));
        v.cls = same ? ElementClass::Ok : ElementClass::NonFinite;
        v.absError = v.ratio = same ? 0.0 : inf;
        return v;
    }
    v.absError = std::fabs(a - e);
    // A floor of one ulp of the output dtype at the expected value: a kernel that accumulates in
    // fp32 and rounds once may land on the neighbouring value of the float64 truth (an fp16
    // subnormal one ulp off, 5.96e-8, failed a correct RMSNorm once in 40 trials).
    double allowed = std::max(atol + rtol * std::fabs(e), ulpAt(t, e));
    if (libtorch && std::isfinite(*libtorch))
        allowed = std::max(allowed, std::fabs(*libtorch - e) + ulpAt(t, e));
    v.ratio = v.absError == 0 ? 0.0 : (allowed > 0 ? v.absError / allowed : inf);
    v.cls = v.absError <= allowed ? ElementClass::Ok : ElementClass::OutsideTolerance;
    return v;
}

double GoldenErrors::ratio() const
{
    if (libtorchRmsError > 0)
        return candidateRmsError / libtorchRmsError;
    return candidateRmsError > 0 ? std::numeric_limits<double>::infinity() : 1.0;
}

namespace {

/// The bin of a positive ratio as the report defines it: floor((log10(ratio) − kLo) ÷ kWidth),
/// below 0 or at kBins and above out of range. The device computes exactly this formula.
double binByLog(double ratio)
{
    return std::floor((std::log10(ratio) - ErrorHistogram::kLo) / ErrorHistogram::kWidth);
}

} // namespace

void ErrorHistogram::add(const ElementVerdict& v)
{
    switch (v.cls) {
    case ElementClass::Unwritten: ++unwritten; return;
    case ElementClass::NonFinite: ++nonFinite; return;
    default: break;
    }
    const double r = v.ratio;
    if (r == 0) {
        ++exact;
        return;
    }
    // The bin edges 10^(kLo + k·kWidth), searched instead of a log10 per element (the log was
    // half of a host comparison's time). Within a hair of an edge the formula itself decides, so
    // the bins are exactly binByLog()'s, as on the device.
    static const std::array<double, kBins + 1> edges = [] {
        std::array<double, kBins + 1> e{};
        for (int k = 0; k <= kBins; ++k)
            e[static_cast<size_t>(k)] = std::pow(10.0, kLo + k * kWidth);
        return e;
    }();
    const int k = static_cast<int>(std::upper_bound(edges.begin(), edges.end(), r) - edges.begin()) - 1;
    const bool nearLow = k >= 0 && r - edges[static_cast<size_t>(k)] <= 1e-9 * edges[static_cast<size_t>(k)];
    const bool nearHigh = k + 1 <= kBins && edges[static_cast<size_t>(k + 1)] - r <= 1e-9 * edges[static_cast<size_t>(k + 1)];
    const double b = nearLow || nearHigh ? binByLog(r) : static_cast<double>(k);
    if (b < 0)
        ++below;
    else if (b >= kBins)
        ++above;
    else
        ++bins[static_cast<int>(b)];
}

std::int64_t ErrorHistogram::total() const
{
    std::int64_t n = exact + below + above + nonFinite + unwritten;
    for (auto b : bins)
        n += b;
    return n;
}

void AxisSummary::reset(std::int64_t n)
{
    count = n;
    perEntry = n > kMaxEntries ? (n + kMaxEntries - 1) / kMaxEntries : 1;
    const auto entries = static_cast<size_t>(n > 0 ? (n + perEntry - 1) / perEntry : 0);
    maxRatio.assign(entries, 0.0);
    mismatches.assign(entries, 0);
}

void AxisSummary::add(std::int64_t i, const ElementVerdict& v)
{
    const auto k = static_cast<size_t>(perEntry == 1 ? i : i / perEntry);
    if (k >= maxRatio.size())
        return;
    const double r = std::isnan(v.ratio) ? std::numeric_limits<double>::infinity() : v.ratio;
    maxRatio[k] = std::max(maxRatio[k], r);
    mismatches[k] += v.cls != ElementClass::Ok;
}

OutputCheck compareOutput(const std::string& name, DType t, const void* actualRaw, const double* expected,
                          const std::vector<std::int64_t>& extents, const Tolerance& tol, const void* sentinel,
                          int maxSamples, const double* libtorch)
{
    OutputCheck c;
    c.output = name;
    const std::int64_t n = elementCount(extents);
    c.elements = n;
    c.referenceRms = rmsOf(expected, n);
    c.atolEffective = effectiveAtol(tol, c.referenceRms);
    c.rtol = tol.rtol;
    const std::int64_t width = resetAxisSummaries(c, extents);
    const auto* p = static_cast<const unsigned char*>(actualRaw);
    const int size = dtypeSize(t);
    long double candidateSq = 0, libtorchSq = 0;
    std::int64_t candidateCount = 0, libtorchCount = 0;
    // Row and column by counting, not by a division per element.
    std::int64_t row = 0, column = 0;
    for (std::int64_t i = 0; i < n; ++i, ++column) {
        if (column == width) {
            column = 0;
            ++row;
        }
        double e = expected[i];
        std::optional<double> l;
        if (libtorch) {
            l = libtorch[i];
            if (!std::isfinite(e) && std::isfinite(*l))
                e = *l; // as classify() does: LibTorch's value where the golden one is not finite
            if (std::isfinite(e) && std::isfinite(*l)) {
                const double le = std::fabs(*l - e);
                c.golden.libtorchMaxError = std::max(c.golden.libtorchMaxError, le);
                libtorchSq += static_cast<long double>(le) * le;
                ++libtorchCount;
            }
        }
        const ElementVerdict v = classify(t, p + i * size, e, sentinel, c.atolEffective, c.rtol, l);
        c.histogram.add(v);
        if (!extents.empty())
            c.columns.add(column, v);
        if (extents.size() >= 2)
            c.rows.add(row, v);
        if (v.cls == ElementClass::Unwritten) {
            ++c.unwritten;
            ++c.mismatches;
            if (static_cast<int>(c.firstUnwritten.size()) < maxSamples)
                c.firstUnwritten.push_back(unflattenIndex(i, extents));
            continue;
        }
        const double a = v.actual;
        const bool finitePair = std::isfinite(a) && std::isfinite(e);
        double relErr = 0;
        if (finitePair) {
            relErr = e != 0 ? v.absError / std::fabs(e) : (v.absError == 0 ? 0 : std::numeric_limits<double>::infinity());
            if (v.absError > c.maxAbsError)
                c.maxAbsError = v.absError;
            if (e != 0 && relErr > c.maxRelError)
                c.maxRelError = relErr;
            if (libtorch) {
                candidateSq += static_cast<long double>(v.absError) * v.absError;
                ++candidateCount;
                c.golden.rescued += v.cls == ElementClass::Ok && v.absError > c.atolEffective + c.rtol * std::fabs(e);
            }
        }
        if (v.cls != ElementClass::Ok) {
            ++c.mismatches;
            if (!finitePair)
                ++c.nonFiniteMismatches;
            if (static_cast<int>(c.firstMismatches.size()) < maxSamples)
                c.firstMismatches.push_back({unflattenIndex(i, extents), e, a, finitePair ? v.absError : std::fabs(a - e),
                                             finitePair ? relErr : std::numeric_limits<double>::infinity()});
        }
    }
    c.mismatchFraction = n ? static_cast<double>(c.mismatches) / static_cast<double>(n) : 0.0;
    c.passed = c.mismatches == 0;
    if (libtorch) {
        c.golden.available = true;
        c.golden.candidateMaxError = c.maxAbsError;
        c.golden.candidateRmsError = candidateCount ? static_cast<double>(std::sqrt(candidateSq / candidateCount)) : 0.0;
        c.golden.libtorchRmsError = libtorchCount ? static_cast<double>(std::sqrt(libtorchSq / libtorchCount)) : 0.0;
    }
    return c;
}

std::int64_t countDisagreements(DType t, const void* a, const void* b, std::int64_t n, const Tolerance& tol,
                                const double* expected, double* maxAbsDiff)
{
    const auto* pa = static_cast<const unsigned char*>(a);
    const auto* pb = static_cast<const unsigned char*>(b);
    const int size = dtypeSize(t);
    const double atol = effectiveAtol(tol, expected ? rmsOf(expected, n) : 0.0);
    std::int64_t bad = 0;
    double worst = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        double x = elementToDouble(t, pa + i * size), y = elementToDouble(t, pb + i * size);
        double scale = expected && std::isfinite(expected[i]) ? std::fabs(expected[i]) : std::fabs(x);
        bool ok;
        if (std::isnan(x) || std::isnan(y))
            ok = std::isnan(x) && std::isnan(y);
        else if (std::isinf(x) || std::isinf(y))
            ok = x == y;
        else {
            double d = std::fabs(x - y);
            worst = std::max(worst, d);
            ok = d <= atol + tol.rtol * scale;
        }
        bad += !ok;
    }
    if (maxAbsDiff)
        *maxAbsDiff = worst;
    return bad;
}

NegativeControl negativeControl(const std::string& output, DType t, const double* expected,
                                const std::vector<std::int64_t>& extents, const Tolerance& tol)
{
    NegativeControl nc;
    nc.output = output;
    const std::int64_t n = elementCount(extents);
    const double atol = effectiveAtol(tol, rmsOf(expected, n));
    long double sum = 0;
    std::int64_t finite = 0;
    for (std::int64_t i = 0; i < n; ++i)
        if (std::isfinite(expected[i])) {
            sum += expected[i];
            ++finite;
        }
    nc.constant = finite ? static_cast<double>(sum / finite) : 0.0;
    nc.constantApplicable = false;
    for (std::int64_t i = 1; i < n && !nc.constantApplicable; ++i)
        nc.constantApplicable = !(expected[i] == expected[0] || (std::isnan(expected[i]) && std::isnan(expected[0])));
    nc.zerosPass = nc.constantPass = true;
    for (std::int64_t i = 0; i < n && (nc.zerosPass || nc.constantPass); ++i) {
        // The same floor as classify(): within one ulp of the output dtype is within tolerance.
        const double floor = ulpAt(t, expected[i]);
        nc.zerosPass = nc.zerosPass && withinTolerance(0.0, expected[i], atol, tol.rtol, floor);
        nc.constantPass = nc.constantPass && withinTolerance(nc.constant, expected[i], atol, tol.rtol, floor);
    }
    return nc;
}

} // namespace kf
