#pragma once
// Summary statistics of timed samples (docs/verification.md timing rule 3): median, min, max, IQR,
// mean, count, and the relative spread of the median used as the stopping rule.

#include <nlohmann/json.hpp>

#include <vector>

namespace kf::device {

struct TimingStats {
    double medianMs = 0, minMs = 0, maxMs = 0, iqrMs = 0, meanMs = 0;
    int samples = 0;
    /// Half the width of a distribution-free 95 % confidence interval of the median (order
    /// statistics n/2 -+ 0.98 sqrt(n)), divided by the median. Large for few or noisy samples.
    double medianRelSpread = 0;

    static TimingStats of(std::vector<double> samplesMs);
    nlohmann::json toJson() const;
};

} // namespace kf::device
