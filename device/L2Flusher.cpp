#include "device/L2Flusher.h"

#include "device/CudaDriver.h"

#include <algorithm>

namespace kf::device {

Result<L2Flusher> L2Flusher::create(std::int64_t l2Bytes, bool hasPersistingL2)
{
    L2Flusher f;
    const std::int64_t bytes = std::max<std::int64_t>(2 * l2Bytes, 8ll << 20);
    auto mem = DeviceMemory::allocate(static_cast<size_t>(bytes));
    if (!mem) {
        Error e = mem.error();
        e.what = "allocate the L2 flush buffer (" + std::to_string(bytes) + " bytes)";
        return e;
    }
    f.m_buffer = std::move(mem.value());
    // Without persisting lines there is nothing to reset, and nothing to report.
    f.m_persistingReset = hasPersistingL2 && cuda().cuCtxResetPersistingL2Cache != nullptr;
    if (hasPersistingL2 && !f.m_persistingReset)
        f.m_resetProblem = "the driver has no cuCtxResetPersistingL2Cache";
    return f;
}

std::string L2Flusher::disablePersistingCarveOut()
{
    const CUresult r = KF_CU(cuCtxSetLimit, CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0);
    noteResult(r);
    return r == CUDA_SUCCESS ? std::string() : cuResultName(r);
}

Result<void> L2Flusher::flush(CUstream stream)
{
    if (m_persistingReset) {
        const CUresult r = KF_CU(cuCtxResetPersistingL2Cache);
        if (r != CUDA_SUCCESS) {
            if (isStickyError(r))
                return cuError(r, "cuCtxResetPersistingL2Cache", __FILE__, __LINE__);
            // Not supported here (before sm_80, some MIG or vGPU set-ups): time without it, say so.
            m_persistingReset = false;
            m_resetProblem = cuResultName(r);
        }
    }
    // A new value each time: every line is really written, whatever the memory system dedups.
    m_value = m_value * 1664525u + 1013904223u;
    KF_CU_CHECK(cuMemsetD32Async, m_buffer.ptr(), m_value, m_buffer.bytes() / 4, stream);
    return {};
}

} // namespace kf::device
