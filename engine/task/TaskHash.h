#pragma once
// What identifies a task's evidence: the hash reports carry and promotion checks, and the task
// as the runner receives it.

#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <string>

namespace kf {

/// The task as the runner receives it, with its hash (reports carry it; promotion checks it).
struct TaskPayload {
    nlohmann::json json;
    std::string hash;
    std::string directory;                  ///< absolute task folder
};
TaskPayload taskPayload(const Task& task);
/// The task hash reports carry: the canonical task JSON plus the bytes of every file in its
/// include folders and of a TorchScript reference, so editing a header voids the evidence too.
std::string taskHash(const Task& task);

} // namespace kf
