#pragma once
// Warning and error colours that stay readable on light and dark palettes.

#include <QColor>
#include <QGuiApplication>
#include <QPalette>

namespace kf::ui {

/// True when the palette's window colour is dark (a dark theme).
bool isDarkPalette(const QPalette& palette);
/// Amber for things worth a look (register spills).
QColor warningColor(const QPalette& palette = QGuiApplication::palette());
/// Red for configurations that cannot work (a launch that cannot start).
QColor errorColor(const QPalette& palette = QGuiApplication::palette());

} // namespace kf::ui
