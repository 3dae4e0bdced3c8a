#include "app/gui/services/RunService.h"

#include "engine/repro/ShrinkProbe.h"
#include "engine/verify/Shrink.h"

#include <QMetaObject>
#include <QStringList>
#include <QPointer>

#include <tuple>

namespace kf::app {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

bool sameEndpoint(const std::optional<Endpoint>& a, const std::optional<Endpoint>& b)
{
    if (!a || !b)
        return !a && !b;
    auto fields = [](const Endpoint& e) {
        return std::tie(e.name, e.kind, e.runner, e.env, e.host, e.user, e.port, e.identityFile, e.sshOptions, e.srunArgs,
                        e.command, e.sharedFs, e.startTimeoutS, e.idleTimeoutS, e.heartbeatTimeoutS, e.launchLatencyMs,
                        e.sanitizer, e.pool);
    };
    return fields(*a) == fields(*b);
}

QString nameOf(const std::optional<Endpoint>& e) { return e ? qs(e->name) : QStringLiteral("local"); }

} // namespace

bool RunService::Options::operator==(const Options& o) const
{
    return runnerPath == o.runnerPath && extraEnv == o.extraEnv && cacheDir == o.cacheDir &&
           extraNvrtcOptions == o.extraNvrtcOptions && sameEndpoint(endpoint, o.endpoint);
}

RunService::RunService(Options options, QObject* parent)
    : QObject(parent)
    , m_options(std::move(options))
{
    qRegisterMetaType<kf::protocol::RunReport>();
    qRegisterMetaType<kf::protocol::Event::Level>();
    qRegisterMetaType<kf::Error>();
    qRegisterMetaType<kf::tune::Outcome>();
    qRegisterMetaType<kf::app::TuneStep>();
    if (m_options.runnerPath.isEmpty()) // one search rule for the CLI and the workbench
        m_options.runnerPath = QString::fromStdString(RunnerSupervisor::defaultRunnerPath());
    m_pendingOptions = m_options;
    m_stateText = QStringLiteral("%1 · runner not started").arg(endpointName());
    m_worker = std::thread([this] { workerLoop(); });
}

QString RunService::endpointName() const { return nameOf(m_options.endpoint); }

bool RunService::setOptions(Options options)
{
    if (options.runnerPath.isEmpty())
        options.runnerPath = QString::fromStdString(RunnerSupervisor::defaultRunnerPath());
    if (options == m_options)
        return false;
    m_options = options;
    {
        std::lock_guard lock(m_mutex);
        m_pendingOptions = std::move(options);
        ++m_optionsGeneration;
    }
    m_hello.reset();
    m_arch.clear();
    // The old runner stays up until the next job stops it; say now which one comes next.
    if (!m_running) {
        m_state = RunnerState::NotStarted;
        m_stateText = QStringLiteral("%1 · runner not started (the next run starts it)").arg(endpointName());
        m_stateDetail = m_options.endpoint ? qs(m_options.endpoint->describe()) : QStringLiteral("the local kforge-runner");
        emit stateChanged(m_state, m_stateText);
    }
    return true;
}

void RunService::ensureSession()
{
    Options next;
    quint64 generation = 0;
    {
        std::lock_guard lock(m_mutex);
        if (m_session && m_optionsGeneration == m_sessionGeneration)
            return;
        next = m_pendingOptions;
        generation = m_optionsGeneration;
    }
    m_session.reset(); // stops the old options' runner from the thread that spawned it
    RunPipeline::Options o;
    o.runnerPath = next.runnerPath.toStdString();
    for (const QString& e : next.extraEnv)
        o.extraEnv.push_back(e.toStdString());
    if (!next.cacheDir.isEmpty())
        o.cacheDir = next.cacheDir.toStdString();
    o.endpoint = next.endpoint;
    const QString name = nameOf(next.endpoint);
    if (next.endpoint && next.endpoint->remote())
        // What a slow start waits for ("srun: job 42 queued and waiting for resources").
        o.onStartLog = [this, name](const std::string& line) {
            setState(RunnerState::Starting, QStringLiteral("%1: %2").arg(name, qs(line)));
        };
    m_session = std::make_unique<RunPipeline>(o);
    m_sessionOptions = std::move(next);
    m_sessionEndpoint = name;
    m_sessionGeneration = generation;
}

RunService::~RunService()
{
    std::vector<std::weak_ptr<Waiter>> waiters;
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
        m_jobs.clear();
        if (m_cancel)
            m_cancel->cancel();
        waiters.swap(m_waiters);
    }
    m_wake.notify_all();
    // Threads waiting in runAndWait get their answer now, queued or in flight: never a hang.
    for (const std::weak_ptr<Waiter>& w : waiters)
        if (auto waiter = w.lock()) {
            waiter->cancel.cancel();
            waiter->settle(Error::failed("run a kernel", "the workbench is closing"));
        }
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
    // The tooltip: where the runner is and what it found, beyond what the status bar has room for.
    QStringList detail;
    detail << (m_sessionOptions.endpoint ? QStringLiteral("Endpoint: %1").arg(qs(m_sessionOptions.endpoint->describe()))
                                         : QStringLiteral("Endpoint: local (the kforge-runner on this machine)"));
    if (!hello.host.empty())
        detail << QStringLiteral("Host: %1").arg(qs(hello.host));
    QPointer<RunService> self(this);
    QMetaObject::invokeMethod(this, [self, hello] { if (self) self->m_hello = hello; }, Qt::QueuedConnection);
    if (!hello.device) {
        detail << qs(hello.deviceError.empty() ? "the runner found no CUDA device" : hello.deviceError);
        setState(RunnerState::NoGpu, QStringLiteral("%1 · no GPU: compile-only mode").arg(m_sessionEndpoint), detail.join(QLatin1Char('\n')));
        return;
    }
    const protocol::DeviceSummary& d = *hello.device;
    const QString arch = qs(hello.arch());
    QStringList parts{m_sessionEndpoint, qs(d.gpu)};
    if (!d.uuid.empty())
        parts << qs(d.uuid).left(12);   // "GPU-1a2b3c4d": enough to tell two GPUs apart
    if (!arch.isEmpty())
        parts << arch;
    detail << QStringLiteral("GPU: %1%2").arg(qs(d.gpu), d.uuid.empty() ? QString() : QStringLiteral(" (%1)").arg(qs(d.uuid)));
    if (!d.pciBusId.empty())
        detail << QStringLiteral("PCI bus: %1").arg(qs(d.pciBusId));
    if (!hello.visibleDevices.empty())
        detail << QStringLiteral("CUDA_VISIBLE_DEVICES: %1").arg(qs(hello.visibleDevices));
    if (const std::string& driver = d.driver.empty() ? hello.driver : d.driver; !driver.empty())
        detail << QStringLiteral("Driver: %1").arg(qs(driver));
    detail << (hello.sanitizer ? QStringLiteral("compute-sanitizer %1").arg(qs(hello.sanitizer->version))
                               : QStringLiteral("compute-sanitizer: not found on that host"));
    if (!hello.runnerBuild.empty())
        detail << QStringLiteral("Runner: %1").arg(qs(hello.runnerBuild));
    QMetaObject::invokeMethod(this, [self, arch] { if (self) self->m_arch = arch; }, Qt::QueuedConnection);
    setState(RunnerState::Ready, parts.join(QStringLiteral(" · ")), detail.join(QLatin1Char('\n')));
}

void RunService::applyStartError(const Error& error)
{
    // No GPU is a state of the machine, not a failure of the runner: compile-only mode.
    if (const protocol::Hello& h = m_session->session().hello(); m_session->session().supervisor().pid() > 0 && !h.device)
        applyHello(h);
    else
        setState(RunnerState::Unavailable, QStringLiteral("%1: GPU runner unavailable").arg(m_sessionEndpoint), qs(error.message()));
}

void RunService::applyLost(const Error& error)
{
    const QString what = error.kind == kConnectionLost ? QStringLiteral("connection lost") : QStringLiteral("runner lost");
    const QString sentence = qs(error.why.empty() ? error.message() : error.why);
    setState(RunnerState::Unavailable, QStringLiteral("%1: %2 — %3").arg(m_sessionEndpoint, what, sentence), qs(error.message()));
}

void RunService::probe()
{
    if (m_state == RunnerState::NotStarted || m_state == RunnerState::Unavailable)
        m_state = RunnerState::Starting;
    if (m_state == RunnerState::Starting)
        m_stateText = QStringLiteral("%1 · starting the GPU runner…").arg(endpointName());
    emit stateChanged(m_state, m_stateText);
    post([this] { probeOnWorker(); });
}

void RunService::probeOnWorker()
{
    ensureSession();
    auto hello = m_session->start();
    if (hello)
        applyHello(*hello);
    else
        applyStartError(hello.error());
}

quint64 RunService::run(RunKind kind, const Task& task, const QString& candidateFile, const RunSettings& settings)
{
    Plan plan{kind, candidateFile.toStdString(), settings, std::nullopt, {}};
    // The workbench's extra NVRTC options (Settings) make exploration builds: part of the task
    // hash, so the report says its build differed from task.json.
    for (const QString& n : m_options.extraNvrtcOptions)
        plan.settings.extraNvrtcOptions.push_back(n.toStdString());
    return startJob(task, std::move(plan),
                    QString("%1 %2/%3").arg(kind == RunKind::Bench     ? "Benchmark"
                                           : kind == RunKind::Profile ? "Profile"
                                                                      : "Verify",
                                           qs(task.name), candidateFile));
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
        if (!report)
            return report;
        return report->withShrink(result.value());
    };
    return startJob(task, Plan{RunKind::Verify, candidateFile.toStdString(), RunSettings{}, std::nullopt, job},
                    QString("Shrink %1/%2 from %3").arg(qs(task.name), candidateFile, qs(start.describe())));
}

quint64 RunService::startJob(const Task& task, Plan plan, const QString& title)
{
    return startWork(title, [this, task, plan = std::move(plan)](quint64 id, const std::shared_ptr<CancelToken>& cancel) {
        runOnWorker(id, task, plan, cancel);
    });
}

quint64 RunService::startWork(const QString& title, std::function<void(quint64, const std::shared_ptr<CancelToken>&)> work)
{
    if (m_running)
        return 0;
    const quint64 id = m_nextId++;
    m_running = true;
    auto cancel = std::make_shared<CancelToken>();
    QString ahead;
    {
        // Checked and queued under one lock: no submitted run slips in between.
        std::lock_guard lock(m_mutex);
        m_cancel = cancel;
        if (!m_submittedIds.empty())
            ahead = m_submittedTitle;
        m_jobs.push_back([this, id, work = std::move(work), cancel, title, queued = !ahead.isEmpty()] {
            if (queued)
                toUi([id, title](RunService& s) { emit s.runStarted(id, title); });
            work(id, cancel);
        });
    }
    m_wake.notify_one();
    // Behind a submitted run (the Assistant's), this run starts, in the signals too, when the
    // worker reaches it: the Runs panel never shows two runs at once.
    if (ahead.isEmpty())
        emit runStarted(id, title);
    else
        emit runQueued(id, title, ahead);
    return id;
}

void RunService::cancel()
{
    std::lock_guard lock(m_mutex);
    if (m_cancel)
        m_cancel->cancel();
    if (m_submittedInFlight)
        m_submittedInFlight->cancel.cancel();
}

void RunService::finishRun(quint64 id, bool ok, const std::string& sentence)
{
    {
        std::lock_guard lock(m_mutex);
        m_cancel.reset();
    }
    QPointer<RunService> self(this);
    QMetaObject::invokeMethod(this, [self, id, ok, sentence = qs(sentence)] {
        if (!self)
            return;
        self->m_running = false;
        emit self->runFinished(id, ok, sentence);
    }, Qt::QueuedConnection);
}

void RunService::runOnWorker(quint64 id, const Task& task, const Plan& plan, std::shared_ptr<CancelToken> cancel)
{
    ensureSession();
    // An endpoint with shared_fs false gets the task's files with each request (RunSession
    // stages them), as from the command line.
    setState(RunnerState::Busy, QStringLiteral("%1 · running on the GPU…").arg(m_sessionEndpoint));
    auto outcome = m_session->run(task, plan, forwardEvents(id), cancel.get());
    if (!outcome)
        return endAfterError(id, outcome.error());
    const RunOutcome& o = outcome.value();
    if (!o.cancelled) {
        QPointer<RunService> self(this);
        QMetaObject::invokeMethod(this, [self, id, r = o.report] { if (self) emit self->reportReady(id, r); }, Qt::QueuedConnection);
    }
    endAfterOutcome(id, o);
}

void RunService::endAfterError(quint64 id, const Error& error)
{
    if (error.kind == kConnectionLost || error.kind == kRunnerLost)
        applyLost(error);
    else if (m_session->session().hello().device)
        applyHello(m_session->session().hello());
    else
        applyStartError(error);
    QPointer<RunService> self(this);
    QMetaObject::invokeMethod(this, [self, id, error] { if (self) emit self->failed(id, error); }, Qt::QueuedConnection);
    finishRun(id, false, error.message());
}

void RunService::endAfterOutcome(quint64 id, const RunOutcome& o)
{
    const protocol::Header& h = o.report.header();
    if (!o.failure) {
        std::string summary = h.summary;
        if (o.report.shrink())
            summary = "smallest failing shape " + o.report.shrink()->smallest.describe() + "; " + summary;
        applyHello(m_session->session().hello());
        if (o.comparisonCancelled)   // the report (against LibTorch) stands; the comparison says it was cancelled
            return finishRun(id, false, "cancelled while timing torch.compile; the benchmark against LibTorch is kept");
        return finishRun(id, o.passed(), summary.empty() ? protocol::verdictName(h.verdict) : summary);
    }
    QPointer<RunService> self(this);
    if (o.cancelled) {
        // The supervisor killed the runner mid-run; start a fresh one now so the next run is warm.
        QMetaObject::invokeMethod(this, [self, id, e = *o.failure] { if (self) emit self->failed(id, e); }, Qt::QueuedConnection);
        finishRun(id, false, "cancelled; the runner was stopped and is restarting");
        setState(RunnerState::Starting, QStringLiteral("%1 · restarting the GPU runner…").arg(m_sessionEndpoint));
        return probeOnWorker();
    }
    if (o.failure->kind == kConnectionLost || o.failure->kind == kRunnerLost) {
        // Not the candidate's fault, and starting again now may hang on the same network: the
        // status bar says what happened, and the next run starts a runner there again.
        finishRun(id, false, o.failure->message());
        return applyLost(*o.failure);
    }
    if (!o.runnerRestarted) {
        finishRun(id, false, o.failure->why); // a compile error: the runner is fine
        return applyHello(m_session->session().hello());
    }
    finishRun(id, false, o.failure->message());
    // Crash, watchdog timeout or sticky CUDA error: the supervisor put the runner down. Restart
    // it at once so the status bar shows the truth and the next run does not pay the start.
    QMetaObject::invokeMethod(this, [self] { if (self) ++self->m_restarts; }, Qt::QueuedConnection);
    setState(RunnerState::Starting, QStringLiteral("%1 · restarting the GPU runner…").arg(m_sessionEndpoint));
    probeOnWorker();
}

} // namespace kf::app
