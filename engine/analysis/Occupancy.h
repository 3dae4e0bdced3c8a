#pragma once
// Theoretical occupancy through the toolkit's cuda_occupancy.h, with a per-architecture
// property table so it works with no GPU present.

#include "engine/analysis/Resources.h"
#include "engine/core/Architectures.h"
#include "engine/core/Result.h"

#include <nlohmann/json.hpp>

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kf {

struct OccupancyQuery {
    int blockSize = 256;
    int registersPerThread = 0;
    int staticSharedBytes = 0;        ///< excluding reserved
    int dynamicSharedBytes = 0;
    int maxThreadsPerBlock = 0;       ///< from launch bounds; 0 = architecture limit
};

struct Occupancy {
    enum class Limiter { None, Warps, Blocks, Registers, SharedMemory, BlockSize };
    int activeBlocksPerSm = 0;
    int activeWarpsPerSm = 0;
    int maxWarpsPerSm = 0;
    double occupancy = 0.0;           ///< 0..1
    Limiter limiter = Limiter::None;
    int blocksLimitWarps = 0, blocksLimitRegisters = 0, blocksLimitShared = 0, blocksLimitBlocks = 0;
    int allocatedRegistersPerBlock = 0;
    int allocatedSharedPerBlock = 0;
};
std::string_view limiterName(Occupancy::Limiter l);

/// Errors when the configuration cannot launch at all (block too large, too much shared memory,
/// too many registers), saying which limit is exceeded.
Result<Occupancy> computeOccupancy(const ArchInfo& arch, const OccupancyQuery& q);

struct OccupancyPoint {
    int blockSize = 0;
    double occupancy = 0.0;           ///< 0 when the block size cannot launch
    int activeBlocksPerSm = 0;
    Occupancy::Limiter limiter = Occupancy::Limiter::None;
};
/// Occupancy for block sizes warpSize, 2*warpSize ... up to the block limit.
std::vector<OccupancyPoint> occupancyCurve(const ArchInfo& arch, OccupancyQuery q);

nlohmann::json toJson(const Occupancy& o);

} // namespace kf
