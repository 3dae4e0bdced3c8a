#include "device/DeviceMemory.h"

#include "device/CudaDriver.h"

#include <utility>

namespace kf::device {

DeviceMemory::~DeviceMemory()
{
    reset();
}

DeviceMemory::DeviceMemory(DeviceMemory&& other) noexcept
    : m_ptr(std::exchange(other.m_ptr, 0)), m_bytes(std::exchange(other.m_bytes, 0))
{
}

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& other) noexcept
{
    if (this != &other) {
        reset();
        m_ptr = std::exchange(other.m_ptr, 0);
        m_bytes = std::exchange(other.m_bytes, 0);
    }
    return *this;
}

Result<DeviceMemory> DeviceMemory::allocate(size_t bytes)
{
    DeviceMemory m;
    KF_CU_CHECK(cuMemAlloc, &m.m_ptr, bytes ? bytes : 1);
    m.m_bytes = bytes;
    return m;
}

void DeviceMemory::reset()
{
    if (m_ptr) {
        // After a sticky error cuMemFree fails too; the process is about to exit, nothing to do.
        (void)KF_CU(cuMemFree, m_ptr);
        m_ptr = 0;
        m_bytes = 0;
    }
}

} // namespace kf::device
