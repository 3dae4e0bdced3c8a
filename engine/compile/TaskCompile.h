#pragma once
// Glue between a task and a build: the CompileRequest for one candidate and architecture, and
// the occupancy of each launch of its plan at a given shape. Shared by `kforge compile` and the
// workbench so both report the same numbers.

#include "engine/analysis/Occupancy.h"
#include "engine/compile/CompileTypes.h"
#include "engine/core/Result.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kf {

/// Reads the candidate's source from the task folder and fills options from the task's compile
/// settings plus the candidate's defines; name expressions are the plan's kernels.
Result<CompileRequest> compileRequestFor(const Task& task, const Candidate& candidate, const std::string& arch);
/// The same for a source that is not on disk yet (a generated candidate before it is written).
CompileRequest compileRequestFor(const Task& task, const Candidate& candidate, const std::string& arch, std::string source);

/// The shape at which static numbers are shown: the first benchmark shape, else the first test.
const ShapeBinding* representativeShape(const Task& task);

struct LaunchAnalysis {
    int launchIndex = 0;
    std::string kernel;            ///< name expression
    std::string lowered;           ///< mangled name
    const KernelResources* resources = nullptr;  ///< points into the CompileResult
    std::string shape;             ///< "B=4096 D=4096"
    std::int64_t grid[3] = {1, 1, 1};
    std::int64_t block[3] = {1, 1, 1};
    std::int64_t dynamicSharedBytes = 0;
    Result<Occupancy> occupancy = Error{};
};

/// One entry per launch of the plan; resources found by lowered name.
std::vector<LaunchAnalysis> analyseLaunches(const Task& task, const Candidate& candidate, const CompileResult& result,
                                            const ShapeBinding& shape);

nlohmann::json toJson(const LaunchAnalysis& a);

} // namespace kf
