#pragma once
// Glue between a task and a build: the CompileRequest for one candidate and architecture, and
// the occupancy of each launch of its plan at a given shape. Shared by `kforge compile` and the
// workbench so both report the same numbers.

#include "engine/analysis/Occupancy.h"
#include "engine/compile/CompileTypes.h"
#include "engine/core/Result.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace kf {

/// Reads the candidate's source from the task folder and fills options from the task's compile
/// settings plus the candidate's defines; name expressions are the plan's kernels.
Result<CompileRequest> compileRequestFor(const Task& task, const Candidate& candidate, const std::string& arch);
/// The same for a source that is not on disk yet (a generated candidate before it is written).
CompileRequest compileRequestFor(const Task& task, const Candidate& candidate, const std::string& arch, std::string source);

/// One candidate built for every architecture of its task, in the task's order.
struct EveryArchitectureBuild {
    std::vector<std::string> compiledFor;   ///< the architectures that built, in order
    std::vector<CompileResult> results;     ///< one per architecture tried; stops after the first failure
    std::vector<Diagnostic> diagnostics;    ///< every build's, each message led by "[sm_XX] "
    bool success = false;                   ///< every architecture built
};

/// Builds `source` (not yet on disk, named `fileName`) for every architecture of `task`. The plan's
/// kernel names are attributed to `planOrigin` ("plan.json at /launches/0/kernel"). `stop` is
/// polled between architectures and `cancel` inside NVRTC; either ends the call with the error
/// "cancelled". Used by the agent's `candidate add` and the synthesis loop, so both refuse and
/// report a kernel the same way.
Result<EveryArchitectureBuild> compileForEveryArchitecture(const Task& task, const Candidate& candidate, const std::string& source,
                                                           const std::string& fileName, const std::string& planOrigin,
                                                           const CancelToken* cancel = nullptr,
                                                           const std::function<bool()>& stop = {});

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
