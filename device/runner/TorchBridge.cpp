// TorchBridge: LibTorch initialisation, the CUDA stream, input generation and the result side of
// references. The only unit of the bridge that includes CUDA headers; every CUDA call is behind
// cudaMode() so CPU mode (CI without a GPU) never touches the driver.
#include "device/runner/TorchBridgeInternal.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <torch/version.h> // TORCH_VERSION

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace kf::device {

namespace {
bool g_cudaMode = false;
} // namespace

// ---------------------------------------------------------------------------------------------
// Shared helpers (declared in TorchBridgeInternal.h)

namespace detail {

bool cudaMode() { return g_cudaMode; }

at::ScalarType scalarType(DType t)
{
    switch (t) {
    case DType::F64: return at::kDouble;
    case DType::F32: return at::kFloat;
    case DType::F16: return at::kHalf;
    case DType::BF16: return at::kBFloat16;
    case DType::I64: return at::kLong;
    case DType::I32: return at::kInt;
    case DType::I16: return at::kShort;
    case DType::I8: return at::kChar;
    case DType::U8: return at::kByte;
    case DType::Bool: return at::kBool;
    }
    return at::kFloat;
}

/// Our name of a LibTorch dtype ("fp16", not "Half"), for messages.
std::string dtypeLabel(at::ScalarType s)
{
    for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32, DType::I16, DType::I8,
                    DType::U8, DType::Bool})
        if (scalarType(t) == s)
            return std::string(dtypeName(t));
    return c10::toString(s);
}

at::Device deviceOf(const RawTensor& t)
{
    // An explicit index keeps from_blob from asking the driver which device owns the pointer.
    return g_cudaMode && t.onDevice ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
}

at::Tensor wrap(const RawTensor& t)
{
    return at::from_blob(t.data, t.extents, at::TensorOptions().dtype(scalarType(t.dtype)).device(deviceOf(t)));
}

Error bridgeError(const std::string& what, const std::string& why, const std::string& hint)
{
    return Error::failed(what, why, hint);
}

Error torchError(const std::string& what, const c10::Error& e)
{
    // Too little free memory is the machine's state, not the kernel's fault: one sentence (the
    // report adds how much is free), never LibTorch's multi-line allocator text.
    const std::string text = e.what_without_backtrace();
    if (dynamic_cast<const c10::OutOfMemoryError*>(&e) || text.find("CUDA error: out of memory") != std::string::npos ||
        text.find("CUBLAS_STATUS_ALLOC_FAILED") != std::string::npos) {
        c10::cuda::CUDACachingAllocator::emptyCache(); // what is free is then what others left
        Error oom = bridgeError(what, "the GPU is out of memory while trying to " + what,
                                "free GPU memory held by other processes (nvidia-smi lists them), or use smaller shapes");
        oom.kind = kGpuOutOfMemory;
        return oom;
    }
    // what_without_backtrace() still spans lines (dispatcher tables); one line reads in a report.
    std::string msg = e.what_without_backtrace();
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    if (msg.size() > 600)
        msg = msg.substr(0, 600) + "...";
    return bridgeError(what, what + " failed: " + msg);
}

at::ScalarType producedType(DType declared, bool golden)
{
    return golden && isFloating(declared) ? at::kDouble : scalarType(declared);
}

at::Tensor finishOutput(at::Tensor result, at::ScalarType declared, const std::vector<at::Tensor>& inputs)
{
    if (result.scalar_type() != declared)
        result = result.to(declared);
    if (!result.is_contiguous())
        result = result.contiguous();
    for (const auto& in : inputs)
        if (result.is_alias_of(in)) {
            result = result.clone(at::MemoryFormat::Contiguous);
            break;
        }
    return result;
}

const at::Tensor* ReferenceBase::findResult(const std::string& name, Error& error) const
{
    for (size_t i = 0; i < m_outputNames.size(); ++i) {
        if (m_outputNames[i] != name)
            continue;
        if (!m_results[i].defined()) {
            error = bridgeError("read the reference result " + name,
                                "the reference has not produced \"" + name + "\" yet",
                                "call run() before reading results");
            return nullptr;
        }
        return &m_results[i];
    }
    std::string names;
    for (const auto& n : m_outputNames)
        names += (names.empty() ? "" : ", ") + n;
    error = bridgeError("read the reference result " + name,
                        "no reference output is named \"" + name + "\"; the task's outputs are: " + names);
    return nullptr;
}

Result<void> ReferenceBase::copyResultsTo(const std::map<std::string, RawTensor>& outputs)
{
    for (const auto& [name, raw] : outputs) {
        Error err;
        const at::Tensor* r = findResult(name, err);
        if (!r)
            return err;
        const std::string what = "copy the reference result " + name;
        if (scalarType(raw.dtype) != r->scalar_type())
            return bridgeError(what, "the destination is " + std::string(dtypeName(raw.dtype)) +
                                         " but the reference result is " + dtypeLabel(r->scalar_type()));
        if (raw.elements() != r->numel())
            return bridgeError(what, "the destination holds " + std::to_string(raw.elements()) +
                                         " elements but the reference result has " + std::to_string(r->numel()) +
                                         " (shape " + c10::str(r->sizes()) + ")");
        if (raw.elements() == 0)
            continue;
        if (!raw.data)
            return bridgeError(what, "the destination pointer is null");
        try {
            // Row-major data is what is compared, so only the element count has to agree.
            wrap(raw).view(r->sizes()).copy_(*r);
        } catch (const c10::Error& e) {
            return torchError(what, e);
        }
    }
    return {};
}

Result<std::vector<double>> ReferenceBase::resultAsDouble(const std::string& output)
{
    Error err;
    const at::Tensor* r = findResult(output, err);
    if (!r)
        return err;
    try {
        at::Tensor h = r->to(at::kCPU, at::kDouble).contiguous();
        std::vector<double> v(static_cast<size_t>(h.numel()));
        if (!v.empty())
            std::memcpy(v.data(), h.const_data_ptr<double>(), v.size() * sizeof(double));
        return v;
    } catch (const c10::Error& e) {
        return torchError("convert the reference result " + output + " to float64", e);
    }
}

} // namespace detail

// ---------------------------------------------------------------------------------------------
// RawTensor

std::int64_t RawTensor::elements() const
{
    std::int64_t n = 1;
    for (auto e : extents)
        n *= e;
    return n;
}

std::int64_t RawTensor::bytes() const { return elements() * dtypeSize(dtype); }

// ---------------------------------------------------------------------------------------------
// Initialisation and the stream

Result<void> TorchBridge::init(bool useCuda)
{
    try {
        if (!useCuda) {
            g_cudaMode = false;
            return {};
        }
        if (!at::hasCUDA())
            return detail::bridgeError("initialise LibTorch on CUDA", "LibTorch " TORCH_VERSION " sees no CUDA device",
                                       "check the driver (nvidia-smi) and that this LibTorch build has CUDA");
        c10::cuda::set_device(0);
        // The catalog promises fp32 accumulation for half-precision matmul: forbid cuBLAS's
        // reduced-precision split-K reductions, and TF32 for fp32 matmul, so the reference is
        // what the task says and the baseline is not quietly less accurate than the candidate.
        at::globalContext().setAllowFP16ReductionCuBLAS(false);
        at::globalContext().setAllowBF16ReductionCuBLAS(false);
        at::globalContext().setAllowTF32CuBLAS(false);
        // Touch the context now so the first timed call does not pay for CUDA initialisation.
        (void)at::empty({1}, at::TensorOptions().device(at::kCUDA, 0));
        g_cudaMode = true;
        return {};
    } catch (const c10::Error& e) {
        return detail::torchError("initialise LibTorch on CUDA", e);
    }
}

bool TorchBridge::cudaAvailable()
{
    try {
        return at::hasCUDA();
    } catch (const c10::Error&) {
        return false;
    }
}

std::string TorchBridge::torchVersion() { return TORCH_VERSION; }

void* TorchBridge::currentStream()
{
    if (!g_cudaMode)
        return nullptr;
    return static_cast<void*>(c10::cuda::getCurrentCUDAStream(0).stream());
}

void TorchBridge::synchronize()
{
    if (g_cudaMode)
        c10::cuda::device_synchronize();
}

// ---------------------------------------------------------------------------------------------
// Input generation (docs/verification.md rule 6)

namespace {

using detail::bridgeError;

at::Generator makeGenerator(const at::Device& device, std::uint64_t seed)
{
    // A private generator per call: the draw depends on `seed` alone, never on what ran before.
    if (device.is_cuda()) {
        at::Generator g = at::cuda::detail::createCUDAGenerator(device.index());
        g.set_current_seed(seed);
        return g;
    }
    return at::make_generator<at::CPUGeneratorImpl>(seed);
}

/// Largest finite value of a floating dtype: draws are clamped to it so a half input never
/// overflows to inf unless a special value asks for one.
double finiteMax(DType t)
{
    switch (t) {
    case DType::F16: return static_cast<double>(std::numeric_limits<c10::Half>::max());
    case DType::BF16: return static_cast<double>(std::numeric_limits<c10::BFloat16>::max());
    case DType::F32: return static_cast<double>(std::numeric_limits<float>::max());
    default: return std::numeric_limits<double>::max();
    }
}

std::int64_t intMin(DType t)
{
    switch (t) {
    case DType::I8: return std::numeric_limits<std::int8_t>::min();
    case DType::I16: return std::numeric_limits<std::int16_t>::min();
    case DType::I32: return std::numeric_limits<std::int32_t>::min();
    case DType::U8:
    case DType::Bool: return 0;
    default: return std::numeric_limits<std::int64_t>::min();
    }
}

std::int64_t intMax(DType t)
{
    switch (t) {
    case DType::I8: return std::numeric_limits<std::int8_t>::max();
    case DType::I16: return std::numeric_limits<std::int16_t>::max();
    case DType::I32: return std::numeric_limits<std::int32_t>::max();
    case DType::U8: return std::numeric_limits<std::uint8_t>::max();
    case DType::Bool: return 1;
    // random_(from, to) takes an exclusive int64 bound, so the largest int64 cannot be drawn.
    default: return std::numeric_limits<std::int64_t>::max() - 1;
    }
}

Result<void> fillIntegers(at::Tensor& out, const RawTensor& dst, const Distribution& dist, at::Generator& gen)
{
    const std::string what = "fill a tensor of " + std::string(dtypeName(dst.dtype)) + " with int_range values";
    if (!std::isfinite(dist.low) || !std::isfinite(dist.high))
        return bridgeError(what, "int_range needs finite low and high");
    const bool integral = !isFloating(dst.dtype);
    std::int64_t lo = static_cast<std::int64_t>(std::ceil(std::max(dist.low, -9.2e18)));
    std::int64_t hi = static_cast<std::int64_t>(std::floor(std::min(dist.high, 9.2e18)));
    if (integral) {
        lo = std::max(lo, intMin(dst.dtype));
        hi = std::min(hi, intMax(dst.dtype));
    }
    if (lo > hi)
        return bridgeError(what, "the range [" + std::to_string(dist.low) + ", " + std::to_string(dist.high) +
                                      "] holds no " + std::string(dtypeName(dst.dtype)) + " value");
    if (integral) {
        out.random_(lo, hi + 1, gen); // straight into the caller's memory: no temporary
    } else {
        out.copy_(at::randint(lo, hi + 1, out.sizes(), gen, out.options().dtype(at::kLong)));
    }
    return {};
}

// Student-t: Z / sqrt(V / dof) with V ~ chi2(dof) = 2 * Gamma(dof / 2).
Result<void> drawHeavyTailed(at::Tensor& x, const Distribution& dist, at::Generator& gen, const std::string& what)
{
    if (!(dist.dof > 0))
        return bridgeError(what, "heavy_tailed needs dof > 0");
    x.normal_(0.0, 1.0, gen);
    at::Tensor g = at::_standard_gamma(at::full(x.sizes(), dist.dof / 2.0, x.options()), gen);
    // A gamma draw can underflow to 0 for small dof; the floor keeps the quotient finite.
    const double tiny = x.scalar_type() == at::kDouble ? std::numeric_limits<double>::min()
                                                       : static_cast<double>(std::numeric_limits<float>::min());
    g.mul_(2.0 / dist.dof).clamp_min_(tiny);
    x.mul_(g.rsqrt_()).mul_(dist.scale);
    return {};
}

// Standard normal values, each row scaled by one of the scales, picked at random.
Result<void> drawMixedScales(at::Tensor& x, const Distribution& dist, at::Generator& gen, const std::string& what)
{
    if (dist.scales.empty())
        return bridgeError(what, "mixed_scales needs at least one scale");
    x.normal_(0.0, 1.0, gen);
    // A row is a last-dim slice (a 0-d or 1-d tensor is one row).
    const std::int64_t cols = x.dim() == 0 ? 1 : x.size(-1);
    const std::int64_t rows = x.numel() / cols;
    at::Tensor pick = at::randint(0, static_cast<std::int64_t>(dist.scales.size()), {rows}, gen,
                                  x.options().dtype(at::kLong));
    at::Tensor scales = at::tensor(at::ArrayRef<double>(dist.scales), at::TensorOptions().dtype(at::kDouble))
                            .to(x.device(), x.scalar_type())
                            .index_select(0, pick);
    x.view({rows, cols}).mul_(scales.unsqueeze(1));
    return {};
}

// A floating distribution's values in `x` (the working dtype), before clamping.
Result<void> drawFloats(at::Tensor& x, const Distribution& dist, at::Generator& gen, const std::string& what)
{
    switch (dist.kind) {
    case Distribution::Kind::Normal:
    case Distribution::Kind::Special:   // its special values are placed after the clamp
        x.normal_(dist.mean, dist.std, gen);
        return {};
    case Distribution::Kind::Uniform:
        x.uniform_(dist.low, dist.high, gen);
        return {};
    case Distribution::Kind::HeavyTailed:
        return drawHeavyTailed(x, dist, gen, what);
    case Distribution::Kind::MixedScales:
        return drawMixedScales(x, dist, gen, what);
    case Distribution::Kind::IntRange:
        break; // fillIntegers
    }
    return {};
}

// The special values of a `special` distribution written over the drawn ones.
Result<void> placeSpecials(at::Tensor& x, const Distribution& dist, at::Generator& gen, double limit, const std::string& what)
{
    if (dist.specialValues.empty())
        return bridgeError(what, "special needs at least one value");
    if (!(dist.fraction > 0 && dist.fraction <= 1))
        return bridgeError(what, "special needs a fraction in (0, 1]");
    // An exact count (at least one) so small test shapes still see every kind of value;
    // positions are a random permutation prefix, values cycle through the list.
    const std::int64_t n = x.numel();
    const std::int64_t k = std::clamp<std::int64_t>(std::llround(dist.fraction * static_cast<double>(n)), 1, n);
    std::vector<double> values;
    for (double v : dist.specialValues)
        values.push_back(std::isfinite(v) ? std::clamp(v, -limit, limit) : v);
    at::Tensor pos = at::randperm(n, gen, x.options().dtype(at::kLong)).narrow(0, 0, k);
    at::Tensor which = at::arange(k, x.options().dtype(at::kLong)).remainder_(static_cast<std::int64_t>(values.size()));
    at::Tensor vals = at::tensor(at::ArrayRef<double>(values), at::TensorOptions().dtype(at::kDouble))
                          .to(x.device(), x.scalar_type())
                          .index_select(0, which);
    x.view({-1}).index_copy_(0, pos, vals);
    return {};
}

} // namespace

Result<void> TorchBridge::fillInput(const RawTensor& dst, const Distribution& dist, std::uint64_t seed)
{
    const std::string kind(distributionKindName(dist.kind));
    const std::string what = "fill a tensor of " + std::string(dtypeName(dst.dtype)) + " with " + kind + " values";
    try {
        if (dst.elements() == 0)
            return {};
        if (!dst.data)
            return bridgeError(what, "the destination pointer is null");
        at::Tensor out = detail::wrap(dst);
        at::Generator gen = makeGenerator(out.device(), seed);
        if (dist.kind == Distribution::Kind::IntRange)
            return fillIntegers(out, dst, dist, gen);
        if (!isFloating(dst.dtype))
            return bridgeError(what, "distribution " + kind + " needs a floating dtype",
                               "use {\"kind\": \"int_range\", \"low\": ..., \"high\": ...} for integer and bool inputs");

        // Draw in fp32 (fp64 for fp64 inputs), clamp, then round once into the destination;
        // fp32/fp64 inputs are drawn in place.
        const at::ScalarType work = dst.dtype == DType::F64 ? at::kDouble : at::kFloat;
        at::Tensor x = out.scalar_type() == work ? out : at::empty(out.sizes(), out.options().dtype(work));
        const double limit = finiteMax(dst.dtype);
        if (auto r = drawFloats(x, dist, gen, what); !r)
            return r.error();
        x.clamp_(-limit, limit);
        if (dist.kind == Distribution::Kind::Special)
            if (auto r = placeSpecials(x, dist, gen, limit, what); !r)
                return r.error();
        if (!x.is_same(out))
            out.copy_(x);
        return {};
    } catch (const c10::Error& e) {
        return detail::torchError(what, e);
    } catch (const std::exception& e) {
        return bridgeError(what, what + " failed: " + e.what());
    }
}

} // namespace kf::device
