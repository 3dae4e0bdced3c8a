#include "device/CudaDriver.h"

#include "engine/core/DynamicLibrary.h"

#include <atomic>
#include <cassert>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace kf::device {

// The versioned names the driver must give us; a toolkit whose header stops renaming one of
// these would silently bind the legacy ABI, so the build refuses it.
static_assert(std::string_view(KF_CU_SYMBOL(cuMemAlloc)) == "cuMemAlloc_v2");
static_assert(std::string_view(KF_CU_SYMBOL(cuMemFree)) == "cuMemFree_v2");
static_assert(std::string_view(KF_CU_SYMBOL(cuMemcpyDtoH)) == "cuMemcpyDtoH_v2");
static_assert(std::string_view(KF_CU_SYMBOL(cuMemcpyHtoD)) == "cuMemcpyHtoD_v2");
static_assert(std::string_view(KF_CU_SYMBOL(cuMemsetD8)) == "cuMemsetD8_v2");
static_assert(std::string_view(KF_CU_SYMBOL(cuModuleGetGlobal)) == "cuModuleGetGlobal_v2");
static_assert(std::string_view(KF_CU_SYMBOL(cuDevicePrimaryCtxRelease)) == "cuDevicePrimaryCtxRelease_v2");
static_assert(std::string_view(KF_CU_SYMBOL(cuEventDestroy)) == "cuEventDestroy_v2");
static_assert(std::string_view(KF_CU_SYMBOL(cuMemsetD32Async)) == "cuMemsetD32Async");

namespace {

std::atomic<int> g_sticky{CUDA_SUCCESS};

std::vector<std::string> candidates()
{
    // An explicit choice is the only candidate: a pinned library must not silently become another.
    if (const char* p = std::getenv("KF_CUDA_DRIVER_LIBRARY"); p && *p)
        return {p};
    // The driver is installed with the kernel module, never with the toolkit: loader path only.
    return {"libcuda.so.1", "libcuda.so"};
}

Result<const CudaDriver*> load()
{
    static CudaDriver t;
    const LibrarySpec spec{candidates(), "libcuda (the NVIDIA driver)",
                           "install the NVIDIA driver, or set KF_CUDA_DRIVER_LIBRARY to libcuda.so.1", "libcuda",
                           "update the NVIDIA driver to one that supports CUDA 12.4 or newer"};
    return loadFunctionTable(t, spec, [](SymbolBinder& sym) {
#define KF_CU_LOAD(fn) sym.bind(t.fn, KF_CU_SYMBOL(fn))
        KF_CU_LOAD(cuInit);
        KF_CU_LOAD(cuDriverGetVersion);
        KF_CU_LOAD(cuGetErrorName);
        KF_CU_LOAD(cuGetErrorString);
        KF_CU_LOAD(cuDeviceGetCount);
        KF_CU_LOAD(cuDeviceGet);
        KF_CU_LOAD(cuDeviceGetName);
        KF_CU_LOAD(cuDeviceGetAttribute);
        KF_CU_LOAD(cuDeviceTotalMem);
        KF_CU_LOAD(cuDevicePrimaryCtxRetain);
        KF_CU_LOAD(cuDevicePrimaryCtxRelease);
        KF_CU_LOAD(cuCtxSetCurrent);
        KF_CU_LOAD(cuCtxGetCurrent);
        KF_CU_LOAD(cuCtxSynchronize);
        KF_CU_LOAD(cuCtxSetLimit);
        KF_CU_LOAD(cuMemGetInfo);
        KF_CU_LOAD(cuMemAlloc);
        KF_CU_LOAD(cuMemFree);
        KF_CU_LOAD(cuMemcpyHtoD);
        KF_CU_LOAD(cuMemcpyDtoH);
        KF_CU_LOAD(cuMemcpyHtoDAsync);
        KF_CU_LOAD(cuMemcpyDtoHAsync);
        KF_CU_LOAD(cuMemsetD8);
        KF_CU_LOAD(cuMemsetD8Async);
        KF_CU_LOAD(cuMemsetD16Async);
        KF_CU_LOAD(cuMemsetD32Async);
        KF_CU_LOAD(cuMemsetD2D32Async);
        KF_CU_LOAD(cuModuleLoadData);
        KF_CU_LOAD(cuModuleUnload);
        KF_CU_LOAD(cuModuleGetFunction);
        KF_CU_LOAD(cuModuleGetGlobal);
        KF_CU_LOAD(cuFuncSetAttribute);
        KF_CU_LOAD(cuFuncGetAttribute);
        KF_CU_LOAD(cuLaunchKernel);
        KF_CU_LOAD(cuEventCreate);
        KF_CU_LOAD(cuEventDestroy);
        KF_CU_LOAD(cuEventRecord);
        KF_CU_LOAD(cuEventSynchronize);
        KF_CU_LOAD(cuStreamSynchronize);
#undef KF_CU_LOAD
        // Drivers before CUDA 12.8 only have the unversioned cuEventElapsedTime (same prototype).
        sym.bind(t.cuEventElapsedTime, KF_CU_SYMBOL(cuEventElapsedTime), true, "cuEventElapsedTime");
        // Persisting L2 lines exist from compute capability 8.0 (CUDA 11); absent is not an error.
        sym.bind(t.cuCtxResetPersistingL2Cache, KF_CU_SYMBOL(cuCtxResetPersistingL2Cache), false);
        // Used to check the plan's argument sizes against the kernel; older drivers skip that check.
        sym.bind(t.cuFuncGetParamInfo, KF_CU_SYMBOL(cuFuncGetParamInfo), false);
        // Only to ask NVML how much memory is free when no context can be made.
        sym.bind(t.cuDeviceGetPCIBusId, KF_CU_SYMBOL(cuDeviceGetPCIBusId), false);
        // The GPU's UUID names where a report ran (placement); a driver without it names the index only.
        sym.bind(t.cuDeviceGetUuid, KF_CU_SYMBOL(cuDeviceGetUuid), false);
    });
}

// For results the driver cannot name itself (a stub libcuda, or cuInit failing early).
const char* fallbackName(CUresult r, const char** sentence)
{
    switch (static_cast<int>(r)) {
    case 34: *sentence = "libcuda is the toolkit's stub library, not a real driver"; return "CUDA_ERROR_STUB_LIBRARY";
    case 35: *sentence = "the installed NVIDIA driver is older than this CUDA version needs"; return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case 100: *sentence = "no CUDA-capable device is detected"; return "CUDA_ERROR_NO_DEVICE";
    case 101: *sentence = "invalid device ordinal"; return "CUDA_ERROR_INVALID_DEVICE";
    case 803: *sentence = "the driver and the kernel module versions do not match"; return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case 999: *sentence = "unknown error"; return "CUDA_ERROR_UNKNOWN";
    default: *sentence = "unknown CUDA error"; return nullptr;
    }
}

// __FILE__ may be absolute; reports show the path inside the repository.
std::string_view shortFile(const char* file)
{
    std::string_view f(file);
    for (std::string_view root : {"/device/", "/engine/"})
        if (auto p = f.rfind(root); p != std::string_view::npos)
            return f.substr(p + 1);
    return f;
}

} // namespace

const Result<const CudaDriver*>& CudaDriver::get()
{
    static const Result<const CudaDriver*> instance = load();
    return instance;
}

const CudaDriver& cuda()
{
    const auto& d = CudaDriver::get();
    assert(d.ok());
    return *d.value();
}

std::string cuResultName(CUresult r)
{
    const char* s = nullptr;
    const auto& d = CudaDriver::get();
    if (d.ok() && d.value()->cuGetErrorName(r, &s) == CUDA_SUCCESS && s)
        return s;
    const char* sentence = nullptr;
    if (const char* name = fallbackName(r, &sentence))
        return name;
    return "CUDA error " + std::to_string(static_cast<int>(r));
}

std::string cuResultString(CUresult r)
{
    const char* s = nullptr;
    const auto& d = CudaDriver::get();
    if (d.ok() && d.value()->cuGetErrorString(r, &s) == CUDA_SUCCESS && s)
        return s;
    fallbackName(r, &s);
    return s;
}

bool isStickyError(CUresult r)
{
    switch (static_cast<int>(r)) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_UNKNOWN:
    // By number: these appeared after the oldest toolkit we build with (12.4).
    case 226: // CUDA_ERROR_CONTAINED
    case 721: // CUDA_ERROR_TENSOR_MEMORY_LEAK
    case 810: // CUDA_ERROR_MPS_CLIENT_TERMINATED
        return true;
    default:
        return false;
    }
}

void noteResult(CUresult r)
{
    if (isStickyError(r)) {
        int expected = CUDA_SUCCESS;
        g_sticky.compare_exchange_strong(expected, static_cast<int>(r));
    }
}

std::optional<CUresult> stickyError()
{
    const int r = g_sticky.load();
    if (r == CUDA_SUCCESS)
        return std::nullopt;
    return static_cast<CUresult>(r);
}

Error cuError(CUresult r, const char* call, const char* file, int line)
{
    noteResult(r);
    Error e;
    e.what = std::string("call ") + call;
    e.why = std::string(call) + " failed with " + cuResultName(r) + " (" + cuResultString(r) + ") at " +
            std::string(shortFile(file)) + ":" + std::to_string(line);
    if (isStickyError(r))
        e.hint = "the CUDA context is lost; the runner restarts for the next request";
    else if (r == CUDA_ERROR_OUT_OF_MEMORY) {
        e.kind = kGpuOutOfMemory;
        e.hint = "free GPU memory held by other processes (nvidia-smi lists them), or use smaller shapes";
    }
    return e;
}

} // namespace kf::device
