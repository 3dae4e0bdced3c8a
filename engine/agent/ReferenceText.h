#pragma once
// A task's reference shown to people and agents: each step in words, and the whole as PyTorch
// code with the catalog's exact semantics (the runner's mapping; docs/task-schema.md, "Reference").

#include "engine/task/Task.h"

#include <string>
#include <vector>

namespace kf::agent {

/// "1. `y = rms_norm(x, w, eps=1e-06)`: RMS norm over the last normalized_dims dims; …", one line per step.
std::string stepsInWords(const std::vector<OpStep>& steps);

/// A Python function `reference(<inputs>)` computing the task's outputs with torch calls,
/// each input and output annotated with its dtype and symbolic shape.
std::string stepsAsPyTorch(const Task& task, const std::vector<OpStep>& steps);

} // namespace kf::agent
