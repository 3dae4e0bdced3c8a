#pragma once
// What a shrink probe learns from a verify report: for each probed shape, whether a trial failed
// and how (engine/verify/Shrink.h's FailureKind). Shared by `kforge verify --shrink` and the
// workbench's Shrink.

#include "engine/core/Result.h"
#include "engine/protocol/RunReport.h"
#include "engine/verify/Shrink.h"

#include <cstddef>
#include <vector>

namespace kf {

/// One outcome per shape of `report`, in order; an Error when the run failed or the report
/// does not have `shapes` shapes.
Result<std::vector<ProbeOutcome>> probeOutcomes(const protocol::RunReport& report, std::size_t shapes);

} // namespace kf
