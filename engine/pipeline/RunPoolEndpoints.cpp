// expandPoolEndpoints (RunPool.h): which endpoints `--pool FILE[:POOL]` runs on.
#include "engine/pipeline/RunPool.h"

#include "engine/runner/RunnersConfig.h"
#include "engine/runner/Supervisor.h"

namespace kf {

Result<std::vector<Endpoint>> expandPoolEndpoints(const RunnersConfig& config, const std::string& poolName, const std::string& runnerPath)
{
    auto chosen = config.poolEndpoints(poolName);
    if (!chosen)
        return chosen.error();
    std::vector<Endpoint> out = std::move(chosen.value());
    // "gpus": "all" is known only on the host: ask one runner there which GPUs it sees, and make
    // one endpoint per GPU, pinned by UUID (an ordinal would shift under the caller's own
    // CUDA_VISIBLE_DEVICES; a UUID names the same card whatever the runner inherits).
    if (poolName.empty()) {
        for (const Endpoint& t : config.allGpuTemplates) {
            if (!t.pool)
                continue;
            RunnerSupervisor probe(RunnerSupervisor::forEndpoint(t, runnerPath));
            auto hello = probe.hello();
            if (!hello)
                return Error::failed("list the GPUs of endpoint " + t.name, hello.error().message(), "check it with `kforge runners check " + t.name + "`");
            if (hello->devices.empty())
                return Error::failed("list the GPUs of endpoint " + t.name, "its runner sees no GPU" + (hello->deviceError.empty() ? std::string() : " (" + hello->deviceError + ")"), "give \"gpus\" as a list of indices, or run the pool where the GPUs are");
            for (const protocol::VisibleDevice& d : hello->devices) {
                Endpoint one = t;
                one.name = t.name + "/" + std::to_string(d.ordinal);
                one.env["CUDA_VISIBLE_DEVICES"] = d.uuid.empty() ? std::to_string(d.ordinal) : d.uuid;
                out.push_back(std::move(one));
            }
            probe.stop();
        }
    }
    if (out.empty())
        return Error::failed("choose the runner pool", "no endpoint joins the pool", "list endpoints in the file (the built-in \"local\" joins only when listed), or name a pool");
    return out;
}

} // namespace kf
