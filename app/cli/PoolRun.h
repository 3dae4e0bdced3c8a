#pragma once
// `kforge verify|bench --pool FILE[:POOL]`: the task's candidates fan out over the pool's
// endpoints (engine/pipeline/RunPool.h) and come back to the command in task order, so the printed
// blocks and the --json reports read as a run on one endpoint would. What each endpoint did
// (host, GPU, items, restarts, losses) becomes the --json document's "pool" block, outside the
// signed reports, and a summary line after the tables.

#include "engine/protocol/RunReport.h"
#include "engine/runner/Endpoint.h"
#include "engine/runner/RunSettings.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace kf::cli {

struct PoolRun {
    bool cancelled = false;
    bool allLost = false;           ///< items were left because every endpoint was lost
    int missing = 0;                ///< candidates without a report (lost twice, or left)
    nlohmann::json summary;         ///< the --json document's "pool" block
};

/// One candidate of one task.
struct PoolCandidate {
    const Task* task = nullptr;
    const Candidate* candidate = nullptr;
};

/// Runs every candidate on the pool. `accept(i, report, endpoint)` gets candidate i's report, in
/// the order given, on the calling thread. Candidates that got no report are said on stderr.
PoolRun runPool(RunKind kind, const std::vector<PoolCandidate>& candidates, const std::vector<Endpoint>& endpoints,
                const std::string& runnerPath, const std::string& arch, const std::function<RunSettings(const Candidate&)>& settingsFor,
                bool json, const std::function<void(std::size_t, protocol::RunReport, const Endpoint*)>& accept);

} // namespace kf::cli
