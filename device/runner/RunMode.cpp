#include "device/runner/RunMode.h"

#include "device/runner/TorchBridge.h"

namespace kf::device {

RunMode::RunMode(Channel& channel, const GpuContext& gpu, const RunPlan& request, SoftwareVersions versions,
                 std::string action)
    : m_channel(channel), m_gpu(gpu), m_request(request), m_header(request, gpu.info, std::move(versions)),
      m_action(std::move(action))
{
}

Result<void> RunMode::enterContext()
{
    if (auto r = m_gpu.context.makeCurrent(); !r)
        return r;
    m_stream = static_cast<CUstream>(TorchBridge::currentStream());
    return {};
}

Result<void> RunMode::layOutShape(const ShapeBinding& shape, std::uint64_t seed, std::vector<TensorLayout>& layout,
                                  BufferSet& outputs) const
{
    auto laid = layoutFor(m_request.task, m_request.candidate(), shape, m_gpu.info.memoryBytes);
    if (!laid)
        return laid.error();
    layout = std::move(laid.value());
    auto allocated = BufferSet::allocate(layout, {TensorLayout::Role::Output, TensorLayout::Role::Scratch}, seed, m_stream);
    if (!allocated)
        return allocated.error();
    outputs = std::move(allocated.value());
    return {};
}

Error RunMode::fatal(const Error& e, const std::string& where) const
{
    return lostContextError(e, m_action, m_request, where);
}

} // namespace kf::device
