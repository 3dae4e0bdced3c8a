#pragma once
// Cold-cache state before every timed call (docs/verification.md timing rule 1): writes a buffer of
// twice the L2 size, so nothing a previous call left in L2 survives, and resets persisting L2
// lines so no access-policy window keeps data resident across samples.

#include "device/DeviceMemory.h"
#include "engine/core/Result.h"

#include <cuda.h>

#include <cstdint>
#include <string>

namespace kf::device {

class L2Flusher {
public:
    /// `l2Bytes` from the device query; the buffer is 2 * l2Bytes (at least 8 MiB).
    /// `hasPersistingL2`: the device can keep persisting lines (compute capability 8.0 on).
    static Result<L2Flusher> create(std::int64_t l2Bytes, bool hasPersistingL2);

    /// Removes the persisting-L2 carve-out for this context (once per benchmark). Returns "" or
    /// why it could not (devices before compute capability 8.0 have none): a flag, not an error.
    static std::string disablePersistingCarveOut();

    /// Resets persisting lines, then enqueues the flush write on `stream` (asynchronous: the
    /// caller records its start event after this, so the flush itself is never timed).
    Result<void> flush(CUstream stream);

    size_t bytes() const { return m_buffer.bytes(); }
    /// "" while persisting lines are reset before every flush, else why not (reported as a flag).
    const std::string& persistingResetProblem() const { return m_resetProblem; }

private:
    DeviceMemory m_buffer;
    std::uint32_t m_value = 0x5a5a5a5au;
    bool m_persistingReset = true;
    std::string m_resetProblem;
};

} // namespace kf::device
