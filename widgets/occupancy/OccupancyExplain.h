#pragma once
// Sentences that explain an occupancy result in the terms a kernel author can act on.

#include "engine/analysis/Occupancy.h"

#include <QString>

namespace kf::ui {

/// "limited by registers: 80 registers × 256 threads allocate 20480 registers per block; the
/// SM's 65536 registers hold 3 blocks …". Names the limiter of `result` with the numbers that
/// produce it; empty when there is no limiter.
QString limiterSentence(const kf::ArchInfo& arch, const kf::OccupancyQuery& query, const kf::Occupancy& result);

/// "sm_90 · H100 SXM5 (132 SMs)": how an architecture is shown in selectors.
QString architectureLabel(const kf::ArchInfo& arch);

/// "12 KiB" for whole KiB, else "12345 B".
QString bytesLabel(long long bytes);

} // namespace kf::ui
