#include "device/PrimaryContext.h"

#include "device/CudaDriver.h"

#include <utility>

namespace kf::device {

PrimaryContext::~PrimaryContext()
{
    if (m_ctx)
        (void)KF_CU(cuDevicePrimaryCtxRelease, m_dev);
}

PrimaryContext::PrimaryContext(PrimaryContext&& other) noexcept
    : m_ctx(std::exchange(other.m_ctx, nullptr)), m_dev(other.m_dev)
{
}

PrimaryContext& PrimaryContext::operator=(PrimaryContext&& other) noexcept
{
    if (this != &other) {
        if (m_ctx)
            (void)KF_CU(cuDevicePrimaryCtxRelease, m_dev);
        m_ctx = std::exchange(other.m_ctx, nullptr);
        m_dev = other.m_dev;
    }
    return *this;
}

Result<PrimaryContext> PrimaryContext::retain(CUdevice dev)
{
    PrimaryContext c;
    KF_CU_CHECK(cuDevicePrimaryCtxRetain, &c.m_ctx, dev);
    c.m_dev = dev;
    if (auto r = c.makeCurrent(); !r)
        return r.error();
    return c;
}

Result<void> PrimaryContext::makeCurrent() const
{
    CUcontext current = nullptr;
    KF_CU_CHECK(cuCtxGetCurrent, &current);
    if (current != m_ctx)
        KF_CU_CHECK(cuCtxSetCurrent, m_ctx);
    return {};
}

} // namespace kf::device
