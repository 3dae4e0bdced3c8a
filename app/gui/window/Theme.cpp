#include "app/gui/window/Theme.h"

#include "widgets/common/StatusColors.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>

namespace kf::app {

void applyTheme(QApplication& app, ThemeChoice choice, ColorScheme desktop)
{
    // The platform's own style, remembered before the first Fusion switch so System can return to it.
    static const QString platformStyle = app.style()->name();
    if (choice == ThemeChoice::System) {
        if (app.style()->name() != platformStyle)
            app.setStyle(QStyleFactory::create(platformStyle));
        app.setPalette(QPalette());   // an empty palette: the platform theme's colours
        const bool platformDark = isDarkPalette();
        if (desktop != ColorScheme::Dark || platformDark)
            return;
        choice = ThemeChoice::Dark;   // a dark desktop whose platform theme gives a light palette
    }
    // Fusion draws every control from the palette, so both palettes look the same everywhere.
    if (app.style()->name().compare(QLatin1String("fusion"), Qt::CaseInsensitive) != 0)
        app.setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    app.setPalette(choice == ThemeChoice::Dark ? kf::ui::workbenchDarkPalette() : app.style()->standardPalette());
}

bool isDarkPalette()
{
    return kf::ui::isDarkPalette(QApplication::palette());
}

} // namespace kf::app
