#pragma once
// Runs the torch.compile baseline for one benchmarked candidate (docs/benchmarks.md, "The
// torch.compile baseline"): compiles the candidate's cubin for the GPU the runner used, hands it
// to the harness (python -m kernelforge_baseline bench) as a .cast op with the shapes the runner
// timed, and merges the harness's result into the performance report. The candidate travels as a
// .cast op because the harness launches it with the .cast runtime's driver code; that is why
// this lives beside the package code.

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
    /// Appended to the task's NVRTC options, as the run that made the report appended them
    /// (the workbench's Settings), so the harness times the cubin the runner timed.
    std::vector<std::string> extraNvrtcOptions;
};

/// The Python the harness runs under, by the rule above.
std::string baselinePython(const CompileBaselineOptions& options);

/// Adds "compile_baseline" (and each timed shape's "compile") to `report`, a performance report
/// of `candidate` of `task` (task.json at `taskFile`) timed on a GPU of architecture `arch`. Never
/// fails: a baseline that cannot be measured is recorded with its reason. `log` (may be empty)
/// gets the harness's progress lines after it ends.
void addCompileBaseline(nlohmann::json& report, const Task& task, const std::filesystem::path& taskFile,
                        const Candidate& candidate, const std::string& arch, const CompileBaselineOptions& options,
                        std::string* log = nullptr);

} // namespace kf::cast
