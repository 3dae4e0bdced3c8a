#pragma once
// Pieces the registry's writer (Registry.cpp) and its checker (RegistryCheck.cpp) share. Not API.

#include "engine/core/FileLock.h"
#include "engine/core/Result.h"
#include "engine/protocol/Signature.h"
#include "engine/registry/Registry.h"

#include <chrono>
#include <filesystem>
#include <string>

namespace kf::registry_internal {

inline constexpr auto kLockTimeout = std::chrono::seconds(60);
inline constexpr const char* kStagingDir = ".staging";
inline constexpr const char* kTrashDir = ".trash";
inline constexpr const char* kLockFile = ".lock";

Error registryError(const std::filesystem::path& dir, std::string what, std::string why, std::string hint = {});
/// "the registry has no kernel <id>", with the IDs that are there.
Error unknownId(const std::filesystem::path& dir, const RegistryIndex& index, const std::string& id);

/// The index read while holding the registry's lock; the lock is released when this goes away.
struct LockedIndex {
    FileLock lock;
    RegistryIndex index;
};
Result<LockedIndex> lockIndex(const std::filesystem::path& dir);

/// A path inside a version folder: relative, no "..", not hidden at its top.
bool isSafeRelativePath(const std::string& path);
/// Makes a rename or a new file durable: the folder's own entry list is flushed too.
void syncDirectory(const std::filesystem::path& dir);
/// A registry file's JSON text: indented, ending in a newline.
std::string pretty(const nlohmann::json& j);
/// The index entry's "benchmark_shapes" for a task: one object of extents per benchmark shape.
nlohmann::json benchmarkShapesJson(const Task& task);

/// The candidate's source and the hashes of the files as they are now.
struct CurrentFiles {
    std::string source;
    std::string sourceHash;
    std::string taskHash;
};
Result<CurrentFiles> currentFiles(const PromotionInput& in);
/// What a registry asks of a promotion: its index's settings, or those a record was promoted under.
struct GateSettings {
    double threshold = kDefaultSpeedupThreshold;
    std::optional<double> compileThreshold;
    SanitizerPolicy sanitizerPolicy = kDefaultSanitizerPolicy;
};
inline GateSettings gateSettings(const RegistryIndex& index)
{
    return {index.threshold, index.compileThreshold, index.sanitizerPolicy};
}
/// The gates for `in` against `files` and `settings`; `key` is the user's signing key (or why
/// there is none), loaded once by the caller.
GateVerdict judge(const PromotionInput& in, const CurrentFiles& files, const GateSettings& settings,
                  const Result<protocol::SigningKey>& key);
/// A version folder's task.json (the whole task as promoted), rooted at `dir`; candidate files
/// other than the promoted one are not looked for.
Result<Task> readEntryTask(const std::filesystem::path& dir);

} // namespace kf::registry_internal
