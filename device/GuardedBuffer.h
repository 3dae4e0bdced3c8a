#pragma once
// A device buffer with canaries on both sides (docs/verification.md correctness rule 3): 4 KiB of a
// seeded random pattern before and after the data, so an out-of-bounds write shows up as a
// changed canary with the buffer's name, the side and the offset. 4 KiB rather than a few bytes:
// a kernel without bounds checks overruns by up to a block's worth of elements (1024 floats of
// a tail block), and the write must land in our canary, not in someone else's buffer. The data
// pointer stays 256-byte aligned (the allocation is, and 4096 is a multiple), as cudaMalloc'd
// memory would be, so vectorised kernels see the alignment they expect.
//
// All transfers are stream-ordered on the caller's stream and complete before returning.

#include "device/DeviceMemory.h"
#include "engine/core/Result.h"

#include <cuda.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kf::device {

struct GuardViolation {
    std::string buffer;
    bool after = true;              ///< false: the canary before the data
    std::int64_t offsetBytes = 0;   ///< from the data's edge: 0 is the byte adjacent to the data
    std::int64_t changedBytes = 0;  ///< how many canary bytes on that side changed
    std::string side() const { return after ? "after" : "before"; }
};

class GuardedBuffer {
public:
    static constexpr size_t kGuardBytes = 4096;

    GuardedBuffer() = default;

    /// Allocates `bytes` of data plus both canaries and writes the canaries (seeded by `seed`).
    static Result<GuardedBuffer> allocate(std::string name, size_t bytes, std::uint64_t seed, CUstream stream);

    CUdeviceptr ptr() const { return m_memory.ptr() + m_guard; }
    size_t bytes() const { return m_bytes; }
    const std::string& name() const { return m_name; }

    /// Rewrites both canaries (after a violation was reported, before the next run).
    Result<void> writeGuards(CUstream stream) const;
    /// Reads both canaries back; one entry per damaged side.
    Result<std::vector<GuardViolation>> checkGuards(CUstream stream) const;

    Result<void> upload(const void* host, CUstream stream) const;
    Result<void> download(void* host, CUstream stream) const;
    /// Fills the data with one element's bytes repeated (sizes 1, 2, 4 or 8), on the device.
    Result<void> fillPattern(const std::vector<unsigned char>& element, CUstream stream) const;
    Result<void> zero(CUstream stream) const;

    /// Frees the memory now.
    void release() { m_memory.reset(); }

private:
    std::string m_name;
    size_t m_bytes = 0;
    size_t m_guard = kGuardBytes;   ///< 0 under KF_RUNNER_EXACT_ALLOC=1 (see exactAllocation())
    DeviceMemory m_memory;
    std::array<unsigned char, kGuardBytes> m_before{};
    std::array<unsigned char, kGuardBytes> m_after{};
};

/// True when KF_RUNNER_EXACT_ALLOC=1: every buffer is its own allocation of exactly its size, with
/// no canaries. Set for a runner started under compute-sanitizer, whose memcheck finds an
/// out-of-bounds read only beyond an allocation's end; a canary would swallow it.
bool exactAllocation();

/// Fills `count` elements of `elementSize` bytes at `dst` with `element` repeated, on `stream`
/// (asynchronously; memsets, so no host buffer the size of the data).
Result<void> fillDevicePattern(CUdeviceptr dst, size_t count, const std::vector<unsigned char>& element, CUstream stream);

} // namespace kf::device
