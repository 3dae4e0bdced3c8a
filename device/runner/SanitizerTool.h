#pragma once
// compute-sanitizer on the runner's host: found like the other CUDA tools ($KF_COMPUTE_SANITIZER,
// PATH, the toolkit) and asked for its version once per runner (the hello says both).

#include "engine/protocol/Messages.h"

#include <optional>

namespace kf::device {

/// The tool and its version ("2025.3.1.0"), or nothing when it is not there or does not answer.
const std::optional<protocol::SanitizerTool>& sanitizerTool();

} // namespace kf::device
