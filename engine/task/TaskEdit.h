#pragma once
// The one place a candidate is appended to a task on disk: `kforge generate`, `kforge candidate
// add`, and the workbench's New Candidate and Import from Registry all go through it, so every
// writer keeps task.json's other keys and their order, validates before replacing it, and
// leaves nothing behind when it fails.

#include "engine/core/Result.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace kf {

/// A candidate file name the task folder accepts: letters, digits, '_', '-' and '.', ending in
/// .cu, not starting with '.' or '-' (no folders, nothing hidden).
bool isPlainCandidateName(std::string_view file);

/// A launch plan as the task.json entry of `file`: "file" first, then the plan's keys in their
/// order (a "file" the plan names itself is dropped).
nlohmann::ordered_json candidateEntry(const std::string& file, const nlohmann::ordered_json& plan);

/// Writes `source` as `<taskDir>/<file>` and appends `entry` (its "file" set to `file`) to
/// task.json's "candidates". Refuses a name that is not plain, a file that exists, and a name
/// task.json already lists. The new task is validated with parseTask before task.json is
/// replaced (atomically); on any failure the new file is removed and task.json is untouched, and
/// a validation error keeps parseTask's file and pointer (/candidates/<index>/...).
/// `what` names the action in errors ("add the generated candidate"), `renameHint` what to do
/// about a name that is taken ("choose another name with --name").
Result<std::filesystem::path> appendCandidate(const std::filesystem::path& taskDir, const std::string& file,
                                              std::string_view source, nlohmann::ordered_json entry,
                                              const std::string& what = "add the candidate",
                                              const std::string& renameHint = "choose another name");

/// The same for a file that is already in the task folder (an agent wrote `<task>/agent.cu`):
/// only task.json changes, and the file is left alone whatever happens.
Result<std::filesystem::path> appendCandidateInPlace(const std::filesystem::path& taskDir, const std::string& file,
                                                     nlohmann::ordered_json entry,
                                                     const std::string& what = "add the candidate",
                                                     const std::string& renameHint = "choose another name");

} // namespace kf
