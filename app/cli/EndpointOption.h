#pragma once
// `--runner PATH`, `--runner-endpoint NAME` and `--runners FILE` for every command that starts a
// runner (verify, bench, profile, promote, synth, tune; repro and shrink through verify): which
// kforge-runner program, and which endpoint of runners.json runs the work (docs/runners.md).
// Without an endpoint, the configuration's default one, which is the local runner unless the
// user chose another.

#include "engine/core/Result.h"
#include "engine/runner/Endpoint.h"
#include "engine/runner/RunnersConfig.h"

#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace kf::cli {

struct EndpointArgs {
    std::string endpoint;     ///< --runner-endpoint
    std::string runnersFile;  ///< --runners; empty: $KF_RUNNERS_FILE, else the user's runners.json
    std::string pool;         ///< --pool FILE[:POOL] (verify, bench)
};

/// `--runner` into `runnerPath` (empty: $KF_RUNNER, beside kforge, PATH) and the endpoint options.
void addRunnerOptions(CLI::App* cmd, std::string* runnerPath, EndpointArgs* args);
/// `--pool FILE[:POOL]` (verify and bench).
void addPoolOption(CLI::App* cmd, EndpointArgs* args);

/// The endpoint to start, or nothing for the plain local runner (no configuration, or the
/// default is the built-in "local"). An Error names the file and what to change: a file that
/// does not read, an endpoint that is not in it.
Result<std::optional<Endpoint>> resolveEndpoint(const EndpointArgs& args);

/// The endpoints file `--runners FILE` names (which must exist), else the user's runners.json.
Result<RunnersConfig> readRunnersOption(const std::string& file);

/// resolveEndpoint for a command: on failure prints the sentence and returns the usage exit code.
std::optional<int> resolveEndpointOrExit(const EndpointArgs& args, std::optional<Endpoint>& out);

/// `--pool FILE[:POOL]` split into the file and the pool's name: FILE when a file of that name
/// exists (a path may hold ':'), else the part after the last ':' names the pool.
std::pair<std::string, std::string> splitPoolArgument(const std::string& text);

/// The pool's endpoints (RunnersConfig::poolEndpoints, "gpus": "all" expanded), or prints why
/// and returns the exit code: usage (2) for a file or pool that does not read, 3 when a host
/// could not be asked for its GPUs.
std::optional<int> resolvePoolOrExit(const EndpointArgs& args, const std::string& runnerPath, std::vector<Endpoint>& out);

} // namespace kf::cli
