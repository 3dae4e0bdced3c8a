#pragma once
// Verify (F5), Verify under compute-sanitizer, Benchmark (F6) and Profile (F7): saves the task's edited files, loads the task as saved, and
// hands the run to the run service; streams its progress, reports and ending into the Runs
// panel, and keeps the status bar's runner state honest (GPU, no GPU, restarting).
#include "app/gui/services/RunService.h"

#include "engine/verify/CaseFiles.h"

#include <QHash>
#include <QObject>
#include <QStringList>

#include <functional>
#include <optional>
#include <memory>
#include <vector>

namespace kf::ui {
class RunPanel;
}

namespace kf::app {

class CandidateTab;
class StatusBar;

/// GUI thread only. Owns the RunService (and so the runner's worker thread and process).
class RunController : public QObject {
    Q_OBJECT
public:
    struct Settings {
        int trials = 3;
        int launchTimeoutMs = 10000;
        /// Settings ▸ tolerance override, applied to every output for exploration. The run's
        /// task hash then differs from task.json's, so such reports can never promote a kernel.
        std::optional<double> rtol;
        std::optional<double> atol;
        /// Verify also runs this many held-out shapes derived from the task (promotion needs them).
        int heldOutShapes = 2;
        /// Verify also runs compute-sanitizer where the runner's host has it (promotion's
        /// sanitizer gate asks for it; docs/registry.md).
        bool sanitizeIfAvailable = true;
        /// Profile also replays the LibTorch baseline's kernels under the counters.
        bool profileBaseline = true;
        /// Benchmark also times the reference under torch.compile (docs/benchmarks.md).
        bool compileBaseline = true;
    };
    RunController(RunService::Options options, kf::ui::RunPanel* panel, StatusBar* status, QObject* parent = nullptr);
    ~RunController() override;

    void setSettings(const Settings& s) { m_settings = s; }
    /// Called before a run to save the task's modified files; returns false (with a sentence)
    /// when one cannot be written.
    void setSaveHook(std::function<bool(const QString& taskDir, QString* error)> hook) { m_save = std::move(hook); }

    /// Starts a verify or benchmark of `tab`'s candidate. Returns false when nothing started
    /// (the sentence is in the Runs panel). `sanitize` (verify only): also run every
    /// compute-sanitizer tool on the task's sanitize shapes (docs/verification.md).
    bool start(kf::RunKind kind, CandidateTab* tab, bool sanitize = false);
    /// "Verify", "Verify under compute-sanitizer", "Benchmark" or "Profile": a run's title in the Runs panel.
    static QString runTitle(kf::RunKind kind, bool sanitize);
    /// Verifies a kernel that is not open in a tab (a registry version, re-verified on this GPU):
    /// `task` is used as given (its folder must hold `candidateFile`). Same panel and signals.
    bool startTask(kf::RunKind kind, const kf::Task& task, const QString& candidateFile, const QString& titleNote);
    /// Run ▸ Tune: saves the task's files, loads the task as saved and hands the search of
    /// `candidateFile`'s "tune" space to the run service (RunService::tune) with `budgetS`; the
    /// winner's verify and bench run with these settings, torch.compile included, and show here
    /// like any run's reports. Returns the run id; 0 when nothing started (the panel says why).
    quint64 startTune(const QString& taskDir, const QString& candidateFile, double budgetS);
    /// Re-runs a saved failing case from its saved inputs (same shape, seed and trial number),
    /// with the candidate as it is saved now: the quickest check of a fix. False when nothing started.
    bool rerunCase(const QString& caseDir);
    /// Searches for the smallest shape that fails like the saved case (engine/verify/Shrink.h).
    bool shrinkCase(const QString& caseDir);
    /// The task folder of the run that saved `caseDir` (this session's runs), or empty.
    QString taskDirForCase(const QString& caseDir) const;
    /// Verify runs save the tensors of failing trials (the inspector reads them); on by default.
    void setSaveFailingTensors(bool on, qint64 maxBytes) { m_saveTensors = on; m_saveTensorsBytes = maxBytes; }
    /// The shape Profile runs; empty: the task's largest benchmark shape (defaultProfileShape).
    void setProfileShape(std::optional<kf::ShapeBinding> shape) { m_profileShape = std::move(shape); }
    /// The case open in the inspector: pruning old runs never deletes it.
    void setOpenCase(const QString& caseDir) { m_openCase = caseDir; }

    /// Shows reports that did not come from a run of this session (a report file): a run of their
    /// own in the Runs panel titled `title`, each `note` as a warning in its log, ended with
    /// `sentence`. False while a run is in flight.
    bool showReports(const QString& title, const std::vector<kf::protocol::RunReport>& reports, const QStringList& notes,
                     const QString& sentence);

    void cancel();
    /// Starts the runner now so the first run does not pay for it.
    void probe();
    bool isRunning() const;
    RunService* service() const { return m_service.get(); }

signals:
    void runningChanged(bool running);
    void finished(bool ok, const QString& sentence);
    /// A report of the run in flight, with the folder of the task it ran (promotion evidence).
    void reportReceived(const QString& taskDir, const kf::protocol::RunReport& report);
    /// A profile report (kind "profile") of the run in flight; not shown in the Runs table.
    void profileReceived(const QString& taskDir, const kf::protocol::RunReport& report);
    /// A correctness report (any verdict, "error" too) of a candidate started from a tab:
    /// `candidatePath` is its file, `verifiedText` the source the run read from it (saved just
    /// before). The main window turns the report's compute-sanitizer findings into diagnostics.
    void verified(const QString& candidatePath, const QString& verifiedText, const kf::protocol::RunReport& report);

private:
    bool launch(kf::RunKind kind, kf::Task task, const QString& candidateFile, const QString& taskDir,
                bool sanitize = false);
    struct LoadedCase {
        kf::CaseInfo kase;
        kf::Task task;
        QString taskDir;
    };
    /// The case at `caseDir` and its task as saved now; nothing after showing why in the panel.
    std::optional<LoadedCase> loadCase(const QString& caseDir, const QString& what);
    /// The run about to start is `taskDir`'s and no tab's, without compute-sanitizer.
    void setTaskRun(const QString& taskDir);
    QString newDumpDir(const kf::Task& task, const QString& candidateFile) const;
    void onState(RunService::RunnerState state, const QString& text);
    // The service's run signals: a run of ours, or the Assistant's shown while it runs.
    void onRunStarted(quint64 id, const QString& title);
    void onReport(quint64 id, const kf::protocol::RunReport& r);
    void onRunFinished(quint64 id, bool ok, const QString& sentence);
    /// Shows in the Runs panel why a run of `title` did not start.
    void refuse(const QString& title, const QString& sentence);

    std::unique_ptr<RunService> m_service;
    kf::ui::RunPanel* m_panel = nullptr;
    StatusBar* m_status = nullptr;
    Settings m_settings;
    std::function<bool(const QString&, QString*)> m_save;
    quint64 m_runId = 0;
    QString m_runTaskDir;
    QString m_runCandidatePath;   ///< the tab's file of the run in flight; empty for other runs
    QString m_runSource;          ///< that file's text as the run read it
    bool m_runSanitize = false;   ///< the run in flight asked for compute-sanitizer
    QString m_titleNote;
    quint64 m_shownId = 0;        ///< the run the Runs panel shows: ours, or a submitted one (the Assistant's)
    bool m_shownGotReport = false;
    bool m_saveTensors = true;
    qint64 m_saveTensorsBytes = 2ll << 30;
    QHash<QString, QString> m_caseTasks;
    QString m_openCase;  ///< dump folder -> task folder of the run that wrote it
    std::optional<kf::ShapeBinding> m_profileShape;
};

} // namespace kf::app
