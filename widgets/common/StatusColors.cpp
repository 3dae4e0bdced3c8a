#include "widgets/common/StatusColors.h"

namespace kf::ui {

bool isDarkPalette(const QPalette& palette)
{
    return palette.color(QPalette::Window).lightness() < 128;
}

// Light variants on dark backgrounds, dark variants on light ones: the pure hues fail contrast
// on one of the two.
QColor warningColor(const QPalette& palette)
{
    return isDarkPalette(palette) ? QColor(0xff, 0xb3, 0x47) : QColor(0xb3, 0x5c, 0x00);
}

QColor errorColor(const QPalette& palette)
{
    return isDarkPalette(palette) ? QColor(0xff, 0x6e, 0x6e) : QColor(0xc0, 0x10, 0x10);
}

} // namespace kf::ui
