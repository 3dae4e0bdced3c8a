#pragma once
// The profile panel's colours, chosen per palette so bars, roofline points and hint markers stay
// readable on the app's dark theme and on the default light one. Warning and error colours
// are the occupancy panel's (widgets/occupancy/StatusColors).

#include "engine/profile/Hints.h"

#include <QColor>
#include <QPalette>

namespace kf::ui::profilecolors {

/// The candidate: the palette's highlight, the colour the rest of the workbench marks "yours" with.
QColor candidate(const QPalette& palette);
/// The baseline: a neutral teal that differs from the highlight in hue and lightness.
QColor baseline(const QPalette& palette);
/// Roofline ceilings: quiet, so the points stand out.
QColor ceiling(const QPalette& palette);
/// Warnings in the amber of widgets/occupancy/StatusColors, advice in the link colour.
QColor severity(kf::profile::Hint::Severity s, const QPalette& palette);

} // namespace kf::ui::profilecolors
