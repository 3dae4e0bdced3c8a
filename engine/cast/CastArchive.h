#pragma once
// The zip layer of .cast packages (docs/cast-format.md), on libzip. A package comes from
// elsewhere and is untrusted: before a single byte is decompressed, the central directory is
// checked against limits (entries, sizes, compression ratio), every name against path traversal
// and duplicates, every entry's type against links and devices. Each refusal names the entry and
// the problem. Writing is atomic: a temporary file beside the target, renamed over it.

#include "engine/core/Result.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kf::cast {

/// Error::kind of a package path that names no regular file (the caller's mistake: exit 2).
inline constexpr const char* kCastNoSuchFile = "cast_no_such_file";

struct ArchiveLimits {
    std::size_t maxEntries = 4096;
    std::uint64_t maxEntryBytes = std::uint64_t(512) << 20;   ///< one file, uncompressed
    std::uint64_t maxTotalBytes = std::uint64_t(2) << 30;     ///< all files, uncompressed
    double maxRatio = 200.0;                                  ///< uncompressed / compressed
    std::uint64_t ratioFloorBytes = std::uint64_t(1) << 20;   ///< smaller entries may exceed the ratio
    std::size_t maxNameBytes = 255;
};

struct ArchiveEntry {
    std::string name;
    std::string bytes;
};

struct Archive {
    std::vector<ArchiveEntry> entries;   ///< in archive order
    const ArchiveEntry* find(std::string_view name) const;
};

/// Why `name` cannot name a file of a package (empty when it can): absolute, `..` or `.`
/// components, backslashes, empty components, a directory entry, control characters, too long.
std::string entryNameProblem(std::string_view name, const ArchiveLimits& limits = {});

/// Reads every entry of the zip archive `file` after the checks above. Errors name `file` and,
/// in `pointer`, the entry.
Result<Archive> readArchive(const std::filesystem::path& file, const ArchiveLimits& limits = {});
/// The same for an archive in memory; `origin` names it in errors (the fuzz target's way in).
Result<Archive> readArchiveBytes(std::string_view bytes, const std::string& origin, const ArchiveLimits& limits = {});

/// Writes `entries` (deflated, in order) to `file` atomically.
Result<void> writeArchive(const std::filesystem::path& file, const std::vector<ArchiveEntry>& entries);

} // namespace kf::cast
