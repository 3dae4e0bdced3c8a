#pragma once
// A pool of runner endpoints (docs/runners.md, "Pools"): the candidates of one task fan out over
// several endpoints, each endpoint running one item at a time, and the outcomes come back in
// task order, whatever order they finished in.
//
// - One worker thread per endpoint owns that endpoint's RunPipeline (the runner is tied to the
//   thread that started it) and takes the next item from a shared queue.
// - Endpoints that share a GPU (the same Hello::gpuKey: host and GPU UUID) never time together:
//   a benchmark or profile holds its GPU alone; verifications of the same GPU may overlap.
// - An endpoint that is lost (Error::kind runner_lost, connection_lost, runner_start) gives its
//   item back to the front of the queue, for another endpoint while any is alive, and is
//   restarted once; lost a second time, it is out of the pool. An item lost on two endpoints
//   ends as an error. A candidate's own failure (a crash, a hang, a wrong answer) is never an
//   endpoint's loss: it is that candidate's report, as in a run on one endpoint.
// - Every seed is fixed by the settings the caller gives (RunSettings::seed), never by which
//   endpoint ran an item, so a pool with --seed produces the reports one endpoint would.
// - Local runners share this machine's cores: each gets OMP_NUM_THREADS = cores / local
//   endpoints (LibTorch's CPU thread pool), unless its endpoint sets it.

#include "engine/compile/CompileTypes.h"
#include "engine/core/Result.h"
#include "engine/runner/Endpoint.h"
#include "engine/pipeline/RunPipeline.h"
#include "engine/runner/RunSession.h"
#include "engine/runner/RunSettings.h"
#include "engine/task/Task.h"

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kf {

struct PoolItem {
    /// The item's task; null: the task given to RunPool::run (a pool may span several tasks).
    const Task* task = nullptr;
    std::string candidateFile;          ///< as listed in task.json
    std::string label;                  ///< "task/file.cu", for messages
    RunSettings settings;
};

/// How one endpoint fared.
struct PoolEndpointSummary {
    std::string name;
    std::string description;            ///< Endpoint::describe()
    std::string host;                   ///< from its hello ("" when it never started)
    std::string gpu;
    std::string gpuUuid;
    std::string gpuKey;
    int items = 0;                      ///< items it finished (reports it returned)
    int restarts = 0;                   ///< times it was lost and started again
    bool lost = false;                  ///< lost twice (or never started twice): out of the pool
    std::string why;                    ///< the last loss's sentence
    /// When each item ran on it, in ms since the pool started (tests and the GPU suite check that
    /// benchmarks on one GPU never overlap).
    std::vector<std::pair<double, double>> intervals;
};

struct PoolOutcome {
    /// Per item, in item order. Unset only for items no endpoint could take (every endpoint lost,
    /// or cancelled before they started).
    std::vector<std::optional<RunOutcome>> outcomes;
    /// Per item: the endpoint that produced its outcome, and the attempt (1 first).
    std::vector<std::string> endpointOf;
    std::vector<int> attemptOf;
    /// Per item: why it has no outcome (lost twice before its runner answered, every endpoint
    /// lost, cancelled); empty for items with an outcome.
    std::vector<std::string> missingWhy;
    /// Per item: when its last attempt ran, in ms since the pool started ({0, 0} if it never ran).
    std::vector<std::pair<double, double>> intervalOf;
    std::vector<PoolEndpointSummary> endpoints;
    double wallMs = 0;
    bool cancelled = false;
    bool allLost = false;               ///< items were left because every endpoint was lost
    std::string allLostWhy;
};

class RunPool {
public:
    struct Options {
        std::vector<Endpoint> endpoints;            ///< at least one; names unique
        std::string runnerPath;                     ///< for local endpoints without a runner of their own
        std::string archOverride;
        std::filesystem::path cacheDir;             ///< compile cache; empty: the user's default
        /// Called from worker threads (serialise yourself): an endpoint started, was lost, restarted.
        std::function<void(const std::string& endpoint, const std::string& line)> onLog;
        /// Called from worker threads when an item starts on an endpoint.
        std::function<void(std::size_t index, const std::string& endpoint, int attempt)> onStart;
    };

    explicit RunPool(Options options);

    /// Runs every item of `items` (candidates of `task` or of their own task, all of one kind) and returns when all are
    /// done, lost or cancelled. `onDone` is called on the calling thread, in item order, as soon
    /// as an item and all items before it are finished (so output streams in task order).
    /// An Error only when the pool could not be used at all (no endpoint).
    Result<PoolOutcome> run(RunKind kind, const Task& task, const std::vector<PoolItem>& items, const CancelToken* cancel,
                            const std::function<void(std::size_t index, const RunOutcome& outcome, const std::string& endpoint)>&
                                onDone = {});

    /// Whether a run's failure is the endpoint's (the process or connection went away for a reason
    /// outside the candidate) rather than the candidate's.
    static bool isEndpointLoss(const RunOutcome& outcome);

private:
    Options m_options;
};

/// Endpoints for `--pool`: the named pool of `config` (or every pool:true endpoint), with the
/// "gpus": "all" entries expanded by starting one runner of each and reading the hello's device
/// list (`probe` replaced in tests). An Error names the file and what to change.
struct RunnersConfig;
Result<std::vector<Endpoint>> expandPoolEndpoints(const RunnersConfig& config, const std::string& poolName,
                                                  const std::string& runnerPath);

} // namespace kf
