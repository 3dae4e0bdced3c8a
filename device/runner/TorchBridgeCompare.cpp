// Comparison where the data is (docs/verification.md, correctness rules 2, 7, 8, 9, 10): the
// element rule of classify() (engine/verify/Compare.cpp) written as LibTorch tensor arithmetic
// in float64, so that a 64M-element output is judged by GPU kernels and only statistics, bounded
// samples and their indices cross to the host. tst_torchbridge holds both implementations to the
// same verdicts, element by element, in CPU mode.
#include "device/runner/TorchBridgeInternal.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace kf::device {

namespace {

using detail::bridgeError;

at::Device computeDevice()
{
    return detail::cudaMode() ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
}

/// The caller's output as a flat tensor on the compute device, in its own dtype (a host buffer
/// is uploaded once).
at::Tensor flatOnDevice(const RawTensor& raw)
{
    at::Tensor t = detail::wrap(raw).reshape({-1});
    return t.device() == computeDevice() ? t : t.to(computeDevice());
}

/// Element values as float64; a bool byte other than 0 is true, as elementToDouble reads it.
at::Tensor decode(const at::Tensor& t)
{
    return t.scalar_type() == at::kBool ? t.view(at::kByte).ne(0).to(at::kDouble) : t.to(at::kDouble);
}

/// True where an element's bytes equal the sentinel's.
at::Tensor sentinelMask(const at::Tensor& t, DType dtype, const void* sentinel)
{
    if (!sentinel)
        return at::zeros_like(t, at::TensorOptions().dtype(at::kBool));
    switch (dtypeSize(dtype)) {
    case 1: {
        std::uint8_t v;
        std::memcpy(&v, sentinel, 1);
        return t.view(at::kByte).eq(static_cast<std::int64_t>(v));
    }
    case 2: {
        std::int16_t v;
        std::memcpy(&v, sentinel, 2);
        return t.view(at::kShort).eq(static_cast<std::int64_t>(v));
    }
    case 4: {
        std::int32_t v;
        std::memcpy(&v, sentinel, 4);
        return t.view(at::kInt).eq(static_cast<std::int64_t>(v));
    }
    default: {
        std::int64_t v;
        std::memcpy(&v, sentinel, 8);
        return t.view(at::kLong).eq(v);
    }
    }
}

/// The first `k` flat indices where `mask` is true, ascending, on the host. Searches growing
/// prefixes so that a failure near the start never costs a pass over the whole tensor.
std::vector<std::int64_t> firstIndices(const at::Tensor& mask, int k)
{
    std::vector<std::int64_t> out;
    const std::int64_t n = mask.numel();
    std::int64_t chunk = 1 << 16;
    for (std::int64_t start = 0; start < n && static_cast<int>(out.size()) < k; start += chunk, chunk *= 4) {
        const std::int64_t len = std::min(chunk, n - start);
        at::Tensor idx = at::nonzero(mask.narrow(0, start, len)).reshape({-1});
        idx = idx.narrow(0, 0, std::min<std::int64_t>(idx.numel(), k - static_cast<int>(out.size()))).to(at::kCPU);
        const auto* p = idx.const_data_ptr<std::int64_t>();
        for (std::int64_t i = 0; i < idx.numel(); ++i)
            out.push_back(start + p[i]);
    }
    return out;
}

std::vector<double> gather(const at::Tensor& values, const std::vector<std::int64_t>& indices)
{
    if (indices.empty())
        return {};
    at::Tensor idx = at::tensor(at::IntArrayRef(indices), at::TensorOptions().dtype(at::kLong)).to(values.device());
    at::Tensor v = values.index_select(0, idx).to(at::kCPU, at::kDouble).contiguous();
    return std::vector<double>(v.const_data_ptr<double>(), v.const_data_ptr<double>() + v.numel());
}

/// Worst ratio and mismatch count per row or column folded into AxisSummary's entries.
/// `ratio2d` and `bad2d` are [rows, width]; `dim` is the dimension reduced away.
void fillAxis(AxisSummary& s, const at::Tensor& ratio2d, const at::Tensor& bad2d, std::int64_t dim)
{
    if (s.count <= 0 || ratio2d.size(dim) == 0)
        return;
    at::Tensor worst = ratio2d.amax(dim);
    at::Tensor bad = bad2d.to(at::kLong).sum(dim);
    const std::int64_t entries = static_cast<std::int64_t>(s.maxRatio.size());
    const std::int64_t pad = entries * s.perEntry - s.count;
    if (pad > 0) {
        worst = at::constant_pad_nd(worst, {0, pad}, 0);
        bad = at::constant_pad_nd(bad, {0, pad}, 0);
    }
    worst = worst.view({entries, s.perEntry}).amax(1).to(at::kCPU).contiguous();
    bad = bad.view({entries, s.perEntry}).sum(1).to(at::kCPU).contiguous();
    std::memcpy(s.maxRatio.data(), worst.const_data_ptr<double>(), s.maxRatio.size() * sizeof(double));
    std::memcpy(s.mismatches.data(), bad.const_data_ptr<std::int64_t>(), s.mismatches.size() * sizeof(std::int64_t));
}

/// The mantissa bits and smallest normal exponent of a floating dtype (ulpAt()).
std::pair<int, int> ulpParameters(DType t)
{
    switch (t) {
    case DType::F64: return {52, -1022};
    case DType::F32: return {23, -126};
    case DType::F16: return {10, -14};
    case DType::BF16: return {7, -126};
    default: return {0, 0};
    }
}

/// LibTorch's result and, when there is one, the golden result of one output, flat float64.
struct ExpectedTensors {
    at::Tensor libtorch;
    at::Tensor golden;      ///< undefined without a golden result
    at::Tensor truth;       ///< what errors are measured against: golden (LibTorch's where it is not finite) or LibTorch's
    std::string note;       ///< why there is no golden result
};

/// The expected results of `output` as flat float64 tensors on `device` (the host for a host
/// comparison: one copy each, converted on the way).
Result<ExpectedTensors> expectedTensors(const TorchBridge::Expected& e, const TensorSpec& output, at::Device device)
{
    const std::string what = "compare output " + output.name;
    if (!e.libtorch)
        return bridgeError(what, "no LibTorch reference was given");
    Error err;
    const at::Tensor* l = static_cast<const detail::ReferenceBase*>(e.libtorch)->findResult(output.name, err);
    if (!l)
        return err;
    ExpectedTensors x;
    x.libtorch = l->reshape({-1}).to(device, at::kDouble).contiguous();
    x.truth = x.libtorch;
    if (!isFloating(output.dtype)) {
        x.note = "an integer output is compared exactly with LibTorch's";
        return x;
    }
    if (!e.golden) {
        x.note = e.goldenNote.empty() ? "no golden result was computed" : e.goldenNote;
        return x;
    }
    const at::Tensor* g = static_cast<const detail::ReferenceBase*>(e.golden)->findResult(output.name, err);
    if (!g)
        return err;
    if (g->numel() != l->numel())
        return bridgeError(what, "the float64 golden result has " + std::to_string(g->numel()) + " elements but LibTorch's has " +
                                     std::to_string(l->numel()));
    x.golden = g->reshape({-1}).to(device, at::kDouble).contiguous();
    x.truth = at::where(at::isfinite(x.golden) | ~at::isfinite(x.libtorch), x.golden, x.libtorch);
    return x;
}

bool onHost(TorchBridge::CompareAt at, std::int64_t elements)
{
    return at == TorchBridge::CompareAt::Host ||
           (at == TorchBridge::CompareAt::Auto && elements <= TorchBridge::kHostCompareElements);
}

/// The expected tensors where a comparison of `elements` elements runs.
Result<ExpectedTensors> expectedFor(const TorchBridge::Expected& e, const TensorSpec& output, std::int64_t elements,
                                    TorchBridge::CompareAt at, bool& host)
{
    host = onHost(at, elements);
    return expectedTensors(e, output, host ? at::Device(at::kCPU) : computeDevice());
}

/// The caller's output bytes in host memory: itself, or a download of device memory.
at::Tensor hostBytes(const RawTensor& raw)
{
    return detail::wrap(raw).to(at::kCPU).contiguous();
}

at::Tensor effectiveAtolTensor(const Tolerance& tol, const at::Tensor& truth, at::Tensor* rmsOut)
{
    const at::Tensor finite = at::isfinite(truth);
    const at::Tensor sq = at::where(finite, truth * truth, at::zeros({}, truth.options()));
    const at::Tensor count = finite.sum(at::kDouble).clamp_min(1.0);
    const at::Tensor rms = at::where(finite.any(), at::sqrt(sq.sum() / count), at::zeros({}, truth.options()));
    if (rmsOut)
        *rmsOut = rms;
    return tol.atolMode == Tolerance::AtolMode::Rms ? rms * tol.atol : at::full({}, tol.atol, truth.options());
}

/// What a judged element may differ by: the task's tolerance, widened with a golden result to
/// LibTorch's own error plus one ulp of the output's dtype where both are finite.
at::Tensor allowedError(const at::Tensor& tolAllowed, const at::Tensor& g, const at::Tensor& absG, const at::Tensor& gf,
                        const at::Tensor& l, const at::Tensor& lf, DType dtype)
{
    const auto [mantissa, minExp] = ulpParameters(dtype);
    // floor(log2 |g|) exactly, as ulpAt() reads it from the exponent bits (log2 can round up
    // just below a power of two); zero and non-finite values take the smallest normal exponent.
    const at::Tensor exponent = at::where(gf & absG.ne(0), std::get<1>(at::frexp(absG)).to(at::kDouble) - 1.0,
                                          at::full({}, double(minExp), g.options()))
                                    .clamp_min(static_cast<double>(minExp));
    const at::Tensor ulp = at::exp2(exponent - static_cast<double>(mantissa));
    return at::where(lf & gf, at::maximum(tolAllowed, at::abs(l - g) + ulp), tolAllowed);
}

/// The check's counts, errors and histogram from `scalars` (in the order judgeOnDevice stacks
/// them) and the histogram's `bins`: one copy to the host, one synchronisation.
void readSums(OutputCheck& c, const std::vector<at::Tensor>& scalars, const at::Tensor& bins, bool golden)
{
    const std::int64_t nScalars = static_cast<std::int64_t>(scalars.size());
    const at::Tensor host = at::cat({at::stack(scalars), bins.to(at::kDouble)}).to(at::kCPU).contiguous();
    const double* v = host.const_data_ptr<double>();
    c.mismatches = static_cast<std::int64_t>(v[0]);
    c.unwritten = static_cast<std::int64_t>(v[1]);
    c.nonFiniteMismatches = static_cast<std::int64_t>(v[2]);
    c.maxAbsError = v[3];
    c.maxRelError = v[4];
    c.referenceRms = v[5];
    c.atolEffective = v[6];
    c.histogram.exact = static_cast<std::int64_t>(v[7]);
    c.histogram.below = static_cast<std::int64_t>(v[8]);
    c.histogram.above = static_cast<std::int64_t>(v[9]);
    c.histogram.nonFinite = c.nonFiniteMismatches;
    c.histogram.unwritten = c.unwritten;
    for (int b = 0; b < ErrorHistogram::kBins; ++b)
        c.histogram.bins[b] = static_cast<std::int64_t>(v[nScalars + b]);
    if (golden) {
        c.golden.candidateMaxError = c.maxAbsError;
        c.golden.candidateRmsError = v[10];
        c.golden.libtorchMaxError = v[11];
        c.golden.libtorchRmsError = v[12];
        c.golden.rescued = static_cast<std::int64_t>(v[13]);
    }
    c.mismatchFraction = c.elements ? static_cast<double>(c.mismatches) / static_cast<double>(c.elements) : 0.0;
    c.passed = c.mismatches == 0;
}

/// The per-column and per-row summaries of a failing output, and the bounded samples: indices
/// first, then only those elements' values.
void locateMismatches(OutputCheck& c, const std::vector<std::int64_t>& extents, const at::Tensor& axisRatio, const at::Tensor& bad,
                      const at::Tensor& unwritten, const at::Tensor& written, const at::Tensor& g, const at::Tensor& a,
                      int maxSamples)
{
    const std::int64_t width = extents.empty() ? 1 : std::max<std::int64_t>(extents.back(), 1);
    if (!extents.empty())
        c.columns.reset(width);
    if (extents.size() >= 2)
        c.rows.reset(c.elements / width);
    if (!c.passed && c.elements > 0) {
        const at::Tensor r2 = axisRatio.view({c.elements / width, width});
        const at::Tensor b2 = bad.view({c.elements / width, width});
        if (!extents.empty())
            fillAxis(c.columns, r2, b2, 0);
        if (extents.size() >= 2)
            fillAxis(c.rows, r2, b2, 1);
    }

    if (c.unwritten > 0)
        for (std::int64_t i : firstIndices(unwritten, maxSamples))
            c.firstUnwritten.push_back(unflattenIndex(i, extents));
    if (c.mismatches > c.unwritten) {
        const auto idx = firstIndices(bad & written, maxSamples);
        const auto ev = gather(g, idx), avals = gather(a, idx);
        for (size_t k = 0; k < idx.size(); ++k) {
            const double e = ev[k], x = avals[k];
            const bool finite = std::isfinite(e) && std::isfinite(x);
            const double absErr = std::fabs(x - e);
            const double relErr = finite ? (e != 0 ? absErr / std::fabs(e) : (absErr == 0 ? 0 : std::numeric_limits<double>::infinity()))
                                         : std::numeric_limits<double>::infinity();
            c.firstMismatches.push_back({unflattenIndex(idx[k], extents), e, x, absErr, relErr});
        }
    }
}

/// judgeWith where the data is (the compute device): every element classified as classify()
/// does, with only sums, the histogram and the bounded samples copied back.
Result<OutputCheck> judgeOnDevice(const ExpectedTensors& ex, const TensorSpec& output, const RawTensor& actual, const void* sentinel,
                                  int maxSamples, const std::string& what)
{
    OutputCheck c;
    c.output = output.name;
    c.elements = actual.elements();
    c.rtol = output.tolerance.rtol;
    if (ex.truth.numel() != c.elements)
        return bridgeError(what, "the reference produced " + std::to_string(ex.truth.numel()) + " elements for " +
                                     output.name + ", expected " + std::to_string(c.elements),
                           "check the task's output shape against the reference op");
    const bool golden = ex.golden.defined();
    c.golden.available = golden;
    c.golden.note = ex.note;

    const at::Tensor raw = flatOnDevice(actual);
    const at::Tensor a = decode(raw);
    const at::Tensor& g = ex.truth;
    const at::Tensor& l = ex.libtorch;
    const auto opts = g.options();
    const at::Tensor zero = at::zeros({}, opts);
    const at::Tensor inf = at::full({}, std::numeric_limits<double>::infinity(), opts);

    const at::Tensor unwritten = sentinelMask(raw, actual.dtype, sentinel);
    const at::Tensor written = ~unwritten;
    const at::Tensor af = at::isfinite(a), gf = at::isfinite(g);
    const at::Tensor finitePair = af & gf & written;

    at::Tensor rms;
    const at::Tensor atol = effectiveAtolTensor(output.tolerance, g, &rms);
    const at::Tensor absG = at::abs(g);
    const at::Tensor err = at::where(finitePair, at::abs(a - g), zero);
    const at::Tensor tolAllowed = atol + c.rtol * absG;
    const at::Tensor lf = golden ? at::isfinite(l) : at::Tensor();
    const at::Tensor allowed = golden ? allowedError(tolAllowed, g, absG, gf, l, lf, actual.dtype) : tolAllowed;
    const at::Tensor okFinite = err <= allowed;
    const at::Tensor nanA = at::isnan(a);
    at::Tensor same = (nanA & at::isnan(g)) | (~nanA & a.eq(g));
    if (golden)
        same = same | (~af & ((nanA & at::isnan(l)) | (~nanA & a.eq(l))));
    const at::Tensor nonFinitePair = written & ~(af & gf);
    const at::Tensor nonFiniteBad = nonFinitePair & ~same;
    const at::Tensor outside = finitePair & ~okFinite;
    const at::Tensor bad = unwritten | nonFiniteBad | outside;

    // ratio as classify() defines it; unwritten and non-finite mismatches are inf for the axis summaries.
    at::Tensor ratio = at::where(err.eq(0), zero, at::where(allowed > 0, err / allowed, inf));
    ratio = at::where(finitePair, ratio, zero);
    const at::Tensor axisRatio = at::where(unwritten | nonFiniteBad, inf, ratio);
    const at::Tensor rel = at::where(finitePair & g.ne(0), err / absG, zero);

    // Histogram over the written elements that are not non-finite mismatches.
    const at::Tensor judged = written & ~nonFiniteBad;
    const at::Tensor bin = at::floor((at::log10(ratio) - ErrorHistogram::kLo) / ErrorHistogram::kWidth);
    const at::Tensor positive = judged & (ratio > 0);
    const at::Tensor inRange = positive & (bin >= 0) & (bin < ErrorHistogram::kBins);
    const at::Tensor binIndex = at::where(inRange, bin, at::full({}, double(ErrorHistogram::kBins), opts)).to(at::kLong);
    const at::Tensor bins = at::bincount(binIndex, {}, ErrorHistogram::kBins + 1).narrow(0, 0, ErrorHistogram::kBins);

    std::vector<at::Tensor> scalars = {bad.sum(at::kDouble), unwritten.sum(at::kDouble), nonFiniteBad.sum(at::kDouble),
                                       c.elements ? err.max() : zero, c.elements ? rel.max() : zero, rms, atol,
                                       (judged & ratio.eq(0)).sum(at::kDouble), (positive & (bin < 0)).sum(at::kDouble),
                                       (positive & (bin >= ErrorHistogram::kBins)).sum(at::kDouble)};
    if (golden) {
        const at::Tensor lfp = lf & gf;
        const at::Tensor lerr = at::where(lfp, at::abs(l - g), zero);
        scalars.push_back(at::sqrt((err * err).sum() / finitePair.sum(at::kDouble).clamp_min(1.0)));
        scalars.push_back(c.elements ? lerr.max() : zero);
        scalars.push_back(at::sqrt((lerr * lerr).sum() / lfp.sum(at::kDouble).clamp_min(1.0)));
        scalars.push_back((finitePair & okFinite & ~(err <= tolAllowed)).sum(at::kDouble));
    }
    readSums(c, scalars, bins, golden);
    locateMismatches(c, actual.extents, axisRatio, bad, unwritten, written, g, a, maxSamples);
    return c;
}

Result<OutputCheck> judgeWith(const Result<ExpectedTensors>& ex, bool onTheHost, const TensorSpec& output,
                              const RawTensor& actual, const void* sentinel, int maxSamples)
{
    const std::string what = "compare output " + output.name;
    try {
        if (!ex)
            return ex.error();
        if (ex->truth.numel() == actual.elements() && onTheHost) {
            const at::Tensor& truth = ex->truth;
            const at::Tensor lib = ex->golden.defined() ? ex->libtorch : at::Tensor();
            const at::Tensor bytes = hostBytes(actual);
            OutputCheck c = compareOutput(output.name, actual.dtype, bytes.const_data_ptr(), truth.const_data_ptr<double>(),
                                          actual.extents, output.tolerance, sentinel, maxSamples,
                                          lib.defined() ? lib.const_data_ptr<double>() : nullptr);
            c.golden.note = ex->note;
            return c;
        }
        return judgeOnDevice(*ex, output, actual, sentinel, maxSamples, what);
    } catch (const c10::Error& e) {
        return detail::torchError(what, e);
    }
}

Result<std::int64_t> disagreeWith(const Result<ExpectedTensors>& ex, bool onTheHost, const TensorSpec& output,
                                  const RawTensor& first, const RawTensor& second, double* maxAbsDiff)
{
    const std::string what = "compare the two runs of output " + output.name;
    try {
        if (!ex)
            return ex.error();
        if (ex->truth.numel() == first.elements() && first.elements() == second.elements() && onTheHost) {
            const at::Tensor& truth = ex->truth;
            const at::Tensor a = hostBytes(first), b = hostBytes(second);
            return countDisagreements(first.dtype, a.const_data_ptr(), b.const_data_ptr(), first.elements(), output.tolerance,
                                      truth.const_data_ptr<double>(), maxAbsDiff);
        }
        const at::Tensor x = decode(flatOnDevice(first)), y = decode(flatOnDevice(second));
        const at::Tensor& e = ex->truth;
        if (x.numel() != e.numel() || y.numel() != e.numel())
            return bridgeError(what, "the runs' outputs and the reference differ in size");
        const at::Tensor zero = at::zeros({}, e.options());
        const at::Tensor atol = effectiveAtolTensor(output.tolerance, e, nullptr);
        const at::Tensor scale = at::where(at::isfinite(e), at::abs(e), at::abs(x));
        const at::Tensor nx = at::isnan(x), ny = at::isnan(y);
        const at::Tensor ix = at::isinf(x), iy = at::isinf(y);
        const at::Tensor finite = ~(nx | ny | ix | iy);
        const at::Tensor diff = at::where(finite, at::abs(x - y), zero);
        const at::Tensor ok = at::where(nx | ny, nx & ny, at::where(ix | iy, x.eq(y), diff <= atol + output.tolerance.rtol * scale));
        const at::Tensor host = at::stack({(~ok).sum(at::kDouble), x.numel() ? diff.max() : zero}).to(at::kCPU).contiguous();
        if (maxAbsDiff)
            *maxAbsDiff = host.const_data_ptr<double>()[1];
        return static_cast<std::int64_t>(host.const_data_ptr<double>()[0]);
    } catch (const c10::Error& e) {
        return detail::torchError(what, e);
    }
}

Result<NegativeControl> negativeWith(const Result<ExpectedTensors>& ex, bool onTheHost, const TensorSpec& output)
{
    const std::string what = "negative control of output " + output.name;
    try {
        if (!ex)
            return ex.error();
        if (onTheHost) {
            const at::Tensor& truth = ex->truth;
            return kf::negativeControl(output.name, output.dtype, truth.const_data_ptr<double>(), {truth.numel()},
                                       output.tolerance);
        }
        const at::Tensor& e = ex->truth;
        NegativeControl nc;
        nc.output = output.name;
        const at::Tensor finite = at::isfinite(e);
        const at::Tensor zero = at::zeros({}, e.options());
        const at::Tensor atol = effectiveAtolTensor(output.tolerance, e, nullptr);
        const at::Tensor limit = atol + output.tolerance.rtol * at::abs(e);
        const at::Tensor mean = at::where(finite, e, zero).sum() / finite.sum(at::kDouble).clamp_min(1.0);
        const at::Tensor zerosPass = (finite & (at::abs(e) <= limit)).all();
        const at::Tensor constantPass = (finite & (at::abs(mean - e) <= limit)).all();
        at::Tensor applicable = at::zeros({}, e.options());
        if (e.numel() > 1) {
            const at::Tensor first = e.narrow(0, 0, 1);
            const at::Tensor differs = ~(e.eq(first) | (at::isnan(e) & at::isnan(first)));
            applicable = differs.any().to(at::kDouble);
        }
        const at::Tensor host =
            at::stack({zerosPass.to(at::kDouble), constantPass.to(at::kDouble), applicable, mean}).to(at::kCPU).contiguous();
        const double* v = host.const_data_ptr<double>();
        nc.zerosPass = v[0] != 0;
        nc.constantPass = v[1] != 0;
        nc.constantApplicable = v[2] != 0;
        nc.constant = v[3];
        return nc;
    } catch (const c10::Error& e) {
        return detail::torchError(what, e);
    }
}

} // namespace

/// The number of elements LibTorch's result of `output` has (0 when it has none yet).
static std::int64_t resultElements(const TorchBridge::Expected& e, const TensorSpec& output)
{
    Error err;
    const at::Tensor* l = e.libtorch ? static_cast<const detail::ReferenceBase*>(e.libtorch)->findResult(output.name, err) : nullptr;
    return l ? l->numel() : 0;
}

Result<OutputCheck> TorchBridge::judgeOutput(const Expected& expected, const TensorSpec& output, const RawTensor& actual,
                                             const void* sentinel, int maxSamples, CompareAt at)
{
    try {
        bool host = false;
        auto ex = expectedFor(expected, output, actual.elements(), at, host);
        return judgeWith(ex, host, output, actual, sentinel, maxSamples);
    } catch (const c10::Error& e) {
        return detail::torchError("compare output " + output.name, e);
    }
}

Result<NegativeControl> TorchBridge::negativeControl(const Expected& expected, const TensorSpec& output, CompareAt at)
{
    try {
        bool host = false;
        auto ex = expectedFor(expected, output, resultElements(expected, output), at, host);
        return negativeWith(ex, host, output);
    } catch (const c10::Error& e) {
        return detail::torchError("negative control of output " + output.name, e);
    }
}

Result<TorchBridge::TrialJudgement> TorchBridge::judgeTrial(const Expected& expected, const TensorSpec& output,
                                                            const RawTensor& run0, const RawTensor& run1, const void* sentinel,
                                                            int maxSamples, bool withNegativeControl, CompareAt at)
{
    try {
        bool host = false;
        auto ex = expectedFor(expected, output, run0.elements(), at, host);
        auto check = judgeWith(ex, host, output, run0, sentinel, maxSamples);
        if (!check)
            return check.error();
        TrialJudgement j;
        j.check = std::move(check.value());
        auto d = disagreeWith(ex, host, output, run0, run1, &j.runMaxAbsDiff);
        if (!d)
            return d.error();
        j.runDisagreements = d.value();
        if (withNegativeControl) {
            auto nc = negativeWith(ex, host, output);
            if (!nc)
                return nc.error();
            j.negativeControl = std::move(nc.value());
        }
        return j;
    } catch (const c10::Error& e) {
        return detail::torchError("compare output " + output.name, e);
    }
}

Result<std::uint64_t> TorchBridge::fingerprint(const RawTensor& t, std::uint64_t key)
{
    try {
        const std::int64_t bytes = t.bytes();
        if (bytes == 0)
            return key;
        // The widest integer view the byte count allows, widened to int64 for the arithmetic.
        at::Tensor flat = detail::wrap(t).reshape({-1}).view(at::kByte);
        for (auto [size, type] : {std::pair{8, at::kLong}, std::pair{4, at::kInt}, std::pair{2, at::kShort}})
            if (bytes % size == 0) {
                flat = flat.view(type);
                break;
            }
        const at::Tensor words = flat.to(at::kLong);
        const std::int64_t n = words.numel();
        // Position weights from a keyed multiply-xorshift: a word's contribution depends on where
        // it is, so moving data around changes the sum too. int64 arithmetic wraps.
        at::Tensor w = at::arange(n, words.options()) * static_cast<std::int64_t>(0x9e3779b97f4a7c15ull) +
                       static_cast<std::int64_t>(key | 1);
        w = at::bitwise_xor(w, at::bitwise_right_shift(w, 31)) * static_cast<std::int64_t>(0xbf58476d1ce4e5b9ull);
        const at::Tensor mixed = at::bitwise_xor(words, static_cast<std::int64_t>(key >> 1)) * w;
        const at::Tensor sums = at::stack({mixed.sum(), at::bitwise_xor(mixed, at::bitwise_right_shift(mixed, 29)).sum()})
                                    .to(at::kCPU);
        const auto* v = sums.const_data_ptr<std::int64_t>();
        return static_cast<std::uint64_t>(v[0]) ^ (static_cast<std::uint64_t>(v[1]) * 0x94d049bb133111ebull) ^
               static_cast<std::uint64_t>(n);
    } catch (const c10::Error& e) {
        return detail::torchError("fingerprint a tensor", e);
    }
}

Result<std::vector<double>> TorchBridge::expectedAsDouble(const Expected& expected, const std::string& output, bool golden)
{
    Reference* r = golden && expected.golden ? expected.golden : expected.libtorch;
    if (!r)
        return bridgeError("read the expected result of " + output, "no reference was given");
    return r->resultAsDouble(output);
}

} // namespace kf::device
