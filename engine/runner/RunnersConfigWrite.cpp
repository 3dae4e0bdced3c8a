// RunnersConfig written back in the file's form (engine/runner/RunnersConfig.h): what the reader
// fills in by default is left out, and the endpoints a "gpus" array expanded into become that one
// entry again, so that reading what was written gives the same configuration.
#include "engine/runner/RunnersConfig.h"

#include "engine/core/Files.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <system_error>

namespace kf {

namespace fs = std::filesystem;
using Kind = Endpoint::Kind;
using OJson = nlohmann::ordered_json;

namespace {

/// One entry of "endpoints"; `gpus` is null for an entry without the key.
OJson entryJson(const Endpoint& e, const std::string& name, const OJson& gpus)
{
    OJson j;
    j["name"] = name;
    j["kind"] = Endpoint::kindName(e.kind);
    if (!e.runner.empty())
        j["runner"] = e.runner;
    OJson env = OJson::object();
    for (const auto& [key, value] : e.env)
        if (gpus.is_null() || key != "CUDA_VISIBLE_DEVICES")
            env[key] = value;
    if (!env.empty())
        j["env"] = env;
    switch (e.kind) {
    case Kind::Ssh:
        j["host"] = e.host;
        if (!e.user.empty())
            j["user"] = e.user;
        if (e.port > 0)
            j["port"] = e.port;
        if (!e.identityFile.empty())
            j["identity_file"] = e.identityFile;
        if (!e.sshOptions.empty())
            j["ssh_options"] = e.sshOptions;
        break;
    case Kind::Srun:
        if (!e.srunArgs.empty())
            j["srun_args"] = e.srunArgs;
        break;
    case Kind::Command: j["command"] = e.command; break;
    case Kind::Local: break;
    }
    if (e.sharedFs != (e.kind == Kind::Local || e.kind == Kind::Srun))
        j["shared_fs"] = e.sharedFs;
    if (e.startTimeoutS != (e.kind == Kind::Srun ? 1800 : 120))
        j["start_timeout_s"] = e.startTimeoutS;
    if (e.idleTimeoutS != 600)
        j["idle_timeout_s"] = e.idleTimeoutS;
    if (e.heartbeatTimeoutS != 5)
        j["heartbeat_timeout_s"] = e.heartbeatTimeoutS;
    if (e.launchLatencyMs != (e.kind == Kind::Local ? 0 : 2000))
        j["launch_latency_ms"] = e.launchLatencyMs;
    if (!e.sanitizer.empty())
        j["sanitizer"] = e.sanitizer;
    if (!e.pool)
        j["pool"] = false;
    if (!gpus.is_null())
        j["gpus"] = gpus;
    return j;
}

/// The GPU index of an endpoint a "gpus" array made ("h100/1" with CUDA_VISIBLE_DEVICES=1) and the
/// entry's name, or -1.
int expandedGpu(const Endpoint& e, std::string& entry)
{
    const auto slash = e.name.find('/');
    if (slash == std::string::npos || e.kind != Kind::Local)
        return -1;
    const std::string index = e.name.substr(slash + 1);
    auto cvd = e.env.find("CUDA_VISIBLE_DEVICES");
    int g = -1;
    auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), g);
    if (ec != std::errc() || end != index.data() + index.size() || cvd == e.env.end() || cvd->second != index)
        return -1;
    entry = e.name.substr(0, slash);
    return g;
}

} // namespace

std::string RunnersConfig::toJson() const
{
    OJson j;
    j["schema_version"] = 1;
    j["default"] = defaultEndpoint;
    OJson list = OJson::array();
    for (size_t i = 0; i < endpoints.size(); ++i) {
        const Endpoint& e = endpoints[i];
        // The built-in "local" in first place is what the reader adds to a file without one.
        if (i == 0 && e.name == "local" && entryJson(e, e.name, nullptr) == entryJson(builtinLocalEndpoint(), "local", nullptr))
            continue;
        std::string entry;
        if (expandedGpu(e, entry) < 0) {
            list.push_back(entryJson(e, e.name, nullptr));
            continue;
        }
        // Consecutive endpoints of one entry are written back as that entry with its gpus array.
        OJson gpus = OJson::array();
        std::string next;
        for (; i < endpoints.size(); ++i) {
            const int g = expandedGpu(endpoints[i], next);
            if (g < 0 || next != entry)
                break;
            gpus.push_back(g);
        }
        --i;
        list.push_back(entryJson(e, entry, gpus));
    }
    for (const Endpoint& t : allGpuTemplates)
        list.push_back(entryJson(t, t.name, "all"));
    j["endpoints"] = list;
    if (!pools.empty())
        j["pools"] = pools;
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Result<void> writeRunnersConfig(const fs::path& file, const RunnersConfig& config)
{
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    return writeFileAtomic(file, config.toJson());
}

} // namespace kf
