#pragma once
// A CUDA event for timing (cuEventCreate with default flags, so it records a timestamp).
// Move-only; destroyed with its owner.

#include "engine/core/Result.h"

#include <cuda.h>

namespace kf::device {

class CudaEvent {
public:
    CudaEvent() = default;
    ~CudaEvent();
    CudaEvent(CudaEvent&& other) noexcept;
    CudaEvent& operator=(CudaEvent&& other) noexcept;
    CudaEvent(const CudaEvent&) = delete;
    CudaEvent& operator=(const CudaEvent&) = delete;

    static Result<CudaEvent> create();

    /// Enqueues the timestamp on `stream`.
    Result<void> record(CUstream stream) const;
    /// Milliseconds between two completed events (`start` recorded first).
    static Result<float> elapsedMs(const CudaEvent& start, const CudaEvent& end);

    CUevent handle() const { return m_event; }

private:
    CUevent m_event = nullptr;
};

} // namespace kf::device
