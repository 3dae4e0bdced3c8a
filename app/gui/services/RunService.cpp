#include "app/gui/services/RunService.h"

#include "engine/cast/CompileBaselineRun.h"
#include "engine/repro/ShrinkProbe.h"
#include "engine/verify/Shrink.h"

#include <QMetaObject>
#include <QPointer>

namespace kf::app {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

} // namespace

RunService::RunService(Options options, QObject* parent)
    : QObject(parent)
    , m_options(std::move(options))
{
    qRegisterMetaType<kf::protocol::RunReport>();
    qRegisterMetaType<kf::protocol::Event::Level>();
    qRegisterMetaType<kf::Error>();
    if (m_options.runnerPath.isEmpty()) // one search rule for the CLI and the workbench
        m_options.runnerPath = QString::fromStdString(RunnerSupervisor::defaultRunnerPath());
    m_worker = std::thread([this] { workerLoop(); });
}

RunService::~RunService()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
        m_jobs.clear();
        if (m_cancel)
            m_cancel->cancel();
    }
    m_wake.notify_all();
    m_worker.join();
}

void RunService::post(std::function<void()> job)
{
    {
        std::lock_guard lock(m_mutex);
        m_jobs.push_back(std::move(job));
    }
    m_wake.notify_one();
}

void RunService::workerLoop()
{
    RunSession::Options o;
    o.runnerPath = m_options.runnerPath.toStdString();
    for (const QString& e : m_options.extraEnv)
        o.extraEnv.push_back(e.toStdString());
    if (!m_options.cacheDir.isEmpty())
        o.cacheDir = m_options.cacheDir.toStdString();
    for (const QString& n : m_options.extraNvrtcOptions)
        o.extraNvrtcOptions.push_back(n.toStdString());
    m_session = std::make_unique<RunSession>(o);
    for (;;) {
        std::function<void()> job;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [this] { return m_stopping || !m_jobs.empty(); });
            if (m_stopping)
                break;
            job = std::move(m_jobs.front());
            m_jobs.pop_front();
        }
        job();
    }
    m_session.reset(); // stops the runner from the thread that spawned it
}

void RunService::setState(RunnerState state, const QString& text, const QString& detail)
{
    QPointer<RunService> self(this);
    QMetaObject::invokeMethod(this, [self, state, text, detail] {
        if (!self)
            return;
        self->m_state = state;
        self->m_stateText = text;
        self->m_stateDetail = detail;
        emit self->stateChanged(state, text);
    }, Qt::QueuedConnection);
}

void RunService::applyHello(const protocol::Hello& hello)
{
    if (!hello.device) {
        setState(RunnerState::NoGpu, QStringLiteral("no GPU: compile-only mode"),
                 qs(hello.deviceError.empty() ? "the runner found no CUDA device" : hello.deviceError));
        return;
    }
    const QString arch = qs(hello.arch());
    QString text = qs(hello.device->gpu);
    if (!arch.isEmpty())
        text += " · " + arch;
    if (const std::string& driver = hello.device->driver.empty() ? hello.driver : hello.device->driver; !driver.empty())
        text += " · driver " + qs(driver);
    QPointer<RunService> self(this);
    QMetaObject::invokeMethod(this, [self, arch] { if (self) self->m_arch = arch; }, Qt::QueuedConnection);
    setState(RunnerState::Ready, text + " · runner ready");
}

void RunService::applyStartError(const Error& error)
{
    // No GPU is a state of the machine, not a failure of the runner: compile-only mode.
    if (const protocol::Hello& h = m_session->hello(); m_session->supervisor().pid() > 0 && !h.device)
        applyHello(h);
    else
        setState(RunnerState::Unavailable, QStringLiteral("GPU runner unavailable"), qs(error.message()));
}

void RunService::probe()
{
    if (m_state == RunnerState::NotStarted || m_state == RunnerState::Unavailable)
        m_state = RunnerState::Starting;
    emit stateChanged(m_state, m_state == RunnerState::Starting ? QStringLiteral("starting the GPU runner…") : m_stateText);
    post([this] { probeOnWorker(); });
}

void RunService::probeOnWorker()
{
    auto hello = m_session->start();
    if (hello)
        applyHello(*hello);
    else
        applyStartError(hello.error());
}

quint64 RunService::run(RunKind kind, const Task& task, const QString& candidateFile, const RunSettings& settings)
{
    return startJob(kind, task, candidateFile, settings,
                    QString("%1 %2/%3").arg(kind == RunKind::Bench     ? "Benchmark"
                                           : kind == RunKind::Profile ? "Profile"
                                                                      : "Verify",
                                           qs(task.name), candidateFile),
                    {});
}

quint64 RunService::shrink(const Task& task, const QString& candidateFile, const ShapeBinding& start,
                           const QString& failureKind, quint64 seed, int trial, const QString& dumpDir)
{
    const FailureKind kind = parseFailureKind(failureKind.toStdString()).value_or(FailureKind::Mismatch);
    Job job = [task, start, kind, seed, trial, dump = dumpDir.toStdString()](const RunSession::Send& send) -> Result<protocol::RunReport> {
        ProbeFn probe = [&](const std::vector<ShapeBinding>& shapes) -> Result<std::vector<ProbeOutcome>> {
            RunSettings s;
            s.onlyShapes = shapes;
            s.setName = "shrink";
            s.trials = 2; // the failing trial's seed and one more, so a racy failure is not lost
            s.seed = seed;
            s.firstTrial = trial;
            auto r = send(s);
            if (!r)
                return r.error();
            return probeOutcomes(r.value(), shapes.size());
        };
        auto result = kf::shrink(task, start, kind, probe);
        if (!result)
            return result.error();
        RunSettings confirm;
        confirm.onlyShapes = {result->smallest};
        confirm.setName = "shrink";
        confirm.trials = 3;
        confirm.dumpDir = dump;
        auto report = send(confirm);
        if (report)
            report->shrink = result.value();
        return report;
    };
    return startJob(RunKind::Verify, task, candidateFile, RunSettings{},
                    QString("Shrink %1/%2 from %3").arg(qs(task.name), candidateFile, qs(start.describe())), job);
}

quint64 RunService::startJob(RunKind kind, const Task& task, const QString& candidateFile, const RunSettings& settings,
                             const QString& title, Job job)
{
    if (m_running)
        return 0;
    const quint64 id = m_nextId++;
    m_running = true;
    auto cancel = std::make_shared<CancelToken>();
    {
        std::lock_guard lock(m_mutex);
        m_cancel = cancel;
    }
    emit runStarted(id, title);
    post([this, id, kind, task, file = candidateFile.toStdString(), settings, cancel, job = std::move(job)] {
        runOnWorker(id, kind, task, file, settings, cancel, job);
    });
    return id;
}

void RunService::cancel()
{
    std::lock_guard lock(m_mutex);
    if (m_cancel)
        m_cancel->cancel();
}

void RunService::runOnWorker(quint64 id, RunKind kind, Task task, std::string candidateFile, RunSettings settings,
                             std::shared_ptr<CancelToken> cancel, Job job)
{
    QPointer<RunService> self(this);
    // Everything the worker learns goes to the UI thread as a queued call of one signal.
    auto toUi = [this, self](auto emitIt) {
        QMetaObject::invokeMethod(this, [self, emitIt = std::move(emitIt)] { if (self) emitIt(*self); }, Qt::QueuedConnection);
    };
    auto onEvent = [&](const protocol::Event& e) {
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
    auto finish = [this, toUi, id](bool ok, std::string sentence) {
        {
            std::lock_guard lock(m_mutex);
            m_cancel.reset();
        }
        toUi([id, ok, sentence = qs(sentence)](RunService& s) {
            s.m_running = false;
            emit s.runFinished(id, ok, sentence);
        });
    };
    auto fail = [&](const Error& e) {
        toUi([id, e](RunService& s) { emit s.failed(id, e); });
        finish(false, e.message());
    };

    setState(RunnerState::Busy, QStringLiteral("running on the GPU…"));
    auto outcome = job ? m_session->runJob(kind, task, candidateFile, job, onEvent, cancel.get())
                       : m_session->run(kind, task, candidateFile, settings, onEvent, cancel.get());
    if (!outcome) {
        if (m_session->hello().device)
            applyHello(m_session->hello());
        else
            applyStartError(outcome.error());
        return fail(outcome.error());
    }
    RunSession::Outcome& o = outcome.value();
    // The second baseline, still on this worker: compile and time the reference under
    // torch.compile beside the candidate (minutes the first time; Cancel kills the harness).
    bool harnessCancelled = false;
    if (kind == RunKind::Bench && settings.compileBaseline && !o.cancelled && !o.failure && o.report.bench) {
        if (const Candidate* c = task.findCandidate(candidateFile)) {
            toUi([id](RunService& s) { emit s.progress(id, 990, QStringLiteral("timing against torch.compile")); });
            cast::CompileBaselineOptions opts;
            opts.sampling = settings.bench;
            opts.stop = [cancel] { return cancel && cancel->cancelled(); };
            for (const QString& n : m_options.extraNvrtcOptions)
                opts.extraNvrtcOptions.push_back(n.toStdString());
            const std::string arch = o.report.header.candidate.arch;
            o.report.amend([&](nlohmann::json& j) {
                cast::addCompileBaseline(j, task, task.directory / "task.json", *c, arch, opts);
            });
            harnessCancelled = cancel && cancel->cancelled();
        }
    }
    const protocol::Header& h = o.report.header;
    if (!o.cancelled)
        toUi([id, r = o.report](RunService& s) { emit s.reportReady(id, r); });
    if (!o.failure) {
        const bool ok = h.verdict == (kind == RunKind::Verify ? "pass" : "ok");
        std::string summary = h.summary;
        if (o.report.shrink)
            summary = "smallest failing shape " + o.report.shrink->smallest.describe() + "; " + summary;
        applyHello(m_session->hello());
        if (harnessCancelled)   // the report (against LibTorch) stands; the comparison says it was cancelled
            return finish(false, "cancelled while timing torch.compile; the benchmark against LibTorch is kept");
        return finish(ok, summary.empty() ? h.verdict : summary);
    }
    if (o.cancelled) {
        // The supervisor killed the runner mid-run; start a fresh one now so the next run is warm.
        toUi([id, e = *o.failure](RunService& s) { emit s.failed(id, e); });
        finish(false, "cancelled; the runner was stopped and is restarting");
        setState(RunnerState::Starting, QStringLiteral("restarting the GPU runner…"));
        probeOnWorker();
        return;
    }
    if (!o.runnerRestarted) {
        finish(false, o.failure->why); // a compile error: the runner is fine
        applyHello(m_session->hello());
        return;
    }
    finish(false, o.failure->message());
    // Crash, watchdog timeout or sticky CUDA error: the supervisor put the runner down. Restart
    // it at once so the status bar shows the truth and the next run does not pay the start.
    toUi([](RunService& s) { ++s.m_restarts; });
    setState(RunnerState::Starting, QStringLiteral("restarting the GPU runner…"));
    probeOnWorker();
}

} // namespace kf::app
