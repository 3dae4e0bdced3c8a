#pragma once
// The workbench's face of kernel synthesis (engine/synth/Synthesis.h, docs/workbench.md
// "Assistant"): owns one synthesis job at a time and drives the Assistant panel
// (widgets/assistant/AssistantDock). The engine's loop runs on a worker thread of this
// controller; its progress events come to the panel as queued calls, and its two questions for
// the user (the `answer` and `accept` hooks) block the worker on a condition variable while the
// panel shows them, until the user clicks or Cancel raises the run's CancelToken.
//
// The verify and bench runs of the synthesized kernels go to the workbench's RunService
// (setRunService): its one runner, queued behind the Runs panel's runs, so an F5 and an Assistant
// benchmark never share the GPU. The worker thread waits there for each report
// (RunService::runAndWait), since the loop needs it before it can ask the model again; the Runs
// panel and the status bar show the run meanwhile.

#include "engine/core/Result.h"
#include "engine/synth/Synthesis.h"

#include <QObject>
#include <QPointer>
#include <QString>

#include <functional>
#include <memory>
#include <thread>

namespace kf::ui {
class AssistantDock;
} // namespace kf::ui

class QWidget;

namespace kf::app {

class RunService;

class AssistantController : public QObject {
    Q_OBJECT
public:
    using ModelHook = decltype(kf::synth::SynthHooks::model);
    using RunHook = decltype(kf::synth::SynthHooks::run);

    /// Drives `dock` (borrowed; it must outlive the controller or be its parent's child).
    explicit AssistantController(kf::ui::AssistantDock* dock, QObject* parent = nullptr);
    /// Cancels a run in flight and waits for its worker (the run folder keeps what it wrote).
    ~AssistantController() override;

    /// The runner the synthesized kernels run on (borrowed): the workbench's one RunService. It
    /// must outlive this controller, whose destructor cancels and joins the run that uses it.
    void setRunService(RunService* runs) { m_runs = runs; }
    /// The models file; empty (the default): synth::modelsConfigPath().
    void setModelsFile(const QString& path);
    QString modelsFile() const;
    /// Reads the models file again and fills the panel's model picker, the default chosen.
    void reloadModels();

    /// Starts a run of `request` with the model named `modelName` on `taskDir`: a folder with a
    /// task.json is worked on as it is (no interview); any other folder gets the task the
    /// interview proposes and the user accepts. False (with the reason in the panel) when it
    /// cannot start: a run in flight, no such model, a models file that does not read.
    bool start(const QString& request, const QString& modelName, const QString& taskDir);
    /// Raises the run's CancelToken and unblocks a question waiting for the user.
    void cancel();
    /// Whether `window` may close now: yes when no run is in flight; otherwise asks, and on Yes
    /// cancels the run and closes `window` once it has ended (answering no for now).
    bool mayClose(QWidget* window);
    bool busy() const { return m_thread.joinable(); }
    /// The run folder of the current or last run.
    QString runDir() const { return m_runDir; }
    /// The last run's outcome: candidate, no_candidate, refused, cancelled or error.
    QString lastOutcome() const { return m_lastOutcome; }

    /// TEST INJECTION POINT, for tests/gui/window/tst_assistantdock.cpp only: replaces the
    /// engine's model hook (the HTTP ModelClient) and run hook (the RunService's runner)
    /// for the next runs with test doubles. Empty functions restore the real ones. The answer,
    /// accept and event hooks stay the panel's, so a test drives the real conversation.
    void setEngineHooksForTesting(ModelHook model, RunHook run);

signals:
    void runningChanged(bool running);
    /// The run ended; `sentence` is what the panel shows.
    void finished(const QString& outcome, const QString& sentence);
    /// Outcome "candidate": `file` (absolute) was added to the task in `taskDir`.
    void candidateAdded(const QString& taskDir, const QString& file);
    /// The user double-clicked a candidate in the panel.
    void openFileRequested(const QString& path);

private:
    struct Job;
    /// Checks the request, makes the run folder and opens the run in the panel; none (with the
    /// reason in the panel) when it cannot start.
    std::optional<kf::synth::SynthRequest> begin(const QString& request, const QString& modelName, const QString& taskDir);
    kf::synth::SynthHooks hooksFor(const std::shared_ptr<Job>& job, const std::filesystem::path& runDir);
    // Worker thread: what the engine tells the panel, as queued calls.
    void post(const std::shared_ptr<Job>& job, std::function<void(kf::ui::AssistantDock&)> fn);
    void showProgress(const std::shared_ptr<Job>& job, const std::filesystem::path& runDir);
    void streamText(const std::shared_ptr<Job>& job, const std::string& delta);
    void onEngineEvent(const std::shared_ptr<Job>& job, const std::filesystem::path& runDir, const kf::synth::SynthEvent& e);
    void onFinished(const kf::Result<kf::synth::SynthResult>& result);

    QPointer<kf::ui::AssistantDock> m_dock;
    RunService* m_runs = nullptr;
    QString m_modelsFile;
    ModelHook m_testModel;
    RunHook m_testRun;
    std::shared_ptr<Job> m_job;
    std::thread m_thread;
    QString m_runDir;
    QString m_taskDir;
    QString m_lastOutcome;
};

} // namespace kf::app
