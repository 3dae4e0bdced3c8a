#include "app/gui/settings/Settings.h"

#include "engine/core/Architectures.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>

#include <algorithm>

namespace kf::app {

namespace {

const QString kNvrtcOptions = QStringLiteral("compile/nvrtc_options");
const QString kArchitecture = QStringLiteral("compile/default_architecture");
const QString kDebounce = QStringLiteral("compile/debounce_ms");
const QString kRtol = QStringLiteral("verify/rtol_override");
const QString kAtol = QStringLiteral("verify/atol_override");
const QString kTrials = QStringLiteral("verify/trials");
const QString kBenchCompile = QStringLiteral("bench/torch_compile");
const QString kSkillDirs = QStringLiteral("agent/skill_dirs");
const QString kRunner = QStringLiteral("runner/path");
const QString kRunnerEndpoint = QStringLiteral("runner/endpoint");
const QString kLaunchTimeout = QStringLiteral("runner/launch_timeout_ms");
const QString kRecent = QStringLiteral("workspace/recent");
const QString kTheme = QStringLiteral("ui/theme");
const QString kGeometry = QStringLiteral("ui/window_geometry");
const QString kState = QStringLiteral("ui/window_state");

const QString kDefaultArchitecture = QStringLiteral("sm_90");

int boundedInt(const QSettings& s, const QString& key, int fallback, int lo, int hi)
{
    bool ok = false;
    const int v = s.value(key).toInt(&ok);
    return ok && v >= lo && v <= hi ? v : fallback;
}

std::optional<double> optionalPositive(const QSettings& s, const QString& key)
{
    bool ok = false;
    const double v = s.value(key).toDouble(&ok);
    if (!ok || !(v >= 0.0))
        return std::nullopt;
    return v;
}

} // namespace

Settings::Settings(QSettings* settings, QObject* parent)
    : QObject(parent)
{
    if (!settings) {
        m_owned = std::make_unique<QSettings>(QStringLiteral("KernelForge"), QStringLiteral("KernelForge"));
        settings = m_owned.get();
    }
    m_settings = settings;
}

Settings::~Settings() = default;

void Settings::write(const QString& key, const QVariant& value)
{
    if (value.isValid())
        m_settings->setValue(key, value);
    else
        m_settings->remove(key);
    emit changed(key);
}

QString Settings::cleanPath(const QString& path)
{
    return QDir::cleanPath(QFileInfo(path).absoluteFilePath());
}

QStringList Settings::nvrtcExtraOptions() const
{
    // INI files store an empty or one-element list as a plain string; drop the empty remnants.
    QStringList out = m_settings->value(kNvrtcOptions).toStringList();
    out.removeAll(QString());
    return out;
}

void Settings::setNvrtcExtraOptions(const QStringList& options)
{
    write(kNvrtcOptions, options);
}

QString Settings::defaultArchitecture() const
{
    const QString arch = m_settings->value(kArchitecture).toString();
    // Only a name the occupancy tables know: anything else would fail every compile.
    if (arch.startsWith(QLatin1String("sm_")) && kf::findArchitecture(arch.toStdString()))
        return arch;
    return kDefaultArchitecture;
}

void Settings::setDefaultArchitecture(const QString& arch)
{
    write(kArchitecture, arch);
}

int Settings::compileDebounceMs() const
{
    return boundedInt(*m_settings, kDebounce, 300, 0, 5000);
}

void Settings::setCompileDebounceMs(int ms)
{
    write(kDebounce, std::clamp(ms, 0, 5000));
}

Settings::ToleranceOverride Settings::toleranceOverride() const
{
    return {optionalPositive(*m_settings, kRtol), optionalPositive(*m_settings, kAtol)};
}

void Settings::setToleranceOverride(const ToleranceOverride& t)
{
    write(kRtol, t.rtol ? QVariant(*t.rtol) : QVariant());
    write(kAtol, t.atol ? QVariant(*t.atol) : QVariant());
}

QString Settings::runnerPath() const
{
    return m_settings->value(kRunner).toString();
}

void Settings::setRunnerPath(const QString& path)
{
    write(kRunner, path.trimmed().isEmpty() ? QVariant() : QVariant(path.trimmed()));
}

QString Settings::runnerEndpoint() const
{
    return m_settings->value(kRunnerEndpoint).toString().trimmed();
}

void Settings::setRunnerEndpoint(const QString& name)
{
    write(kRunnerEndpoint, name.trimmed().isEmpty() ? QVariant() : QVariant(name.trimmed()));
}

int Settings::launchTimeoutMs() const
{
    return boundedInt(*m_settings, kLaunchTimeout, 10000, 100, 600000);
}

void Settings::setLaunchTimeoutMs(int ms)
{
    write(kLaunchTimeout, std::clamp(ms, 100, 600000));
}

int Settings::trials() const
{
    return boundedInt(*m_settings, kTrials, 3, 1, 1000);
}

void Settings::setTrials(int trials)
{
    write(kTrials, std::clamp(trials, 1, 1000));
}

bool Settings::benchAgainstCompile() const
{
    return m_settings->value(kBenchCompile, true).toBool();
}

void Settings::setBenchAgainstCompile(bool on)
{
    write(kBenchCompile, on);
}

QStringList Settings::agentSkillDirs() const
{
    QStringList out;
    for (const QString& d : m_settings->value(kSkillDirs).toStringList())
        if (!d.trimmed().isEmpty() && !out.contains(cleanPath(d)))
            out << cleanPath(d);
    return out;
}

void Settings::setAgentSkillDirs(const QStringList& dirs)
{
    QStringList clean;
    for (const QString& d : dirs)
        if (!d.trimmed().isEmpty() && !clean.contains(cleanPath(d.trimmed())))
            clean << cleanPath(d.trimmed());
    write(kSkillDirs, clean);
}

Settings::Theme Settings::theme() const
{
    const QString t = m_settings->value(kTheme).toString();
    if (t == QLatin1String("light"))
        return Theme::Light;
    if (t == QLatin1String("dark"))
        return Theme::Dark;
    return Theme::System;
}

void Settings::setTheme(Theme theme)
{
    static const char* names[] = {"system", "light", "dark"};
    write(kTheme, QString::fromLatin1(names[static_cast<int>(theme)]));
}

QStringList Settings::recentWorkspaces() const
{
    QStringList out;
    for (const QString& p : m_settings->value(kRecent).toStringList())
        if (!p.isEmpty() && !out.contains(p) && out.size() < kMaxRecentWorkspaces)
            out << p;
    return out;
}

void Settings::addRecentWorkspace(const QString& path)
{
    const QString p = cleanPath(path);
    QStringList list = recentWorkspaces();
    list.removeAll(p);
    list.prepend(p);
    while (list.size() > kMaxRecentWorkspaces)
        list.removeLast();
    write(kRecent, list);
}

void Settings::removeRecentWorkspace(const QString& path)
{
    QStringList list = recentWorkspaces();
    list.removeAll(cleanPath(path));
    write(kRecent, list);
}

QByteArray Settings::windowGeometry() const
{
    return m_settings->value(kGeometry).toByteArray();
}

void Settings::setWindowGeometry(const QByteArray& geometry)
{
    write(kGeometry, geometry);
}

QByteArray Settings::windowState() const
{
    return m_settings->value(kState).toByteArray();
}

void Settings::setWindowState(const QByteArray& state)
{
    write(kState, state);
}

void Settings::sync()
{
    m_settings->sync();
}

} // namespace kf::app
