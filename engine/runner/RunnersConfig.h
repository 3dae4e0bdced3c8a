#pragma once
// The runner endpoints a user has configured (docs/runners.md): one JSON file, `runners.json` in
// KernelForge's configuration folder, shared by the CLI (--runner-endpoint, --runners, --pool,
// `kforge runners`) and the workbench's settings. Modelled on engine/synth/ModelsConfig.h.

#include "engine/core/Result.h"
#include "engine/runner/Endpoint.h"

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kf {

struct RunnersConfig {
    /// Always holds an endpoint named "local" (built in, kind local, unless the file redefines it,
    /// which it may only with kind local). Entries with "gpus" are already expanded: "h100" with
    /// gpus [0,1] becomes "h100/0" and "h100/1", each with CUDA_VISIBLE_DEVICES=i.
    std::vector<Endpoint> endpoints;
    std::string defaultEndpoint = "local";
    std::map<std::string, std::vector<std::string>> pools;   ///< name -> endpoint names
    /// Local endpoints written with "gpus": "all": the pool expands them after asking one runner
    /// which devices it sees (hello's device list). Name of the entry -> its template endpoint.
    std::vector<Endpoint> allGpuTemplates;

    const Endpoint* find(const std::string& name) const;
    /// The endpoints `--pool FILE[:POOL]` uses: the named pool, else every endpoint with pool: true.
    Result<std::vector<Endpoint>> poolEndpoints(const std::string& poolName) const;
    std::string toJson() const;   ///< the file's form (gpus entries written back unexpanded)
};

/// The "local" endpoint a file without one gets: this machine's runner. It joins `--pool FILE`
/// only when the file lists it (a pool of remote GPUs should not also load the laptop).
Endpoint builtinLocalEndpoint();

/// $KF_RUNNERS_FILE, else $XDG_CONFIG_HOME/KernelForge/runners.json (~/.config/... without it).
std::filesystem::path runnersConfigPath();

/// Reads the file; a file that does not exist is the built-in configuration (only "local").
/// Errors name the file, the JSON pointer and what to change: unknown keys, a bad kind, a name
/// used twice, an ssh host starting with "-", -t/-tt/RequestTTY in ssh_options or --pty in srun_args
/// ("a pseudo-terminal rewrites protocol lines; leave -t out"), a command without exactly one
/// "{runner}" element, CUDA_VISIBLE_DEVICES in an srun endpoint's env, a default or pool naming no
/// endpoint, schema_version other than 1.
Result<RunnersConfig> readRunnersConfig(const std::filesystem::path& file);
Result<RunnersConfig> parseRunnersConfig(std::string_view text, const std::string& origin);
/// Writes atomically, creating the folder.
Result<void> writeRunnersConfig(const std::filesystem::path& file, const RunnersConfig& config);

} // namespace kf
