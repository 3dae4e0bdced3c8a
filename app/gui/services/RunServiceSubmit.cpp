// RunService's queue for other threads (RunService.h, runAndWait): the Assistant's verify and
// bench runs go to the one runner behind the workbench's own runs, and their callers wait for
// the report on their own thread.
#include "app/gui/services/RunService.h"

#include <QMetaObject>
#include <QPointer>
#include <QThread>

#include <chrono>

namespace kf::app {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

Error closing(const std::string& file)
{
    return Error::failed("run " + file, "the workbench is closing");
}

} // namespace

void RunService::Waiter::settle(Result<protocol::RunReport> r)
{
    {
        std::lock_guard lock(mutex);
        if (result)
            return;
        result = std::move(r);
    }
    done.notify_all();
}

Result<protocol::RunReport> RunService::runAndWait(Submission submission, const CancelToken& cancel)
{
    const std::string file = submission.candidateFile;
    if (QThread::currentThread() == thread())
        return Error::failed("run " + file, "a run was submitted from the UI thread, which would freeze while it waits for the runner", "call run() there and take the report from reportReady");
    auto waiter = std::make_shared<Waiter>();
    const quint64 id = m_nextId++;
    {
        std::lock_guard lock(m_mutex);
        if (m_stopping)
            return closing(file);
        std::erase_if(m_waiters, [](const std::weak_ptr<Waiter>& w) { return w.expired(); });
        m_waiters.push_back(waiter);
        m_submittedIds.insert(id);
        m_submittedTitle = submission.title;
        m_jobs.push_back([this, id, waiter, submission = std::move(submission)] { runSubmittedOnWorker(id, submission, waiter); });
        m_wake.notify_one();
    }
    // From here on nothing of the service is touched: it may be destroyed while this waits (its
    // destructor answers every waiter). The caller's token has no wake-up of its own, so it is
    // looked at a few times a second.
    std::unique_lock lock(waiter->mutex);
    while (!waiter->result) {
        if (cancel.cancelled()) {
            waiter->cancel.cancel();
            return Error::failed("run " + file, "cancelled");
        }
        waiter->done.wait_for(lock, std::chrono::milliseconds(50));
    }
    return *waiter->result;
}

bool RunService::isSubmitted(quint64 id) const
{
    std::lock_guard lock(m_mutex);
    return m_submittedIds.count(id) > 0;
}

int RunService::submittedRuns() const
{
    std::lock_guard lock(m_mutex);
    return int(m_submittedIds.size());
}

void RunService::toUi(std::function<void(RunService&)> emitIt)
{
    QPointer<RunService> self(this);
    QMetaObject::invokeMethod(this, [self, emitIt = std::move(emitIt)] { if (self) emitIt(*self); }, Qt::QueuedConnection);
}

RunPipeline::EventFn RunService::forwardEvents(quint64 id)
{
    return [this, id](const protocol::Event& e) {
        switch (e.kind) {
        case protocol::Event::Kind::Progress:
            toUi([id, p = e.permille, stage = qs(e.stage)](RunService& s) { emit s.progress(id, p, stage); });
            break;
        case protocol::Event::Kind::LaunchBegin:
            toUi([id, label = qs(e.label)](RunService& s) { emit s.launchChanged(id, label); });
            break;
        case protocol::Event::Kind::LaunchEnd:
            toUi([id](RunService& s) { emit s.launchChanged(id, QString()); });
            break;
        case protocol::Event::Kind::Log:
            toUi([id, level = e.level, text = qs(e.text)](RunService& s) { emit s.log(id, level, text); });
            break;
        }
    };
}

void RunService::runSubmittedOnWorker(quint64 id, const Submission& submission, const std::shared_ptr<Waiter>& waiter)
{
    // The ids stay known until runFinished is out, so a run of the UI thread queued meanwhile
    // waits its turn in the signals too (startJob).
    auto finish = [this, id](bool ok, const QString& sentence) {
        {
            std::lock_guard lock(m_mutex);
            m_submittedInFlight.reset();
        }
        toUi([id, ok, sentence](RunService& s) {
            emit s.runFinished(id, ok, sentence);
            std::lock_guard lock(s.m_mutex);
            s.m_submittedIds.erase(id);
        });
    };
    {
        std::lock_guard lock(m_mutex);
        if (waiter->cancel.cancelled()) { // its caller gave up while it was queued
            m_submittedIds.erase(id);
            return;
        }
        m_submittedInFlight = waiter;
    }
    toUi([id, title = submission.title](RunService& s) { emit s.runStarted(id, title); });
    ensureSession();
    setState(RunnerState::Busy, QStringLiteral("%1 · %2 on the GPU…").arg(m_sessionEndpoint, submission.title));
    Plan plan{submission.kind, submission.candidateFile, submission.settings, submission.source, {}};
    // Settings' extra NVRTC options make exploration builds; synthesis measures the kernel as
    // task.json will build it, so its submissions leave them out.
    if (submission.workbenchNvrtcOptions)
        for (const QString& n : m_sessionOptions.extraNvrtcOptions)
            plan.settings.extraNvrtcOptions.push_back(n.toStdString());
    auto outcome = m_session->run(submission.task, plan, forwardEvents(id), &waiter->cancel);
    applyOutcome(outcome);
    if (!outcome) {
        toUi([id, e = outcome.error()](RunService& s) { emit s.failed(id, e); });
        finish(false, qs(outcome.error().message()));
        waiter->settle(outcome.error());
        return;
    }
    const RunOutcome& o = outcome.value();
    const protocol::Header& h = o.report.header();
    if (!o.cancelled)
        toUi([id, r = o.report](RunService& s) { emit s.reportReady(id, r); });
    finish(o.passed(), qs(o.failure ? o.failure->message() : h.summary.empty() ? protocol::verdictName(h.verdict) : h.summary));
    // Cancel in the Runs panel stops the caller's work too: its report would be no verdict.
    waiter->settle(o.cancelled ? Result<protocol::RunReport>(Error::failed("run " + submission.candidateFile, "cancelled in the Runs panel"))
                               : Result<protocol::RunReport>(o.report));
    const bool lost = o.failure && (o.failure->kind == kConnectionLost || o.failure->kind == kRunnerLost);
    bool stopping = false;
    {
        std::lock_guard lock(m_mutex);
        stopping = m_stopping;
    }
    if ((o.cancelled || o.runnerRestarted) && !lost && !stopping) {
        // A cancel, crash, hang or lost context put the runner down: a fresh one now, for the next run.
        if (!o.cancelled)
            toUi([](RunService& s) { ++s.m_restarts; });
        setState(RunnerState::Starting, QStringLiteral("%1 · restarting the GPU runner…").arg(m_sessionEndpoint));
        probeOnWorker();
    }
}

void RunService::applyOutcome(const Result<RunOutcome>& outcome)
{
    const Error* lost = !outcome ? &outcome.error() : outcome->failure ? &*outcome->failure : nullptr;
    if (lost && (lost->kind == kConnectionLost || lost->kind == kRunnerLost))
        applyLost(*lost);
    else if (m_session->session().hello().device)
        applyHello(m_session->session().hello());
    else if (!outcome)
        applyStartError(outcome.error());
}

} // namespace kf::app
