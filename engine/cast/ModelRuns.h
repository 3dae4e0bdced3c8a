#pragma once
// Model-level evidence beside the op's own: when a model run is recorded (`kforge cast run
// --record`), each registry version whose kernel ran in it gets a copy of the run under
// <registry>/model-runs/<registry ID>/, so the registry browser shows, next to the version's
// op-level microbenchmark, what it did to whole models (docs/cast.md, "Models"). The registry
// itself never judges these files: they are not gates, and a reader checks each one
// (checkModelRun) before showing it.

#include "engine/cast/CastPackage.h"
#include "engine/core/Result.h"
#include "engine/registry/Registry.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kf::cast {

/// What a run says in numbers, for every view that summarises one.
struct RunTally {
    int sites = 0;                  ///< candidate call sites
    int substituted = 0;            ///< of them, run by a packaged kernel
    std::int64_t fallbacks = 0;     ///< calls that fell back to reference ops (all ops)
};
/// Requires a run that passed checkModelRun.
RunTally tallyOf(const nlohmann::json& run);

/// A model run's headline, for a list of runs and a one-line summary.
struct ModelRunHeadline {
    std::string model;
    std::string createdAt;               ///< UTC, ISO 8601
    std::string gpu;                     ///< empty: it ran on the CPU
    std::optional<double> speedup;       ///< end to end; none when it ran without kernels only
};
/// Checks `run` as evidence of the model it names (checkModelRun) and reads its headline. An
/// Error names `origin` and the JSON pointer of what is wrong.
Result<ModelRunHeadline> readModelRunHeadline(const nlohmann::json& run, const std::string& origin);

/// A file-name stem for a run: its time, package and model, made safe ("2026-11-27T03-11-26Z-pkg-block").
std::string runFileStem(const nlohmann::json& run, const std::string& package);

/// Whether `run` (checked) names `package` as the package it ran.
bool sameRunPackage(const nlohmann::json& run, const Package& package);
/// The refusal of a run of another package.
Error foreignRun(const std::string& what, const nlohmann::json& run, const Package& package);

/// The folder of `id`'s model runs in `registry`.
std::filesystem::path modelRunsDirectory(const Registry& registry, const std::string& id);

struct RegistryRunCopy {
    std::string id;              ///< the registry version
    std::string file;            ///< where the copy was written; empty when it was not (see `why`)
    std::string why;             ///< why not: the registry lacks `id`, or the op fell back in the run
};

/// Copies `run` (checked, and a run of `package`) to every version of `registry` whose kernel
/// ran in it: the run's substituted sites name cast:: ops, the package's manifest maps them to
/// registry IDs. An op that fell back in the run gets no copy: its kernel did not do the work.
Result<std::vector<RegistryRunCopy>> recordModelRunInRegistry(const Registry& registry, const Package& package,
                                                              const nlohmann::json& run);

struct StoredModelRun {
    std::string file;
    nlohmann::json run;          ///< valid (checkModelRun) when `problem` is empty
    std::string problem;         ///< why the file is not shown: unreadable, malformed
};

/// The model runs stored for `id`, oldest first.
std::vector<StoredModelRun> modelRunsOf(const Registry& registry, const std::string& id);

} // namespace kf::cast
