#include "app/gui/window/RunController.h"
#include "engine/protocol/Verdict.h"

#include "app/gui/window/CandidateTab.h"
#include "app/gui/window/StatusBar.h"
#include "engine/repro/Repro.h"
#include "engine/task/Task.h"
#include "widgets/runs/RunPanel.h"

#include <QDir>

#include <filesystem>

namespace kf::app {

RunController::RunController(RunService::Options options, kf::ui::RunPanel* panel, StatusBar* status, QObject* parent)
    : QObject(parent)
    , m_service(std::make_unique<RunService>(std::move(options)))
    , m_panel(panel)
    , m_status(status)
{
    connect(m_service.get(), &RunService::stateChanged, this, &RunController::onState);
    connect(m_service.get(), &RunService::runStarted, this, &RunController::onRunStarted);
    connect(m_service.get(), &RunService::runQueued, this, [this](quint64, const QString& title, const QString& ahead) {
        if (m_status)
            m_status->showMessage(tr("%1 waits for the runner: %2 is on it").arg(title, ahead), 10000);
        emit runningChanged(true);
    });
    connect(m_service.get(), &RunService::progress, this, [this](quint64 id, int permille, const QString& stage) {
        if (id == m_shownId)
            m_panel->setProgress(permille, stage);
    });
    connect(m_service.get(), &RunService::launchChanged, this, [this](quint64 id, const QString& label) {
        if (id == m_shownId)
            m_panel->setLaunch(label);
    });
    connect(m_service.get(), &RunService::log, this, [this](quint64 id, kf::protocol::Event::Level level, const QString& text) {
        if (id == m_shownId)
            m_panel->appendLog(level, text);
    });
    connect(m_service.get(), &RunService::reportReady, this, &RunController::onReport);
    connect(m_service.get(), &RunService::runFinished, this, &RunController::onRunFinished);
    connect(m_panel, &kf::ui::RunPanel::cancelRequested, this, &RunController::cancel);
}

RunController::~RunController() = default;

void RunController::onRunStarted(quint64 id, const QString& title)
{
    m_shownId = id;
    m_shownGotReport = false;
    if (m_service->isSubmitted(id)) {
        // The Assistant's run on the same runner: shown while it runs, never taken as ours.
        m_panel->begin(title);
        return;
    }
    m_runId = id; // emitted from inside RunService::run() before it returns the id, or later when it was queued
    QString suffix;
    if (m_settings.rtol || m_settings.atol)
        suffix = tr(" · tolerance override (rtol %1, atol %2): not evidence for promotion")
                     .arg(m_settings.rtol ? QString::number(*m_settings.rtol) : tr("task's"),
                          m_settings.atol ? QString::number(*m_settings.atol) : tr("task's"));
    m_panel->begin(title + m_titleNote + suffix);
    emit runningChanged(true);
}

void RunController::onReport(quint64 id, const kf::protocol::RunReport& r)
{
    if (id == m_shownId && id != m_runId && r.kind() != kf::protocol::ReportKind::Profile) {
        m_shownGotReport = true;
        m_panel->addReport(r);
    }
    if (id != m_runId)
        return;
    m_shownGotReport = true;
    if (!r.header().dumpDir.empty())
        m_caseTasks.insert(QString::fromStdString(r.header().dumpDir), m_runTaskDir);
    // A profile has no shapes or trials for the results table: the Profile panel shows it,
    // the Runs panel keeps the run's progress and ending.
    if (r.kind() == kf::protocol::ReportKind::Profile) {
        emit profileReceived(m_runTaskDir, r);
        return;
    }
    m_panel->addReport(r);
    if (m_runSanitize && r.verify() && !r.verify()->sanitizer)
        // A runner from before compute-sanitizer ignores the request field it does not know.
        m_panel->appendLog(kf::protocol::Event::Level::Warning,
                           tr("compute-sanitizer did not run: this runner does not know the sanitize request "
                              "(build kforge-runner from this KernelForge)"));
    emit reportReceived(m_runTaskDir, r);
    if (r.kind() == kf::protocol::ReportKind::Correctness && !m_runCandidatePath.isEmpty())
        emit verified(m_runCandidatePath, m_runSource, r);
}

void RunController::onRunFinished(quint64 id, bool ok, const QString& sentence)
{
    // A run that produced a report ended in a verdict; one that did not ended in a failure
    // of the run itself (no GPU, runner crash or hang, cancel), shown as such.
    if (id == m_shownId) {
        if (m_shownGotReport)
            m_panel->finish(ok, sentence);
        else
            m_panel->fail(sentence);
    }
    if (id != m_runId)
        return;
    emit runningChanged(false);
    emit finished(ok, sentence);
}

bool RunController::showReports(const QString& title, const std::vector<kf::protocol::RunReport>& reports,
                                const QStringList& notes, const QString& sentence)
{
    if (m_service->isRunning())
        return false;
    m_shownId = 0; // a submitted run still on the runner no longer paints here
    m_panel->begin(title);
    bool ok = !reports.empty();
    for (const kf::protocol::RunReport& r : reports) {
        m_panel->addReport(r);
        ok = ok && r.header().passed();
    }
    for (const QString& n : notes)
        m_panel->appendLog(kf::protocol::Event::Level::Warning, n);
    if (!reports.empty())
        m_panel->setProgress(1000, sentence); // nothing is under way: the whole file is read
    if (reports.empty())
        m_panel->fail(sentence);
    else
        m_panel->finish(ok, sentence);
    return !reports.empty();
}

void RunController::refuse(const QString& title, const QString& sentence)
{
    m_shownId = 0; // a submitted run still on the runner no longer paints here
    m_panel->begin(title);
    m_panel->fail(sentence);
}

void RunController::probe() { m_service->probe(); }
bool RunController::isRunning() const { return m_service->isRunning(); }
void RunController::cancel() { m_service->cancel(); }

QString RunController::runTitle(kf::RunKind kind, bool sanitize)
{
    return kind == kf::RunKind::Bench     ? tr("Benchmark")
           : kind == kf::RunKind::Profile ? tr("Profile")
           : sanitize                     ? tr("Verify under compute-sanitizer")
                                          : tr("Verify");
}

bool RunController::start(kf::RunKind kind, CandidateTab* tab, bool sanitize)
{
    sanitize = sanitize && kind == kf::RunKind::Verify;
    const QString what = runTitle(kind, sanitize);
    if (m_service->isRunning())
        return false;
    if (!tab) {
        refuse(what, tr("Open a candidate kernel of a task first (double-click one in the Workspace)."));
        return false;
    }
    QString error;
    if (m_save && !m_save(tab->taskDir(), &error)) {
        refuse(what + " " + tab->fileName(), tr("Could not save before the run: %1").arg(error));
        return false;
    }
    // The run uses the task and candidate as saved: reports carry their hashes, and promotion
    // accepts only reports that match the files.
    auto task = kf::loadTask(tab->taskDir().toStdString());
    if (!task) {
        refuse(what + " " + tab->fileName(), QString::fromStdString(task.error().message()));
        return false;
    }
    if (!task->findCandidate(tab->fileName().toStdString())) {
        refuse(what + " " + tab->fileName(),
               tr("%1 is not a candidate of task %2: add it under \"candidates\" in task.json with its launch plan "
                  "(File ▸ New Candidate does this).")
                   .arg(tab->fileName(), QString::fromStdString(task->name)));
        return false;
    }
    m_titleNote.clear();
    const QString source = tab->text(); // as just saved: what the runner reads
    if (!launch(kind, std::move(task.value()), tab->fileName(), tab->taskDir(), sanitize))
        return false;
    m_runCandidatePath = tab->filePath();
    m_runSource = source;
    return true;
}

bool RunController::startTask(kf::RunKind kind, const kf::Task& task, const QString& candidateFile,
                              const QString& titleNote)
{
    if (m_service->isRunning())
        return false;
    m_titleNote = titleNote.isEmpty() ? QString() : " · " + titleNote;
    return launch(kind, task, candidateFile, QString::fromStdString(task.directory.string()));
}

quint64 RunController::startTune(const QString& taskDir, const QString& candidateFile, double budgetS)
{
    const QString what = tr("Tune %1").arg(candidateFile);
    if (m_service->isRunning())
        return 0;
    QString error;
    if (m_save && !m_save(taskDir, &error)) {
        refuse(what, tr("Could not save before the run: %1").arg(error));
        return 0;
    }
    auto task = kf::loadTask(taskDir.toStdString());
    if (!task) {
        refuse(what, QString::fromStdString(task.error().message()));
        return 0;
    }
    // The search verifies and times by the task's own rules (no tolerance override); the winner's
    // runs are F5's and F6's, so their reports are evidence for Promote.
    RunService::TuneRequest r;
    r.settings.budgetS = budgetS;
    r.settings.verify.launchTimeoutMs = m_settings.launchTimeoutMs;
    r.verify.trials = m_settings.trials;
    r.verify.launchTimeoutMs = m_settings.launchTimeoutMs;
    r.verify.heldOutCount = m_settings.heldOutShapes;
    r.verify.sanitizeIfAvailable = m_settings.sanitizeIfAvailable;
    r.bench.shapes = "benchmarks";
    r.bench.trials = m_settings.trials;
    r.bench.launchTimeoutMs = m_settings.launchTimeoutMs;
    r.bench.compileBaseline = true;
    m_titleNote.clear();
    setTaskRun(taskDir);
    m_runId = m_service->tune(*task, candidateFile, r);
    return m_runId;
}

bool RunController::launch(kf::RunKind kind, kf::Task task, const QString& candidateFile, const QString& taskDir,
                           bool sanitize)
{
    m_runCandidatePath.clear();
    m_runSource.clear();
    m_runSanitize = false;
    // The policy (tolerance override, held-out shapes, the profile's shape) is resolved by the
    // engine's RunSession, as for `kforge`; only the workbench's choices are filled in here.
    kf::RunSettings s;
    s.shapes = kind == kf::RunKind::Bench ? "benchmarks" : "tests";
    s.rtol = m_settings.rtol;
    s.atol = m_settings.atol;
    if (kind == kf::RunKind::Profile) {
        if (m_profileShape) {
            s.onlyShapes = {*m_profileShape};
            s.setName = "custom";
        } else if (!kf::defaultProfileShape(task)) {
            refuse(tr("Profile %1").arg(candidateFile),
                   tr("Task %1 has no shapes to profile: add some under \"shapes\" in task.json.").arg(QString::fromStdString(task.name)));
            return false;
        }
        s.profileBaseline = m_settings.profileBaseline;
    }
    s.trials = m_settings.trials;
    s.launchTimeoutMs = m_settings.launchTimeoutMs;
    s.compileBaseline = kind == kf::RunKind::Bench && m_settings.compileBaseline;
    if (kind == kf::RunKind::Verify) {
        // Shapes nobody listed, drawn with a secret seed, and compute-sanitizer where the runner's
        // host has it: the report then carries the held-out and sanitizer evidence promotion asks
        // for, so Verify + Benchmark is all a Promote needs.
        s.heldOutCount = m_settings.heldOutShapes;
        s.sanitizeIfAvailable = m_settings.sanitizeIfAvailable;
    }
    if (sanitize) {
        // The shapes the tools run on come from the task's test shapes (kforge verify --sanitize refuses the same).
        if (kf::sanitizeShapes(task).empty()) {
            refuse(tr("Verify under compute-sanitizer %1").arg(candidateFile),
                   tr("compute-sanitizer runs on the task's test shapes, and task %1 has none: add some under "
                      "\"shapes\" in task.json.")
                       .arg(QString::fromStdString(task.name)));
            return false;
        }
        s.sanitizeTools = kf::protocol::SanitizeSettings::allTools();
        QStringList tools;
        for (const std::string& t : s.sanitizeTools)
            tools << QString::fromStdString(t);
        m_titleNote += tr(" · under compute-sanitizer (%1)").arg(tools.join(QStringLiteral(", ")));
    }
    if (kind == kf::RunKind::Verify && m_saveTensors) {
        s.dumpDir = newDumpDir(task, candidateFile).toStdString();
        s.dumpMaxBytes = m_saveTensorsBytes;
    }
    m_runTaskDir = taskDir;
    m_runSanitize = sanitize;
    m_runId = m_service->run(kind, task, candidateFile, s);
    return m_runId != 0;
}

QString RunController::newDumpDir(const kf::Task& task, const QString& candidateFile) const
{
    // Old runs go first; the newest 20 stay for the inspector.
    kf::pruneRunDumpDirs(20, m_openCase.toStdString());
    return QString::fromStdString(kf::newRunDumpDir(task.name, candidateFile.toStdString()).string());
}

QString RunController::taskDirForCase(const QString& caseDir) const
{
    const QString dir = QDir::cleanPath(caseDir);
    for (auto it = m_caseTasks.begin(); it != m_caseTasks.end(); ++it)
        if (dir.startsWith(QDir::cleanPath(it.key()) + "/"))
            return it.value();
    return {};
}

std::optional<RunController::LoadedCase> RunController::loadCase(const QString& caseDir, const QString& what)
{
    if (m_service->isRunning())
        return std::nullopt;
    auto c = kf::readCase(caseDir.toStdString());
    QString taskDir = taskDirForCase(caseDir);
    QString error;
    if (!c)
        error = QString::fromStdString(c.error().message());
    else if (taskDir.isEmpty())
        error = tr("The task of this case is not known in this session; re-run the task (F5) and open the new case.");
    else if (m_save && !m_save(taskDir, &error))
        error = tr("Could not save before the run: %1").arg(error);
    std::optional<kf::Task> loaded;
    if (error.isEmpty()) {
        auto t = kf::loadTask(taskDir.toStdString());
        if (!t)
            error = QString::fromStdString(t.error().message());
        else
            loaded = std::move(t.value());
    }
    if (error.isEmpty() && !loaded->findCandidate(c->candidateFile))
        error = tr("Task %1 no longer has the candidate %2.").arg(QString::fromStdString(loaded->name),
                                                                 QString::fromStdString(c->candidateFile));
    if (!error.isEmpty()) {
        refuse(what, error);
        return std::nullopt;
    }
    return LoadedCase{std::move(c.value()), std::move(*loaded), taskDir};
}

void RunController::setTaskRun(const QString& taskDir)
{
    m_runTaskDir = taskDir;
    m_runCandidatePath.clear();
    m_runSource.clear();
    m_runSanitize = false;
}

bool RunController::rerunCase(const QString& caseDir)
{
    auto loaded = loadCase(caseDir, tr("Re-run case"));
    if (!loaded)
        return false;
    const auto& [kase, task, taskDir] = *loaded;
    kf::RunSettings s;
    s.onlyShapes = {kase.shape};
    s.setName = "repro";
    s.trials = 1;
    s.seed = kf::protocol::parseSeed(kase.seed);
    s.firstTrial = kase.trial;
    s.launchTimeoutMs = m_settings.launchTimeoutMs;
    s.inputsDir = (std::filesystem::path(caseDir.toStdString()) / "inputs").string();
    const QString file = QString::fromStdString(kase.candidateFile);
    s.dumpDir = newDumpDir(task, file).toStdString();
    m_titleNote = tr(" · re-run of %1 trial %2 on its saved inputs")
                      .arg(QString::fromStdString(kase.shape.describe()))
                      .arg(kase.trial);
    setTaskRun(taskDir);
    m_runId = m_service->run(kf::RunKind::Verify, task, file, s);
    return m_runId != 0;
}

bool RunController::shrinkCase(const QString& caseDir)
{
    auto loaded = loadCase(caseDir, tr("Shrink"));
    if (!loaded)
        return false;
    const auto& [kase, task, taskDir] = *loaded;
    const QString file = QString::fromStdString(kase.candidateFile);
    m_titleNote.clear();
    setTaskRun(taskDir);
    m_runId = m_service->shrink(task, file, kase.shape, QString::fromStdString(std::string(kf::failureKindName(kf::failureKindOfCase(kase)))),
                                kf::protocol::parseSeed(kase.seed).value_or(0), kase.trial, newDumpDir(task, file));
    return m_runId != 0;
}

void RunController::onState(RunService::RunnerState state, const QString& text)
{
    QString kind;
    switch (state) {
    case RunService::RunnerState::Ready: kind = "ok"; break;
    case RunService::RunnerState::NoGpu: kind = "warn"; break;
    case RunService::RunnerState::Unavailable: kind = "error"; break;
    default: kind = "busy"; break;
    }
    if (m_status)
        m_status->setRunner(text, kind, m_service->stateDetail());
}

} // namespace kf::app
