#pragma once
// What one column of the panel shows: a whole side of the report (all its kernels, through the
// engine's totals) or one kernel of it.

#include "engine/protocol/ProfileReport.h"

#include <QString>

#include <vector>

namespace kf::ui {

struct ProfileSelection {
    QString title;                                      ///< "candidate", "kernel 2 of 3", "baseline (3 kernels)"
    const kf::profile::KernelRecord* kernel = nullptr;  ///< the one kernel shown; nullptr for a whole side
    std::vector<const kf::profile::KernelRecord*> kernels;  ///< what `totals` covers
    kf::profile::Totals totals;
    bool wholeSide = false;                             ///< covers every kernel of its side

    /// All kernels of `side` (its totals as the report carries them). `name` is "candidate" or
    /// "baseline"; several kernels add their count to the title.
    static ProfileSelection forSide(const kf::profile::Side& side, const QString& name);
    /// Kernel `index` of `side` alone, through kf::profile::totalsOf so the derived numbers are
    /// made exactly as the side's are.
    static ProfileSelection forKernel(const kf::profile::Side& side, int index, const QString& name);
};

} // namespace kf::ui
