#pragma once
// Internal to engine/cast: the files of a .cast package being written (docs/cast-format.md) —
// each listed in the manifest with its hash and size, and the whole checked by our own reader
// before anything reaches the disk. Used by the export and by a model run recorded afterwards.

#include "engine/cast/CastArchive.h"
#include "engine/core/Result.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace kf::cast::detail {

/// An export refused: "export a .cast package", why, and what to do.
Error exportError(const std::string& why, std::string hint = {}, std::string file = {}, std::string kind = {});
/// A mistake in what was asked (exit 2): an unknown or doubled architecture, a bad name.
Error badArgument(const std::string& why, std::string hint = {});

/// The manifest's "files" entry of one file: path, sha256, bytes.
Result<nlohmann::json> fileEntry(const std::string& path, const std::string& bytes);

/// checkPackage on entries about to be written: the same checks any runtime makes.
Result<void> checkEntries(std::vector<ArchiveEntry> entries, const std::string& origin);

class PackageFiles {
public:
    /// Adds a file and its manifest entry.
    Result<void> add(const std::string& path, std::string bytes);
    const nlohmann::json& list() const { return m_list; }
    /// The manifest first, then every file added, checked (a failure is our bug, said so) and
    /// written atomically to `output`.
    Result<void> write(const nlohmann::json& manifest, const std::filesystem::path& output);

private:
    std::vector<ArchiveEntry> m_entries;
    nlohmann::json m_list = nlohmann::json::array();
};

} // namespace kf::cast::detail
