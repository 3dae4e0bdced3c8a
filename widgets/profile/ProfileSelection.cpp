#include "widgets/profile/ProfileSelection.h"

#include <QCoreApplication>

namespace kf::ui {

ProfileSelection ProfileSelection::forSide(const kf::profile::Side& side, const QString& name)
{
    ProfileSelection s;
    s.title = side.kernels.size() == 1
                  ? name
                  : QCoreApplication::translate("kf::ui::ProfileSelection", "%1 (%n kernels)", nullptr,
                                                static_cast<int>(side.kernels.size()))
                        .arg(name);
    for (const kf::profile::KernelRecord& k : side.kernels)
        s.kernels.push_back(&k);
    if (side.kernels.size() == 1)
        s.kernel = &side.kernels.front();
    s.totals = side.totals;
    s.wholeSide = true;
    return s;
}

ProfileSelection ProfileSelection::forKernel(const kf::profile::Side& side, int index, const QString& name)
{
    const kf::profile::KernelRecord& k = side.kernels.at(static_cast<size_t>(index));
    ProfileSelection s;
    // The kernel's name is in the picker and the tooltip; a column head has no room for templates.
    s.title = side.kernels.size() == 1 ? name
                                       : QCoreApplication::translate("kf::ui::ProfileSelection", "kernel %1 of %2")
                                             .arg(index + 1)
                                             .arg(side.kernels.size());
    s.kernel = &k;
    s.kernels = {&k};
    s.totals = kf::profile::totalsOf({k});
    s.wholeSide = side.kernels.size() == 1;
    return s;
}

} // namespace kf::ui
