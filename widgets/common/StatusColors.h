#pragma once
// The workbench's dark palette, and warning and error colours that stay readable on it and on
// the light one. Inline where a test must reproduce the app's look without linking the app.

#include <QColor>
#include <QGuiApplication>
#include <QPalette>

namespace kf::ui {

/// The workbench's dark theme (Settings ▸ Theme ▸ Dark; applied by app/gui/window/Theme with Fusion).
inline QPalette workbenchDarkPalette()
{
    QPalette p;
    const QColor window(0x2b, 0x2d, 0x30), base(0x1e, 0x1f, 0x22), text(0xdf, 0xe1, 0xe5);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::ToolTipBase, window);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::red);
    p.setColor(QPalette::Link, QColor(0x58, 0x9d, 0xf6));
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x65, 0xca));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::PlaceholderText, QColor(0x8c, 0x8f, 0x94));
    for (auto role : {QPalette::Text, QPalette::WindowText, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, QColor(0x7a, 0x7d, 0x82));
    return p;
}

/// True when the palette's window colour is dark (a dark theme).
bool isDarkPalette(const QPalette& palette);
/// Amber for things worth a look (register spills).
QColor warningColor(const QPalette& palette = QGuiApplication::palette());
/// Red for configurations that cannot work (a launch that cannot start).
QColor errorColor(const QPalette& palette = QGuiApplication::palette());

} // namespace kf::ui
