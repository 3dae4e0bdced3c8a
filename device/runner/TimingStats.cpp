#include "device/runner/TimingStats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kf::device {

namespace {

// Linear interpolation between order statistics (the usual "type 7" quantile).
double quantile(const std::vector<double>& sorted, double q)
{
    const double pos = q * static_cast<double>(sorted.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

double round6(double v)
{
    return std::round(v * 1e6) / 1e6;
}

} // namespace

TimingStats TimingStats::of(std::vector<double> s)
{
    TimingStats t;
    t.samples = static_cast<int>(s.size());
    if (s.empty())
        return t;
    std::sort(s.begin(), s.end());
    const double n = static_cast<double>(s.size());
    t.minMs = s.front();
    t.maxMs = s.back();
    t.medianMs = quantile(s, 0.5);
    t.iqrMs = quantile(s, 0.75) - quantile(s, 0.25);
    t.meanMs = std::accumulate(s.begin(), s.end(), 0.0) / n;
    // Ranks j = floor(n/2 - 1.96 sqrt(n)/2) and k = ceil(1 + n/2 + 1.96 sqrt(n)/2), 1-based.
    const double half = 0.98 * std::sqrt(n);
    const double j = std::max(1.0, std::floor(n / 2.0 - half));
    const double k = std::min(n, std::ceil(1.0 + n / 2.0 + half));
    const double lo = s[static_cast<size_t>(j) - 1], hi = s[static_cast<size_t>(k) - 1];
    t.medianRelSpread = t.medianMs > 0 ? (hi - lo) / 2.0 / t.medianMs : 0.0;
    return t;
}

nlohmann::json TimingStats::toJson() const
{
    return {{"median_ms", round6(medianMs)}, {"min_ms", round6(minMs)},     {"max_ms", round6(maxMs)},
            {"iqr_ms", round6(iqrMs)},       {"mean_ms", round6(meanMs)},   {"samples", samples},
            {"median_rel_spread", std::round(medianRelSpread * 1e5) / 1e5}};
}

} // namespace kf::device
