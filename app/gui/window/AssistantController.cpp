#include "app/gui/window/AssistantController.h"

#include "app/gui/services/RunService.h"

#include "engine/core/Files.h"
#include "engine/synth/ModelsConfig.h"
#include "widgets/assistant/AssistantDock.h"

#include <QDir>
#include <QFileInfo>
#include <QMessageBox>
#include <QMetaObject>
#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <nlohmann/json.hpp>

#include <condition_variable>
#include <mutex>
#include <optional>

namespace kf::app {

namespace fs = std::filesystem;

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

QStringList qlist(const std::vector<std::string>& v)
{
    QStringList out;
    for (const std::string& s : v)
        out << qs(s);
    return out;
}

AssistantController::RunHook runOnService(RunService* runs, std::function<void(const QString&)> note)
{
    // The verify and bench runs go to the workbench's one runner, queued behind its own runs:
    // this thread waits there, the UI does not (RunService::runAndWait).
    return [runs, note](kf::RunKind kind, const kf::Task& task, const std::string& file, const std::string& source,
                        const kf::RunSettings& settings, const kf::CancelToken& cancel) -> kf::Result<kf::protocol::RunReport> {
        if (!runs)
            return kf::Error::failed("run " + file, "the Assistant has no GPU runner to run on");
        const QString what = kind == kf::RunKind::Verify  ? AssistantController::tr("verifying %1 on the GPU…")
                             : kind == kf::RunKind::Bench ? AssistantController::tr("benchmarking %1 on the GPU…")
                                                          : AssistantController::tr("profiling %1 on the GPU…");
        note(what.arg(qs(file)));
        RunService::Submission submission;
        submission.kind = kind;
        submission.task = task;
        submission.candidateFile = file;
        submission.source = source;
        submission.settings = settings;
        // The workbench's extra NVRTC options make exploration builds; a synthesized kernel is
        // measured as task.json will build it, since that measurement chooses what is added.
        submission.workbenchNvrtcOptions = false;
        const QString verb = kind == kf::RunKind::Verify  ? AssistantController::tr("verify")
                             : kind == kf::RunKind::Bench ? AssistantController::tr("benchmark")
                                                          : AssistantController::tr("profile");
        submission.title = AssistantController::tr("Assistant: %1 %2").arg(verb, qs(file));
        return runs->runAndWait(std::move(submission), cancel);
    };
}

} // namespace

// What the worker and the UI thread share for one run.
struct AssistantController::Job {
    kf::CancelToken cancel;
    std::mutex mutex;
    std::condition_variable wake;
    std::optional<std::vector<std::string>> answers;   // guarded by mutex
    std::optional<bool> accepted;                      // guarded by mutex
    QString pendingText;                               // guarded by mutex: streamed text not yet posted
    bool progressProblemSaid = false;                  // worker thread only
};

AssistantController::AssistantController(kf::ui::AssistantDock* dock, QObject* parent)
    : QObject(parent)
    , m_dock(dock)
{
    connect(dock, &kf::ui::AssistantDock::cancelRequested, this, &AssistantController::cancel);
    connect(dock, &kf::ui::AssistantDock::candidateActivated, this, &AssistantController::openFileRequested);
    connect(dock, &kf::ui::AssistantDock::answersGiven, this, [this](const QStringList& answers) {
        if (!m_job)
            return;
        std::vector<std::string> v;
        for (const QString& a : answers)
            v.push_back(a.toStdString());
        {
            std::lock_guard lock(m_job->mutex);
            m_job->answers = std::move(v);
        }
        m_job->wake.notify_all();
    });
    connect(dock, &kf::ui::AssistantDock::proposalDecided, this, [this](bool accepted) {
        if (!m_job)
            return;
        {
            std::lock_guard lock(m_job->mutex);
            m_job->accepted = accepted;
        }
        m_job->wake.notify_all();
    });
}

AssistantController::~AssistantController()
{
    if (m_thread.joinable()) {
        cancel();
        m_thread.join();
    }
}

bool AssistantController::mayClose(QWidget* window)
{
    if (!busy())
        return true;
    // A synthesis in flight is the user's money and the runner's GPU: ask, then cancel it and
    // close the window once the run has ended, so the UI thread never waits on the worker.
    const auto answer = QMessageBox::question(window, tr("Quit KernelForge"),
                                              tr("A synthesis run is in progress. Cancel it and quit? Everything it did so far "
                                                 "stays in its run folder."),
                                              QMessageBox::Yes | QMessageBox::No, QMessageBox::No);
    if (answer == QMessageBox::Yes) {
        QPointer<QWidget> w(window);
        connect(this, &AssistantController::finished, window, [w] {
            if (w)
                QTimer::singleShot(0, w, &QWidget::close);
        }, Qt::SingleShotConnection);
        cancel();
        if (m_dock)
            m_dock->addNote(tr("Cancelling the run; the window closes when it has ended."));
    }
    return false;
}

void AssistantController::setModelsFile(const QString& path)
{
    m_modelsFile = path;
}

QString AssistantController::modelsFile() const
{
    return m_modelsFile.isEmpty() ? qs(kf::synth::modelsConfigPath().string()) : m_modelsFile;
}

void AssistantController::reloadModels()
{
    if (!m_dock)
        return;
    auto config = kf::synth::readModelsConfig(modelsFile().toStdString());
    if (!config) {
        m_dock->setModels({}, {}, tr("The models file does not read: %1").arg(qs(config.error().message())));
        return;
    }
    QStringList names;
    for (const kf::synth::NamedModel& m : config->models)
        names << qs(m.name);
    m_dock->setModels(names, qs(config->defaultModel));
}

void AssistantController::setEngineHooksForTesting(ModelHook model, RunHook run)
{
    m_testModel = std::move(model);
    m_testRun = std::move(run);
}

void AssistantController::cancel()
{
    if (!m_job)
        return;
    m_job->cancel.cancel();
    {
        std::lock_guard lock(m_job->mutex); // no lost wake-up for a worker about to wait
    }
    m_job->wake.notify_all();
    if (m_dock)
        m_dock->closePending(tr("Cancelled while waiting for you."));
}

std::optional<kf::synth::SynthRequest> AssistantController::begin(const QString& request, const QString& modelName,
                                                                  const QString& taskDir)
{
    if (busy() || !m_dock)
        return std::nullopt;
    auto config = kf::synth::readModelsConfig(modelsFile().toStdString());
    if (!config) {
        m_dock->setOutcome(tr("The models file does not read: %1").arg(qs(config.error().message())), false);
        return std::nullopt;
    }
    const kf::synth::NamedModel* model = config->find(modelName.toStdString());
    if (!model) {
        m_dock->setOutcome(tr("No model is named \"%1\" in %2: add it in File ▸ Settings ▸ Models.").arg(modelName, modelsFile()),
                           false);
        return std::nullopt;
    }
    if (request.trimmed().isEmpty() || taskDir.isEmpty())
        return std::nullopt;

    kf::synth::SynthRequest r;
    r.request = request.trimmed().toStdString();
    r.taskDir = QDir::cleanPath(QFileInfo(taskDir).absoluteFilePath()).toStdString();
    r.models.push_back(model->config);
    r.budget.maxAttempts = m_dock->maxAttempts();
    r.budget.perfRounds = m_dock->perfRounds();
    r.budget.maxUsd = m_dock->budgetUsd();
    if (const kf::synth::NamedModel* stronger = config->find(config->escalationModel); stronger && stronger != model)
        r.models.push_back(stronger->config);
    m_taskDir = qs(r.taskDir.string());
    const bool existing = QFileInfo(QDir(m_taskDir).filePath(QStringLiteral("task.json"))).isFile();
    // The run's folder is made here, by the engine's own rule, so the panel can read synthesis.json
    // while the run writes it.
    auto runDir = kf::synth::createRunFolder(r.taskDir);
    if (!runDir) {
        m_dock->setOutcome(tr("The synthesis did not start: %1").arg(qs(runDir.error().message())), false);
        return std::nullopt;
    }
    r.runDir = *runDir;
    m_runDir = qs(runDir->string());

    m_dock->setRequest(request);
    m_dock->beginRun(existing ? tr("the task %1 (its spec as it is; no interview)").arg(QFileInfo(m_taskDir).fileName())
                              : tr("a new task in %1").arg(m_taskDir));
    m_dock->setRunning(true);
    m_lastOutcome.clear();
    return r;
}

// Every call from the worker to the panel: queued onto the UI thread, dropped if the controller is
// gone (its destructor joins the worker first, so `this` outlives the posts). Streamed text not
// yet shown is taken along and shown first, so a note or a header posted after some text never
// appears above it.
void AssistantController::post(const std::shared_ptr<Job>& job, std::function<void(kf::ui::AssistantDock&)> fn)
{
    QString before;
    {
        std::lock_guard lock(job->mutex);
        before.swap(job->pendingText);
    }
    QMetaObject::invokeMethod(this, [this, fn = std::move(fn), before = std::move(before)] {
        if (!m_dock)
            return;
        if (!before.isEmpty())
            m_dock->appendModelText(before);
        fn(*m_dock);
    }, Qt::QueuedConnection);
}

// The trace the engine rewrote just now (docs/synthesis-schema.md); one that does not read is
// said once in the notes, and the panel keeps what it showed.
void AssistantController::showProgress(const std::shared_ptr<Job>& job, const fs::path& runDir)
{
    auto p = kf::synth::readSynthProgress(runDir);
    if (!p) {
        if (!std::exchange(job->progressProblemSaid, true))
            post(job, [line = tr("The run's progress does not read: %1").arg(qs(p.error().message()))](kf::ui::AssistantDock& d) {
                d.addNote(line);
            });
        return;
    }
    post(job, [p = std::move(p.value()), runDir](kf::ui::AssistantDock& d) {
        for (const kf::synth::SynthProgress::StageRow& s : p.stages)
            d.setStageStatus(qs(s.stage), qs(s.status), qs(s.reason));
        for (const kf::synth::SynthProgress::KernelRow& k : p.kernels)
            d.setCandidate(qs(k.file), qs((runDir / k.file).string()), qs(k.result), k.speedup.value_or(0.0));
    });
}

// One queued call per burst of streamed text: the deltas gather in the job until the UI thread takes them.
void AssistantController::streamText(const std::shared_ptr<Job>& job, const std::string& delta)
{
    bool first = false;
    {
        std::lock_guard lock(job->mutex);
        first = job->pendingText.isEmpty();
        job->pendingText += qs(delta);
    }
    if (first)
        QMetaObject::invokeMethod(this, [this, job] {
            QString text;
            {
                std::lock_guard lock(job->mutex);
                text.swap(job->pendingText);
            }
            if (m_dock)
                m_dock->appendModelText(text);
        }, Qt::QueuedConnection);
}

void AssistantController::onEngineEvent(const std::shared_ptr<Job>& job, const fs::path& runDir, const kf::synth::SynthEvent& e)
{
    using T = kf::synth::SynthEvent::Type;
    switch (e.type) {
    case T::Stage:
        post(job, [stage = qs(e.text)](kf::ui::AssistantDock& d) { d.setStageStatus(stage, QStringLiteral("running")); });
        break;
    case T::Text:
        streamText(job, e.text);
        break;
    case T::Step: {
        const QString line = qs(e.text) + QStringLiteral(" (") + qs(kf::synth::stageName(e.stage)) + QStringLiteral(")");
        post(job, [line](kf::ui::AssistantDock& d) {
            d.addNote(line);
            d.appendModelText(QStringLiteral("\n── %1 ──\n").arg(line));
        });
        if (e.data.is_object() && e.data.contains("candidate") && e.data["candidate"].is_string()) {
            const std::string file = e.data["candidate"].get<std::string>();
            const double speedup = e.data.contains("speedup") && e.data["speedup"].is_number() ? e.data["speedup"].get<double>() : 0.0;
            const std::string result = e.data.contains("result") && e.data["result"].is_string() ? e.data["result"].get<std::string>() : "";
            post(job, [n = qs(file), p = qs((runDir / file).string()), res = qs(result), speedup](kf::ui::AssistantDock& d) {
                d.setCandidate(n, p, res, speedup);
            });
        }
        break;
    }
    case T::Note:
        post(job, [line = qs(e.text)](kf::ui::AssistantDock& d) { d.addNote(line); });
        break;
    case T::Totals:
        post(job, [in = e.data.value("tokens_in", 0LL), out = e.data.value("tokens_out", 0LL), usd = e.data.value("usd", 0.0)](
                      kf::ui::AssistantDock& d) { d.setTotals(in, out, usd); });
        showProgress(job, runDir);   // written just before this event
        break;
    }
}

// The engine's hooks for one run: events and the user's two answers go through the panel, runs
// to the workbench's runner (or the test doubles).
kf::synth::SynthHooks AssistantController::hooksFor(const std::shared_ptr<Job>& job, const fs::path& runDir)
{
    kf::synth::SynthHooks hooks;
    hooks.model = m_testModel;
    hooks.onEvent = [this, job, runDir](const kf::synth::SynthEvent& e) { onEngineEvent(job, runDir, e); };
    hooks.answer = [this, job](const std::vector<std::string>& questions) -> std::vector<std::string> {
        {
            std::lock_guard lock(job->mutex);
            job->answers.reset();
        }
        post(job, [q = qlist(questions)](kf::ui::AssistantDock& d) { d.askQuestions(q); });
        std::unique_lock lock(job->mutex);
        job->wake.wait(lock, [&] { return job->answers.has_value() || job->cancel.cancelled(); });
        return job->answers && !job->cancel.cancelled() ? *job->answers : std::vector<std::string>{};
    };
    hooks.accept = [this, job](const nlohmann::ordered_json& task, const std::vector<std::string>& assumptions) {
        {
            std::lock_guard lock(job->mutex);
            job->accepted.reset();
        }
        post(job, [t = qs(task.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)), a = qlist(assumptions)](
                      kf::ui::AssistantDock& d) { d.showProposal(t, a); });
        std::unique_lock lock(job->mutex);
        job->wake.wait(lock, [&] { return job->accepted.has_value() || job->cancel.cancelled(); });
        return job->accepted.value_or(false) && !job->cancel.cancelled();
    };
    hooks.run = m_testRun ? m_testRun : runOnService(m_runs, [this, job](const QString& line) {
        post(job, [line](kf::ui::AssistantDock& d) { d.addNote(line); });
    });
    return hooks;
}

bool AssistantController::start(const QString& request, const QString& modelName, const QString& taskDir)
{
    std::optional<kf::synth::SynthRequest> r = begin(request, modelName, taskDir);
    if (!r)
        return false;
    m_job = std::make_shared<Job>();
    kf::synth::SynthHooks hooks = hooksFor(m_job, r->runDir);
    m_thread = std::thread([this, r = std::move(*r), hooks = std::move(hooks), job = m_job] {
        // Nothing may escape this thread: an exception here would end the workbench and its unsaved
        // editors. synthesize() ends its own run on one; this catches what the hooks throw.
        kf::Result<kf::synth::SynthResult> result = kf::Error{};
        try {
            result = kf::synth::synthesize(r, hooks, job->cancel);
        } catch (const std::exception& e) {
            result = kf::Error::inFile(r.runDir.string(), {}, "run the synthesis", std::string("internal error: ") + e.what());
        }
        if (result) // a run that did not start wrote no trace; the outcome says why
            showProgress(job, r.runDir);
        QMetaObject::invokeMethod(this, [this, result] { onFinished(result); }, Qt::QueuedConnection);
    });
    emit runningChanged(true);
    return true;
}

void AssistantController::onFinished(const kf::Result<kf::synth::SynthResult>& result)
{
    if (m_thread.joinable())
        m_thread.join();
    m_job.reset();
    QString sentence;
    bool good = false;
    if (!result) {
        m_lastOutcome = QStringLiteral("error");
        sentence = tr("The synthesis did not start: %1").arg(qs(result.error().message()));
    } else {
        const kf::synth::SynthResult& s = *result;
        m_lastOutcome = qs(s.outcome);
        const QString folder = qs(s.runDir.string());
        if (s.outcome == "candidate") {
            good = true;
            sentence = tr("Added %1 to the task").arg(qs(s.candidate));
            if (s.speedup)
                sentence += tr(": %1× over eager LibTorch").arg(*s.speedup, 0, 'f', 2);
            if (s.compileSpeedup)
                sentence += tr(", %1× over torch.compile").arg(*s.compileSpeedup, 0, 'f', 2);
            sentence += tr(". Verify and promote it like any candidate. Everything is in %1").arg(folder);
        } else if (s.outcome == "cancelled") {
            sentence = tr("Cancelled, everything is in %1").arg(folder);
        } else {
            const QString what = s.outcome == "no_candidate" ? tr("No correct kernel")
                                 : s.outcome == "refused"    ? tr("No task")
                                                             : tr("Stopped by an error");
            sentence = tr("%1 (%2 stage): %3. Everything is in %4").arg(what, qs(s.failedStage), qs(s.reason), folder);
        }
        if (m_dock)
            m_dock->setTotals(s.totals.tokensIn, s.totals.tokensOut, s.totals.usd);
    }
    if (m_dock) {
        m_dock->closePending(tr("The run ended."));
        m_dock->setRunning(false);
        m_dock->setOutcome(sentence, good);
    }
    emit runningChanged(false);
    emit finished(m_lastOutcome, sentence);
    if (result && result->outcome == "candidate")
        emit candidateAdded(qs(result->taskDir.string()), qs((result->taskDir / result->candidate).string()));
}

} // namespace kf::app
