#pragma once
// A .cast package opened and checked (docs/cast-format.md): the zip passed the archive checks
// (CastArchive.h), manifest.json is the first entry and has a schema this reader knows, every
// other entry is listed in the manifest with its SHA-256 and size and matches them, every path
// an op names is one of those files, every launch-plan expression's tree is the parse of its
// text, every name an op uses is declared, and each op agrees with the task.json it carries.
// A package that fails any check is refused whole, before anything is loaded; the error names
// the entry or the manifest's JSON pointer, and the problem.

#include "engine/cast/CastArchive.h"
#include "engine/core/Result.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace kf::cast {

inline constexpr const char* kCastFormat = "kernelforge-cast";
inline constexpr int kCastSchemaVersion = 1;
inline constexpr const char* kManifestName = "manifest.json";
/// The architectures `kforge cast export` compiles for when not told otherwise.
inline constexpr const char* kDefaultArchitectures[] = {"sm_80", "sm_86", "sm_89", "sm_90"};

struct PackageFile {
    std::string path;
    std::string sha256;
    std::int64_t bytes = 0;
};

struct PackageOp {
    std::string name;            ///< cast::<name>
    std::string registryId;
    std::string schema;          ///< the torch.library schema
    std::vector<std::string> images;  ///< "sm_80", ..., "compute_80", as listed
    nlohmann::json json;         ///< the op's manifest entry
};

struct Package {
    std::string origin;          ///< the file it was read from
    nlohmann::json manifest;
    std::string name, version, kernelforgeVersion, createdAt;
    std::vector<PackageOp> ops;
    std::vector<PackageFile> files;
    Archive archive;

    const ArchiveEntry* file(std::string_view path) const { return archive.find(path); }
};

/// Reads and checks `file` completely.
Result<Package> openPackage(const std::filesystem::path& file, const ArchiveLimits& limits = {});
/// The same for bytes in memory; `origin` names them in errors.
Result<Package> openPackageBytes(std::string_view bytes, const std::string& origin, const ArchiveLimits& limits = {});
/// Checks an archive already read (what both of the above do after readArchive).
Result<Package> checkPackage(Archive archive, const std::string& origin);

/// A tensor's shape as the manifest writes it: integer literals ("4") as numbers, symbols as strings.
nlohmann::json shapeJson(const std::vector<std::string>& shape);
/// Whether a shape entry is an integer literal rather than a symbol.
bool isFixedExtent(const std::string& extent);

/// Whether `name` can name a cast:: operator (and a Python attribute): [A-Za-z_][A-Za-z0-9_]*,
/// at most 64 characters, not a Python keyword.
bool isOpName(std::string_view name);

} // namespace kf::cast
