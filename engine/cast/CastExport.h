#pragma once
// `kforge cast export` and the registry browser's Export .cast…: registry kernel versions into
// one .cast package (docs/cast-format.md). Each version is compiled offline with NVRTC for
// every architecture asked for (cubins) plus PTX of one of them, next to its sources, task,
// evidence and a manifest that describes the op to a runtime that has only PyTorch. No GPU is
// needed. Nothing is written unless every version exports.

#include "engine/cast/CastPackage.h"
#include "engine/compile/CompileTypes.h"
#include "engine/core/Result.h"
#include "engine/registry/Registry.h"

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kf::cast {

/// Error::kind of an export refused for what was asked: unknown or doubled architectures, a bad
/// op name, a deprecated version (`kforge cast export` exits 2).
inline constexpr const char* kCastBadArgument = "cast_bad_argument";
/// Error::kind of a version that does not compile for an architecture or whose registry check
/// fails (exit 1).
inline constexpr const char* kCastKernelRefused = "cast_kernel_refused";

/// A model to carry (docs/cast-format.md, "Models").
struct ModelExport {
    std::filesystem::path file;                    ///< torch.export.save (.pt2) or torch.jit.save output
    std::string name;                              ///< default: the file's stem made an identifier
    /// Inputs for runs: a shapes file (.json, checkInputSpec) or tensors saved with torch.save
    /// (.pt, loaded with weights_only); empty: the .pt2's own sample inputs.
    std::filesystem::path inputs;
};

struct ExportOptions {
    std::vector<std::string> ids;                  ///< registry IDs, in package order
    std::vector<std::string> architectures;        ///< cubins; default kDefaultArchitectures
    /// PTX for forward compatibility: "compute_80", "" for the lowest of `architectures`, "none" for none.
    std::string ptx;
    std::map<std::string, std::string> opNames;    ///< registry ID -> op name (default: the task's name)
    std::string packageName;                       ///< default: the output file's stem
    std::string packageVersion = "1.0.0";
    std::string kernelforgeVersion;                ///< written into the manifest
    bool allowDeprecated = false;
    std::vector<ModelExport> models;               ///< a package with models is schema 2
};

struct ExportProgress {
    int done = 0, total = 0;
    std::string text;                              ///< "compile vector_add for sm_86"
};

struct ExportSummary {
    std::filesystem::path file;
    std::int64_t bytes = 0;
    std::vector<std::string> ops;
    std::vector<std::string> architectures;
    std::string ptx;                               ///< empty when none
    double compileMs = 0;
    struct Model {
        std::string name;
        std::vector<std::string> uses;             ///< packaged ops its graph may use
    };
    std::vector<Model> models;
};

/// Adds a model run's evidence (checkModelRun) to model `model` of the package at `file`,
/// rewriting it atomically after the same checks as any reader. Returns the entry's path.
Result<std::string> recordModelRun(const std::filesystem::path& file, const std::string& model,
                                   const nlohmann::json& run);

/// A candidate's op in manifest form (docs/cast-format.md, "Ops"): name, tensors, parameters,
/// symbols, constraints, launches with each kernel's lowered name, scratch and reference. What
/// an export writes for each version (then adds images, sources and evidence), and how the
/// torch.compile harness is told to launch a candidate (engine/cast/CompileBaseline.h).
nlohmann::json candidateOpJson(const std::string& name, const Task& task, const Candidate& candidate,
                               const std::map<std::string, std::string>& loweredNames);

/// The op name `kforge cast export` gives a task by default: its name made an identifier.
std::string defaultOpName(const std::string& taskName);

/// Exports `options.ids` from `registry` into `output`. `progress` (may be empty) is called
/// before each compile; `cancel` (may be null) stops between and inside compiles.
Result<ExportSummary> exportPackage(const Registry& registry, const ExportOptions& options,
                                    const std::filesystem::path& output,
                                    const std::function<void(const ExportProgress&)>& progress = {},
                                    const CancelToken* cancel = nullptr);

} // namespace kf::cast
