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
/// The schema a package without models is written with (readers of schema 1 can load it).
inline constexpr int kCastSchemaVersion = 1;
/// The schema a package that carries models is written with (docs/cast-format.md, "Models").
inline constexpr int kCastModelSchemaVersion = 2;
/// What a model run's evidence says it is: never mistaken for an op's microbenchmark.
inline constexpr const char* kModelRunScope = "model-level, end to end";
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

struct PackageModel {
    std::string name;            ///< models/<name>/
    std::string format;          ///< kModelTorchExport or kModelTorchScript (CastModel.h)
    std::string file;            ///< the model file's path in the package
    std::vector<std::string> uses;   ///< the package's ops its graph may use
    std::vector<std::string> runs;   ///< paths of model-run evidence (kModelRunScope)
    nlohmann::json json;         ///< the model's manifest entry
};

struct Package {
    std::string origin;          ///< the file it was read from
    nlohmann::json manifest;
    std::string name, version, kernelforgeVersion, createdAt;
    int schemaVersion = kCastSchemaVersion;
    std::vector<PackageOp> ops;
    std::vector<PackageModel> models;
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

/// Checks a model's input description (`kforge cast export --inputs shapes.json`, stored as
/// models/<name>/inputs.json): {"inputs": [{name, dtype, shape, distribution, low, high}]}.
/// Throws kf::json::SchemaError.
void checkInputSpec(const nlohmann::json& spec, const std::string& pointer);
/// Checks a model run's evidence (what `python -m kernelforge_cast run --evidence` writes) for
/// model `model`. Throws kf::json::SchemaError.
void checkModelRun(const nlohmann::json& run, const std::string& pointer, const std::string& model);

/// Whether `name` can name a cast:: operator (and a Python attribute): [A-Za-z_][A-Za-z0-9_]*,
/// at most 64 characters, not a Python keyword.
bool isOpName(std::string_view name);

} // namespace kf::cast
