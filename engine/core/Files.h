#pragma once
// File helpers shared by every writer we own: whole-file reads and atomic writes.

#include "engine/core/Result.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kf {

/// Reads a whole file (binary-safe).
Result<std::string> readFileBytes(const std::filesystem::path& file);

/// Writes `bytes` to `file` atomically: a temporary in the same folder, fsync, then rename, so
/// a reader sees the old file or the new one and never a torn mix, even if we are killed midway.
/// Creates missing parent folders.
Result<void> writeFileAtomic(const std::filesystem::path& file, std::string_view bytes);

/// The same for a file made of several pieces (a header and a large body), without joining
/// them in memory first.
Result<void> writeFileAtomic(const std::filesystem::path& file, const std::vector<std::string_view>& parts);

/// True when `path` is `folder` or lies below it once both are resolved (symbolic links followed,
/// "." and ".." removed); false for an empty folder.
bool isInsideFolder(const std::filesystem::path& path, const std::filesystem::path& folder);

/// $XDG_CACHE_HOME/kernelforge, or ~/.cache/kernelforge.
std::filesystem::path userCacheDir();

} // namespace kf
