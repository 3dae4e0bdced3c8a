#pragma once
// A report of any kind, as the runner returned it or a file holds it: the typed report of its
// kind plus the JSON it was read from, which `--json`, `--report FILE` and the registry's evidence
// files keep byte for byte (a newer runner's extra fields survive).

#include "engine/protocol/BenchReport.h"
#include "engine/protocol/ProfileReport.h"
#include "engine/protocol/Report.h"
#include "engine/protocol/VerifyReport.h"
#include "engine/verify/Shrink.h"

#include <nlohmann/json.hpp>

#include <functional>

#include <optional>

namespace kf::protocol {

struct RunReport {
    Header header;                              ///< every kind's common fields
    std::optional<VerifyReport> verify;         ///< kind correctness
    std::optional<BenchReport> bench;           ///< kind performance
    std::optional<profile::ProfileReport> profile; ///< kind profile
    nlohmann::json json;                        ///< as read
    std::optional<ShrinkResult> shrink;         ///< the search that chose this report's shape (a shrink run)

    ReportKind kind() const { return header.kind; }
    bool isError() const { return header.isError(); }

    /// Reads a report of any kind; `source` names it in errors (a file, "the runner").
    static Result<RunReport> fromJson(const nlohmann::json& j, const std::string& source = {});

    /// Runs `change` on the JSON and keeps the signature honest (docs/reliability.md, "Signed
    /// reports"): a report whose signature held under the user's key is signed again after the
    /// change; any other loses its signature. The typed view is read again from the new JSON.
    void amend(const std::function<void(nlohmann::json&)>& change);
};

/// Reports of a `kforge verify|bench --json` document ({"reports": [...]}) or of one bare report,
/// in order. Unreadable entries are skipped and their errors returned in `errors`.
std::vector<RunReport> reportsOfDocument(const nlohmann::json& document, std::vector<Error>* errors = nullptr);

} // namespace kf::protocol
