#pragma once
// The profile panel's colours, chosen per palette so bars, roofline points and hint markers stay
// readable on the app's dark theme and on the default light one.

#include "engine/profile/Hints.h"

#include <QColor>
#include <QPalette>

namespace kf::ui::profilecolors {

bool isDark(const QPalette& palette);
/// The candidate: the palette's highlight, the colour the rest of the workbench marks "yours" with.
QColor candidate(const QPalette& palette);
/// The baseline: a neutral teal that differs from the highlight in hue and lightness.
QColor baseline(const QPalette& palette);
/// Roofline ceilings: quiet, so the points stand out.
QColor ceiling(const QPalette& palette);
/// The amber and red of widgets/occupancy/StatusColors (kf_widgets_profile does not link that
/// panel), for warnings and errors.
QColor warning(const QPalette& palette);
QColor error(const QPalette& palette);
QColor severity(kf::profile::Hint::Severity s, const QPalette& palette);

} // namespace kf::ui::profilecolors
