#include "engine/core/Architectures.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace kf {

namespace {

constexpr int KiB = 1024;

ArchInfo arch(std::string name, int major, int minor, std::string gpu, int sms, int threadsPerSm, int blocksPerSm,
              int sharedPerSm, int sharedOptin, int reserved, double dram, double fp32, double fp16Tensor, int l2MiB)
{
    ArchInfo a;
    a.arch = std::move(name);
    a.major = major;
    a.minor = minor;
    a.exampleGpu = std::move(gpu);
    a.smCount = sms;
    a.maxThreadsPerSm = threadsPerSm;
    a.maxBlocksPerSm = blocksPerSm;
    a.sharedPerSm = sharedPerSm;
    a.sharedPerBlockOptin = sharedOptin;
    a.reservedSharedPerBlock = reserved;
    a.peakDramGBs = dram;
    a.peakFp32Tflops = fp32;
    a.peakFp16TensorTflops = fp16Tensor;
    a.l2Bytes = l2MiB * KiB * KiB;
    return a;
}

// Per-SM limits: CUDA C++ Programming Guide, "Technical Specifications per Compute Capability"
// (they also agree with the block and shared-memory steps hard-coded in cuda_occupancy.h; a
// test keeps them in step). Register file (64 Ki per SM and per block, 255 per thread), 1024
// threads per block and 48 KiB default per-block shared memory are common to all of these.
// Peaks and L2 sizes are the vendor datasheet numbers of the named board; tensor peaks are dense FP16 (FP32
// accumulate on GeForce boards, where FP16 accumulate is twice as fast).
const std::array<ArchInfo, 8>& table()
{
    static const std::array<ArchInfo, 8> t = {
        arch("sm_75", 7, 5, "Tesla T4", 40, 1024, 16, 64 * KiB, 64 * KiB, 0, 320, 8.1, 65, 4),
        arch("sm_80", 8, 0, "A100 SXM4 80GB", 108, 2048, 32, 164 * KiB, 163 * KiB, KiB, 2039, 19.5, 312, 40),
        arch("sm_86", 8, 6, "A10", 72, 1536, 16, 100 * KiB, 99 * KiB, KiB, 600, 31.2, 125, 6),
        arch("sm_87", 8, 7, "Jetson AGX Orin 64GB", 16, 1536, 16, 164 * KiB, 163 * KiB, KiB, 204.8, 5.3, 42.5, 4),
        arch("sm_89", 8, 9, "L40S", 142, 1536, 24, 100 * KiB, 99 * KiB, KiB, 864, 91.6, 362, 96),
        arch("sm_90", 9, 0, "H100 SXM5", 132, 2048, 32, 228 * KiB, 227 * KiB, KiB, 3350, 66.9, 989, 50),
        arch("sm_100", 10, 0, "B200", 148, 2048, 32, 228 * KiB, 227 * KiB, KiB, 8000, 80, 2250, 126),
        arch("sm_120", 12, 0, "GeForce RTX 5090", 170, 1536, 24, 100 * KiB, 99 * KiB, KiB, 1792, 104.8, 209.5, 96),
    };
    return t;
}

} // namespace

std::span<const ArchInfo> knownArchitectures()
{
    return {table().data(), table().size()};
}

const ArchInfo* findArchitecture(std::string_view name)
{
    for (std::string_view prefix : {"compute_", "sm_", "sm"})
        if (name.substr(0, prefix.size()) == prefix) {
            name.remove_prefix(prefix.size());
            break;
        }
    // Architecture-specific (sm_90a) and family (sm_100f) variants share the base limits.
    if (!name.empty() && (name.back() == 'a' || name.back() == 'f'))
        name.remove_suffix(1);
    if (name.empty() || name.size() > 4
        || !std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        return nullptr;
    const std::string wanted = "sm_" + std::string(name);
    for (const ArchInfo& a : table())
        if (a.arch == wanted)
            return &a;
    return nullptr;
}

} // namespace kf
