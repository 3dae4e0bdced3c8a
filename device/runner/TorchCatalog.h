#pragma once
// The LibTorch call of one catalog op (engine/task/OpCatalog.h), attributes parsed once: the
// runner's reference and baseline, and the .cast runtime's reference fallback (device/cast/cpp),
// share this one mapping. Includes ATen: only LibTorch translation units include it.

#include "engine/task/Task.h"

#include <ATen/ATen.h>

#include <array>
#include <functional>
#include <string>

namespace kf::device {

/// A step's inputs in its order (at most three: layer_norm's x, weight, bias).
using CatalogArgs = std::array<const at::Tensor*, 3>;
using CatalogOp = std::function<at::Tensor(const CatalogArgs&)>;

/// The ATen type of a task dtype (the one mapping the runner, the reference and kf_cast share).
at::ScalarType scalarTypeOf(DType t);

/// The step as a closure; empty, with a sentence in `why`, when it cannot run (an unknown op, a
/// wrong number of inputs, a bad attribute). Results are the op's natural PyTorch dtype.
CatalogOp catalogOp(const OpStep& step, std::string& why);

} // namespace kf::device
