#pragma once
// The verify and bench requests sent to kforge-runner, and the reports made for candidates the
// runner never reported on. `kforge verify|bench` and the workbench build requests here so both
// send the same fields (docs/runner-protocol.md) and print the same numbers.
#include "engine/compile/CompileTypes.h"
#include "engine/core/Result.h"
#include "engine/task/Task.h"
#include "engine/task/TaskHash.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kf {

enum class RunKind { Verify, Bench, Profile };

struct RunSettings {
    std::string shapes = "tests";           ///< tests | benchmarks | all
    int trials = 3;                         ///< verify: trials per shape (one seed each)
    std::optional<std::uint64_t> seed;      ///< fixed first seed (replay); empty: fresh secret seeds
    std::vector<ShapeBinding> heldOut;      ///< verify: extra shapes run as set "held_out" (task/HeldOut.h)
    std::vector<ShapeBinding> onlyShapes;   ///< verify: run these instead of `shapes` (a repro, a shrink probe)
    std::string setName = "custom";         ///< the set of onlyShapes: custom | repro | shrink
    int firstTrial = 0;                     ///< the number of the first trial (replays keep a trial's number)
    int samples = 10;                       ///< mismatches listed per output
    std::string dumpDir;                    ///< verify: save failing trials' tensors here (absolute); empty: don't
    std::int64_t dumpMaxBytes = 2ll << 30;
    bool dumpAllFailing = false;            ///< every failing trial, not only each shape's first
    std::string inputsDir;                  ///< inputs from <dir>/<name>.npy (needs one onlyShapes entry, 1 trial)
    int launchTimeoutMs = 10000;            ///< the runner's per-launch watchdog
    // bench
    double timeCapMs = 2000;
    int minSamples = 10;
    int maxSamples = 500;
    double targetSpread = 0.01;
    // profile (runs onlyShapes' one shape, else defaultProfileShape)
    bool profileBaseline = true;            ///< profile the LibTorch baseline's kernels too
};

/// The shape a profile runs when none is named: the benchmark shape with the most elements (a
/// steady state, not launch overhead), else the largest test shape.
std::optional<ShapeBinding> defaultProfileShape(const Task& task);


/// True when the runner's hello lists `feature` ("dump", "inputs_dir", "only_shapes", ...). An
/// older runner ignores fields it does not know, so a client asks before relying on one.
bool runnerHas(const nlohmann::json& hello, const std::string& feature);
/// The feature `settings` need that `hello` lacks, or empty when the runner can serve them.
std::string missingRunnerFeature(const nlohmann::json& hello, const RunSettings& settings);

/// The "candidate" block of a report: file, source hash, arch, options and lowered names.
nlohmann::json candidateHeader(const Candidate& candidate, const CompileRequest& request, const CompileResult& result);

/// A complete verify, bench or profile request for a candidate that compiled to a cubin.
nlohmann::json buildRunRequest(RunKind kind, const TaskPayload& task, const Candidate& candidate,
                               const CompileRequest& request, const CompileResult& result,
                               const std::string& nvrtcVersion, const RunSettings& settings);

/// A report with verdict "error" and no shapes, for a candidate the runner never reported on
/// (it did not compile, or the runner crashed, hung or failed). Same header as the runner's.
nlohmann::json errorReport(RunKind kind, const Task& task, const std::string& taskHash,
                           const nlohmann::json& candidateHeader, const nlohmann::json& hello, const Error& error,
                           const std::string& startedAt, double durationMs);

/// `sm_<major><minor>` from a hello message's device, or empty when it does not say.
std::string archFromHello(const nlohmann::json& hello);
/// "0x9f3a", "9F3A" -> value; nullopt for anything that is not 1..16 hex digits.
std::optional<std::uint64_t> parseSeed(const std::string& text);
/// "0x9f3a".
std::string seedText(std::uint64_t seed);
/// `count` seeds: consecutive from `fixed` (so a failure replays exactly), else secret and independent.
std::vector<std::string> freshSeeds(int count, const std::optional<std::uint64_t>& fixed);

} // namespace kf
