#include "app/gui/window/Theme.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>

namespace kf::app {

namespace {

QPalette darkPalette()
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

} // namespace

void applyTheme(QApplication& app, ThemeChoice choice)
{
    if (choice == ThemeChoice::System) {
        app.setPalette(QPalette());
        return;
    }
    // Fusion draws every control from the palette, so both palettes look the same everywhere.
    app.setStyle(QStyleFactory::create("Fusion"));
    app.setPalette(choice == ThemeChoice::Dark ? darkPalette() : app.style()->standardPalette());
}

bool isDarkPalette()
{
    return QApplication::palette().color(QPalette::Window).lightness() < 128;
}

} // namespace kf::app
