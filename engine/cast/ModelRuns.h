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

#include <string>
#include <vector>

namespace kf::cast {

/// The folder of `id`'s model runs in `registry`.
std::filesystem::path modelRunsDirectory(const Registry& registry, const std::string& id);

struct RegistryRunCopy {
    std::string id;              ///< the registry version
    std::string file;            ///< where the copy was written; empty when the registry lacks `id`
};

/// Copies `run` (checked) to every version of `registry` whose op ran in it: the run's
/// substituted sites name cast:: ops, the package's manifest maps them to registry IDs.
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
