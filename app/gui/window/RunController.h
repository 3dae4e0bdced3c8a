#pragma once
// Verify (F5) and Benchmark (F6): saves the task's edited files, loads the task as saved, and
// hands the run to the run service; streams its progress, reports and ending into the Runs
// panel, and keeps the status bar's runner state honest (GPU, no GPU, restarting).
#include "app/gui/services/RunService.h"

#include <QObject>

#include <functional>
#include <optional>
#include <memory>

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
    };
    RunController(RunService::Options options, kf::ui::RunPanel* panel, StatusBar* status, QObject* parent = nullptr);
    ~RunController() override;

    void setSettings(const Settings& s) { m_settings = s; }
    /// Called before a run to save the task's modified files; returns false (with a sentence)
    /// when one cannot be written.
    void setSaveHook(std::function<bool(const QString& taskDir, QString* error)> hook) { m_save = std::move(hook); }

    /// Starts a verify or benchmark of `tab`'s candidate. Returns false when nothing started
    /// (the sentence is in the Runs panel).
    bool start(kf::RunKind kind, CandidateTab* tab);
    /// Verifies a kernel that is not open in a tab (a registry version, re-verified on this GPU):
    /// `task` is used as given (its folder must hold `candidateFile`). Same panel and signals.
    bool startTask(kf::RunKind kind, const kf::Task& task, const QString& candidateFile, const QString& titleNote);
    void cancel();
    /// Starts the runner now so the first run does not pay for it.
    void probe();
    bool isRunning() const;
    RunService* service() const { return m_service.get(); }

signals:
    void runningChanged(bool running);
    void finished(bool ok, const QString& sentence);
    /// A report of the run in flight, with the folder of the task it ran (promotion evidence).
    void reportReceived(const QString& taskDir, const nlohmann::json& report);

private:
    bool launch(kf::RunKind kind, kf::Task task, const QString& candidateFile, const QString& taskDir);
    void onState(RunService::RunnerState state, const QString& text);

    std::unique_ptr<RunService> m_service;
    kf::ui::RunPanel* m_panel = nullptr;
    StatusBar* m_status = nullptr;
    Settings m_settings;
    std::function<bool(const QString&, QString*)> m_save;
    quint64 m_runId = 0;
    QString m_runTaskDir;
    QString m_titleNote;
    bool m_gotReport = false;
};

} // namespace kf::app
