#include "device/CudaEvent.h"

#include "device/CudaDriver.h"

#include <utility>

namespace kf::device {

CudaEvent::~CudaEvent()
{
    if (m_event)
        (void)KF_CU(cuEventDestroy, m_event);
}

CudaEvent::CudaEvent(CudaEvent&& other) noexcept : m_event(std::exchange(other.m_event, nullptr)) {}

CudaEvent& CudaEvent::operator=(CudaEvent&& other) noexcept
{
    if (this != &other) {
        if (m_event)
            (void)KF_CU(cuEventDestroy, m_event);
        m_event = std::exchange(other.m_event, nullptr);
    }
    return *this;
}

Result<CudaEvent> CudaEvent::create()
{
    CudaEvent e;
    // Default flags: timing enabled (CU_EVENT_DISABLE_TIMING would make elapsed time fail).
    KF_CU_CHECK(cuEventCreate, &e.m_event, CU_EVENT_DEFAULT);
    return e;
}

Result<void> CudaEvent::record(CUstream stream) const
{
    KF_CU_CHECK(cuEventRecord, m_event, stream);
    return {};
}

Result<float> CudaEvent::elapsedMs(const CudaEvent& start, const CudaEvent& end)
{
    float ms = 0.0f;
    KF_CU_CHECK(cuEventElapsedTime, &ms, start.m_event, end.m_event);
    return ms;
}

} // namespace kf::device
