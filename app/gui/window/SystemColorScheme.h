#pragma once
// The desktop's light or dark preference, for Settings ▸ Theme ▸ System.
//
// Qt 6.4 has no colour-scheme query (QStyleHints::colorScheme arrived in 6.5) and its GTK
// platform theme ignores GNOME's "prefer dark" switch, so a dark GNOME desktop would get a light
// workbench. The preference is read where desktops publish it: the XDG desktop portal's
// org.freedesktop.appearance color-scheme setting (GNOME 42+, KDE Plasma 5.24+, and others
// through xdg-desktop-portal), followed live through its SettingChanged signal. Without a portal,
// GTK_THEME=<name>:dark (the GTK override users set for one session) counts as dark.
// docs/workbench.md ("Themes") describes what the user sees.

#include <QDBusConnection>
#include <QObject>
#include <QString>
#include <QVariant>

class QDBusVariant;

namespace kf::app {

enum class ColorScheme { NoPreference, Dark, Light };

/// The portal's color-scheme value: 1 prefers dark, 2 prefers light, anything else (0, a wrong
/// type, a value wrapped in one or two D-Bus variants as Read returns it) no preference.
ColorScheme colorSchemeFromPortal(const QVariant& value);

/// GTK_THEME's value: "Adwaita:dark" prefers dark, a name ending in "-dark" too; else none.
ColorScheme colorSchemeFromGtkTheme(const QString& gtkTheme);

class SystemColorScheme : public QObject {
    Q_OBJECT
public:
    /// Asks the portal on `bus` (the session bus in the app; a private bus in tests) without
    /// blocking; `changed` fires when the answer differs from the GTK_THEME guess and whenever
    /// the desktop switches later.
    explicit SystemColorScheme(QDBusConnection bus, QObject* parent = nullptr);

    ColorScheme scheme() const { return m_scheme; }
    /// Where scheme() came from, for Settings: "the desktop portal", "GTK_THEME" or empty (none).
    QString source() const { return m_source; }

signals:
    void changed(kf::app::ColorScheme scheme);
    /// The portal answered the first question, or said it cannot (no portal, no such setting).
    void portalAnswered();

private slots:
    void onSettingChanged(const QString& group, const QString& key, const QDBusVariant& value);

private:
    void set(ColorScheme scheme, const QString& source);

    ColorScheme m_scheme = ColorScheme::NoPreference;
    QString m_source;
};

} // namespace kf::app
