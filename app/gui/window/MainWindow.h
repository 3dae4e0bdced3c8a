#pragma once
// The workbench window: workspace tree, kernel tabs, and the dockable panels (Problems,
// Assembly, Resources & Occupancy, Task, Runs, Registry, Assistant). It wires widgets to the two services through
// two controllers (CompileController, RunController) and keeps no engine work of its own.
#include "app/gui/services/RunService.h"

#include "engine/compile/Diagnostic.h"

#include <QHash>
#include <QMainWindow>
#include <QPointer>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

class QDockWidget;
class QMenu;
class QTabWidget;
class QTreeView;

namespace kf::ui {
class AssistantDock;
class ProfilePanel;
class AssemblyView;
class DiagnosticsPanel;
class FindInWorkspacePanel;
class LocatorPopup;
class OccupancyPanel;
class RegistryBrowser;
class TensorInspector;
class RunPanel;
class TaskEditor;
} // namespace kf::ui

namespace kf::app {

class AgentController;
class AssistantController;
class CandidateTab;
class CompileController;
class InspectController;
class PromoteController;
class ModelRunDialog;
class RegistryController;
class RecoveryStore;
class RunController;
class Settings;
class SystemColorScheme;
class StatusBar;
class TuneController;
class Workspace;
class WorkspaceModel;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    struct Options {
        QString workspace;             ///< empty: the most recent workspace, else the bundled examples
        QString recoveryDir;           ///< empty: the user's data folder
        QString cacheDir;              ///< empty: the user's compile cache
        RunService::Options runner;    ///< runner path empty: Settings, then the default
        bool probeRunner = true;       ///< start the runner at once (status bar shows the GPU)
        bool askToRestore = true;      ///< false: tests call restoreRecovered() themselves
        /// Theme ▸ System follows the desktop's dark preference (SystemColorScheme.h: the portal,
        /// GTK_THEME); false: the platform's palette alone (tests look the same on any desktop).
        bool followDesktopScheme = true;
        QString runnersFile;           ///< the runner endpoints; empty: runnersConfigPath() (docs/runners.md)
    };
    /// `settings` is borrowed and must outlive the window.
    MainWindow(Settings* settings, Options options, QWidget* parent = nullptr);
    ~MainWindow() override;

    bool openWorkspace(const QString& root, QString* error = nullptr);
    /// Opens `path` in a tab (or focuses its tab); task.json goes to the Task panel.
    CandidateTab* openFile(const QString& path);
    /// Puts the cursor on `line`:`column` of the file a compile diagnostic names: `from` (default
    /// the current tab) when the name is empty or its own, else an open tab of that file, else
    /// the file opened (an include). The Problems panel and the run gate both go through here.
    /// A task.json opens in the Task panel's JSON tab at the place (and nullptr is returned).
    /// Returns the tab, or nullptr when the file is not open and cannot be opened.
    CandidateTab* goToDiagnostic(const QString& file, int line, int column, CandidateTab* from = nullptr);
    /// True when a diagnostic naming `diagnosticFile` is about the file at `path` (NVRTC names
    /// the candidate by its file name or not at all).
    static bool diagnosticIsIn(const QString& diagnosticFile, const QString& path);
    CandidateTab* currentTab() const;
    QList<CandidateTab*> tabs() const;

    /// Unsaved buffers a previous session left behind (crash recovery).
    int recoverableCount() const;
    /// Opens every recoverable buffer as a modified tab (restore) or forgets them (discard).
    void restoreRecovered(bool restore);

    // Parts, for tests and screenshots.
    Workspace* workspace() const { return m_workspace; }
    WorkspaceModel* workspaceModel() const { return m_workspaceModel; }
    QTreeView* workspaceView() const { return m_workspaceView; }
    QTabWidget* tabWidget() const { return m_tabs; }
    kf::ui::DiagnosticsPanel* diagnosticsPanel() const { return m_diagnostics; }
    kf::ui::AssemblyView* assemblyView() const { return m_assembly; }
    kf::ui::OccupancyPanel* occupancyPanel() const { return m_occupancy; }
    kf::ui::TaskEditor* taskEditor() const { return m_taskEditor; }
    kf::ui::RunPanel* runPanel() const { return m_runPanel; }
    StatusBar* statusBarWidget() const { return m_status; }
    CompileController* compileController() const { return m_compile.get(); }
    RunController* runController() const { return m_run.get(); }
    PromoteController* promoteController() const { return m_promote.get(); }
    RegistryController* registryController() const { return m_registry.get(); }
    kf::ui::RegistryBrowser* registryBrowser() const { return m_registryBrowser; }
    kf::ui::TensorInspector* inspector() const { return m_inspector; }
    kf::ui::ProfilePanel* profilePanel() const { return m_profilePanel; }
    InspectController* inspectController() const { return m_inspect.get(); }
    TuneController* tuneController() const { return m_tune; }
    QAction* promoteAction() const { return m_promoteAction; }
    AgentController* agentController() const { return m_agent; }
    kf::ui::AssistantDock* assistantDock() const { return m_assistantDock; }
    AssistantController* assistantController() const { return m_assistant; }
    /// View ▸ Assistant: shows and raises the Assistant panel, focus in its request box.
    QAction* assistantAction() const { return m_assistantAction; }
    QDockWidget* dock(const QString& objectName) const;
    /// View ▸ Reset Layout: the docks where a first start puts them, at their default sizes.
    void resetLayout();
    /// Where a first start puts the window on a screen whose available area is `available`.
    static QRect defaultGeometry(const QRect& available);
    /// The version of the dock layout in saved window states; a state of another version is not restored.
    static constexpr int kLayoutVersion = 2;

    /// Run ▸ Verify under compute-sanitizer.
    QAction* verifySanitizedAction() const { return m_verifySanitizedAction; }
    Settings* settings() const { return m_settings; }
    /// The runner endpoints file the window reads (Options::runnersFile, else runnersConfigPath()).
    QString runnersFile() const;

public slots:
    void verify();
    /// Verifies the current candidate and runs every compute-sanitizer tool on it (docs/verification.md).
    void verifySanitized();
    /// Run ▸ Open Report…: shows the reports of a `kforge verify|bench --json` file in the Runs
    /// panel; a correctness report of a workspace candidate whose file is still the one it
    /// verified (same source hash) puts its compute-sanitizer findings at their lines. False
    /// (with the reason in the Runs panel) when the file holds no report or a run is in flight.
    bool openReport(const QString& file);
    void benchmark();
    void profile();
    bool saveCurrent();
    bool saveAll();

protected:
    void closeEvent(QCloseEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    void buildDocks();
    // The constructor's steps, in order (MainWindowWiring.cpp).
    void createAgent();
    void createAssistant();
    void followDesktopScheme();
    void wirePromotion();
    void createInspector();
    void createRegistry();
    void wireEditing();
    void wireRuns();
    void restoreLayout();
    void openFirstWorkspace(const QString& endpointWarning);
    void applyDefaultSizes();
    // The menu bar (MainWindowMenus.cpp), one menu each; Edit and Help are extended by buildNavigation.
    void buildMenus();
    void buildFileMenu();
    QMenu* buildEditMenu();
    void buildRunMenu();
    void buildViewMenu();
    QMenu* buildHelpMenu();
    void openReportDialog();     ///< Run ▸ Open Report…: asks for the file, then openReport()
    void showModelRunDialog();   ///< Run ▸ Run Model from .cast Package…
    void rebuildRecentMenu();
    void openDefaultFile();
    void onCurrentTabChanged(int index);
    void onTaskEditorSave();
    void showTaskFor(const QString& taskDir);
    void closeTab(int index);
    void newTask();
    void newCandidate();
    void newCandidateFromReference();
    void addCandidateFromFile();
    void importProblem();
    void copyAgentPrompt();
    /// The Assistant's Start: the selected task, else a folder the user picks for a new task.
    void startSynthesis(const QString& request, const QString& model);
    /// The task of the current tab, else the one selected in the Workspace; empty: none.
    QString selectedTaskDir() const;
    void openWorkspaceDialog();
    void showSettings();
    void applySettings();
    /// The run service's options from the settings: the runner, the NVRTC options and the
    /// endpoint (Settings ▸ Runners, else runners.json's default). A runners.json that does not
    /// read leaves the local runner, with the reason in the status bar.
    RunService::Options runnerOptions(QString* warning) const;
    /// A verification of `candidatePath` ended: its compute-sanitizer findings become the tab's
    /// run diagnostics (kept for the file if it is not open, and applied when it opens).
    void applyVerification(const QString& candidatePath, const QString& verifiedText, const kf::protocol::RunReport& report);
    bool saveTaskFiles(const QString& taskDir, QString* error);
    /// F5, Ctrl+F5, F6 and F7: a source whose last build is older than its text is built first;
    /// one that does not compile is refused (the Runs panel says so, the cursor goes to the first
    /// error) and the runner is not started. MainWindowRunGate.cpp.
    void requestRun(kf::RunKind kind, bool sanitize);
    void launchRun(kf::RunKind kind, bool sanitize);
    /// True, with the refusal shown, when `tab`'s build of its current text has errors.
    bool refuseUncompilable(CandidateTab* tab, kf::RunKind kind, bool sanitize);
    /// Shows why a run of `tab` does not start: `sentence` in the Runs panel, `brief` (default
    /// `sentence`) in the status bar and, for a profile, the Profile panel. Starts nothing.
    void refuseRun(CandidateTab* tab, kf::RunKind kind, bool sanitize, const QString& sentence, QString brief = {});
    /// A run asked for while its candidate was being built: decided when the build arrives.
    void onBuildShown(CandidateTab* tab);
    void updateTitle();
    void updatePromoteTarget();

    Settings* m_settings = nullptr;
    SystemColorScheme* m_colorScheme = nullptr;   ///< the desktop's light/dark preference; null when not followed
    Options m_options;
    std::unique_ptr<RecoveryStore> m_recovery;
    Workspace* m_workspace = nullptr;
    WorkspaceModel* m_workspaceModel = nullptr;
    QTreeView* m_workspaceView = nullptr;
    QTabWidget* m_tabs = nullptr;
    kf::ui::DiagnosticsPanel* m_diagnostics = nullptr;
    kf::ui::AssemblyView* m_assembly = nullptr;
    kf::ui::OccupancyPanel* m_occupancy = nullptr;
    kf::ui::TaskEditor* m_taskEditor = nullptr;
    kf::ui::RunPanel* m_runPanel = nullptr;
    kf::ui::RegistryBrowser* m_registryBrowser = nullptr;
    kf::ui::TensorInspector* m_inspector = nullptr;
    kf::ui::ProfilePanel* m_profilePanel = nullptr;
    StatusBar* m_status = nullptr;
    std::unique_ptr<CompileController> m_compile;
    std::unique_ptr<RunController> m_run;
    std::unique_ptr<PromoteController> m_promote;
    QPointer<ModelRunDialog> m_modelRun;   ///< Run ▸ Run Model from .cast Package…, made on first use
    std::unique_ptr<RegistryController> m_registry;
    std::unique_ptr<InspectController> m_inspect;
    AgentController* m_agent = nullptr;   ///< a child of the window
    TuneController* m_tune = nullptr;     ///< Run ▸ Tune; a child of the window
    kf::ui::AssistantDock* m_assistantDock = nullptr;
    AssistantController* m_assistant = nullptr;   ///< a child of the window, deleted first
    QAction* m_assistantAction = nullptr;
    QMenu* m_recentMenu = nullptr;
    QAction* m_verifyAction = nullptr;
    QAction* m_verifySanitizedAction = nullptr;
    /// A candidate's last verification findings while its tab is closed: path -> (diagnostics, verified text).
    QHash<QString, std::pair<std::vector<kf::Diagnostic>, QString>> m_runDiagnostics;
    QAction* m_benchAction = nullptr;
    QAction* m_profileAction = nullptr;
    struct PendingRun {
        QPointer<CandidateTab> tab;
        kf::RunKind kind = kf::RunKind::Verify;
        bool sanitize = false;
    };
    std::optional<PendingRun> m_pendingRun;
    bool m_profiling = false;   ///< a Profile run is in flight: its ending goes to the Profile panel
    QAction* m_cancelAction = nullptr;
    QAction* m_promoteAction = nullptr;
    QByteArray m_defaultState;
    bool m_firstShow = true;
    bool m_restoredState = false;

    // Keyboard navigation (MainWindowNavigation.cpp): Edit ▸ Locate (Ctrl+K), Find in Workspace
    // (Ctrl+Shift+F) with its Search Results panel, Follow Symbol (F2), Help ▸ Keyboard Shortcuts.
    void buildNavigation(QMenu* edit, QMenu* help);
    void showLocator();
    void findInWorkspace();
    void followSymbolUnderCursor();
    kf::ui::LocatorPopup* m_locator = nullptr;
    kf::ui::FindInWorkspacePanel* m_findPanel = nullptr;
};

} // namespace kf::app
