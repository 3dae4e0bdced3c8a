#pragma once
// The steps a task's reference computes, whatever its form: an op, an op tape, or a TorchScript
// module read as a tape (engine/cast/ScriptTape.h). What `kforge generate` and the workbench's
// "New candidate from reference…" start from.

#include "engine/generate/Generate.h"

namespace kf::cast {

Result<gen::ReferenceSteps> referenceSteps(const Task& task);

} // namespace kf::cast
