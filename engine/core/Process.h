#pragma once
// Runs a helper program (nvdisasm, cuobjdump, a Python helper) and captures its output. No shell
// is involved.

#include "engine/core/Result.h"

#include <spawn.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace kf {

struct ProcessOutput {
    int exitCode = -1;        ///< -1 when killed by a signal
    int signal = 0;           ///< the signal that ended it (SIGSEGV, SIGKILL...), else 0
    std::string out;
    std::string err;
};

struct ProcessOptions {
    int timeoutMs = 30000;
    /// "NAME=value" entries set in place of (or beside) this process's environment; with
    /// `onlyEnv`, the program's whole environment.
    std::vector<std::string> env;
    bool onlyEnv = false;
    /// Asked about every 100 ms; when it says true the program is killed and the result is an
    /// Error saying so.
    std::function<bool()> stop;
    std::string cwd;                  ///< where it runs (empty: here)
    std::uint64_t dataBytes = 0;      ///< RLIMIT_DATA (heap and private mappings), 0: none
    std::uint64_t cpuSeconds = 0;     ///< RLIMIT_CPU, 0: none
    std::size_t keepBytes = 0;        ///< keep only the last this many bytes of each stream, 0: all
};

/// Runs argv[0] (searched on PATH when it has no slash) in a session and process group of its
/// own. The run ends when that program exits — not when its pipes close, which a detached
/// grandchild may hold open for as long as it likes — and then the whole group is killed, so
/// workers it started (a Python's compile pool, a daemon a script forked) go with it; so on a
/// timeout or a stop. An Error only when it cannot be started, times out or is stopped.
Result<ProcessOutput> runProcess(const std::vector<std::string>& argv, const ProcessOptions& options);

/// The same with the common options in place.
Result<ProcessOutput> runProcess(const std::vector<std::string>& argv, int timeoutMs = 30000,
                                 const std::vector<std::string>& env = {}, const std::function<bool()>& stop = {},
                                 const std::string& cwd = {});

/// posix_spawn attributes for a child that leads a process group of its own (so the whole group
/// can be signalled at once), starts with no signal blocked and with `defaulted` at their default
/// action (the parent may ignore or catch them). For the programs started without runProcess: the
/// supervisor's runner and the runner's compute-sanitizer, whose pipes or files are their own.
class SpawnAttributes {
public:
    explicit SpawnAttributes(std::initializer_list<int> defaulted);
    ~SpawnAttributes();
    SpawnAttributes(const SpawnAttributes&) = delete;
    SpawnAttributes& operator=(const SpawnAttributes&) = delete;
    const posix_spawnattr_t* get() const { return &m_attr; }

private:
    posix_spawnattr_t m_attr;
};

/// "SIGSEGV", "SIGKILL", ... ("signal 42" for one without a name).
std::string signalName(int signal);

/// Finds a tool: $envVar, then PATH, then $CUDA_HOME/bin, the build's toolkit and
/// /usr/local/cuda/bin. Empty when not found.
std::string findTool(const std::string& name, const std::string& envVar);

} // namespace kf
