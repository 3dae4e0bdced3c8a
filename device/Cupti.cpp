#include "device/Cupti.h"

#include "engine/core/DynamicLibrary.h"

#include <cassert>
#include <cstdlib>
#include <vector>

namespace kf::device {

namespace {

std::vector<std::string> candidates()
{
    if (const char* p = std::getenv("KF_CUPTI_LIBRARY"); p && *p)
        return {p};
    std::vector<std::string> c{"libcupti.so.13", "libcupti.so"};
#ifdef KF_CUDA_TOOLKIT_ROOT
    for (const char* sub : {"/lib64/", "/lib/", "/extras/CUPTI/lib64/", "/targets/x86_64-linux/lib/"})
        c.push_back(std::string(KF_CUDA_TOOLKIT_ROOT) + sub + "libcupti.so");
#endif
    for (const char* root : {"/usr/local/cuda/lib64/", "/usr/local/cuda/extras/CUPTI/lib64/"})
        c.push_back(std::string(root) + "libcupti.so");
    return c;
}

Result<const Cupti*> load()
{
    static Cupti t;
    const LibrarySpec spec{candidates(), "libcupti (the CUDA profiling tools interface)",
                           "install the CUDA toolkit's CUPTI (it ships with CUDA 13), or set KF_CUPTI_LIBRARY to the "
                           "path of libcupti.so",
                           "libcupti",
                           "the Range Profiler and Profiler Host APIs need CUPTI from CUDA 12.6 or newer; set "
                           "KF_CUPTI_LIBRARY to a newer libcupti.so"};
    return loadFunctionTable(t, spec, [](SymbolBinder& sym) {
#define KF_CUPTI_LOAD(fn) sym.bind(t.fn, #fn)
        KF_CUPTI_LOAD(cuptiGetResultString);
        KF_CUPTI_LOAD(cuptiProfilerInitialize);
        KF_CUPTI_LOAD(cuptiProfilerDeInitialize);
        KF_CUPTI_LOAD(cuptiProfilerDeviceSupported);
        KF_CUPTI_LOAD(cuptiDeviceGetChipName);
        KF_CUPTI_LOAD(cuptiProfilerGetCounterAvailability);
        KF_CUPTI_LOAD(cuptiRangeProfilerEnable);
        KF_CUPTI_LOAD(cuptiRangeProfilerDisable);
        KF_CUPTI_LOAD(cuptiRangeProfilerSetConfig);
        KF_CUPTI_LOAD(cuptiRangeProfilerStart);
        KF_CUPTI_LOAD(cuptiRangeProfilerStop);
        KF_CUPTI_LOAD(cuptiRangeProfilerDecodeData);
        KF_CUPTI_LOAD(cuptiRangeProfilerGetCounterDataSize);
        KF_CUPTI_LOAD(cuptiRangeProfilerCounterDataImageInitialize);
        KF_CUPTI_LOAD(cuptiRangeProfilerGetCounterDataInfo);
        KF_CUPTI_LOAD(cuptiSubscribe);
        KF_CUPTI_LOAD(cuptiUnsubscribe);
        KF_CUPTI_LOAD(cuptiEnableCallback);
        KF_CUPTI_LOAD(cuptiProfilerHostInitialize);
        KF_CUPTI_LOAD(cuptiProfilerHostDeinitialize);
        KF_CUPTI_LOAD(cuptiProfilerHostGetSupportedChips);
        KF_CUPTI_LOAD(cuptiProfilerHostGetMetricProperties);
        KF_CUPTI_LOAD(cuptiProfilerHostConfigAddMetrics);
        KF_CUPTI_LOAD(cuptiProfilerHostGetConfigImageSize);
        KF_CUPTI_LOAD(cuptiProfilerHostGetConfigImage);
        KF_CUPTI_LOAD(cuptiProfilerHostGetNumOfPasses);
        KF_CUPTI_LOAD(cuptiProfilerHostEvaluateToGpuValues);
#undef KF_CUPTI_LOAD
    });
}

} // namespace

const Result<const Cupti*>& Cupti::get()
{
    static const Result<const Cupti*> table = load();
    return table;
}

const Cupti& cupti()
{
    const auto& t = Cupti::get();
    assert(t.ok());
    return *t.value();
}

std::string cuptiResultName(CUptiResult r)
{
    const char* s = nullptr;
    if (Cupti::get() && cupti().cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s && *s)
        return s;
    return "CUPTI error " + std::to_string(static_cast<int>(r));
}

std::string howToEnableCounters()
{
    return "GPU performance counters are restricted to administrators on this machine. Run KernelForge as root, or "
           "allow every user: put 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' into "
           "/etc/modprobe.d/nvidia-profiling.conf and reload the driver (or reboot); in a container, start it with "
           "--cap-add SYS_ADMIN. Verification and timing work without counters. "
           "(https://developer.nvidia.com/ERR_NVGPUCTRPERM)";
}

Error cuptiError(CUptiResult r, const char* call)
{
    Error e = Error::failed("profile with CUPTI", std::string(call) + " failed with " + cuptiResultName(r));
    switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
        e.hint = howToEnableCounters();
        break;
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
        e.hint = "this virtual GPU does not expose performance counters; ask the host to enable profiling for the vGPU";
        break;
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
        e.hint = "this GPU has no performance counters for applications";
        break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        e.hint = "another profiler (Nsight Compute, Nsight Systems, a PyTorch profiler) holds the counters; close it and "
                 "profile again";
        break;
    default:
        break;
    }
    return e;
}

} // namespace kf::device
