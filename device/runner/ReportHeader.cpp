#include "device/runner/ReportHeader.h"

#include "device/CudaDriver.h"
#include "device/GpuMemory.h"
#include "engine/protocol/Report.h"

#include <cstdlib>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <ctime>

namespace kf::device {

ReportHeader::ReportHeader(const RunPlan& request, const DeviceInfo& device, SoftwareVersions versions)
    : m_request(request), m_device(device), m_versions(std::move(versions)),
      m_startedWall(std::chrono::system_clock::now()), m_started(std::chrono::steady_clock::now())
{
}

nlohmann::json ReportHeader::placement() const
{
    protocol::Placement p;
    p.endpoint = m_request.endpoint;
    p.attempt = m_request.attempt;
    p.host = hostName();
    p.gpuUuid = m_device.uuid;
    p.pciBusId = m_device.pciBusId;
    p.visibleDevices = visibleDevices();
    return p.toJson();
}

nlohmann::json ReportHeader::environment() const
{
    return {{"gpu", m_device.name},
            {"compute_capability", m_device.computeCapability()},
            {"sm_count", m_device.smCount},
            {"memory_bytes", m_device.memoryBytes},
            {"l2_bytes", m_device.l2Bytes},
            {"driver", m_device.driverVersion},
            {"cuda_driver_api", m_device.driverApiVersion},
            {"nvrtc", m_versions.nvrtc},
            {"torch", m_versions.torch},
            {"peak_bandwidth_gbs", std::round(m_device.peakBandwidthGBs * 10.0) / 10.0},
            {"clock_mhz", m_device.clockMhz},
            {"memory_clock_mhz", m_device.memoryClockMhz}};
}

nlohmann::json ReportHeader::make(const std::string& kind, const std::string& verdict, const std::string& summary) const
{
    nlohmann::json lowered = nlohmann::json::object();
    for (const auto& [expr, mangled] : m_request.loweredNames)
        lowered[expr] = mangled;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - m_started).count();
    return {{"schema_version", 1},
            {"kind", kind},
            {"verdict", verdict},
            {"summary", summary},
            {"task", {{"name", m_request.task.name}, {"hash", m_request.taskHash}}},
            {"candidate",
             {{"file", m_request.candidate().file},
              {"source_hash", m_request.sourceHash},
              {"arch", m_request.arch.empty() ? m_device.arch() : m_request.arch},
              {"compile_options", m_request.compileOptions},
              {"lowered_names", lowered}}},
            {"environment", environment()},
            {"started_at", isoTimeUtc(m_startedWall)},
            {"duration_ms", std::round(ms * 10.0) / 10.0},
            {"placement", placement()}};
}

void ReportHeader::markError(nlohmann::json& report, const Error& given)
{
    Error e = given;
    // The one out-of-memory sentence, with what was being done and how much is free now (LibTorch's
    // cache was released when the error was made).
    if (e.kind == kGpuOutOfMemory)
        e.why = outOfMemorySentence(memoryUse(), e.what.empty() ? std::string() : " while trying to " + e.what);
    report["verdict"] = kf::protocol::verdictName(kf::protocol::Verdict::Error);
    report["summary"] = e.message();
    report["error"] = {{"what", e.what}, {"why", e.why}, {"hint", e.hint}};
    if (!e.kind.empty())
        report["error"]["kind"] = e.kind;
}

Result<nlohmann::json> ReportHeader::stoppedBy(nlohmann::json report, const Error& e)
{
    if (stickyError())
        return e;
    markError(report, e);
    return report;
}

nlohmann::json jsonNumber(double v)
{
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    return v;
}

std::string formatNumber(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

std::string isoTimeUtc(std::chrono::system_clock::time_point t)
{
    const std::time_t s = std::chrono::system_clock::to_time_t(t);
    std::tm tm{};
    gmtime_r(&s, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

} // namespace kf::device
