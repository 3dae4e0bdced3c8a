#pragma once
// Light and dark palettes. "System" keeps the platform's palette (Qt 6.4 has no colour-scheme
// query; the platform theme already follows the desktop). Widgets that paint their own colours
// (editor, charts, banners) react to QEvent::PaletteChange.
#include <QString>

class QApplication;

namespace kf::app {

enum class ThemeChoice { System, Light, Dark };

void applyTheme(QApplication& app, ThemeChoice choice);
/// True when the application's window background is dark.
bool isDarkPalette();

} // namespace kf::app
