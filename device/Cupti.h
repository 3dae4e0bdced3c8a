#pragma once
// Function table for libcupti (CUDA 13's Range Profiler and Profiler Host APIs), loaded with
// dlopen on first use like libcuda: nothing links CUPTI, so every binary starts without it and a
// profile says precisely what is missing. The host half (metric catalogue, configuration images,
// pass counts, evaluation) needs no GPU; the target half (range profiler) needs a context.
//
// Thread affinity: the table is immutable after load and usable from any thread.

#include "engine/core/Result.h"

#include <cupti_callbacks.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <string>

namespace kf::device {

struct Cupti {
    decltype(&::cuptiGetResultString) cuptiGetResultString = nullptr;

    // Target: needs a device and, for most, a context.
    decltype(&::cuptiProfilerInitialize) cuptiProfilerInitialize = nullptr;
    decltype(&::cuptiProfilerDeInitialize) cuptiProfilerDeInitialize = nullptr;
    decltype(&::cuptiProfilerDeviceSupported) cuptiProfilerDeviceSupported = nullptr;
    decltype(&::cuptiDeviceGetChipName) cuptiDeviceGetChipName = nullptr;
    decltype(&::cuptiProfilerGetCounterAvailability) cuptiProfilerGetCounterAvailability = nullptr;
    decltype(&::cuptiRangeProfilerEnable) cuptiRangeProfilerEnable = nullptr;
    decltype(&::cuptiRangeProfilerDisable) cuptiRangeProfilerDisable = nullptr;
    decltype(&::cuptiRangeProfilerSetConfig) cuptiRangeProfilerSetConfig = nullptr;
    decltype(&::cuptiRangeProfilerStart) cuptiRangeProfilerStart = nullptr;
    decltype(&::cuptiRangeProfilerStop) cuptiRangeProfilerStop = nullptr;
    decltype(&::cuptiRangeProfilerDecodeData) cuptiRangeProfilerDecodeData = nullptr;
    decltype(&::cuptiRangeProfilerGetCounterDataSize) cuptiRangeProfilerGetCounterDataSize = nullptr;
    decltype(&::cuptiRangeProfilerCounterDataImageInitialize) cuptiRangeProfilerCounterDataImageInitialize = nullptr;
    decltype(&::cuptiRangeProfilerGetCounterDataInfo) cuptiRangeProfilerGetCounterDataInfo = nullptr;

    // Callbacks: the names of the kernels a profiled call launches (auto ranges are numbered).
    decltype(&::cuptiSubscribe) cuptiSubscribe = nullptr;
    decltype(&::cuptiUnsubscribe) cuptiUnsubscribe = nullptr;
    decltype(&::cuptiEnableCallback) cuptiEnableCallback = nullptr;

    // Host: no GPU needed.
    decltype(&::cuptiProfilerHostInitialize) cuptiProfilerHostInitialize = nullptr;
    decltype(&::cuptiProfilerHostDeinitialize) cuptiProfilerHostDeinitialize = nullptr;
    decltype(&::cuptiProfilerHostGetSupportedChips) cuptiProfilerHostGetSupportedChips = nullptr;
    decltype(&::cuptiProfilerHostGetMetricProperties) cuptiProfilerHostGetMetricProperties = nullptr;
    decltype(&::cuptiProfilerHostConfigAddMetrics) cuptiProfilerHostConfigAddMetrics = nullptr;
    decltype(&::cuptiProfilerHostGetConfigImageSize) cuptiProfilerHostGetConfigImageSize = nullptr;
    decltype(&::cuptiProfilerHostGetConfigImage) cuptiProfilerHostGetConfigImage = nullptr;
    decltype(&::cuptiProfilerHostGetNumOfPasses) cuptiProfilerHostGetNumOfPasses = nullptr;
    decltype(&::cuptiProfilerHostEvaluateToGpuValues) cuptiProfilerHostEvaluateToGpuValues = nullptr;

    std::string path;   ///< where libcupti was loaded from

    /// Loads once per process (thread-safe); later calls return the same table or the same error.
    /// KF_CUPTI_LIBRARY pins the library; else the soname first (so a copy LibTorch already
    /// loaded is reused, never a second one beside it), then the toolkit's folders.
    static const Result<const Cupti*>& get();
};

/// The loaded table. Precondition: Cupti::get() succeeded (checked with an assert).
const Cupti& cupti();

/// "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" (or "CUPTI error 35" when CUPTI cannot name it).
std::string cuptiResultName(CUptiResult r);

/// The Error for a failed CUPTI call. For the permission and support errors the hint says how
/// to enable counters (driver option, root, container capability).
Error cuptiError(CUptiResult r, const char* call);

/// What a user can do when counters are not permitted on this machine.
std::string howToEnableCounters();

} // namespace kf::device

/// Calls CUPTI function `fn` through the table with a params struct.
#define KF_CUPTI(fn, params) (::kf::device::cupti().fn(params))

/// In a function returning Result<T>: calls `fn` and returns an Error naming it when it fails.
#define KF_CUPTI_CHECK(fn, params)                                                          \
    do {                                                                                    \
        const CUptiResult kfCuptiResult_ = KF_CUPTI(fn, params);                            \
        if (kfCuptiResult_ != CUPTI_SUCCESS)                                                \
            return ::kf::device::cuptiError(kfCuptiResult_, #fn);                           \
    } while (0)
