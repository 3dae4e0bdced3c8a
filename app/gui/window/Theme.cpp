#include "app/gui/window/Theme.h"

#include "widgets/common/StatusColors.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>

namespace kf::app {

void applyTheme(QApplication& app, ThemeChoice choice)
{
    if (choice == ThemeChoice::System) {
        app.setPalette(QPalette());
        return;
    }
    // Fusion draws every control from the palette, so both palettes look the same everywhere.
    app.setStyle(QStyleFactory::create("Fusion"));
    app.setPalette(choice == ThemeChoice::Dark ? kf::ui::workbenchDarkPalette() : app.style()->standardPalette());
}

bool isDarkPalette()
{
    return QApplication::palette().color(QPalette::Window).lightness() < 128;
}

} // namespace kf::app
