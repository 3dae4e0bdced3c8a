#include "device/LaunchPlan.h"

#include "device/CudaDriver.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

namespace kf::device {

namespace {

constexpr int kDefaultDynamicShared = 48 * 1024;

std::string argLabel(const LaunchArg& a, size_t i)
{
    return "argument " + std::to_string(i) + " (" + (a.kind == LaunchArg::Kind::Tensor ? a.tensor : a.scalar.text()) + ")";
}

template <class T>
std::array<unsigned char, 8> slot(T v)
{
    static_assert(sizeof(T) <= 8);
    std::array<unsigned char, 8> s{};
    std::memcpy(s.data(), &v, sizeof v);
    return s;
}

// Integers must be exact and in range: a wrapped N would launch a kernel on the wrong size.
Result<std::array<unsigned char, 8>> packScalar(const LaunchArg& a, const Value& v, const std::string& label)
{
    const std::string& t = a.scalarType;
    if (t == "fp32")
        return slot(static_cast<float>(v.asDouble()));
    if (t == "fp64")
        return slot(v.asDouble());
    std::int64_t i = v.i;
    if (!v.isInt) {
        if (!std::isfinite(v.d) || v.d != std::trunc(v.d) || std::fabs(v.d) > 9.2e18)
            return Error::failed("pack " + label, "the value " + std::to_string(v.d) + " is not an integer but the type is " + t, "use int(...) in the expression or a floating scalar type");
        i = static_cast<std::int64_t>(v.d);
    }
    auto range = [&](std::int64_t lo, std::int64_t hi) -> Result<void> {
        if (i < lo || i > hi)
            return Error::failed("pack " + label, "the value " + std::to_string(i) + " does not fit in " + t);
        return {};
    };
    if (t == "int32") {
        if (auto r = range(std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()); !r)
            return r.error();
        return slot(static_cast<std::int32_t>(i));
    }
    if (t == "uint32") {
        if (auto r = range(0, std::numeric_limits<std::uint32_t>::max()); !r)
            return r.error();
        return slot(static_cast<std::uint32_t>(i));
    }
    if (t == "int64")
        return slot(i);
    if (t == "uint64") {
        if (auto r = range(0, std::numeric_limits<std::int64_t>::max()); !r)
            return r.error();
        return slot(static_cast<std::uint64_t>(i));
    }
    return Error::failed("pack " + label, "unknown scalar type \"" + t + "\"", "use int32, int64, uint32, uint64, fp32 or fp64");
}

// How many parameters the kernel takes, with their sizes; empty optional when the driver cannot say.
std::optional<std::vector<size_t>> kernelParameterSizes(CUfunction f)
{
    if (!cuda().cuFuncGetParamInfo)
        return std::nullopt;
    std::vector<size_t> sizes;
    for (size_t i = 0; i < 4096; ++i) {
        size_t offset = 0, size = 0;
        const CUresult r = cuda().cuFuncGetParamInfo(f, i, &offset, &size);
        if (r == CUDA_ERROR_INVALID_VALUE)
            return sizes;      // past the last parameter
        if (r != CUDA_SUCCESS)
            return std::nullopt;
        sizes.push_back(size);
    }
    return std::nullopt;
}

} // namespace

std::string BoundLaunch::describe() const
{
    return "launch " + std::to_string(index) + " (" + kernel + ")";
}

int argumentBytes(const LaunchArg& a)
{
    if (a.kind == LaunchArg::Kind::Tensor)
        return 8;
    const std::string& t = a.scalarType;
    return (t == "int32" || t == "uint32" || t == "fp32") ? 4 : 8;
}

Result<LaunchPlan> LaunchPlan::resolve(const Candidate& candidate, const CudaModule& module,
                                       const std::map<std::string, std::string>& loweredNames)
{
    LaunchPlan p;
    p.m_candidate = &candidate;
    for (size_t li = 0; li < candidate.launches.size(); ++li) {
        const Launch& l = candidate.launches[li];
        const std::string what = "launch " + std::to_string(li) + " (" + l.kernel + ")";
        auto it = loweredNames.find(l.kernel);
        // A kernel declared extern "C" has no lowered name: its name is the expression itself.
        const std::string mangled = it != loweredNames.end() ? it->second : l.kernel;
        auto f = module.function(mangled, l.kernel);
        if (!f) {
            Error e = f.error();
            e.what = "resolve " + what;
            return e;
        }
        if (auto sizes = kernelParameterSizes(f.value())) {
            if (sizes->size() != l.args.size())
                return Error::failed("resolve " + what, "the kernel takes " + std::to_string(sizes->size()) + " parameters but the plan passes " +
                                 std::to_string(l.args.size()), "make the launch's \"args\" match the kernel's signature");
            for (size_t ai = 0; ai < l.args.size(); ++ai) {
                const int bytes = argumentBytes(l.args[ai]);
                if (static_cast<size_t>(bytes) != (*sizes)[ai])
                    return Error::failed("resolve " + what, argLabel(l.args[ai], ai) + " is passed as " + std::to_string(bytes) +
                                     " bytes but the kernel's parameter " + std::to_string(ai) + " takes " +
                                     std::to_string((*sizes)[ai]), "give the scalar the kernel's type (\"type\": int32, int64, fp32 ...)");
            }
        }
        p.m_functions.push_back(f.value());
        p.m_limits.push_back({CudaModule::attribute(f.value(), CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024),
                              CudaModule::attribute(f.value(), CU_FUNC_ATTRIBUTE_NUM_REGS),
                              CudaModule::attribute(f.value(), CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)});
    }
    return p;
}

Result<std::vector<BoundLaunch>> LaunchPlan::bind(const Task& task, const ShapeBinding& shape,
                                                  const std::map<std::string, CUdeviceptr>& pointers,
                                                  const DeviceInfo& device) const
{
    std::vector<BoundLaunch> out;
    const Env env = task.environment(*m_candidate, shape);
    for (size_t li = 0; li < m_candidate->launches.size(); ++li) {
        const Launch& l = m_candidate->launches[li];
        BoundLaunch b;
        b.index = static_cast<int>(li);
        b.kernel = l.kernel;
        b.function = m_functions[li];
        const std::string what = b.describe() + " at " + shape.describe();
        auto geometry = evaluateLaunch(task, *m_candidate, l, shape);
        if (!geometry)
            return Error::failed("configure " + what, geometry.error().why);
        for (int d = 0; d < 3; ++d) {
            b.grid[d] = static_cast<unsigned>(geometry->grid[d]);
            b.block[d] = static_cast<unsigned>(geometry->block[d]);
        }
        // The kernel's own limit on the block (its __launch_bounds__, or the registers it needs):
        // beyond it cuLaunchKernel says only "invalid argument", once per launch.
        const std::int64_t threads = std::int64_t(b.block[0]) * b.block[1] * b.block[2];
        const KernelLimits& limits = m_limits[li];
        const int maxThreads = limits.maxThreadsPerBlock;
        if (threads > maxThreads) {
            const int regs = limits.registers;
            return Error::failed("configure " + what, "the block has " + std::to_string(threads) + " threads but " + l.kernel + " allows at most " +
                             std::to_string(maxThreads) + " per block (its __launch_bounds__" +
                             (regs > 0 ? ", or its " + std::to_string(regs) + " registers per thread" : std::string()) + ")", "launch it with at most " + std::to_string(maxThreads) +
                             " threads per block (the launch plan's \"block\"), or raise __launch_bounds__ in the kernel");
        }
        b.localBytes = limits.localBytes;
        const std::int64_t shared = geometry->sharedBytes;
        if (shared < 0 || shared > device.maxSharedPerBlockOptin)
            return Error::failed("configure " + what, "it asks for " + std::to_string(shared) + " bytes of dynamic shared memory; this GPU allows at most " +
                             std::to_string(device.maxSharedPerBlockOptin) + " per block", "reduce shared_bytes");
        b.sharedBytes = static_cast<unsigned>(shared);
        const int staticShared = CudaModule::staticSharedBytes(b.function);
        if (shared > 0 && shared + staticShared > kDefaultDynamicShared) {
            // Above 48 KiB in total the kernel must opt in, or the launch fails with a bare
            // "invalid argument"; the driver checks the sum against the device's opt-in limit.
            if (auto r = CudaModule::allowDynamicShared(b.function, static_cast<int>(shared)); !r) {
                Error e = r.error();
                e.what = "allow " + std::to_string(shared) + " bytes of dynamic shared memory for " + what;
                e.hint = "the kernel has " + std::to_string(staticShared) + " bytes of static shared memory; this GPU allows " +
                         std::to_string(device.maxSharedPerBlockOptin) + " in total per block";
                return e;
            }
        }
        for (size_t ai = 0; ai < l.args.size(); ++ai) {
            const LaunchArg& a = l.args[ai];
            if (a.kind == LaunchArg::Kind::Tensor) {
                auto it = pointers.find(a.tensor);
                if (it == pointers.end())
                    return Error::failed("configure " + what, argLabel(a, ai) + " names no buffer of this task");
                b.args.push_back(slot(static_cast<unsigned long long>(it->second)));
                continue;
            }
            auto v = a.scalar.eval(env);
            if (!v)
                return Error::failed("configure " + what, argLabel(a, ai) + ": " + v.error().why);
            auto packed = packScalar(a, v.value(), argLabel(a, ai) + " of " + what);
            if (!packed)
                return packed.error();
            b.args.push_back(packed.value());
        }
        out.push_back(std::move(b));
    }
    return out;
}

Result<void> LaunchPlan::enqueue(const BoundLaunch& l, CUstream stream)
{
    // kernelParams[i] points at argument i's value; the driver copies the values at launch time.
    std::vector<void*> params;
    params.reserve(l.args.size());
    for (const auto& a : l.args)
        params.push_back(const_cast<unsigned char*>(a.data()));
    const CUresult r = KF_CU(cuLaunchKernel, l.function, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1],
                             l.block[2], l.sharedBytes, stream, params.empty() ? nullptr : params.data(), nullptr);
    if (r != CUDA_SUCCESS) {
        Error e = cuError(r, "cuLaunchKernel", __FILE__, __LINE__);
        e.what = l.describe();
        e.why = "cuLaunchKernel refused it: " + cuResultString(r) + " (" + cuResultName(r) + ")";
        if (r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
            e.hint = "the block needs more registers or shared memory than an SM has; use a smaller block or __launch_bounds__";
        if (r == CUDA_ERROR_OUT_OF_MEMORY && l.localBytes >= 4096) {
            // The driver reserves the per-thread local memory for every thread the GPU can hold at
            // once; a large stack frame (a big local array, deep spills) cannot get it.
            e.why = "cuLaunchKernel could not reserve local memory: " + l.kernel + " uses " + std::to_string(l.localBytes / 1024) +
                    " KiB of local memory per thread (its stack frame: local arrays and spills), which the driver must "
                    "reserve for every thread the GPU can run at once";
            e.hint = "move large per-thread arrays to shared or global memory, or make them smaller (`kforge compile` shows "
                     "the stack frame and spills)";
            e.kind.clear(); // the kernel's own demand, not memory that other processes hold
        }
        return e;
    }
    return {};
}

} // namespace kf::device
