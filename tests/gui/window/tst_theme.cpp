// Settings ▸ Theme: the palettes each choice applies, and System following the desktop's
// light/dark preference through the XDG desktop portal (app/gui/window/SystemColorScheme.h).
// The portal is a scripted test fixture (ScriptedPortal) on a private dbus-daemon the test
// starts, so the real D-Bus calls and signals run; without dbus-daemon those rows skip, saying so.
#include "app/gui/window/SystemColorScheme.h"
#include "app/gui/window/Theme.h"
#include "windowfixture.h"

#include <QApplication>
#include <QDBusConnection>
#include <QDBusContext>
#include <QDBusMessage>
#include <QDBusVariant>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStyle>
#include <QTest>

using namespace kf::app;

Q_DECLARE_METATYPE(kf::app::ColorScheme)
Q_DECLARE_METATYPE(kf::app::ThemeChoice)

namespace {

// Test fixture: the Settings interface of xdg-desktop-portal, answering from a script.
class ScriptedPortal : public QObject, protected QDBusContext {
    Q_OBJECT
    Q_CLASSINFO("D-Bus Interface", "org.freedesktop.portal.Settings")
public:
    explicit ScriptedPortal(QDBusConnection bus) : m_bus(std::move(bus)) {}
    uint scheme = 0;
    bool knowsAppearance = true;

    void announce(uint value)
    {
        scheme = value;
        QDBusMessage signal = QDBusMessage::createSignal(QStringLiteral("/org/freedesktop/portal/desktop"),
                                                         QStringLiteral("org.freedesktop.portal.Settings"),
                                                         QStringLiteral("SettingChanged"));
        signal << QStringLiteral("org.freedesktop.appearance") << QStringLiteral("color-scheme")
               << QVariant::fromValue(QDBusVariant(QVariant::fromValue(value)));
        m_bus.send(signal);
    }

public slots:
    QDBusVariant Read(const QString& group, const QString& key)
    {
        if (!knowsAppearance || group != QLatin1String("org.freedesktop.appearance") ||
            key != QLatin1String("color-scheme")) {
            sendErrorReply(QStringLiteral("org.freedesktop.portal.Error.NotFound"),
                           QStringLiteral("Requested setting not found"));
            return {};
        }
        // Read answers the setting's variant inside another variant, as the real portal does.
        return QDBusVariant(QVariant::fromValue(QDBusVariant(QVariant::fromValue(scheme))));
    }

private:
    QDBusConnection m_bus;
};

} // namespace

class TestTheme : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cleanupTestCase();
    void portalValue_data();
    void portalValue();
    void gtkTheme_data();
    void gtkTheme();
    void choiceGivesPalette_data();
    void choiceGivesPalette();
    void followsThePortal_data();
    void followsThePortal();
    void portalSwitchIsFollowedLive();
    void windowFollowsTheDesktopWhenAsked_data();
    void windowFollowsTheDesktopWhenAsked();

private:
    bool startBus();

    QProcess m_daemon;
    QString m_address;
    QString m_platformStyle;
};

void TestTheme::initTestCase()
{
    m_platformStyle = qApp->style()->name();
}

void TestTheme::cleanupTestCase()
{
    if (m_daemon.state() != QProcess::NotRunning) {
        m_daemon.kill();
        m_daemon.waitForFinished(5000);
    }
}

bool TestTheme::startBus()
{
    if (!m_address.isEmpty())
        return true;
    const QString daemon = QStandardPaths::findExecutable(QStringLiteral("dbus-daemon"));
    if (daemon.isEmpty())
        return false;
    m_daemon.start(daemon, {QStringLiteral("--session"), QStringLiteral("--nofork"), QStringLiteral("--print-address")});
    if (!m_daemon.waitForStarted(5000))
        return false;
    while (!m_daemon.canReadLine() && m_daemon.waitForReadyRead(5000)) {
    }
    m_address = QString::fromUtf8(m_daemon.readLine()).trimmed();
    return !m_address.isEmpty();
}

void TestTheme::portalValue_data()
{
    QTest::addColumn<QVariant>("value");
    QTest::addColumn<ColorScheme>("expected");
    const auto wrap = [](const QVariant& v) { return QVariant::fromValue(QDBusVariant(v)); };
    QTest::newRow("1 prefers dark") << QVariant(uint(1)) << ColorScheme::Dark;
    QTest::newRow("2 prefers light") << QVariant(uint(2)) << ColorScheme::Light;
    QTest::newRow("0 no preference") << QVariant(uint(0)) << ColorScheme::NoPreference;
    QTest::newRow("3 unknown") << QVariant(uint(3)) << ColorScheme::NoPreference;
    QTest::newRow("int 1") << QVariant(1) << ColorScheme::Dark;
    QTest::newRow("string 1") << QVariant(QStringLiteral("1")) << ColorScheme::NoPreference;
    QTest::newRow("double 1") << QVariant(1.0) << ColorScheme::NoPreference;
    QTest::newRow("invalid") << QVariant() << ColorScheme::NoPreference;
    QTest::newRow("wrapped once (SettingChanged)") << wrap(uint(1)) << ColorScheme::Dark;
    QTest::newRow("wrapped twice (Read)") << wrap(wrap(uint(2))) << ColorScheme::Light;
    QTest::newRow("wrapped string") << wrap(wrap(QStringLiteral("dark"))) << ColorScheme::NoPreference;
}

void TestTheme::portalValue()
{
    QFETCH(QVariant, value);
    QFETCH(ColorScheme, expected);
    QCOMPARE(colorSchemeFromPortal(value), expected);
}

void TestTheme::gtkTheme_data()
{
    QTest::addColumn<QString>("value");
    QTest::addColumn<ColorScheme>("expected");
    QTest::newRow("Adwaita:dark") << QStringLiteral("Adwaita:dark") << ColorScheme::Dark;
    QTest::newRow("Arc-Dark") << QStringLiteral("Arc-Dark") << ColorScheme::Dark;
    QTest::newRow("Adwaita") << QStringLiteral("Adwaita") << ColorScheme::NoPreference;
    QTest::newRow("Darkish") << QStringLiteral("Darkish") << ColorScheme::NoPreference;
    QTest::newRow("empty") << QString() << ColorScheme::NoPreference;
}

void TestTheme::gtkTheme()
{
    QFETCH(QString, value);
    QFETCH(ColorScheme, expected);
    QCOMPARE(colorSchemeFromGtkTheme(value), expected);
}

void TestTheme::choiceGivesPalette_data()
{
    QTest::addColumn<ThemeChoice>("choice");
    QTest::addColumn<ColorScheme>("desktop");
    QTest::addColumn<bool>("dark");
    QTest::addColumn<bool>("platformStyle");
    // The offscreen platform's palette is light, as a GTK platform theme's is on a dark GNOME.
    QTest::newRow("system, no preference") << ThemeChoice::System << ColorScheme::NoPreference << false << true;
    QTest::newRow("system, desktop prefers light") << ThemeChoice::System << ColorScheme::Light << false << true;
    QTest::newRow("system, desktop prefers dark") << ThemeChoice::System << ColorScheme::Dark << true << false;
    QTest::newRow("light on a dark desktop") << ThemeChoice::Light << ColorScheme::Dark << false << false;
    QTest::newRow("dark on a light desktop") << ThemeChoice::Dark << ColorScheme::Light << true << false;
}

void TestTheme::choiceGivesPalette()
{
    QFETCH(ThemeChoice, choice);
    QFETCH(ColorScheme, desktop);
    QFETCH(bool, dark);
    QFETCH(bool, platformStyle);
    // From the other extreme each time, so a choice that changed nothing is caught.
    applyTheme(*qApp, dark ? ThemeChoice::Light : ThemeChoice::Dark);
    QCOMPARE(isDarkPalette(), !dark);
    applyTheme(*qApp, choice, desktop);
    QCOMPARE(isDarkPalette(), dark);
    // (The offscreen platform's own style is Fusion too; a desktop's is often not.)
    QCOMPARE(qApp->style()->name().toLower(), platformStyle ? m_platformStyle.toLower() : QStringLiteral("fusion"));
    applyTheme(*qApp, ThemeChoice::System);
    QCOMPARE(qApp->style()->name(), m_platformStyle);   // System returns to the platform's style
}

void TestTheme::followsThePortal_data()
{
    QTest::addColumn<bool>("knowsAppearance");
    QTest::addColumn<uint>("portal");
    QTest::addColumn<QString>("gtkTheme");
    QTest::addColumn<ColorScheme>("expected");
    QTest::addColumn<QString>("source");
    QTest::newRow("portal prefers dark") << true << 1u << QString() << ColorScheme::Dark << "the desktop portal";
    QTest::newRow("portal prefers light") << true << 2u << QString() << ColorScheme::Light << "the desktop portal";
    QTest::newRow("light portal beats GTK_THEME") << true << 2u << "Adwaita:dark" << ColorScheme::Light
                                                  << "the desktop portal";
    QTest::newRow("GTK_THEME beats no preference") << true << 0u << "Adwaita:dark" << ColorScheme::Dark << "GTK_THEME";
    QTest::newRow("portal without appearance, GTK_THEME") << false << 1u << "Adwaita:dark" << ColorScheme::Dark
                                                          << "GTK_THEME";
    QTest::newRow("portal without appearance") << false << 1u << QString() << ColorScheme::NoPreference << QString();
}

void TestTheme::followsThePortal()
{
    QFETCH(bool, knowsAppearance);
    QFETCH(uint, portal);
    QFETCH(QString, gtkTheme);
    QFETCH(ColorScheme, expected);
    QFETCH(QString, source);
    if (!startBus())
        QSKIP("dbus-daemon is not installed (apt-get install dbus-daemon): the portal rows need a private bus");
    const QString name = QStringLiteral("portal-%1").arg(QTest::currentDataTag());
    QDBusConnection portalBus = QDBusConnection::connectToBus(m_address, name);
    QVERIFY2(portalBus.isConnected(), qPrintable(portalBus.lastError().message()));
    ScriptedPortal fixture(portalBus);
    fixture.scheme = portal;
    fixture.knowsAppearance = knowsAppearance;
    QVERIFY(portalBus.registerObject(QStringLiteral("/org/freedesktop/portal/desktop"), &fixture,
                                     QDBusConnection::ExportAllSlots));
    QVERIFY(portalBus.registerService(QStringLiteral("org.freedesktop.portal.Desktop")));

    qputenv("GTK_THEME", gtkTheme.toUtf8());
    QDBusConnection appBus = QDBusConnection::connectToBus(m_address, name + QStringLiteral("-app"));
    {
        SystemColorScheme watcher(appBus);
        QSignalSpy answered(&watcher, &SystemColorScheme::portalAnswered);
        QTRY_COMPARE(answered.count(), 1);
        QTRY_COMPARE(watcher.scheme(), expected);
        QCOMPARE(watcher.source(), source);
    }
    qunsetenv("GTK_THEME");
    portalBus.unregisterService(QStringLiteral("org.freedesktop.portal.Desktop"));
    portalBus.unregisterObject(QStringLiteral("/org/freedesktop/portal/desktop"));
    QDBusConnection::disconnectFromBus(name + QStringLiteral("-app"));
    QDBusConnection::disconnectFromBus(name);
}

void TestTheme::portalSwitchIsFollowedLive()
{
    if (!startBus())
        QSKIP("dbus-daemon is not installed (apt-get install dbus-daemon): the portal rows need a private bus");
    QDBusConnection portalBus = QDBusConnection::connectToBus(m_address, QStringLiteral("live-portal"));
    ScriptedPortal fixture(portalBus);
    fixture.scheme = 2;
    QVERIFY(portalBus.registerObject(QStringLiteral("/org/freedesktop/portal/desktop"), &fixture,
                                     QDBusConnection::ExportAllSlots));
    QVERIFY(portalBus.registerService(QStringLiteral("org.freedesktop.portal.Desktop")));
    SystemColorScheme watcher(QDBusConnection::connectToBus(m_address, QStringLiteral("live-app")));
    QSignalSpy changed(&watcher, &SystemColorScheme::changed);
    QTRY_COMPARE(watcher.scheme(), ColorScheme::Light);
    QCOMPARE(watcher.source(), QStringLiteral("the desktop portal"));
    fixture.announce(1);   // the user flips the desktop to dark
    QTRY_COMPARE(watcher.scheme(), ColorScheme::Dark);
    QCOMPARE(changed.count(), 2);
    QCOMPARE(changed.last().at(0).value<ColorScheme>(), ColorScheme::Dark);
    fixture.announce(0);
    QTRY_COMPARE(watcher.scheme(), ColorScheme::NoPreference);
    QCOMPARE(watcher.source(), QString());
}

// The window wires it up: Theme ▸ System on a desktop that prefers dark (GTK_THEME here, no
// portal on this bus) gives the dark palette, unless the window was told not to follow.
void TestTheme::windowFollowsTheDesktopWhenAsked_data()
{
    QTest::addColumn<bool>("follow");
    QTest::addColumn<bool>("dark");
    QTest::newRow("following the desktop") << true << true;
    QTest::newRow("not following (tests, WindowFixture)") << false << false;
}

void TestTheme::windowFollowsTheDesktopWhenAsked()
{
    QFETCH(bool, follow);
    QFETCH(bool, dark);
    kf::test::WindowFixture fx;
    QString error;
    QVERIFY2(fx.setUp({}, &error), qPrintable(error));
    QCOMPARE(fx.settings()->theme(), kf::app::Settings::Theme::System);
    applyTheme(*qApp, dark ? ThemeChoice::Light : ThemeChoice::Dark);   // from the other side
    qputenv("GTK_THEME", "Adwaita:dark");
    kf::app::MainWindow::Options o = fx.options();
    o.followDesktopScheme = follow;
    o.runner.runnerPath = fx.scratch() + "/no-runner";
    auto w = fx.make(o);
    qunsetenv("GTK_THEME");
    QCOMPARE(isDarkPalette(), dark);
}

QTEST_MAIN(TestTheme)
#include "tst_theme.moc"
