#include "app/gui/services/RunService.h"

#include "engine/compile/CompileCache.h"
#include "engine/compile/Compiler.h"
#include "engine/compile/TaskCompile.h"
#include "engine/core/Clock.h"
#include "engine/core/ReportFields.h"
#include "engine/runner/Supervisor.h"
#include "engine/verify/Shrink.h"

#include <QMetaObject>
#include <QPointer>

#include <chrono>

namespace kf::app {

using nlohmann::json;

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

std::string stringAt(const json& o, const char* key)
{
    if (!o.is_object())
        return {};
    auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// "N=257" from a shrink block's "smallest" values.
std::string shapeText(const json& shrink)
{
    std::string out;
    const json& v = report::field(shrink, "smallest");
    if (v.is_object())
        for (auto it = v.begin(); it != v.end(); ++it)
            out += (out.empty() ? "" : " ") + it.key() + "=" + it.value().dump();
    return out;
}

} // namespace

RunService::RunService(Options options, QObject* parent)
    : QObject(parent)
    , m_options(std::move(options))
{
    qRegisterMetaType<nlohmann::json>("nlohmann::json");
    if (m_options.runnerPath.isEmpty()) // one search rule for the CLI and the workbench
        m_options.runnerPath = QString::fromStdString(RunnerSupervisor::defaultRunnerPath());
    m_cache = std::make_unique<CompileCache>(m_options.cacheDir.isEmpty() ? CompileCache::defaultDirectory()
                                                                          : std::filesystem::path(m_options.cacheDir.toStdString()));
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
    RunnerSupervisor::Options o;
    o.runnerPath = m_options.runnerPath.toStdString();
    for (const QString& e : m_options.extraEnv)
        o.extraEnv.push_back(e.toStdString());
    m_supervisor = std::make_unique<RunnerSupervisor>(o);
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
    m_supervisor.reset(); // stops the runner from the thread that spawned it
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

void RunService::applyHello(const json& hello)
{
    m_hello = hello;
    const json device = hello.is_object() && hello.contains("device") ? hello["device"] : json();
    if (!device.is_object()) {
        const std::string why = stringAt(hello, "device_error");
        setState(RunnerState::NoGpu, QStringLiteral("no GPU: compile-only mode"),
                 qs(why.empty() ? "the runner found no CUDA device" : why));
        return;
    }
    const QString arch = qs(archFromHello(hello));
    QString text = qs(stringAt(device, "gpu"));
    if (!arch.isEmpty())
        text += " · " + arch;
    const json versions = hello.contains("versions") ? hello["versions"] : json();
    if (std::string driver = stringAt(versions, "driver"); !driver.empty())
        text += " · driver " + qs(driver);
    QPointer<RunService> self(this);
    QMetaObject::invokeMethod(this, [self, arch] { if (self) self->m_arch = arch; }, Qt::QueuedConnection);
    setState(RunnerState::Ready, text + " · runner ready");
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
    auto hello = m_supervisor->hello();
    if (hello)
        applyHello(*hello);
    else
        setState(RunnerState::Unavailable, QStringLiteral("GPU runner unavailable"), qs(hello.error().message()));
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
    Job job = [task, start, kind, seed, trial, dump = dumpDir.toStdString()](const Send& send) -> Result<json> {
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
            report.value()["shrink"] = toJson(result.value());
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
    auto event = [this, self, id](json e) {
        QMetaObject::invokeMethod(this, [self, id, e = std::move(e)] { if (self) emit self->runEvent(id, e); },
                                  Qt::QueuedConnection);
    };
    auto report = [this, self, id](json r) {
        QMetaObject::invokeMethod(this, [self, id, r = std::move(r)] { if (self) emit self->runReport(id, r); },
                                  Qt::QueuedConnection);
    };
    auto finish = [this, self, id](bool ok, std::string sentence) {
        {
            std::lock_guard lock(m_mutex);
            m_cancel.reset();
        }
        QMetaObject::invokeMethod(this, [self, id, ok, sentence = qs(sentence)] {
            if (!self)
                return;
            self->m_running = false;
            emit self->runFinished(id, ok, sentence);
        }, Qt::QueuedConnection);
    };
    const auto started = std::chrono::steady_clock::now();
    const std::string startedAt = utcNow();

    event({{"type", "progress"}, {"permille", 0}, {"stage", "starting the GPU runner"}});
    auto hello = m_supervisor->hello();
    if (!hello) {
        setState(RunnerState::Unavailable, QStringLiteral("GPU runner unavailable"), qs(hello.error().message()));
        return finish(false, hello.error().message());
    }
    applyHello(*hello);
    const std::string arch = archFromHello(*hello);
    if (arch.empty()) {
        const std::string why = stringAt(*hello, "device_error");
        return finish(false, "no GPU: verify, benchmark and profile need a CUDA device (" +
                                 (why.empty() ? std::string("the runner found none") : why) +
                                 "); compiling and the static analysis work without one");
    }
    auto nvrtc = nvrtcVersion();
    if (!nvrtc)
        return finish(false, nvrtc.error().message());
    const Candidate* candidate = task.findCandidate(candidateFile);
    if (!candidate)
        return finish(false, "the task has no candidate " + candidateFile + "; add it under \"candidates\" in task.json");
    // Extra NVRTC options from Settings become part of the task as sent, so the report's task
    // hash says the build differed from task.json: such a run is exploration, not evidence.
    for (const QString& o : m_options.extraNvrtcOptions)
        task.compile.extraOptions.push_back(o.toStdString());
    auto req = compileRequestFor(task, *candidate, arch);
    if (!req)
        return finish(false, req.error().message());
    req->wantSass = false;

    setState(RunnerState::Busy, QStringLiteral("running on the GPU…"));
    event({{"type", "progress"}, {"permille", 0}, {"stage", "compiling for " + arch}});
    auto built = compile(*req, m_cache.get(), cancel.get());
    const TaskPayload payload = taskPayload(task);
    if (!built) {
        applyHello(*hello);
        return finish(false, cancel->cancelled() ? std::string("cancelled") : built.error().message());
    }
    const CompileResult& r = built.value();
    const json header = candidateHeader(*candidate, *req, r);
    if (!r.success || r.cubin.empty()) {
        Error e{"compile " + candidateFile + " for " + arch,
                r.success ? "NVRTC produced no cubin for " + arch
                          : "the candidate does not compile: " + std::to_string(r.errorCount()) + " error(s)",
                r.success ? "" : "fix the errors shown in the editor and the Problems panel", req->fileName, {}};
        report(errorReport(kind, task, payload.hash, header, *hello, e, startedAt, msSince(started)));
        applyHello(*hello);
        return finish(false, e.why);
    }
    const Send send = [&](const RunSettings& s) {
        json request = buildRunRequest(kind, payload, *candidate, *req, r, nvrtc.value(), s);
        return m_supervisor->request(std::move(request), [&](const json& m) { event(m); }, cancel.get());
    };
    auto result = job ? job(send) : send(settings);
    if (result) {
        const std::string verdict = stringAt(*result, "verdict");
        const bool ok = verdict == (kind == RunKind::Verify ? "pass" : "ok");
        std::string summary = stringAt(*result, "summary");
        if (const json& sh = report::field(*result, "shrink"); sh.is_object())
            summary = "smallest failing shape " + shapeText(sh) + "; " + summary;
        report(std::move(result.value()));
        applyHello(*hello);
        return finish(ok, summary.empty() ? verdict : summary);
    }
    if (cancel->cancelled()) {
        // The supervisor killed the runner mid-run; start a fresh one now so the next run is warm.
        finish(false, "cancelled; the runner was stopped and is restarting");
        setState(RunnerState::Starting, QStringLiteral("restarting the GPU runner…"));
        probeOnWorker();
        return;
    }
    report(errorReport(kind, task, payload.hash, header, *hello, result.error(), startedAt, msSince(started)));
    finish(false, result.error().message());
    // Crash, watchdog timeout or sticky CUDA error: the supervisor put the runner down. Restart
    // it at once so the status bar shows the truth and the next run does not pay the start.
    QMetaObject::invokeMethod(this, [self] { if (self) ++self->m_restarts; }, Qt::QueuedConnection);
    setState(RunnerState::Starting, QStringLiteral("restarting the GPU runner…"));
    probeOnWorker();
}

} // namespace kf::app
