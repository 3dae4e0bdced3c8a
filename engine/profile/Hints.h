#pragma once
// Plain-language advice derived from a profile report. Every hint states the numbers it rests
// on (the evidence) and what to try; rules that lack their numbers stay silent rather than guess.

#include "engine/protocol/ProfileReport.h"

#include <string>
#include <vector>

namespace kf::profile {

struct Hint {
    enum class Severity { Info, Advice, Warning };
    std::string id;           ///< stable rule name: "occupancy-registers", "dram-bound", "spills", ...
    Severity severity = Severity::Info;
    std::string title;        ///< "Occupancy limited by registers"
    std::string evidence;     ///< "80 registers/thread x 256 threads: 3 blocks per SM, 37.5 % theoretical"
    std::string suggestion;   ///< "__launch_bounds__(256, 4) caps registers at 64 and allows 50 %"
};

/// Hints for the candidate (and, where it compares, the baseline), most important first.
std::vector<Hint> hintsFor(const ProfileReport& report);

} // namespace kf::profile
