#pragma once
// What the runner tells the world about its GPU: the hello message, every report's environment
// block, and the numbers timing needs (L2 size for the flush, peak bandwidth for the roofline).

#include "engine/core/Result.h"
#include "engine/protocol/Messages.h"

#include <cuda.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace kf::device {

struct DeviceInfo {
    int ordinal = 0;
    std::string name;                    ///< "NVIDIA H100 80GB HBM3"
    int ccMajor = 0, ccMinor = 0;
    int smCount = 0;
    std::int64_t memoryBytes = 0;
    std::int64_t l2Bytes = 0;
    std::int64_t persistingL2MaxBytes = 0; ///< 0 when the device has no persisting L2 lines
    int clockMhz = 0;                    ///< typical SM clock as the driver reports it
    int memoryClockMhz = 0;              ///< peak memory clock
    int memoryBusBits = 0;
    double peakBandwidthGBs = 0;         ///< 2 * memory clock * bus width / 8 (double data rate)
    int maxSharedPerBlock = 0;           ///< without opt-in
    int maxSharedPerBlockOptin = 0;
    bool eccEnabled = false;
    bool pageableMemoryAccess = false;   ///< kernels can dereference host pointers (HMM/ATS)
    int driverApiVersion = 0;            ///< cuDriverGetVersion, e.g. 13000
    std::string driverVersion;           ///< kernel module version "580.159.04", else "13.0"
    std::string uuid;                    ///< "GPU-ac7d9fee-f3cd-a5ae-df83-585fd377babc" as nvidia-smi -L prints it, or ""
    std::string pciBusId;                ///< "0000:18:00.0", or ""

    std::string computeCapability() const; ///< "9.0"
    std::string arch() const;              ///< "sm_90"
    /// What hello says about the device (docs/runner-protocol.md).
    protocol::DeviceSummary summary() const;
};

/// Every device CUDA shows this process (ordinal, name, UUID), for the hello's device list.
/// Requires cuInit to have succeeded; a device that cannot be queried is left out.
std::vector<protocol::VisibleDevice> listVisibleDevices();

/// Queries everything above for `dev`. Requires cuInit to have succeeded.
Result<DeviceInfo> queryDevice(CUdevice dev, int ordinal);

/// This machine's host name, or "" (the hello, each report's placement, sentences).
std::string hostName();
/// $CUDA_VISIBLE_DEVICES as this process sees it, or "" when unset.
std::string visibleDevices();

/// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" from the 16 bytes of a CUuuid.
std::string uuidText(const unsigned char (&bytes)[16]);

/// The NVIDIA kernel module version from /proc/driver/nvidia/version ("580.159.04"), or "".
std::string kernelModuleVersion();

/// "13.0" from cuDriverGetVersion's 13000.
std::string driverApiString(int version);

} // namespace kf::device
