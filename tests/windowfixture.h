#pragma once
// A workbench window for the GUI tests (tests/gui/window): example tasks copied into a scratch
// workspace, settings in a scratch INI file, and runners.json, recovery and compile cache in the
// same scratch folder — never the user's. The runner is forced to CPU mode (CI has no GPU), and
// Theme ▸ System does not follow the desktop, so a developer's dark desktop changes nothing.

#include "app/gui/settings/Settings.h"
#include "app/gui/window/MainWindow.h"
#include "app/gui/workspace/ExampleWorkspace.h"
#include "testpaths.h"

#include <QDir>
#include <QSettings>
#include <QStringList>
#include <QTemporaryDir>

#include <memory>

namespace kf::test {

class WindowFixture {
public:
    /// Copies the named folders of resources/examples into the workspace and makes the settings.
    /// False, with the reason in `error`, when a copy fails.
    bool setUp(const QStringList& examples, QString* error)
    {
        if (!m_tmp.isValid()) {
            *error = QStringLiteral("no temporary folder: %1").arg(m_tmp.errorString());
            return false;
        }
        m_workspace = QDir::cleanPath(m_tmp.path() + "/ws");
        for (const QString& task : examples)
            if (!kf::app::copyFolder(QString(KF_SOURCE_DIR) + "/resources/examples/" + task, m_workspace + "/" + task,
                                     error))
                return false;
        m_qsettings = std::make_unique<QSettings>(m_tmp.path() + "/settings.ini", QSettings::IniFormat);
        m_settings = std::make_unique<kf::app::Settings>(m_qsettings.get());
        return true;
    }

    /// Options for a window over the workspace: no runner probe, no restore question; change
    /// what a test needs before make().
    kf::app::MainWindow::Options options() const
    {
        kf::app::MainWindow::Options o;
        o.runnersFile = m_tmp.path() + "/no-runners.json";   // does not exist: the local runner alone
        o.workspace = m_workspace;
        o.recoveryDir = m_tmp.path() + "/recovery";
        o.cacheDir = m_tmp.path() + "/cache";
        o.probeRunner = false;
        o.askToRestore = false;
        o.followDesktopScheme = false;   // the same palette on a dark desktop as on CI
        o.runner.extraEnv = {"KF_RUNNER_FORCE_CPU=1"};
        return o;
    }

    std::unique_ptr<kf::app::MainWindow> make(const kf::app::MainWindow::Options& o) const
    {
        auto w = std::make_unique<kf::app::MainWindow>(m_settings.get(), o);
        w->show();
        return w;
    }

    QString workspace() const { return m_workspace; }
    QString scratch() const { return m_tmp.path(); }
    kf::app::Settings* settings() const { return m_settings.get(); }

private:
    QTemporaryDir m_tmp;
    QString m_workspace;
    std::unique_ptr<QSettings> m_qsettings;
    std::unique_ptr<kf::app::Settings> m_settings;
};

} // namespace kf::test
