#include "widgets/occupancy/OccupancyExplain.h"

#include <QCoreApplication>

namespace kf::ui {
namespace {

QString tr(const char* text)
{
    return QCoreApplication::translate("kf::ui::OccupancyExplain", text);
}

} // namespace

QString bytesLabel(long long bytes)
{
    if (bytes >= 1024 && bytes % 1024 == 0)
        return QStringLiteral("%1 KiB").arg(bytes / 1024);
    return QStringLiteral("%1 B").arg(bytes);
}

QString architectureLabel(const kf::ArchInfo& arch)
{
    return QStringLiteral("%1 · %2 (%3 SMs)")
        .arg(QString::fromStdString(arch.arch), QString::fromStdString(arch.exampleGpu))
        .arg(arch.smCount);
}

QString limiterSentence(const kf::ArchInfo& arch, const kf::OccupancyQuery& q, const kf::Occupancy& o)
{
    using L = kf::Occupancy::Limiter;
    const int warpsPerBlock = (q.blockSize + arch.warpSize - 1) / arch.warpSize;
    const QString resident = tr("%1 of %2 warps").arg(o.activeWarpsPerSm).arg(o.maxWarpsPerSm);
    switch (o.limiter) {
    case L::Registers: {
        QString s = tr("limited by registers: %1 registers × %2 threads allocate %3 of %4 registers per block")
                        .arg(q.registersPerThread)
                        .arg(q.blockSize)
                        .arg(o.allocatedRegistersPerBlock)
                        .arg(arch.regsPerBlock);
        // Allocation happens per warp in fixed units, so the product is not always the cost.
        if (o.allocatedRegistersPerBlock != q.registersPerThread * q.blockSize)
            s += tr(" (rounded up to whole warps and the allocation unit)");
        return s + tr("; the SM's %1 registers hold %2 blocks (%3)")
                       .arg(arch.regsPerSm)
                       .arg(o.blocksLimitRegisters)
                       .arg(resident);
    }
    case L::SharedMemory:
        return tr("limited by shared memory: each block takes %1 (%2 static + %3 dynamic + %4 reserved, rounded "
                  "to the allocation unit); the SM's shared memory (at most %5) holds %6 blocks (%7)")
            .arg(bytesLabel(o.allocatedSharedPerBlock), bytesLabel(q.staticSharedBytes),
                 bytesLabel(q.dynamicSharedBytes), bytesLabel(arch.reservedSharedPerBlock),
                 bytesLabel(arch.sharedPerSm))
            .arg(o.blocksLimitShared)
            .arg(resident);
    case L::Warps:
        if (o.activeWarpsPerSm >= o.maxWarpsPerSm)
            return tr("full occupancy: %1 blocks of %2 warps fill all %3 warp slots of an SM")
                .arg(o.activeBlocksPerSm)
                .arg(warpsPerBlock)
                .arg(o.maxWarpsPerSm);
        return tr("limited by warp slots: %1 warps per block, so %2 blocks fit in the SM's %3 warp slots (%4); "
                  "a block size that divides %3 warps evenly fills them")
            .arg(warpsPerBlock)
            .arg(o.blocksLimitWarps)
            .arg(o.maxWarpsPerSm)
            .arg(resident);
    case L::Blocks:
        return tr("limited by block slots: an SM holds at most %1 blocks, and %2 warps per block fill only %3; "
                  "larger blocks would use more warp slots")
            .arg(arch.maxBlocksPerSm)
            .arg(warpsPerBlock)
            .arg(resident);
    case L::BlockSize:
    case L::None:
        break;
    }
    return {};
}

} // namespace kf::ui
