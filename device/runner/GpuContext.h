#pragma once
// What the runner holds while it has a GPU: the device, its primary context (current on the
// request thread) and what we know about it. Absent in CPU mode.

#include "device/DeviceInfo.h"
#include "device/PrimaryContext.h"
#include "device/SharedMemoryPoison.h"

#include <cuda.h>

#include <optional>
#include <string>

namespace kf::device {

struct GpuContext {
    CUdevice device = 0;
    PrimaryContext context;
    DeviceInfo info;
    /// Loaded once the context is current; absent (with the reason) if the driver refused it.
    std::optional<SharedMemoryPoison> poison;
    std::string poisonError;
};

} // namespace kf::device
