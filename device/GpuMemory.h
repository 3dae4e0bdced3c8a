#pragma once
// How much GPU memory is free, for the sentence a user reads when there is too little: "the GPU
// is out of memory: 0.25 GiB free of 79.2 GiB". In a context cuMemGetInfo tells; when no context
// can be made (another process holds nearly everything), NVML does (libnvidia-ml, loaded at run
// time and found by the device's PCI bus ID, so CUDA_VISIBLE_DEVICES cannot mislead it).

#include "device/CudaDriver.h"

#include <cstdint>
#include <optional>
#include <string>

namespace kf::device {

struct MemoryUse {
    std::int64_t freeBytes = 0;
    std::int64_t totalBytes = 0;
};

/// In the current context.
std::optional<MemoryUse> memoryUse();
/// Without a context, through NVML; nullopt when NVML or the PCI bus ID is unavailable.
std::optional<MemoryUse> memoryUseFromNvml(CUdevice device);

/// "the GPU is out of memory<context>: 0.25 GiB free of 79.2 GiB (held by this run and by other
/// processes; ...)", without numbers when `use` is empty. `context`: " while trying to ...".
std::string outOfMemorySentence(const std::optional<MemoryUse>& use, const std::string& context = {});

} // namespace kf::device
