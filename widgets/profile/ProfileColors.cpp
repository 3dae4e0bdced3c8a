#include "widgets/profile/ProfileColors.h"

#include "widgets/common/StatusColors.h"

namespace kf::ui::profilecolors {

QColor candidate(const QPalette& palette)
{
    return palette.color(QPalette::Highlight);
}

// Light variants on dark backgrounds, dark ones on light: a pure hue fails contrast on one.
QColor baseline(const QPalette& palette)
{
    return isDarkPalette(palette) ? QColor(0x4d, 0xb6, 0xac) : QColor(0x00, 0x79, 0x6b);
}

QColor ceiling(const QPalette& palette)
{
    return isDarkPalette(palette) ? QColor(0x9a, 0x9d, 0xa3) : QColor(0x70, 0x74, 0x7a);
}

QColor severity(kf::profile::Hint::Severity s, const QPalette& palette)
{
    switch (s) {
    case kf::profile::Hint::Severity::Warning: return warningColor(palette);
    case kf::profile::Hint::Severity::Advice: return palette.color(QPalette::Link);
    case kf::profile::Hint::Severity::Info: break;
    }
    return palette.color(QPalette::PlaceholderText);
}

} // namespace kf::ui::profilecolors
