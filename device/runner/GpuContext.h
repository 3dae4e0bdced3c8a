#pragma once
// What the runner holds while it has a GPU: the device, its primary context (current on the
// request thread) and what we know about it. Absent in CPU mode.

#include "device/DeviceInfo.h"
#include "device/PrimaryContext.h"

#include <cuda.h>

namespace kf::device {

struct GpuContext {
    CUdevice device = 0;
    PrimaryContext context;
    DeviceInfo info;
};

} // namespace kf::device
