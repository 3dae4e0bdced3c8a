#pragma once
// The common header of correctness and performance reports (docs/report-schema.md): what ran,
// on what, when. Evidence for promotion: hashes, compile options, device and software versions.

#include "device/DeviceInfo.h"
#include "device/runner/RunPlan.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

namespace kf::device {

struct SoftwareVersions {
    std::string torch;
    std::string nvrtc;
};

class ReportHeader {
public:
    /// Starts the clock for duration_ms.
    ReportHeader(const RunPlan& request, const DeviceInfo& device, SoftwareVersions versions);

    /// A report with the header filled; `kind` is "correctness" or "performance".
    nlohmann::json make(const std::string& kind, const std::string& verdict, const std::string& summary) const;
    /// Sets verdict "error" with the error object, keeping whatever else `report` has.
    static void markError(nlohmann::json& report, const Error& e);
    /// How a run that `e` stopped ends: `e` itself when the CUDA context was lost (stickyError();
    /// the caller sends it as fatal and exits), otherwise `report` marked as above.
    static Result<nlohmann::json> stoppedBy(nlohmann::json report, const Error& e);

    nlohmann::json environment() const;
    /// Where it ran: the request's endpoint and attempt, this host, the GPU's UUID.
    nlohmann::json placement() const;

private:
    const RunPlan& m_request;
    const DeviceInfo& m_device;
    SoftwareVersions m_versions;
    std::chrono::system_clock::time_point m_startedWall;
    std::chrono::steady_clock::time_point m_started;
};

/// A JSON number, or "nan", "inf", "-inf" (the report's convention for non-finite values).
nlohmann::json jsonNumber(double v);
/// "%.6g" for sentences ("0.31", "1.5e-05").
std::string formatNumber(double v);
/// "2026-11-22T05:10:00Z"
std::string isoTimeUtc(std::chrono::system_clock::time_point t);

} // namespace kf::device
