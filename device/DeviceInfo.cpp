#include "device/DeviceInfo.h"

#include "device/CudaDriver.h"

#include <cctype>
#include <cstdlib>
#include <unistd.h>
#include <cmath>
#include <fstream>
#include <sstream>

namespace kf::device {

namespace {

bool isVersionToken(const std::string& t)
{
    // "580.159.04": digits and at least one dot, nothing else.
    if (t.empty() || !std::isdigit(static_cast<unsigned char>(t.front())) || t.find('.') == std::string::npos)
        return false;
    for (char c : t)
        if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.')
            return false;
    return true;
}

// "GPU-…" of `dev`; empty when the driver cannot say (no cuDeviceGetUuid, or it fails).
std::string uuidOf(CUdevice dev)
{
    CUuuid id{};
    if (!cuda().cuDeviceGetUuid || KF_CU(cuDeviceGetUuid, &id, dev) != CUDA_SUCCESS)
        return {};
    unsigned char bytes[16];
    for (int i = 0; i < 16; ++i)
        bytes[i] = static_cast<unsigned char>(id.bytes[i]);
    return uuidText(bytes);
}

} // namespace

std::string kernelModuleVersion()
{
    // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ..."
    std::ifstream in("/proc/driver/nvidia/version");
    std::string line;
    if (!in || !std::getline(in, line))
        return {};
    std::istringstream words(line);
    std::string w;
    while (words >> w)
        if (isVersionToken(w))
            return w;
    return {};
}

std::string hostName()
{
    char host[256] = {};
    return ::gethostname(host, sizeof host - 1) == 0 ? std::string(host) : std::string();
}

std::string visibleDevices()
{
    const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
    return v ? std::string(v) : std::string();
}

std::vector<protocol::VisibleDevice> listVisibleDevices()
{
    std::vector<protocol::VisibleDevice> out;
    int count = 0;
    if (KF_CU(cuDeviceGetCount, &count) != CUDA_SUCCESS)
        return out;
    for (int i = 0; i < count; ++i) {
        CUdevice dev = 0;
        if (KF_CU(cuDeviceGet, &dev, i) != CUDA_SUCCESS)
            continue;
        protocol::VisibleDevice d;
        d.ordinal = i;
        char name[256] = {};
        if (KF_CU(cuDeviceGetName, name, static_cast<int>(sizeof name - 1), dev) == CUDA_SUCCESS)
            d.gpu = name;
        d.uuid = uuidOf(dev);
        out.push_back(std::move(d));
    }
    return out;
}

std::string uuidText(const unsigned char (&bytes)[16])
{
    static const char* hex = "0123456789abcdef";
    std::string out = "GPU-";
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out += '-';
        out += hex[bytes[i] >> 4];
        out += hex[bytes[i] & 15];
    }
    return out;
}

std::string driverApiString(int version)
{
    if (version <= 0)
        return {};
    return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string DeviceInfo::computeCapability() const
{
    return std::to_string(ccMajor) + "." + std::to_string(ccMinor);
}

std::string DeviceInfo::arch() const
{
    return "sm_" + std::to_string(ccMajor) + std::to_string(ccMinor);
}

protocol::DeviceSummary DeviceInfo::summary() const
{
    protocol::DeviceSummary d;
    d.ordinal = ordinal;
    d.gpu = name;
    d.arch = arch();
    d.computeCapability = computeCapability();
    d.smCount = smCount;
    d.memoryBytes = memoryBytes;
    d.l2Bytes = l2Bytes;
    d.persistingL2MaxBytes = persistingL2MaxBytes;
    d.clockMhz = clockMhz;
    d.memoryClockMhz = memoryClockMhz;
    d.memoryBusBits = memoryBusBits;
    // Rounded to 0.1 GB/s: the value is derived from integer clocks, more digits are noise.
    d.peakBandwidthGbs = std::round(peakBandwidthGBs * 10.0) / 10.0;
    d.maxSharedPerBlock = maxSharedPerBlock;
    d.maxSharedPerBlockOptin = maxSharedPerBlockOptin;
    d.ecc = eccEnabled;
    d.pageableMemoryAccess = pageableMemoryAccess;
    d.driver = driverVersion;
    d.cudaDriverApi = driverApiVersion;
    d.uuid = uuid;
    d.pciBusId = pciBusId;
    return d;
}

Result<DeviceInfo> queryDevice(CUdevice dev, int ordinal)
{
    DeviceInfo d;
    d.ordinal = ordinal;
    char name[256] = {};
    KF_CU_CHECK(cuDeviceGetName, name, static_cast<int>(sizeof name - 1), dev);
    d.name = name;
    size_t total = 0;
    KF_CU_CHECK(cuDeviceTotalMem, &total, dev);
    d.memoryBytes = static_cast<std::int64_t>(total);

    auto attr = [&](CUdevice_attribute a, int& out) -> Result<void> {
        KF_CU_CHECK(cuDeviceGetAttribute, &out, a, dev);
        return {};
    };
    int l2 = 0, persisting = 0, clockKhz = 0, memClockKhz = 0, ecc = 0, pageable = 0;
    for (auto [a, out] : {std::pair{CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &d.ccMajor},
                          std::pair{CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &d.ccMinor},
                          std::pair{CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &d.smCount},
                          std::pair{CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &l2},
                          std::pair{CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &clockKhz},
                          std::pair{CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, &memClockKhz},
                          std::pair{CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, &d.memoryBusBits},
                          std::pair{CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &d.maxSharedPerBlock},
                          std::pair{CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &d.maxSharedPerBlockOptin},
                          std::pair{CU_DEVICE_ATTRIBUTE_ECC_ENABLED, &ecc}}) {
        if (auto r = attr(a, *out); !r)
            return r.error();
    }
    // Newer attributes: a driver that does not know them just lacks the feature.
    if (!attr(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, persisting))
        persisting = 0;
    if (!attr(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, pageable))
        pageable = 0;
    d.l2Bytes = l2;
    d.persistingL2MaxBytes = persisting;
    d.clockMhz = clockKhz / 1000;
    d.memoryClockMhz = memClockKhz / 1000;
    d.eccEnabled = ecc != 0;
    d.pageableMemoryAccess = pageable != 0;
    // Double data rate: two transfers per memory clock, bus width in bits.
    d.peakBandwidthGBs = 2.0 * memClockKhz * 1e3 * (d.memoryBusBits / 8.0) / 1e9;

    d.uuid = uuidOf(dev);
    if (cuda().cuDeviceGetPCIBusId) {
        char bus[32] = {};
        if (KF_CU(cuDeviceGetPCIBusId, bus, static_cast<int>(sizeof bus - 1), dev) == CUDA_SUCCESS)
            d.pciBusId = bus;
    }
    KF_CU_CHECK(cuDriverGetVersion, &d.driverApiVersion);
    d.driverVersion = kernelModuleVersion();
    if (d.driverVersion.empty())
        d.driverVersion = driverApiString(d.driverApiVersion);
    return d;
}

} // namespace kf::device
