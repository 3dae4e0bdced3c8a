#pragma once
// The device's primary context, retained and made current on the calling thread. LibTorch (the
// CUDA runtime) uses the same primary context, so candidate launches, our allocations and the
// reference all live in one context and one address space, and the runtime finds the context
// already current instead of creating its own state first.

#include "engine/core/Result.h"

#include <cuda.h>

namespace kf::device {

class PrimaryContext {
public:
    PrimaryContext() = default;
    ~PrimaryContext();
    PrimaryContext(PrimaryContext&& other) noexcept;
    PrimaryContext& operator=(PrimaryContext&& other) noexcept;
    PrimaryContext(const PrimaryContext&) = delete;
    PrimaryContext& operator=(const PrimaryContext&) = delete;

    /// Retains `dev`'s primary context and makes it current on this thread.
    static Result<PrimaryContext> retain(CUdevice dev);
    /// Makes it current again (cheap; call before work in case a library switched contexts).
    Result<void> makeCurrent() const;

    CUcontext handle() const { return m_ctx; }
    CUdevice device() const { return m_dev; }

private:
    CUcontext m_ctx = nullptr;
    CUdevice m_dev = 0;
};

} // namespace kf::device
