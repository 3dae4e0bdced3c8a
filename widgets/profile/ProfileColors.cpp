#include "widgets/profile/ProfileColors.h"

namespace kf::ui::profilecolors {

bool isDark(const QPalette& palette)
{
    return palette.color(QPalette::Window).lightness() < 128;
}

QColor candidate(const QPalette& palette)
{
    return palette.color(QPalette::Highlight);
}

// Light variants on dark backgrounds, dark ones on light: a pure hue fails contrast on one.
QColor baseline(const QPalette& palette)
{
    return isDark(palette) ? QColor(0x4d, 0xb6, 0xac) : QColor(0x00, 0x79, 0x6b);
}

QColor ceiling(const QPalette& palette)
{
    return isDark(palette) ? QColor(0x9a, 0x9d, 0xa3) : QColor(0x70, 0x74, 0x7a);
}

QColor warning(const QPalette& palette)
{
    return isDark(palette) ? QColor(0xff, 0xb3, 0x47) : QColor(0xb3, 0x5c, 0x00);
}

QColor error(const QPalette& palette)
{
    return isDark(palette) ? QColor(0xff, 0x6e, 0x6e) : QColor(0xc0, 0x10, 0x10);
}

QColor severity(kf::profile::Hint::Severity s, const QPalette& palette)
{
    switch (s) {
    case kf::profile::Hint::Severity::Warning: return warning(palette);
    case kf::profile::Hint::Severity::Advice: return palette.color(QPalette::Link);
    case kf::profile::Hint::Severity::Info: break;
    }
    return palette.color(QPalette::PlaceholderText);
}

} // namespace kf::ui::profilecolors
