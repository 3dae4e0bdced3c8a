#pragma once
// Held-out shapes: bindings the task's author never wrote down, drawn from the symbols' ranges
// and constraints with a secret seed, so a candidate tuned to the listed test shapes cannot
// guess them (docs/verification.md, correctness rule 5). Promotion verifies on them as well.

#include "engine/task/Task.h"

#include <cstdint>
#include <vector>

namespace kf {

/// Up to `count` distinct bindings that satisfy every symbol's range and `multiple_of`, every
/// constraint, and differ from every test shape. Sizes stay within what the tests already ask
/// of the GPU: each symbol at most its largest test value, and the total elements of all inputs
/// and outputs at most the largest test shape's. Extents that are not multiples of a power of
/// two are preferred. The same task and seed always give the same shapes (a failure replays).
/// Fewer (possibly none) come back when the ranges leave no room, e.g. every symbol fixed.
std::vector<ShapeBinding> deriveHeldOutShapes(const Task& task, std::uint64_t seed, int count = 2);

/// The shapes as the runner's `held_out_shapes` request field expects them.
nlohmann::json heldOutJson(const std::vector<ShapeBinding>& shapes);

} // namespace kf
