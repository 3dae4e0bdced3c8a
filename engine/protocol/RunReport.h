#pragma once
// A report of any kind, as the runner returned it or a file holds it: an immutable typed value.
// Its reader (fromJson) and its editors (the with…() functions, each returning a new report) are
// the only code that touches its JSON; document() is what `--json`, `--report FILE` and the
// registry's evidence files write, byte for byte as read (a newer runner's extra fields survive)
// plus what an editor added, signed again when it was signed (docs/reliability.md, "Signed reports").

#include "engine/protocol/BenchReport.h"
#include "engine/protocol/ProfileReport.h"
#include "engine/protocol/Report.h"
#include "engine/protocol/VerifyReport.h"
#include "engine/verify/Shrink.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kf::protocol {

struct HarnessResult;

class RunReport {
public:
    /// An empty correctness report with verdict error (a placeholder before a run ends).
    RunReport() = default;

    /// A report with verdict error and no shapes, for a run the runner never reported on (the
    /// candidate did not compile; the runner crashed, hung or went away): `header` says why.
    static RunReport ofError(Header header);
    /// Reads a report of any kind; `source` names it in errors (a file, "the runner").
    static Result<RunReport> fromJson(const nlohmann::json& j, const std::string& source = {});

    const Header& header() const { return m_header; }
    const std::optional<VerifyReport>& verify() const { return m_verify; }       ///< kind correctness
    const std::optional<BenchReport>& bench() const { return m_bench; }          ///< kind performance
    const std::optional<profile::ProfileReport>& profile() const { return m_profile; } ///< kind profile
    /// The search that chose this report's shape (a shrink run); not part of the document.
    const std::optional<ShrinkResult>& shrink() const { return m_shrink; }
    /// The report as a document: what was read, plus what the with…() editors added.
    const nlohmann::json& document() const { return m_document; }

    ReportKind kind() const { return m_header.kind; }
    bool isError() const { return m_header.isError(); }
    bool passed() const { return m_header.passed(); }

    /// This performance report with the torch.compile comparison the harness measured.
    RunReport withCompileBaseline(const HarnessResult& harness) const;
    /// This performance report with the comparison recorded as asked for and not measured, and why.
    RunReport withCompileNotMeasured(const std::string& reason) const;
    /// This report with every round's timing of `kforge verify --repeat N`.
    RunReport withEditToVerdict(const std::vector<RoundTiming>& rounds) const;
    /// This report with the shrink search that chose its shape.
    RunReport withShrink(const ShrinkResult& shrink) const;

private:
    /// A copy whose document `change` edited: signed again when this one's signature held under
    /// the user's key, else unsigned; the typed view is read again from the new document.
    RunReport edited(const std::function<void(nlohmann::json&)>& change) const;

    Header m_header;
    std::optional<VerifyReport> m_verify;
    std::optional<BenchReport> m_bench;
    std::optional<profile::ProfileReport> m_profile;
    std::optional<ShrinkResult> m_shrink;
    nlohmann::json m_document = nlohmann::json::object();
};

/// Reports of a `kforge verify|bench --json` document ({"reports": [...]}) or of one bare report,
/// in order. Unreadable entries are skipped and their errors returned in `errors`.
std::vector<RunReport> reportsOfDocument(const nlohmann::json& document, std::vector<Error>* errors = nullptr);

} // namespace kf::protocol
