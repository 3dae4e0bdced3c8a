#pragma once
// The GPU architectures KernelForge knows, with their per-SM limits and a representative board's
// peaks: the occupancy calculator, the roofline, the prompt builder and the compile targets all
// read this one table, so it lives in core (it needs nothing else).

#include <span>
#include <string>
#include <string_view>

namespace kf {

/// Per-architecture limits (one representative GPU for the SM count and peaks).
struct ArchInfo {
    std::string arch;                 ///< "sm_90"
    int major = 0, minor = 0;
    std::string exampleGpu;           ///< "H100 SXM"
    int smCount = 0;
    int maxThreadsPerBlock = 1024;
    int maxThreadsPerSm = 2048;
    int maxBlocksPerSm = 32;
    int regsPerSm = 65536;
    int regsPerBlock = 65536;
    int maxRegsPerThread = 255;
    int sharedPerSm = 0;              ///< bytes, total per SM
    int sharedPerBlock = 49152;       ///< default per-block limit without opt-in
    int sharedPerBlockOptin = 0;      ///< opt-in maximum per block
    int reservedSharedPerBlock = 1024;
    int warpSize = 32;
    double peakDramGBs = 0;           ///< representative GPU's DRAM bandwidth
    double peakFp32Tflops = 0;
    double peakFp16TensorTflops = 0;  ///< dense
    int l2Bytes = 0;                  ///< representative GPU's L2 cache
};

std::span<const ArchInfo> knownArchitectures();
/// Accepts "sm_90", "sm90", "90", "compute_90"; nullptr if unknown.
const ArchInfo* findArchitecture(std::string_view arch);

} // namespace kf
