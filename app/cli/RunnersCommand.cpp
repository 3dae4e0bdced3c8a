#include "RunnersCommand.h"

#include "EndpointOption.h"
#include "ExitCodes.h"
#include "Interrupt.h"
#include "RunnerSession.h"
#include "TextTable.h"
#include "engine/core/Clock.h"
#include "engine/protocol/Signature.h"
#include "engine/runner/RunnersConfig.h"
#include "engine/runner/Supervisor.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace kf::cli {

namespace {

struct RunnersArgs {
    std::string file;
    std::vector<std::string> names;
    bool json = false;
    std::string runnerPath;
};

int list(const RunnersArgs& a)
{
    auto config = readRunnersOption(a.file);
    if (!config)
        return fail(config.error(), kExitUsage);
    if (a.json) {
        nlohmann::json out = nlohmann::json::array();
        for (const Endpoint& e : config->endpoints)
            out.push_back({{"name", e.name}, {"kind", Endpoint::kindName(e.kind)}, {"where", e.describe()},
                           {"shared_fs", e.sharedFs}, {"pool", e.pool}, {"default", e.name == config->defaultEndpoint},
                           {"command", e.argv(RunnerSupervisor::defaultRunnerPath())}});
        std::cout << out.dump(2) << '\n';
        return kExitOk;
    }
    TextTable t({{"endpoint"}, {"kind"}, {"where"}, {"files"}, {"pool"}});
    for (const Endpoint& e : config->endpoints)
        t.addRow({e.name + (e.name == config->defaultEndpoint ? " (default)" : ""), Endpoint::kindName(e.kind), e.describe(),
                  e.sharedFs ? "shared" : "not shared", e.pool ? "yes" : "no"});
    for (const Endpoint& e : config->allGpuTemplates)
        t.addRow({e.name + "/*", Endpoint::kindName(e.kind), "one endpoint per GPU the runner sees", "shared", e.pool ? "yes" : "no"});
    t.print(std::cout, "");
    for (const auto& [pool, names] : config->pools) {
        std::string joined;
        for (const std::string& n : names)
            joined += (joined.empty() ? "" : ", ") + n;
        std::cout << "pool " << pool << ": " << joined << '\n';
    }
    return kExitOk;
}

// The endpoints named on the command line (all of runners.json's when none is). Returns an exit code.
int chooseEndpoints(const RunnersArgs& a, const RunnersConfig& config, std::vector<Endpoint>& chosen)
{
    if (a.names.empty()) {
        chosen = config.endpoints;
        return kExitOk;
    }
    for (const std::string& n : a.names) {
        const Endpoint* e = config.find(n);
        if (!e) {
            std::cerr << "kforge: there is no endpoint \"" << n << "\" in runners.json (kforge runners list)\n";
            return kExitUsage;
        }
        chosen.push_back(*e);
    }
    return kExitOk;
}

// Starts the endpoint's runner and pings it: its row of the --json document (with "ok") and of
// the table `t`.
nlohmann::json checkEndpoint(const RunnersArgs& a, const Endpoint& e, const std::string& myKey, CancelToken& cancel, TextTable& t)
{
    RunnerSupervisor::Options o = RunnerSupervisor::forEndpoint(e, a.runnerPath);
    o.onStartLog = [&](const std::string& line) {
        if (!a.json)
            std::cerr << "kforge: " << e.name << ": " << line << '\n';
    };
    RunnerSupervisor runner(o);
    const auto t0 = std::chrono::steady_clock::now();
    auto hello = runner.hello();
    const double startMs = msSince(t0);
    nlohmann::json row = {{"name", e.name}, {"where", e.describe()}};
    for (const std::string& w : runner.startWarnings())
        std::cerr << "kforge: " << e.name << ": warning: " << w << '\n';
    if (!hello) {
        row["ok"] = false;
        row["error"] = hello.error().message();
        t.addRow({e.name, "—", hello.error().why});
        return row;
    }
    const auto t1 = std::chrono::steady_clock::now();
    auto pong = runner.control({{"type", "ping"}}, {}, &cancel);
    const double pingMs = msSince(t1);
    const protocol::Hello& h = hello.value();
    std::string key = h.signingKeyId.empty() ? "none" : h.signingKeyId == myKey ? "yours" : "another (" + h.signingKeyId + ")";
    // An endpoint that does not share this machine's files needs a runner that takes them.
    const bool takesFiles = e.sharedFs || h.has("stage");
    const bool ok = static_cast<bool>(pong) && takesFiles;
    row["files"] = e.sharedFs ? "shared" : takesFiles ? "staged" : "refused";
    row["ok"] = ok;
    row["host"] = h.host;
    row["gpu"] = h.device ? h.device->gpu : std::string();
    row["uuid"] = h.device ? h.device->uuid : std::string();
    row["arch"] = h.arch();
    row["device_error"] = h.deviceError;
    row["start_ms"] = startMs;
    row["ping_ms"] = pingMs;
    row["sanitizer"] = h.sanitizer ? h.sanitizer->version : std::string();
    row["signing_key"] = key;
    if (!pong)
        row["error"] = pong.error().message();
    else if (!takesFiles)
        row["error"] = "the runner there is too old to be sent the task's files (its hello does not list \"stage\"), and "
                       "shared_fs is false for this endpoint: install this KernelForge's kforge-runner there, or share "
                       "the task folders and set \"shared_fs\": true";
    if (!takesFiles && !a.json)
        std::cerr << "kforge: " << e.name << ": " << row["error"].get<std::string>() << '\n';
    char start[32], ping[32];
    std::snprintf(start, sizeof start, "%.1f s", startMs / 1000.0);
    std::snprintf(ping, sizeof ping, ok ? "%.1f ms" : "failed", pingMs);
    t.addRow({e.name, h.host, h.device ? h.device->gpu : "no GPU: " + h.deviceError,
              h.device && !h.device->uuid.empty() ? h.device->uuid.substr(0, 12) + "…" : "", start, ping,
              h.sanitizer ? h.sanitizer->version : "not found", key});
    runner.stop();
    return row;
}

int check(const RunnersArgs& a)
{
    auto config = readRunnersOption(a.file);
    if (!config)
        return fail(config.error(), kExitUsage);
    std::vector<Endpoint> chosen;
    if (int rc = chooseEndpoints(a, *config, chosen); rc != kExitOk)
        return rc;
    auto mine = protocol::loadSigningKey(false);
    const std::string myKey = mine ? mine->id : std::string();
    CancelToken cancel;
    InterruptGuard interrupt(&cancel);
    nlohmann::json out = nlohmann::json::array();
    bool allOk = true;
    TextTable t({{"endpoint"}, {"host"}, {"gpu"}, {"uuid"}, {"start", TextTable::Align::Right}, {"ping", TextTable::Align::Right},
                 {"sanitizer"}, {"signing key"}});
    for (const Endpoint& e : chosen) {
        if (cancel.cancelled())
            return kExitInterrupted;
        nlohmann::json row = checkEndpoint(a, e, myKey, cancel, t);
        allOk = allOk && row["ok"].get<bool>();
        out.push_back(std::move(row));
    }
    if (a.json)
        std::cout << out.dump(2) << '\n';
    else
        t.print(std::cout, "");
    return allOk ? kExitOk : kExitEnvironment;
}

} // namespace

void addRunnersCommand(CLI::App& app, int& exitCode)
{
    auto args = std::make_shared<RunnersArgs>();
    CLI::App* cmd = app.add_subcommand("runners", "List the runner endpoints of runners.json and check that they work");
    cmd->require_subcommand(1);
    CLI::App* l = cmd->add_subcommand("list", "List the endpoints (local, ssh, srun, command) and pools");
    l->add_option("--runners", args->file, "the endpoints file (default: $KF_RUNNERS_FILE, else ~/.config/KernelForge/runners.json)");
    l->add_flag("--json", args->json, "print JSON");
    l->callback([args, &exitCode] { exitCode = list(*args); });
    CLI::App* c = cmd->add_subcommand("check", "Start each endpoint's runner: host, GPU, UUID, start-up and ping times, "
                                                "compute-sanitizer, signing key");
    c->add_option("name", args->names, "endpoints to check (default: all)");
    c->add_option("--runners", args->file, "the endpoints file (default: $KF_RUNNERS_FILE, else ~/.config/KernelForge/runners.json)");
    c->add_option("--runner", args->runnerPath, "the local kforge-runner program (default: $KF_RUNNER, beside kforge, PATH)");
    c->add_flag("--json", args->json, "print JSON");
    c->callback([args, &exitCode] { exitCode = check(*args); });
}

} // namespace kf::cli
