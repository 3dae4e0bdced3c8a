#pragma once
// Saves the tensors of failing trials when a verify request asks for them ("dump"), as case
// folders (engine/verify/CaseFiles.h) that the inspector and repro bundles read. It runs after
// the reference, when the candidate has finished and its buffers are gone, so the files can
// never be seen by the kernel they describe (docs/verification.md, rule 1). A run's total is capped
// by max_bytes, and a case is skipped rather than filling the disk.

#include "device/runner/RunPlan.h"
#include "engine/verify/CaseFiles.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

namespace kf::device {

class CaseWriter {
public:
    explicit CaseWriter(DumpSettings settings) : m_settings(std::move(settings)) {}

    /// Writes the case into <dir>/<caseFolderName(...)>. Returns the trial fields to add to the
    /// report: {"case": folder} or {"case_skipped": why}.
    nlohmann::json save(const CaseInfo& info, const std::vector<CaseTensorData>& tensors);

    const DumpSettings& settings() const { return m_settings; }

private:
    DumpSettings m_settings;
    std::int64_t m_written = 0;
};

} // namespace kf::device
