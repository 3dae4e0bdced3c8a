#pragma once
// Light and dark palettes. "System" follows the desktop's preference (SystemColorScheme.h): a
// desktop that prefers dark gets the workbench's dark palette unless the platform's palette is
// already dark; otherwise the platform's palette and style stay. Widgets that paint their own
// colours (editor, charts, banners) react to QEvent::PaletteChange.
#include "app/gui/window/SystemColorScheme.h"

#include <QString>

class QApplication;

namespace kf::app {

enum class ThemeChoice { System, Light, Dark };

/// Applies `choice`; for System, `desktop` is the desktop's preference.
void applyTheme(QApplication& app, ThemeChoice choice, ColorScheme desktop = ColorScheme::NoPreference);
/// True when the application's window background is dark.
bool isDarkPalette();

} // namespace kf::app
