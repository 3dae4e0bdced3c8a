#pragma once
// Live diagnostics: turns a tab's "compile due" into a request to the compile service (the
// editor's text, the task's options, the chosen architecture) and paints each delivered result
// into the editor (squiggles, markers; with the last verification's compute-sanitizer findings
// beside the compiler's), the Problems panel, the assembly view, the resource and
// occupancy panel and the status bar. Stale results never get here: the service drops them.
#include "engine/compile/Diagnostic.h"

#include <QHash>
#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

namespace kf {
struct CompileResult;
struct Diagnostic;
}
namespace kf::ui {
class AssemblyView;
class DiagnosticsPanel;
class OccupancyPanel;
} // namespace kf::ui

namespace kf::app {

class CandidateTab;
class CompileService;
class StatusBar;
class Workspace;

struct CompilePanels {
    kf::ui::DiagnosticsPanel* diagnostics = nullptr;
    kf::ui::AssemblyView* assembly = nullptr;
    kf::ui::OccupancyPanel* occupancy = nullptr;
    StatusBar* status = nullptr;
};

/// GUI thread only. Owns the CompileService (and so the compile worker thread).
class CompileController : public QObject {
    Q_OBJECT
public:
    CompileController(Workspace* workspace, CompilePanels panels, const QString& cacheDir, QObject* parent = nullptr);
    ~CompileController() override;

    void setArchitecture(const QString& arch);
    QString architecture() const { return m_arch; }
    void setExtraOptions(const QStringList& options) { m_extraOptions = options; }

    /// Starts watching `tab`: its compileDue goes to the service; its results come back to it.
    void addTab(CandidateTab* tab);
    /// Stops watching; a build in flight for it is cancelled and its result dropped.
    void removeTab(CandidateTab* tab);
    /// Shows `tab`'s last result in the panels (or compiles it when it has none for the
    /// current architecture). Null clears the panels.
    void setCurrentTab(CandidateTab* tab);
    CandidateTab* currentTab() const { return m_current; }

    CompileService* service() const { return m_service.get(); }

    /// Paints `tab`'s diagnostics again: the compiler's last ones and its run diagnostics (the last
    /// verification's compute-sanitizer findings), in the editor and, for the current tab, in the
    /// Problems panel. Called when a verification brings new findings; every compile result does it too.
    void refreshDiagnostics(CandidateTab* tab);

    /// Problems of the workspace itself (a task.json that does not load), listed in the Problems
    /// panel after the current tab's, or alone when no tab is open. Replaces the previous ones.
    void setWorkspaceDiagnostics(std::vector<kf::Diagnostic> diagnostics);

signals:
    /// A result for `tab` was painted (tests and benchmarks wait on this).
    void resultShown(kf::app::CandidateTab* tab);

private:
    void requestCompile(CandidateTab* tab);
    void onFinished(const QString& tag, std::shared_ptr<const kf::CompileResult> result);
    void onFailed(const QString& tag, const QString& sentence);
    void showInPanels(CandidateTab* tab);
    /// The editor's marks: the compiler's diagnostics of the tab's file and its run diagnostics.
    void paintEditor(CandidateTab* tab);
    /// The Problems panel's rows: every compiler diagnostic and the run diagnostics.
    std::vector<kf::Diagnostic> panelDiagnostics(CandidateTab* tab) const;
    CandidateTab* tabFor(const QString& tag) const;

    Workspace* m_workspace = nullptr;
    CompilePanels m_panels;
    std::unique_ptr<CompileService> m_service;
    QList<CandidateTab*> m_tabs;
    CandidateTab* m_current = nullptr;
    QString m_arch = QStringLiteral("sm_90");
    QStringList m_extraOptions;
    QHash<QString, quint64> m_requestedRevision; ///< tag -> the text revision of its latest request
    std::vector<kf::Diagnostic> m_workspaceDiagnostics;
};

} // namespace kf::app
