#pragma once
// One launch of a candidate's plan as the occupancy panel needs it: which kernel, with how many
// threads per block and how much dynamic shared memory.

#include "engine/compile/TaskCompile.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kf::ui {

struct LaunchConfig {
    std::string lowered;               ///< mangled kernel name, matches KernelResources::name
    std::string label;                 ///< shown in the kernel selector: "launch 1: softmax_block<512, 4>"
    int blockThreads = 256;            ///< threads per block (x · y · z)
    std::int64_t dynamicSharedBytes = 0;
};

/// One LaunchConfig per analysed launch, in plan order (analyses from kf::analyseLaunches at the
/// task's representative shape). The label names the launch number, the kernel and the shape.
std::vector<LaunchConfig> launchConfigsFrom(const std::vector<kf::LaunchAnalysis>& analyses);

} // namespace kf::ui
