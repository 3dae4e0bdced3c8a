#include "engine/analysis/Occupancy.h"

#include <cuda_occupancy.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <optional>

namespace kf {
namespace {

constexpr int KiB = 1024;


cudaOccDeviceProp deviceProp(const ArchInfo& a)
{
    cudaOccDeviceProp p;
    p.computeMajor = a.major;
    p.computeMinor = a.minor;
    p.maxThreadsPerBlock = a.maxThreadsPerBlock;
    p.maxThreadsPerMultiprocessor = a.maxThreadsPerSm;
    p.regsPerBlock = a.regsPerBlock;
    p.regsPerMultiprocessor = a.regsPerSm;
    p.warpSize = a.warpSize;
    p.sharedMemPerBlock = static_cast<size_t>(a.sharedPerBlock);
    p.sharedMemPerMultiprocessor = static_cast<size_t>(a.sharedPerSm);
    p.numSms = std::max(1, a.smCount);
    p.sharedMemPerBlockOptin = static_cast<size_t>(a.sharedPerBlockOptin);
    p.reservedSharedMemPerBlock = static_cast<size_t>(a.reservedSharedPerBlock);
    return p;
}

std::string bytesText(long long b)
{
    if (b >= KiB && b % KiB == 0)
        return std::to_string(b / KiB) + " KiB";
    return std::to_string(b) + " bytes";
}

/// computeOccupancy plus, on failure, the limiter the curve shows for that point.
struct Attempt {
    Result<Occupancy> result;
    Occupancy::Limiter failedOn = Occupancy::Limiter::None;
};

Attempt fail(Occupancy::Limiter limiter, std::string why, std::string hint)
{
    return {Error::failed("compute occupancy", std::move(why), std::move(hint)), limiter};
}

/// The query's own limits on `a`: a failed Attempt when the block cannot launch at all.
std::optional<Attempt> queryProblem(const ArchInfo& a, const OccupancyQuery& q)
{
    using L = Occupancy::Limiter;
    const std::string on = " on " + a.arch;
    if (q.blockSize <= 0)
        return fail(L::BlockSize, "a block must have at least one thread (block size " + std::to_string(q.blockSize) + ")", "");
    if (q.registersPerThread < 0 || q.staticSharedBytes < 0 || q.dynamicSharedBytes < 0 || q.maxThreadsPerBlock < 0)
        return fail(L::None, "registers, shared memory and launch bounds must not be negative", "");
    if (q.blockSize > a.maxThreadsPerBlock)
        return fail(L::BlockSize,
                    "a block of " + std::to_string(q.blockSize) + " threads exceeds the limit of "
                        + std::to_string(a.maxThreadsPerBlock) + " threads per block" + on,
                    "use at most " + std::to_string(a.maxThreadsPerBlock) + " threads per block");
    if (q.maxThreadsPerBlock > 0 && q.blockSize > q.maxThreadsPerBlock)
        return fail(L::BlockSize,
                    "a block of " + std::to_string(q.blockSize) + " threads exceeds the kernel's __launch_bounds__ of "
                        + std::to_string(q.maxThreadsPerBlock) + " threads per block",
                    "launch smaller blocks or raise the __launch_bounds__ maximum");
    if (q.registersPerThread > a.maxRegsPerThread)
        return fail(L::Registers,
                    std::to_string(q.registersPerThread) + " registers per thread exceed the limit of "
                        + std::to_string(a.maxRegsPerThread) + " registers per thread" + on,
                    "");
    // ptxas refuses more static shared memory than the default per-block limit, so only dynamic
    // shared memory can use the opt-in space above it.
    if (q.staticSharedBytes > a.sharedPerBlock)
        return fail(L::SharedMemory,
                    bytesText(q.staticSharedBytes) + " of static shared memory exceed the limit of "
                        + bytesText(a.sharedPerBlock) + " per block" + on,
                    "move the large arrays to dynamic shared memory (extern __shared__) and opt in with "
                    "cudaFuncSetAttribute(..., cudaFuncAttributeMaxDynamicSharedMemorySize, ...)");
    return std::nullopt;
}

/// Why no block of the query is resident, from the calculator's per-resource block limits.
Attempt notResident(const ArchInfo& a, const OccupancyQuery& q, const cudaOccResult& r, int warpsPerBlock)
{
    using L = Occupancy::Limiter;
    const std::string on = " on " + a.arch;
    const long long shared = q.staticSharedBytes + static_cast<long long>(q.dynamicSharedBytes);
    if (r.blockLimitRegs == 0) {
        // The launch check counts whole warps rounded up to the 4 SM sub-partitions
        // (cuda_occupancy.h's "hardware check"), so 25 warps cost as much as 28.
        const int perWarp = r.allocatedRegistersPerBlock / warpsPerBlock;
        const int counted = std::max(r.allocatedRegistersPerBlock, perWarp * ((warpsPerBlock + 3) / 4 * 4));
        return fail(L::Registers,
                    "a block of " + std::to_string(q.blockSize) + " threads at " + std::to_string(q.registersPerThread)
                        + " registers per thread needs " + std::to_string(counted) + " registers, more than the "
                        + std::to_string(a.regsPerBlock) + " registers per block" + on,
                    "launch smaller blocks, or cap registers with __launch_bounds__ or -maxrregcount");
    }
    if (r.blockLimitSharedMem == 0)
        return fail(L::SharedMemory,
                    bytesText(shared) + " of shared memory per block (" + bytesText(q.staticSharedBytes) + " static + "
                        + bytesText(q.dynamicSharedBytes) + " dynamic, plus " + bytesText(a.reservedSharedPerBlock)
                        + " reserved) exceed the opt-in limit of " + bytesText(a.sharedPerBlockOptin)
                        + " per block" + on,
                    "use less shared memory per block");
    return fail(L::BlockSize, "a block of " + std::to_string(q.blockSize) + " threads cannot be resident" + on, "");
}

/// The occupancy the calculator found, with the limiter worth acting on.
Occupancy occupancyOf(const ArchInfo& a, const cudaOccResult& r, int warpsPerBlock)
{
    using L = Occupancy::Limiter;
    Occupancy o;
    o.activeBlocksPerSm = r.activeBlocksPerMultiprocessor;
    o.activeWarpsPerSm = o.activeBlocksPerSm * warpsPerBlock;
    o.maxWarpsPerSm = a.maxThreadsPerSm / a.warpSize;
    o.occupancy = o.maxWarpsPerSm ? static_cast<double>(o.activeWarpsPerSm) / o.maxWarpsPerSm : 0.0;
    // cuda_occupancy.h says INT_MAX for a resource the kernel does not use; such a limit never
    // binds, so show it as the block-slot limit instead of a meaningless 2^31.
    auto finite = [&](int v) { return v == INT_MAX ? r.blockLimitBlocks : v; };
    o.blocksLimitWarps = finite(r.blockLimitWarps);
    o.blocksLimitRegisters = finite(r.blockLimitRegs);
    o.blocksLimitShared = finite(r.blockLimitSharedMem);
    o.blocksLimitBlocks = r.blockLimitBlocks;
    o.allocatedRegistersPerBlock = r.allocatedRegistersPerBlock;
    o.allocatedSharedPerBlock = static_cast<int>(r.allocatedSharedMemPerBlock);
    // Several limits can bind at once; name the one worth acting on. At full occupancy only the
    // warp slots bind (relaxing anything else gains nothing); below it, a resource the kernel
    // controls comes before the fixed slot counts.
    const unsigned f = r.limitingFactors;
    if (o.activeWarpsPerSm >= o.maxWarpsPerSm)
        o.limiter = L::Warps;
    else if (f & OCC_LIMIT_REGISTERS)
        o.limiter = L::Registers;
    else if (f & OCC_LIMIT_SHARED_MEMORY)
        o.limiter = L::SharedMemory;
    else if (f & OCC_LIMIT_BLOCKS)
        o.limiter = L::Blocks;
    else if (f & OCC_LIMIT_WARPS)
        o.limiter = L::Warps;
    else
        o.limiter = L::None;
    return o;
}

Attempt attempt(const ArchInfo& a, const OccupancyQuery& q)
{
    using L = Occupancy::Limiter;
    if (auto problem = queryProblem(a, q))
        return std::move(*problem);

    const cudaOccDeviceProp prop = deviceProp(a);
    cudaOccFuncAttributes attr;
    attr.maxThreadsPerBlock = q.maxThreadsPerBlock > 0 ? q.maxThreadsPerBlock : a.maxThreadsPerBlock;
    attr.numRegs = q.registersPerThread;
    attr.sharedSizeBytes = static_cast<size_t>(q.staticSharedBytes);
    // Model a launch that opts in to exactly the dynamic size it asks for, as a kernel needing
    // more than the default must (cudaFuncAttributeMaxDynamicSharedMemorySize).
    attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
    attr.maxDynamicSharedSizeBytes = static_cast<size_t>(q.dynamicSharedBytes);
    attr.numBlockBarriers = 1; // what cudaOccFuncAttributes(cudaFuncAttributes) assumes
    cudaOccDeviceState state;
    cudaOccResult r{};
    const cudaOccError status = cudaOccMaxActiveBlocksPerMultiprocessor(
        &r, &prop, &attr, &state, q.blockSize, static_cast<size_t>(q.dynamicSharedBytes));
    if (status != CUDA_OCC_SUCCESS)
        return fail(L::None,
                    "cuda_occupancy.h rejected the input for " + a.arch + " (error "
                        + std::to_string(static_cast<int>(status)) + ")",
                    "the architecture table and the toolkit's occupancy calculator disagree; report this");

    const int warpsPerBlock = (q.blockSize + a.warpSize - 1) / a.warpSize;
    if (r.activeBlocksPerMultiprocessor == 0)
        return notResident(a, q, r, warpsPerBlock);
    return {occupancyOf(a, r, warpsPerBlock)};
}

} // namespace

std::string_view limiterName(Occupancy::Limiter l)
{
    switch (l) {
    case Occupancy::Limiter::None: return "none";
    case Occupancy::Limiter::Warps: return "warps";
    case Occupancy::Limiter::Blocks: return "blocks";
    case Occupancy::Limiter::Registers: return "registers";
    case Occupancy::Limiter::SharedMemory: return "shared_memory";
    case Occupancy::Limiter::BlockSize: return "block_size";
    }
    return "none";
}

Result<Occupancy> computeOccupancy(const ArchInfo& arch, const OccupancyQuery& q)
{
    return attempt(arch, q).result;
}

std::vector<OccupancyPoint> occupancyCurve(const ArchInfo& arch, OccupancyQuery q)
{
    std::vector<OccupancyPoint> points;
    if (arch.warpSize <= 0)
        return points;
    for (int size = arch.warpSize; size <= arch.maxThreadsPerBlock; size += arch.warpSize) {
        q.blockSize = size;
        Attempt a = attempt(arch, q);
        OccupancyPoint p;
        p.blockSize = size;
        if (a.result) {
            p.occupancy = a.result->occupancy;
            p.activeBlocksPerSm = a.result->activeBlocksPerSm;
            p.limiter = a.result->limiter;
        } else {
            p.limiter = a.failedOn;
        }
        points.push_back(p);
    }
    return points;
}

nlohmann::json toJson(const Occupancy& o)
{
    return nlohmann::json{
        {"active_blocks_per_sm", o.activeBlocksPerSm},
        {"active_warps_per_sm", o.activeWarpsPerSm},
        {"max_warps_per_sm", o.maxWarpsPerSm},
        {"occupancy", o.occupancy},
        {"limiter", std::string(limiterName(o.limiter))},
        {"blocks_limit_warps", o.blocksLimitWarps},
        {"blocks_limit_registers", o.blocksLimitRegisters},
        {"blocks_limit_shared", o.blocksLimitShared},
        {"blocks_limit_blocks", o.blocksLimitBlocks},
        {"allocated_registers_per_block", o.allocatedRegistersPerBlock},
        {"allocated_shared_per_block", o.allocatedSharedPerBlock},
    };
}

} // namespace kf
