#include "EndpointOption.h"

#include "engine/pipeline/RunPool.h"
#include "engine/runner/RunnersConfig.h"

#include "ExitCodes.h"

#include <CLI/CLI.hpp>

#include <iostream>

namespace kf::cli {

void addRunnerOptions(CLI::App* cmd, std::string* runnerPath, EndpointArgs* args)
{
    cmd->add_option("--runner", *runnerPath, "the kforge-runner program (default: $KF_RUNNER, beside kforge, PATH)");
    cmd->add_option("--runner-endpoint,--endpoint", args->endpoint,
                    "run on this endpoint of runners.json (local, ssh, srun or a command; `kforge runners list`)");
    cmd->add_option("--runners", args->runnersFile, "the endpoints file (default: $KF_RUNNERS_FILE, else ~/.config/KernelForge/runners.json)");
}

void addPoolOption(CLI::App* cmd, EndpointArgs* args)
{
    cmd->add_option("--pool", args->pool,
                    "fan the candidates out over the endpoints of this runners.json (FILE, or FILE:POOL for one of its "
                    "pools); reports come back in task order");
}

std::pair<std::string, std::string> splitPoolArgument(const std::string& text)
{
    std::error_code ec;
    const std::size_t colon = text.rfind(':');
    if (colon == std::string::npos || std::filesystem::exists(text, ec))
        return {text, {}};
    return {text.substr(0, colon), text.substr(colon + 1)};
}

std::optional<int> resolvePoolOrExit(const EndpointArgs& args, const std::string& runnerPath, std::vector<Endpoint>& out)
{
    const auto [file, poolName] = splitPoolArgument(args.pool);
    if (!args.runnersFile.empty()) {
        std::cerr << "kforge: --pool names its runners.json itself; leave --runners out\n";
        return kExitUsage;
    }
    auto config = readRunnersOption(file);
    if (!config) {
        std::cerr << "kforge: --pool: " << config.error().message() << '\n';
        return kExitUsage;
    }
    if (!poolName.empty() && !config->pools.count(poolName)) {
        auto missing = config->poolEndpoints(poolName);
        std::cerr << "kforge: --pool " << args.pool << ": " << (missing ? std::string("no such pool") : missing.error().message()) << '\n';
        return kExitUsage;
    }
    auto endpoints = expandPoolEndpoints(config.value(), poolName, runnerPath);
    if (!endpoints) {
        std::cerr << "kforge: --pool " << args.pool << ": " << endpoints.error().message() << '\n';
        return kExitEnvironment;
    }
    out = std::move(endpoints.value());
    return std::nullopt;
}

Result<RunnersConfig> readRunnersOption(const std::string& file)
{
    const std::filesystem::path path = file.empty() ? runnersConfigPath() : std::filesystem::path(file);
    if (!file.empty() && !std::filesystem::exists(path))
        return Error::inFile(path.string(), {}, "read the runner endpoints", "the file does not exist", "pass an existing runners.json (docs/runners.md)");
    return readRunnersConfig(path);
}

Result<std::optional<Endpoint>> resolveEndpoint(const EndpointArgs& args)
{
    const std::filesystem::path file = args.runnersFile.empty() ? runnersConfigPath() : std::filesystem::path(args.runnersFile);
    auto config = readRunnersOption(args.runnersFile);
    if (!config)
        return config.error();
    const std::string name = args.endpoint.empty() ? config->defaultEndpoint : args.endpoint;
    const Endpoint* e = config->find(name);
    if (!e) {
        std::string names;
        for (const Endpoint& x : config->endpoints)
            names += (names.empty() ? "" : ", ") + x.name;
        return Error::inFile(file.string(), {}, "choose a runner endpoint", "there is no endpoint \"" + name + "\" (there are: " + names + ")", "name one of them, or add it to runners.json (kforge runners list)");
    }
    // The built-in local runner needs no endpoint: the run is exactly what it was before endpoints.
    if (e->kind == Endpoint::Kind::Local && e->name == "local" && e->env.empty() && e->runner.empty())
        return std::optional<Endpoint>();
    return std::optional<Endpoint>(*e);
}

std::optional<int> resolveEndpointOrExit(const EndpointArgs& args, std::optional<Endpoint>& out)
{
    auto e = resolveEndpoint(args);
    if (!e)
        return fail(e.error(), kExitUsage);
    // An endpoint with shared_fs false gets the task's files with each request (RunSession stages
    // them), so every endpoint is usable here; a runner too old to take them is refused when it
    // says hello.
    out = std::move(e.value());
    return std::nullopt;
}

} // namespace kf::cli
