#include "device/runner/CandidateProgram.h"

namespace kf::device {

Result<CandidateProgram> CandidateProgram::load(const RunPlan& request, const DeviceInfo& device)
{
    CandidateProgram p;
    auto module = CudaModule::load(request.cubin, device.arch());
    if (!module) {
        Error e = module.error();
        e.what = "load the cubin of " + request.candidate().file;
        if (!request.arch.empty() && request.arch != device.arch() && e.hint.empty())
            e.hint = "it was built for " + request.arch + " and this GPU is " + device.arch();
        return e;
    }
    p.m_module = std::move(module.value());
    auto plan = LaunchPlan::resolve(request.candidate(), p.m_module, request.loweredNames);
    if (!plan)
        return plan.error();
    p.m_plan = std::move(plan.value());
    return p;
}

} // namespace kf::device
