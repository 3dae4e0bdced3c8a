#include "device/GpuMemory.h"

#include "engine/core/DynamicLibrary.h"

#include <cstdio>
#include <mutex>

namespace kf::device {

namespace {

// NVML's C API (nvml.h), declared here so no NVML header is needed to build.
struct NvmlMemory {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};
using NvmlInit = int (*)();
using NvmlByBusId = int (*)(const char*, void**);
using NvmlMemoryInfo = int (*)(void*, NvmlMemory*);

struct Nvml {
    DynamicLibrary lib;
    NvmlByBusId byBusId = nullptr;
    NvmlMemoryInfo memoryInfo = nullptr;
    bool ready = false;
};

const Nvml& nvml()
{
    static Nvml n;
    static std::once_flag once;
    std::call_once(once, [] {
        auto lib = DynamicLibrary::open({"libnvidia-ml.so.1", "libnvidia-ml.so"}, "NVML", {});
        if (!lib)
            return;
        n.lib = std::move(lib.value());
        auto init = reinterpret_cast<NvmlInit>(n.lib.symbol("nvmlInit_v2"));
        n.byBusId = reinterpret_cast<NvmlByBusId>(n.lib.symbol("nvmlDeviceGetHandleByPciBusId_v2"));
        n.memoryInfo = reinterpret_cast<NvmlMemoryInfo>(n.lib.symbol("nvmlDeviceGetMemoryInfo"));
        n.ready = init && n.byBusId && n.memoryInfo && init() == 0;
    });
    return n;
}

std::string gib(std::int64_t bytes)
{
    char b[32];
    std::snprintf(b, sizeof b, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
    return b;
}

} // namespace

std::optional<MemoryUse> memoryUse()
{
    const auto& d = CudaDriver::get();
    if (!d)
        return std::nullopt;
    std::size_t freeBytes = 0, total = 0;
    if (d.value()->cuMemGetInfo(&freeBytes, &total) != CUDA_SUCCESS)
        return std::nullopt;
    return MemoryUse{static_cast<std::int64_t>(freeBytes), static_cast<std::int64_t>(total)};
}

std::optional<MemoryUse> memoryUseFromNvml(CUdevice device)
{
    const auto& d = CudaDriver::get();
    if (!d || !d.value()->cuDeviceGetPCIBusId)
        return std::nullopt;
    char busId[32] = {};
    if (d.value()->cuDeviceGetPCIBusId(busId, sizeof busId, device) != CUDA_SUCCESS)
        return std::nullopt;
    const Nvml& n = nvml();
    if (!n.ready)
        return std::nullopt;
    void* handle = nullptr;
    NvmlMemory m{};
    if (n.byBusId(busId, &handle) != 0 || n.memoryInfo(handle, &m) != 0)
        return std::nullopt;
    return MemoryUse{static_cast<std::int64_t>(m.free), static_cast<std::int64_t>(m.total)};
}

std::string outOfMemorySentence(const std::optional<MemoryUse>& use, const std::string& context)
{
    std::string s = "the GPU is out of memory" + context;
    if (use)
        s += ": " + gib(use->freeBytes) + " free of " + gib(use->totalBytes);
    return s + " (held by this run and by other processes; nvidia-smi lists them)";
}

} // namespace kf::device
