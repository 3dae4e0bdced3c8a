#pragma once
// Function table for libcuda, loaded with dlopen("libcuda.so.1") on first use: nothing links the
// driver, so the runner starts (and answers in CPU mode) on machines without one.
//
// Members carry the driver's own function names. <cuda.h> #defines many of them to versioned
// entry points (cuMemAlloc -> cuMemAlloc_v2, cuEventElapsedTime -> cuEventElapsedTime_v2 ...);
// the same macro renames our member, its decltype prototype and, through KF_CU_SYMBOL, the
// string we dlsym, so table, prototype and symbol always agree with the header we compile with.
//
// Thread affinity: the table is immutable after load and usable from any thread; the sticky
// error state is process-wide (a lost context is lost for every thread).

#include "engine/core/Result.h"

#include <cuda.h>

#include <optional>
#include <string>

namespace kf::device {

struct CudaDriver {
    decltype(&::cuInit) cuInit = nullptr;
    decltype(&::cuDriverGetVersion) cuDriverGetVersion = nullptr;
    decltype(&::cuGetErrorName) cuGetErrorName = nullptr;
    decltype(&::cuGetErrorString) cuGetErrorString = nullptr;

    decltype(&::cuDeviceGetCount) cuDeviceGetCount = nullptr;
    decltype(&::cuDeviceGet) cuDeviceGet = nullptr;
    decltype(&::cuDeviceGetName) cuDeviceGetName = nullptr;
    decltype(&::cuDeviceGetAttribute) cuDeviceGetAttribute = nullptr;
    decltype(&::cuDeviceTotalMem) cuDeviceTotalMem = nullptr;
    decltype(&::cuDeviceGetPCIBusId) cuDeviceGetPCIBusId = nullptr; ///< optional: names the GPU to NVML
    decltype(&::cuDeviceGetUuid) cuDeviceGetUuid = nullptr;         ///< optional: the GPU's UUID for placement
    decltype(&::cuDevicePrimaryCtxRetain) cuDevicePrimaryCtxRetain = nullptr;
    decltype(&::cuDevicePrimaryCtxRelease) cuDevicePrimaryCtxRelease = nullptr;

    decltype(&::cuCtxSetCurrent) cuCtxSetCurrent = nullptr;
    decltype(&::cuCtxGetCurrent) cuCtxGetCurrent = nullptr;
    decltype(&::cuCtxSynchronize) cuCtxSynchronize = nullptr;
    decltype(&::cuCtxResetPersistingL2Cache) cuCtxResetPersistingL2Cache = nullptr; ///< optional
    decltype(&::cuCtxSetLimit) cuCtxSetLimit = nullptr;

    decltype(&::cuMemGetInfo) cuMemGetInfo = nullptr;
    decltype(&::cuMemAlloc) cuMemAlloc = nullptr;
    decltype(&::cuMemFree) cuMemFree = nullptr;
    decltype(&::cuMemcpyHtoD) cuMemcpyHtoD = nullptr;
    decltype(&::cuMemcpyDtoH) cuMemcpyDtoH = nullptr;
    decltype(&::cuMemcpyHtoDAsync) cuMemcpyHtoDAsync = nullptr;
    decltype(&::cuMemcpyDtoHAsync) cuMemcpyDtoHAsync = nullptr;
    decltype(&::cuMemsetD8) cuMemsetD8 = nullptr;
    decltype(&::cuMemsetD8Async) cuMemsetD8Async = nullptr;
    decltype(&::cuMemsetD16Async) cuMemsetD16Async = nullptr;
    decltype(&::cuMemsetD32Async) cuMemsetD32Async = nullptr;
    decltype(&::cuMemsetD2D32Async) cuMemsetD2D32Async = nullptr;

    decltype(&::cuModuleLoadData) cuModuleLoadData = nullptr;
    decltype(&::cuModuleUnload) cuModuleUnload = nullptr;
    decltype(&::cuModuleGetFunction) cuModuleGetFunction = nullptr;
    decltype(&::cuModuleGetGlobal) cuModuleGetGlobal = nullptr;
    decltype(&::cuFuncSetAttribute) cuFuncSetAttribute = nullptr;
    decltype(&::cuFuncGetAttribute) cuFuncGetAttribute = nullptr;
    decltype(&::cuFuncGetParamInfo) cuFuncGetParamInfo = nullptr; ///< optional (driver >= 12.4)
    decltype(&::cuLaunchKernel) cuLaunchKernel = nullptr;

    decltype(&::cuEventCreate) cuEventCreate = nullptr;
    decltype(&::cuEventDestroy) cuEventDestroy = nullptr;
    decltype(&::cuEventRecord) cuEventRecord = nullptr;
    decltype(&::cuEventSynchronize) cuEventSynchronize = nullptr;
    decltype(&::cuEventElapsedTime) cuEventElapsedTime = nullptr;
    decltype(&::cuStreamSynchronize) cuStreamSynchronize = nullptr;

    std::string path;   ///< where libcuda was loaded from

    /// Loads once per process (thread-safe); later calls return the same table or the same error.
    /// The error says which library or symbol is missing; it does not call cuInit.
    static const Result<const CudaDriver*>& get();
};

/// The loaded table. Precondition: CudaDriver::get() succeeded (checked with an assert).
const CudaDriver& cuda();

/// "CUDA_ERROR_ILLEGAL_ADDRESS" (or the number when the driver does not know it).
std::string cuResultName(CUresult r);
/// The driver's own sentence for `r`, e.g. "an illegal memory access was encountered".
std::string cuResultString(CUresult r);

/// Errors after which the context is unusable for good (VERIFICATION's "sticky" errors): the
/// runner must report them as fatal and exit so the supervisor starts a fresh process.
bool isStickyError(CUresult r);

/// Builds the Error for a failed driver call: `call` is the driver function's name, file and
/// line locate the check. Records sticky errors in the process-wide state below.
Error cuError(CUresult r, const char* call, const char* file, int line);

/// The first sticky error seen by any check in this process, if any.
std::optional<CUresult> stickyError();
/// Records `r` when it is sticky (for results checked without cuError).
void noteResult(CUresult r);

} // namespace kf::device

/// Expands to the dlsym name of a driver function after <cuda.h>'s renaming macros.
#define KF_CU_SYMBOL(fn) KF_CU_SYMBOL_TEXT(fn)
#define KF_CU_SYMBOL_TEXT(fn) #fn

/// Calls driver function `fn` through the table, e.g. KF_CU(cuMemAlloc, &ptr, bytes).
#define KF_CU(fn, ...) (::kf::device::cuda().fn(__VA_ARGS__))

/// In a function returning Result<T> (or Error): calls `fn` and returns an Error naming the call,
/// the file and the line when it fails (docs/conventions.md: never log-and-continue).
#define KF_CU_CHECK(fn, ...)                                                                \
    do {                                                                                    \
        const CUresult kfCuResult_ = KF_CU(fn, __VA_ARGS__);                                \
        if (kfCuResult_ != CUDA_SUCCESS)                                                    \
            return ::kf::device::cuError(kfCuResult_, #fn, __FILE__, __LINE__);             \
    } while (0)
