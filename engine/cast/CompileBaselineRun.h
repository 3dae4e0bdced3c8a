#pragma once
// Runs the torch.compile baseline for one benchmarked candidate (docs/benchmarks.md, "The
// torch.compile baseline"): hands the cubin the runner timed to the harness (python -m
// kernelforge_baseline bench) as a .cast op with the shapes the runner timed, and reads the
// harness's result. engine/pipeline/RunPipeline.cpp merges it into the report; nothing else runs it. The candidate travels as a
// .cast op because the harness launches it with the .cast runtime's driver code; that is why
// this lives beside the package code.

#include "engine/compile/CompileTypes.h"
#include "engine/core/Result.h"
#include "engine/protocol/CompileBaseline.h"
#include "engine/protocol/RunReport.h"
#include "engine/protocol/RunRequest.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <filesystem>
#include <string>
#include <vector>

namespace kf::cast {

struct CompileBaselineOptions {
    /// The Python with torch, Triton and kernelforge_baseline; empty: $KF_BASELINE_PYTHON, else
    /// $KF_CAST_PYTHON, else python3.
    std::string python;
    /// Prepended to PYTHONPATH; empty: this source tree's device/baseline/python and
    /// device/cast/python when they exist (a kforge or workbench run from the build tree).
    std::vector<std::string> pythonPath;
    std::vector<std::string> modes;            ///< empty: default and max-autotune-no-cudagraphs
    protocol::BenchSettings sampling;
    std::uint64_t seed = 0;
    int timeoutMs = 30 * 60 * 1000;            ///< compiles included
    std::function<bool()> stop;                ///< asked while the harness runs; true kills it (Cancel)
};

/// The Python the harness runs under, by the rule above.
std::string baselinePython(const CompileBaselineOptions& options);

/// Times the reference under torch.compile beside `built` (the cubin of `candidate` of `task` that
/// produced `report`, a performance report; task.json at `taskFile`), on this machine's GPU.
/// An Error's `why` is the reason the comparison was not measured (the benchmark did not finish,
/// no Python with torch, the harness crashed, cancelled): recorded beside the report, never fatal.
/// `log` (may be null) gets the harness's progress lines after it ends.
Result<protocol::HarnessResult> measureCompileBaseline(const protocol::RunReport& report, const Task& task,
                                                       const std::filesystem::path& taskFile, const Candidate& candidate,
                                                       const CompileResult& built, const CompileBaselineOptions& options,
                                                       std::string* log = nullptr);

} // namespace kf::cast
