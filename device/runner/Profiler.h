#pragma once
// One shape's candidate launches, and optionally the LibTorch baseline, replayed under CUPTI's
// range profiler (docs/report-schema.md, "Profile"). Inputs are made as for a benchmark; both
// sides are warmed up once before the profiled call. Static numbers come from the loaded module
// (cuFuncGetAttribute) and the occupancy calculator, so they are there even without counters.

#include "device/runner/Channel.h"
#include "device/runner/GpuContext.h"
#include "device/runner/ReportHeader.h"
#include "device/runner/RunRequest.h"
#include "engine/profile/ProfileReport.h"

#include <nlohmann/json.hpp>

#include <cuda.h>

namespace kf::device {

struct BoundLaunch;

class Profiler {
public:
    Profiler(Channel& channel, const GpuContext& gpu, const RunRequest& request, SoftwareVersions versions);

    /// The profile report (verdict ok, no_counters or error). An Error only when the CUDA context
    /// was lost (stickyError() is set; the caller sends it as fatal and exits).
    Result<nlohmann::json> run();

private:
    struct Shape;
    Result<void> prepare(Shape& s);
    profile::StaticResources staticsOf(const BoundLaunch& launch) const;
    profile::Ceilings ceilings(const profile::ProfileReport& report) const;
    std::string summarize(const profile::ProfileReport& report) const;
    Error fatal(const Error& e, const std::string& where) const;

    Channel& m_channel;
    const GpuContext& m_gpu;
    const RunRequest& m_request;
    ReportHeader m_header;
    CUstream m_stream = nullptr;
};

} // namespace kf::device
