#pragma once
// Runs a helper program (nvdisasm, cuobjdump) and captures its output. No shell is involved.

#include "engine/core/Result.h"

#include <functional>
#include <string>
#include <vector>

namespace kf {

struct ProcessOutput {
    int exitCode = -1;        ///< -1 when killed by a signal
    std::string out;
    std::string err;
};

/// Runs argv[0] (searched on PATH when it has no slash) with a wall-clock limit, in this process's
/// environment with `env`'s "NAME=value" entries set. `stop` (may be empty) is asked about every
/// 200 ms; when it says true the program is killed and the result is an Error saying so.
/// The program runs in a process group of its own, which is killed whole on a timeout or a stop
/// (a Python that started compile workers leaves none behind). `cwd`: where it runs (empty: here).
Result<ProcessOutput> runProcess(const std::vector<std::string>& argv, int timeoutMs = 30000,
                                 const std::vector<std::string>& env = {}, const std::function<bool()>& stop = {},
                                 const std::string& cwd = {});

/// Finds a tool: $envVar, then PATH, then $CUDA_HOME/bin, the build's toolkit and
/// /usr/local/cuda/bin. Empty when not found.
std::string findTool(const std::string& name, const std::string& envVar);

} // namespace kf
