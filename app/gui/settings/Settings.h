#pragma once
// The workbench's preferences, typed: one place that knows the keys, the defaults and the valid
// ranges, so a hand-edited or stale settings file can never hand the app a nonsense value.

#include <QByteArray>
#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>

class QSettings;

namespace kf::app {

/// Wraps a QSettings. Use on the GUI thread. Setters write through at once and emit changed().
class Settings : public QObject {
    Q_OBJECT
public:
    enum class Theme { System, Light, Dark };
    /// Replaces the task's output tolerances when set (for exploring; reports record it).
    struct ToleranceOverride {
        std::optional<double> rtol;
        std::optional<double> atol;
        bool operator==(const ToleranceOverride&) const = default;
    };
    static constexpr int kMaxRecentWorkspaces = 8;

    /// `settings` is not owned and must outlive this object; nullptr uses the user's settings
    /// of organisation and application "KernelForge".
    explicit Settings(QSettings* settings = nullptr, QObject* parent = nullptr);
    ~Settings() override;

    QStringList nvrtcExtraOptions() const;              ///< added to every compile; default none
    void setNvrtcExtraOptions(const QStringList& options);
    QString defaultArchitecture() const;                ///< "sm_90" unless a known one is set
    void setDefaultArchitecture(const QString& arch);
    int compileDebounceMs() const;                      ///< 300; 0..5000
    void setCompileDebounceMs(int ms);
    ToleranceOverride toleranceOverride() const;        ///< both unset by default
    void setToleranceOverride(const ToleranceOverride& t);
    QString runnerPath() const;                         ///< empty: the runner installed beside the app
    void setRunnerPath(const QString& path);
    /// The runner endpoint the workbench runs on (a name in runners.json, docs/runners.md); empty:
    /// runners.json's "default" (the same as `kforge` without --runner-endpoint).
    QString runnerEndpoint() const;
    void setRunnerEndpoint(const QString& name);
    int launchTimeoutMs() const;                        ///< 10000; 100..600000
    void setLaunchTimeoutMs(int ms);
    int trials() const;                                 ///< 3; 1..1000
    void setTrials(int trials);
    bool benchAgainstCompile() const;                   ///< true: benchmarks also time torch.compile
    void setBenchAgainstCompile(bool on);
    /// Folders of <name>/SKILL.md skills added to the built-in ones for agent prompts (later
    /// folders win by name, like kforge prompt --skills-dir); default none.
    QStringList agentSkillDirs() const;
    void setAgentSkillDirs(const QStringList& dirs);
    Theme theme() const;                                ///< System by default
    void setTheme(Theme theme);

    /// Most recent first, unique, at most kMaxRecentWorkspaces.
    QStringList recentWorkspaces() const;
    /// Moves `path` (made absolute) to the front, dropping the oldest beyond the limit.
    void addRecentWorkspace(const QString& path);
    void removeRecentWorkspace(const QString& path);

    QByteArray windowGeometry() const;
    void setWindowGeometry(const QByteArray& geometry);
    QByteArray windowState() const;
    void setWindowState(const QByteArray& state);

    /// Flushes to disk (QSettings also does so on its own, later).
    void sync();

signals:
    /// A setting was written; `key` is its QSettings key (e.g. "compile/debounce_ms").
    void changed(const QString& key);

private:
    void write(const QString& key, const QVariant& value);
    static QString cleanPath(const QString& path);

    std::unique_ptr<QSettings> m_owned;
    QSettings* m_settings = nullptr;
};

} // namespace kf::app
