#pragma once
// One device allocation (cuMemAlloc), freed when the owner goes away, including on every error
// path. Move-only. Must be destroyed while the context that allocated it is current.

#include "engine/core/Result.h"

#include <cuda.h>

#include <cstddef>

namespace kf::device {

class DeviceMemory {
public:
    DeviceMemory() = default;
    ~DeviceMemory();
    DeviceMemory(DeviceMemory&& other) noexcept;
    DeviceMemory& operator=(DeviceMemory&& other) noexcept;
    DeviceMemory(const DeviceMemory&) = delete;
    DeviceMemory& operator=(const DeviceMemory&) = delete;

    /// At least 256-byte aligned (the driver guarantees more). `bytes` 0 allocates 1 byte so the
    /// pointer is still a distinct, valid address.
    static Result<DeviceMemory> allocate(size_t bytes);

    CUdeviceptr ptr() const { return m_ptr; }
    size_t bytes() const { return m_bytes; }
    bool empty() const { return m_ptr == 0; }
    /// Frees now (errors are ignored: after a sticky error nothing can be freed anyway).
    void reset();

private:
    CUdeviceptr m_ptr = 0;
    size_t m_bytes = 0;
};

} // namespace kf::device
