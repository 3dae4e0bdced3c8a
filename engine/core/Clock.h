#pragma once
// Wall-clock and elapsed time in the forms reports and logs use.

#include <chrono>
#include <string>

namespace kf {

/// "2026-11-22T06:50:00Z".
std::string utcNow();

/// Milliseconds since `start` on the steady clock.
inline double msSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

} // namespace kf
