#pragma once
// The series behind the occupancy charts: occupancy (%) as one launch parameter varies while the
// others stay as queried. Every value comes from kf::computeOccupancy / kf::occupancyCurve; a
// configuration that cannot launch counts as 0 %.

#include "engine/analysis/Occupancy.h"

#include <QList>
#include <QPointF>

namespace kf::ui {

/// (threads per block, %) at every warp multiple up to the architecture's block limit.
QList<QPointF> blockSizeCurve(const kf::ArchInfo& arch, const kf::OccupancyQuery& query);
/// (registers per thread, %) for every count from 0 to the architecture's per-thread limit:
/// every count, not only the allocation steps, so the curve shows where the steps fall.
QList<QPointF> registersCurve(const kf::ArchInfo& arch, const kf::OccupancyQuery& query);
/// (shared memory per block in KiB, %) from the kernel's static shared memory up to the
/// opt-in limit, varying the dynamic part (the source fixes the static part).
QList<QPointF> sharedMemoryCurve(const kf::ArchInfo& arch, const kf::OccupancyQuery& query);

} // namespace kf::ui
