#pragma once
// `kforge generate` and the workbench's "New candidate from reference…": a fused, readable CUDA
// candidate and its launch plan, made from the task's reference (docs/generate.md). The source
// uses only the prelude's helpers, keeps intermediates in fp32 registers, rounds each output once
// and needs nothing but the task's own symbols to launch. Deterministic: the same task gives the
// same bytes. Qt-free.

#include "engine/compile/CompileTypes.h"
#include "engine/core/Result.h"
#include "engine/generate/Tape.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace kf {
class CompileCache;
}

namespace kf::gen {

struct GenerateOptions {
    std::string fileName = "generated.cu";
    std::string kernelName;      ///< empty: "generated_<task>"
    int blockThreads = 256;      ///< elementwise kernels: threads per block
    int rowBlockThreads = 128;   ///< row kernels: threads per block (warp mode: a row per warp of it)
    int warpRowMax = 1024;       ///< rows up to this length get a warp each, longer rows a block
    int cacheRegisters = 64;     ///< 32-bit registers per thread that keep inputs between passes
    int chunksPerThread = 2;     ///< elementwise kernels: 16-byte accesses in flight per thread and tensor
    int minBlocksPerSm = 4;      ///< row kernels: __launch_bounds__'s second argument (0: none)
    int splitRowMin = 16384;     ///< rows at least this long (all the task admits) are split over blocks
    int splitSegments = 4;       ///< split rows: blocks (segments) per row
};

/// The steps a task's reference computes, with where they came from for errors.
struct ReferenceSteps {
    std::vector<OpStep> steps;
    std::string file;                   ///< task.json, or the TorchScript file
    std::vector<std::string> pointers;  ///< per step: "/reference/tape/1", or "code/__torch__.py:7"
};

/// An op or tape reference's steps. A TorchScript reference is read by kf::cast::referenceSteps
/// (engine/cast/ScriptTape.h), which needs the archive library; this one refuses it.
Result<ReferenceSteps> opReferenceSteps(const Task& task);

struct Generated {
    std::string source;
    nlohmann::ordered_json candidate;   ///< the task.json entry: file, description, launches
    std::string summary;                ///< one line: what was fused and how it is launched
    std::string kernel;                 ///< the extern "C" name
    Tape tape;
};

Result<Generated> generateCandidate(const Task& task, const ReferenceSteps& steps, const GenerateOptions& options = {});

/// Compiles the generated source with NVRTC for `arch` under the task's compile settings, as the
/// task's own candidates are compiled (the CLI's and the workbench's check before writing). The
/// result carries no SASS (sassUnavailableReason says it was not requested). With `cache`, a
/// source and options compiled before are read back instead of compiled again.
Result<CompileResult> compileGenerated(const Task& task, const Generated& generated, const std::string& arch,
                                       const CompileCache* cache = nullptr);

/// Adds `generated` to the task in `taskDir` as `generated.candidate["file"]`: writes the source,
/// then task.json (both atomically), after the engine validated the new task. Refuses a file
/// name that is taken or not plain. Returns the source's path.
Result<std::filesystem::path> addGeneratedCandidate(const std::filesystem::path& taskDir, const Generated& generated);

} // namespace kf::gen
