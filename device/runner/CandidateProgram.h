#pragma once
// The candidate of one request on the GPU: its cubin loaded fresh into a new module and its
// launch plan resolved against it. Destroying it unloads the module, so nothing the kernel kept
// in __device__ globals survives into the next request.

#include "device/CudaModule.h"
#include "device/DeviceInfo.h"
#include "device/LaunchPlan.h"
#include "device/runner/RunPlan.h"
#include "engine/core/Result.h"

namespace kf::device {

class CandidateProgram {
public:
    static Result<CandidateProgram> load(const RunPlan& request, const DeviceInfo& device);

    const LaunchPlan& plan() const { return m_plan; }

private:
    CudaModule m_module;   // declared first: destroyed after nothing else refers to its functions
    LaunchPlan m_plan;
};

} // namespace kf::device
