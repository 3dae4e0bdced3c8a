#pragma once
// Taking an agent's work back (`kforge candidate add`, File ▸ Add Candidate…): a .cu file and its
// launch plan, given as a JSON file or as a ```json fence in the file's first comment, are
// checked against the task (each error names the plan's file, line or JSON pointer), compiled
// with NVRTC for every architecture of the task, scanned (engine/analysis/SourceScan.h) and
// appended to task.json. After that verify, bench and promote treat it like any candidate.

#include "engine/analysis/SourceScan.h"
#include "engine/compile/Diagnostic.h"
#include "engine/core/Result.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kf::agent {

/// A plan fenced in the source's first comment: the JSON text and the file line it starts on.
struct FencedPlan {
    std::string json;
    int line = 0;
    std::vector<int> offsets;   ///< per JSON line: the characters of comment decoration before it
};

/// The ```json fence of the first comment at the top of `source` (a /* */ block or consecutive
/// // lines), if any. Errors: two fences, an unterminated one. `file` names the source in errors.
Result<std::optional<FencedPlan>> fencedPlan(std::string_view source, const std::string& file);

/// The largest plan read, as a file or a fence, and its deepest nesting.
inline constexpr std::size_t kMaxPlanBytes = 1 << 20;
inline constexpr int kMaxPlanDepth = 64;

/// Parses plan JSON; a syntax error names origin:line:col, counted from `firstLine` (and, for a
/// fenced plan, shifted by each line's comment decoration). Plans over kMaxPlanBytes or nested
/// deeper than kMaxPlanDepth are refused before parsing.
Result<nlohmann::ordered_json> parsePlanJson(std::string_view text, const std::string& origin, int firstLine = 1,
                                             const std::vector<int>& offsets = {});

struct AddCandidateRequest {
    std::filesystem::path taskDir;
    std::filesystem::path source;     ///< the .cu file (anywhere, or already in the task folder)
    std::filesystem::path planFile;   ///< empty: the fence in the source
    std::string name;                 ///< empty: the source's file name
    std::string description;          ///< empty: the plan's, else "added by kforge candidate add"
    bool compile = true;              ///< compile with NVRTC before adding (skipped, with a note, without NVRTC)
    std::function<bool()> cancelled;  ///< polled between architectures
};

struct AddedCandidate {
    bool added = false;                       ///< false: it did not compile (diagnostics say why)
    std::filesystem::path file;               ///< the candidate in the task folder
    std::string name;
    nlohmann::ordered_json entry;             ///< what task.json now lists
    std::vector<Diagnostic> diagnostics;      ///< NVRTC's, for every architecture compiled
    std::vector<std::string> compiledFor;     ///< architectures that compiled cleanly
    std::vector<ScanFinding> findings;        ///< the static scan (warnings)
    std::vector<std::string> notes;           ///< one sentence each: a replaced plan "file", no NVRTC
};

/// Errors (nothing written): unreadable source or plan, no plan or two, bad JSON, a plan the
/// task rejects (Error::file is the plan's origin, Error::pointer its own JSON pointer), a name
/// that is not plain or is taken, a task that does not load.
Result<AddedCandidate> addCandidate(const AddCandidateRequest& request);

} // namespace kf::agent
