#pragma once
// Community problems as KernelForge tasks (`kforge import`, File ▸ Import Problem…;
// docs/agents.md, "Importing problems"). A KernelBench problem file or a GPU MODE problem folder
// is run by the Python helper device/agent/python/kernelforge_import — the problem's own code
// has to run, with torch, to trace its reference — which writes a proposal into a private
// folder. Everything it writes is untrusted: the proposal is read strictly here, the task it
// holds must pass parseTask, and only then is the task folder created (whole, by a rename).

#include "engine/core/Result.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kf::agent {

/// Error::kind when the Python chosen cannot import torch (kforge exits 3: the machine's lack).
inline constexpr const char* kImportNoTorch = "import_no_torch";

struct ImportOptions {
    std::string python;                 ///< empty: importPython()
    std::string dtype;                  ///< KernelBench: fp32, fp16 or bf16; empty: the problem's
    std::string arch = "sm_90";
    std::filesystem::path out;          ///< the task folder to create; empty: <parent>/<task name>
    std::filesystem::path parent;       ///< where `out` goes when it is empty; empty: the current folder
    int timeoutMs = 600000;
    std::function<bool()> stop;         ///< polled while the helper runs
    /// The problem's code runs confined (engine/core/Sandbox.h): bwrap where it works, else a
    /// private home and a scrubbed environment. false: the latter even where bwrap works.
    bool sandbox = true;
};

/// The sentence to show once before an import whose problem code runs without bwrap
/// ("no sandbox: bwrap is not installed; …"), or empty when it runs in the sandbox.
std::string importSandboxNote(const ImportOptions& options);

/// --python, else $KF_IMPORT_PYTHON, else the Python with torch found at configure time, else python3.
std::string importPython(const std::string& given);

/// One sample the helper ran eagerly: inputs and expected outputs as .npy files.
struct ImportSample {
    std::string label;
    nlohmann::json shape;                                  ///< {"N": 7}
    std::vector<std::pair<std::string, std::string>> inputs, expected;   ///< name -> path in the proposal folder
    std::vector<std::string> upcast;                       ///< bf16 tensors stored as fp32
};

struct ImportProposal {
    std::string format;                 ///< kernelbench | gpumode
    std::string torchVersion;
    nlohmann::ordered_json task;        ///< task.json, candidates []
    std::vector<std::string> originals; ///< files under originals/
    std::vector<ImportSample> samples;
    std::vector<std::string> notes;
};

/// Reads proposal.json written into `folder` strictly (unknown keys are errors, every path stays
/// inside the folder, the task passes parseTask with its reference file present).
Result<ImportProposal> readImportProposal(const nlohmann::json& j, const std::string& origin,
                                          const std::filesystem::path& folder);

/// GPU MODE's task.yml as the JSON spec the helper reads: `files` [{name, source}], `lang`,
/// optional `description`, `config`, `tests`/`benchmarks` (lists of maps of scalars), timeouts
/// and `ranking_by`. Other keys are kept and named in `notes`. Errors name origin:line:col.
struct GpuModeSpec {
    nlohmann::json spec;
    std::vector<std::string> notes;
};
Result<GpuModeSpec> readGpuModeTaskYml(std::string_view text, const std::string& origin);

struct ImportResult {
    std::filesystem::path taskDir;
    std::string name;
    std::vector<std::string> notes;     ///< the first is importSandboxNote() when there was no sandbox
    int testShapes = 0, benchmarkShapes = 0;
};

Result<ImportResult> importKernelBench(const std::filesystem::path& problem, const ImportOptions& options);
Result<ImportResult> importGpuMode(const std::filesystem::path& folder, const ImportOptions& options);

/// Creates `to` (which must not exist, or be an empty folder) from a proposal folder: task.json,
/// the reference, imported/ (the originals and import.json with the notes) and samples/.
Result<std::filesystem::path> writeImportedTask(const ImportProposal& proposal, const std::filesystem::path& from,
                                                const std::filesystem::path& to);

} // namespace kf::agent
