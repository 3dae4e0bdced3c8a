// The desktop's colour-scheme preference (app/gui/window/SystemColorScheme.h).
#include "app/gui/window/SystemColorScheme.h"

#include <QDBusMessage>
#include <QDBusPendingCallWatcher>
#include <QDBusPendingReply>
#include <QDBusVariant>

namespace kf::app {

namespace {

const QString kService = QStringLiteral("org.freedesktop.portal.Desktop");
const QString kPath = QStringLiteral("/org/freedesktop/portal/desktop");
const QString kInterface = QStringLiteral("org.freedesktop.portal.Settings");
const QString kGroup = QStringLiteral("org.freedesktop.appearance");
const QString kKey = QStringLiteral("color-scheme");

} // namespace

ColorScheme colorSchemeFromPortal(const QVariant& value)
{
    QVariant v = value;
    // Read() answers a variant holding the setting's variant; SettingChanged sends one level.
    for (int depth = 0; depth < 4 && v.userType() == qMetaTypeId<QDBusVariant>(); ++depth)
        v = v.value<QDBusVariant>().variant();
    bool ok = false;
    const uint scheme = v.typeId() == QMetaType::UInt || v.typeId() == QMetaType::Int ? v.toUInt(&ok) : 0;
    if (!ok)
        return ColorScheme::NoPreference;
    return scheme == 1 ? ColorScheme::Dark : scheme == 2 ? ColorScheme::Light : ColorScheme::NoPreference;
}

ColorScheme colorSchemeFromGtkTheme(const QString& gtkTheme)
{
    const QString t = gtkTheme.trimmed().toLower();
    return t.endsWith(QLatin1String(":dark")) || t.endsWith(QLatin1String("-dark")) ? ColorScheme::Dark
                                                                                     : ColorScheme::NoPreference;
}

SystemColorScheme::SystemColorScheme(QDBusConnection bus, QObject* parent) : QObject(parent)
{
    if (colorSchemeFromGtkTheme(qEnvironmentVariable("GTK_THEME")) == ColorScheme::Dark)
        set(ColorScheme::Dark, QStringLiteral("GTK_THEME"));
    if (!bus.isConnected())
        return;
    bus.connect(kService, kPath, kInterface, QStringLiteral("SettingChanged"), this,
                  SLOT(onSettingChanged(QString, QString, QDBusVariant)));
    QDBusMessage read = QDBusMessage::createMethodCall(kService, kPath, kInterface, QStringLiteral("Read"));
    read << kGroup << kKey;
    auto* watcher = new QDBusPendingCallWatcher(bus.asyncCall(read, 2000), this);
    connect(watcher, &QDBusPendingCallWatcher::finished, this, [this](QDBusPendingCallWatcher* w) {
        w->deleteLater();
        const QDBusPendingReply<QDBusVariant> reply = *w;
        // No portal, or one without the appearance settings: the GTK_THEME guess stays.
        if (!reply.isError()) {
            const ColorScheme scheme = colorSchemeFromPortal(QVariant::fromValue(reply.value()));
            if (scheme != ColorScheme::NoPreference || m_source.isEmpty())
                set(scheme, tr("the desktop portal"));   // GTK_THEME, set by hand, beats "no preference"
        }
        emit portalAnswered();
    });
}

void SystemColorScheme::onSettingChanged(const QString& group, const QString& key, const QDBusVariant& value)
{
    if (group == kGroup && key == kKey)
        set(colorSchemeFromPortal(QVariant::fromValue(value)), tr("the desktop portal"));
}

void SystemColorScheme::set(ColorScheme scheme, const QString& source)
{
    m_source = scheme == ColorScheme::NoPreference ? QString() : source;
    if (scheme == m_scheme)
        return;
    m_scheme = scheme;
    emit changed(scheme);
}

} // namespace kf::app
