#include "widgets/occupancy/OccupancyCurves.h"

#include <algorithm>

namespace kf::ui {
namespace {

// Fine enough for the shared-memory allocation granularity to show as steps, coarse enough to
// stay below a thousand points on the largest opt-in limit.
constexpr int kSharedStep = 256;

double percent(const kf::ArchInfo& arch, const kf::OccupancyQuery& q)
{
    const kf::Result<kf::Occupancy> r = kf::computeOccupancy(arch, q);
    return r ? r->occupancy * 100.0 : 0.0;
}

} // namespace

QList<QPointF> blockSizeCurve(const kf::ArchInfo& arch, const kf::OccupancyQuery& query)
{
    QList<QPointF> points;
    for (const kf::OccupancyPoint& p : kf::occupancyCurve(arch, query))
        points.append(QPointF(p.blockSize, p.occupancy * 100.0));
    return points;
}

QList<QPointF> registersCurve(const kf::ArchInfo& arch, const kf::OccupancyQuery& query)
{
    QList<QPointF> points;
    kf::OccupancyQuery q = query;
    for (int regs = 0; regs <= arch.maxRegsPerThread; ++regs) {
        q.registersPerThread = regs;
        points.append(QPointF(regs, percent(arch, q)));
    }
    return points;
}

QList<QPointF> sharedMemoryCurve(const kf::ArchInfo& arch, const kf::OccupancyQuery& query)
{
    QList<QPointF> points;
    kf::OccupancyQuery q = query;
    const int room = std::max(0, arch.sharedPerBlockOptin - query.staticSharedBytes);
    for (int dyn = 0;; dyn = std::min(dyn + kSharedStep, room)) {
        q.dynamicSharedBytes = dyn;
        points.append(QPointF((query.staticSharedBytes + dyn) / 1024.0, percent(arch, q)));
        if (dyn >= room)
            break;
    }
    return points;
}

} // namespace kf::ui
