#include "widgets/occupancy/LaunchConfig.h"

#include <algorithm>

namespace kf::ui {

std::vector<LaunchConfig> launchConfigsFrom(const std::vector<kf::LaunchAnalysis>& analyses)
{
    std::vector<LaunchConfig> configs;
    configs.reserve(analyses.size());
    for (const kf::LaunchAnalysis& a : analyses) {
        LaunchConfig c;
        c.lowered = a.lowered;
        c.label = "launch " + std::to_string(a.launchIndex + 1) + ": " + a.kernel;
        if (!a.shape.empty())
            c.label += " (" + a.shape + ")";
        const std::int64_t threads = a.block[0] * a.block[1] * a.block[2];
        // A plan that asks for more than an int of threads cannot launch anyway; the panel's
        // block-size check reports it, so clamp rather than overflow.
        c.blockThreads = static_cast<int>(std::min<std::int64_t>(threads, 1 << 20));
        c.dynamicSharedBytes = a.dynamicSharedBytes;
        configs.push_back(std::move(c));
    }
    return configs;
}

} // namespace kf::ui
