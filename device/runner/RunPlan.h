#pragma once
// A request (engine/protocol/RunRequest.h) resolved against its task: the parsed task, the
// candidate, and the shapes in run order with the set each came from. Every problem is an Error
// naming the request field's JSON pointer, so a bad request is answered, never crashed on.

#include "engine/core/Result.h"
#include "engine/protocol/RunRequest.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kf::device {

using protocol::BenchSettings;
using protocol::DumpSettings;
using protocol::ProfileSettings;
using protocol::RunKind;

struct ShapeRef {
    ShapeBinding binding;
    std::string set;                ///< "tests", "benchmarks", "held_out", or only_shapes' set name
};

struct RunPlan : protocol::RunRequest {
    Task task;
    size_t candidateIndex = 0;
    std::string mode;               ///< "tests" | "benchmarks" | "all", or the set name of only_shapes
    std::vector<ShapeRef> runShapes; ///< in run order

    const Candidate& candidate() const { return task.candidates[candidateIndex]; }
};

/// Reads a request line's JSON and resolves it. Unknown extra keys are ignored.
Result<RunPlan> planRun(const nlohmann::json& j);

/// What this runner understands beyond protocol 2's first version; sent in hello "features".
/// A client checks for a feature before using the field, since unknown fields are ignored.
const std::vector<std::string>& runnerFeatures();

/// "0x9f3a..." (16 hex digits).
std::string seedHex(std::uint64_t seed);
/// An independent stream for `salt` under `base` (inputs, guards, sentinels of one trial).
std::uint64_t deriveSeed(std::uint64_t base, std::uint64_t salt);

/// The error sent as fatal when a candidate has lost the CUDA context (a sticky error): the
/// supervisor shows it as the reason the runner restarted. `action` is "run" or "benchmark".
Error lostContextError(const Error& e, const std::string& action, const RunPlan& plan, const std::string& where);

} // namespace kf::device
