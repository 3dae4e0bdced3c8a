#include "PoolRun.h"

#include "Interrupt.h"
#include "engine/pipeline/RunPool.h"

#include <cstdio>
#include <iostream>
#include <mutex>

namespace kf::cli {

namespace {

std::string seconds(double ms)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s", ms / 1000.0);
    return text;
}

/// "h100-0 (host-a · NVIDIA H100 80GB HBM3): 11 candidates, restarted once".
std::string endpointLine(const PoolEndpointSummary& e)
{
    std::string where = e.host;
    if (!e.gpu.empty())
        where += (where.empty() ? "" : " · ") + e.gpu;
    std::string line = e.name + (where.empty() ? "" : " (" + where + ")") + ": " + std::to_string(e.items) +
                       (e.items == 1 ? " candidate" : " candidates");
    if (e.restarts > 0)
        line += ", restarted " + std::string(e.restarts == 1 ? "once" : std::to_string(e.restarts) + " times");
    if (e.lost)
        line += ", lost: " + e.why;
    return line;
}

} // namespace

PoolRun runPool(RunKind kind, const std::vector<PoolCandidate>& candidates, const std::vector<Endpoint>& endpoints,
                const std::string& runnerPath, const std::string& arch, const std::function<RunSettings(const Candidate&)>& settingsFor,
                bool json, const std::function<void(std::size_t, protocol::RunReport, const Endpoint*)>& accept)
{
    PoolRun out;
    CancelToken cancel;
    InterruptGuard interrupt(&cancel);
    std::mutex said;   // workers write their lines whole
    RunPool::Options o;
    o.endpoints = endpoints;
    o.runnerPath = runnerPath;
    o.archOverride = arch;
    o.onLog = [&](const std::string& endpoint, const std::string& line) {
        std::lock_guard<std::mutex> g(said);
        std::cerr << "kforge: " << endpoint << ": " << line << '\n';
    };
    std::vector<PoolItem> items;
    for (const PoolCandidate& c : candidates)
        items.push_back({c.task, c.candidate->file, c.task->name + "/" + c.candidate->file, settingsFor(*c.candidate)});
    if (!json)
        o.onStart = [&](std::size_t i, const std::string& endpoint, int attempt) {
            std::lock_guard<std::mutex> g(said);
            std::cerr << items[i].label << ": on " << endpoint << (attempt > 1 ? " (attempt " + std::to_string(attempt) + ")" : "")
                      << '\n';
        };
    auto find = [&](const std::string& name) -> const Endpoint* {
        for (const Endpoint& e : endpoints)
            if (e.name == name)
                return &e;
        return nullptr;
    };
    RunPool pool(o);
    auto ran = pool.run(kind, *candidates.front().task, items, &cancel, [&](std::size_t i, const RunOutcome& outcome, const std::string& where) {
        if (outcome.failure && json) {
            std::lock_guard<std::mutex> g(said);
            std::cerr << "kforge: " << items[i].label << ": " << outcome.failure->message() << '\n';
        }
        accept(i, outcome.report, find(where));
    });
    if (!ran) {
        std::cerr << "kforge: " << ran.error().message() << '\n';
        out.allLost = true;
        out.missing = static_cast<int>(items.size());
        return out;
    }
    const PoolOutcome& p = ran.value();
    out.cancelled = p.cancelled;
    out.allLost = p.allLost;

    nlohmann::json eps = nlohmann::json::array();
    for (const PoolEndpointSummary& e : p.endpoints) {
        double busy = 0;
        for (const auto& [from, to] : e.intervals)
            busy += to - from;
        eps.push_back({{"name", e.name}, {"endpoint", e.description}, {"host", e.host}, {"gpu", e.gpu}, {"gpu_uuid", e.gpuUuid},
                       {"items", e.items}, {"restarts", e.restarts}, {"lost", e.lost}, {"why", e.why}, {"busy_ms", busy}});
    }
    nlohmann::json list = nlohmann::json::array();
    for (std::size_t i = 0; i < items.size(); ++i) {
        nlohmann::json item = {{"task", candidates[i].task->name}, {"candidate", items[i].candidateFile}, {"endpoint", p.endpointOf[i]}, {"attempt", p.attemptOf[i]},
                               {"started_ms", p.intervalOf[i].first}, {"ended_ms", p.intervalOf[i].second}};
        if (!p.outcomes[i]) {
            ++out.missing;
            const std::string why = !p.missingWhy[i].empty() ? p.missingWhy[i] : p.allLost ? p.allLostWhy : "not run";
            item["missing"] = why;
            if (!p.cancelled)
                std::cerr << "kforge: " << items[i].label << ": no report: " << why << '\n';
        }
        list.push_back(std::move(item));
    }
    out.summary = {{"endpoints", eps}, {"items", list}, {"wall_ms", p.wallMs}};
    if (!json && !p.cancelled) {
        std::cout << "\npool: " << items.size() << (items.size() == 1 ? " candidate" : " candidates") << " on " << p.endpoints.size()
                  << (p.endpoints.size() == 1 ? " endpoint" : " endpoints") << " in " << seconds(p.wallMs) << '\n';
        for (const PoolEndpointSummary& e : p.endpoints)
            std::cout << "  " << endpointLine(e) << '\n';
        if (p.allLost)
            std::cout << "  " << p.allLostWhy << '\n';
    }
    return out;
}

} // namespace kf::cli
