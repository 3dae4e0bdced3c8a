// Run ▸ Tune on RunService's worker (RunService.h, tune): the tuner's search with this
// service's pipeline as its RunFn, so every point's verify and bench waits its turn on the one
// runner (docs/conventions.md, "One owner per expensive resource"); then the winner written
// back and its full verify and bench, as `kforge tune` does (app/cli/TuneCommand.cpp).
#include "app/gui/services/RunService.h"

#include "engine/protocol/Report.h"

#include <QPointer>

#include <algorithm>

namespace kf::app {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

std::string ms(const std::optional<double>& v) { return v ? protocol::formatNumber(*v, 4) + " ms" : std::string("no time"); }

/// The winner's description in task.json: where it came from and the figure it was chosen on.
/// The Runs panel's bar: the budget's share spent (the search ends when it is, or sooner).
int permilleOf(const tune::Progress& p, double budgetS)
{
    return budgetS > 0 ? std::clamp(int(1000 * p.elapsedS / budgetS), 0, 999) : 0;
}

} // namespace

quint64 RunService::tune(const Task& task, const QString& candidateFile, const TuneRequest& request)
{
    return startWork(QStringLiteral("Tune %1/%2").arg(qs(task.name), candidateFile),
                     [this, task, file = candidateFile.toStdString(), request](quint64 id, const std::shared_ptr<CancelToken>& cancel) {
                         tuneOnWorker(id, task, file, request, cancel);
                     });
}

void RunService::tuneOnWorker(quint64 id, const Task& task, const std::string& file, TuneRequest request,
                              const std::shared_ptr<CancelToken>& cancel)
{
    ensureSession();
    setState(RunnerState::Busy, QStringLiteral("%1 · tuning on the GPU…").arg(m_sessionEndpoint));
    // A runner without a GPU is refused here, with the sentence F5 would get (RunSession::start).
    if (auto hello = m_session->start(); !hello)
        return endAfterError(id, hello.error());
    if (request.settings.cacheDir.empty() && !m_sessionOptions.cacheDir.isEmpty())
        request.settings.cacheDir = m_sessionOptions.cacheDir.toStdString();
    // Each point's runs show their launches and log lines; the bar is the search's, not theirs.
    const RunPipeline::EventFn events = [forward = forwardEvents(id)](const protocol::Event& e) {
        if (e.kind != protocol::Event::Kind::Progress)
            forward(e);
    };
    const tune::RunFn run = [this, &events](const Task& t, const RunPlan& plan, const CancelToken* c) {
        return m_session->run(t, plan, events, c);
    };
    const double budgetS = request.settings.budgetS;
    const tune::ProgressFn progress = [this, id, budgetS](const tune::Progress& p) {
        TuneStep step{qs(p.stage), p.done, p.total, p.elapsedS, p.point ? std::optional(*p.point) : std::nullopt};
        const QString stage = QStringLiteral("tune: %1 %2/%3%4")
                                  .arg(step.stage)
                                  .arg(p.done)
                                  .arg(p.total)
                                  .arg(p.point ? " · " + qs(p.point->point.label()) : QString());
        toUi([id, step = std::move(step), stage, permille = permilleOf(p, budgetS)](RunService& s) {
            emit s.progress(id, permille, stage);
            emit s.tuneProgress(id, step);
        });
    };
    auto outcome = tune::search(task, file, m_session->session().arch(), request.settings, run, progress, cancel.get());
    if (!outcome)
        return endAfterError(id, outcome.error());
    const tune::PointResult* winner = outcome->best();
    std::string written;
    std::optional<Error> writeError;
    if (winner && !outcome->cancelled && request.writeBack) {
        if (auto w = tune::writeBack(task, file, winner->point, tune::winnerDescription(*outcome, *winner, "Run ▸ Tune")))
            written = w->filename().string();
        else
            writeError = w.error();
    }
    toUi([id, o = *outcome, w = qs(written)](RunService& s) { emit s.tuneFinished(id, o, w); });
    if (outcome->cancelled) {
        finishRun(id, false, "tune cancelled; the points it reached are in the table");
        return probeOnWorker();   // a cancel mid-run put the runner down: a fresh one for the next run
    }
    if (!winner) {
        applyHello(m_session->session().hello());
        return finishRun(id, false, "no point passed verify and was timed; the table says why each stopped");
    }
    if (writeError)
        return endAfterError(id, *writeError);
    const std::string chosen = "tuned " + winner->point.label() + ": " + ms(winner->rankMs()) + " geomean";
    if (written.empty()) {
        applyHello(m_session->session().hello());
        return finishRun(id, true, chosen);
    }
    bool ok = true;
    if (!runEvidence(id, task.directory, written, request, cancel, ok))
        return;
    applyHello(m_session->session().hello());
    finishRun(id, ok, chosen + ", written as " + written + (ok ? "; its verify and bench passed" : "; its verify or bench did not pass"));
}

bool RunService::runEvidence(quint64 id, const std::filesystem::path& dir, const std::string& file, const TuneRequest& request,
                             const std::shared_ptr<CancelToken>& cancel, bool& ok)
{
    // The task as written back: the reports carry its hashes, so they are evidence for the new candidate.
    auto task = loadTask(dir);
    if (!task) {
        endAfterError(id, task.error());
        return false;
    }
    for (const RunKind kind : {RunKind::Verify, RunKind::Bench}) {
        const Plan plan{kind, file, kind == RunKind::Verify ? request.verify : request.bench, std::nullopt, {}};
        auto outcome = m_session->run(*task, plan, forwardEvents(id), cancel.get());
        if (!outcome) {
            endAfterError(id, outcome.error());
            return false;
        }
        if (!outcome->cancelled)
            toUi([id, r = outcome->report](RunService& s) { emit s.reportReady(id, r); });
        if (outcome->failure || outcome->comparisonCancelled) {
            endAfterOutcome(id, *outcome);
            return false;
        }
        ok = ok && outcome->passed();
    }
    return true;
}

} // namespace kf::app
