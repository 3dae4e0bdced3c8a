#include "app/gui/window/AgentController.h"

#include "app/gui/settings/Settings.h"
#include "engine/agent/CandidateAdd.h"
#include "engine/agent/Prompt.h"
#include "engine/core/Files.h"
#include "engine/task/Task.h"

#include <QApplication>
#include <QClipboard>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QProgressDialog>
#include <QtConcurrent/QtConcurrentRun>

namespace kf::app {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

struct PromptOutcome {
    bool ok = false;
    QString text, summary, error;
};

struct AddOutcome {
    bool ok = false;
    QString file, error;
    QStringList warnings;
};

} // namespace

AgentController::AgentController(Settings* settings, QWidget* window)
    : QObject(window), m_settings(settings), m_window(window)
{
}

AgentController::~AgentController() = default;

void AgentController::copyPrompt(const QString& taskDir)
{
    if (m_busy)
        return;
    m_busy = true;
    std::vector<std::filesystem::path> dirs;
    if (m_settings)
        for (const QString& d : m_settings->agentSkillDirs())
            dirs.emplace_back(d.toStdString());
    const QString arch = m_settings ? m_settings->defaultArchitecture() : QString();
    auto* watcher = new QFutureWatcher<PromptOutcome>(this);
    connect(watcher, &QFutureWatcher<PromptOutcome>::finished, this, [this, watcher] {
        const PromptOutcome o = watcher->result();
        watcher->deleteLater();
        m_busy = false;
        if (!o.ok) {
            emit failed(tr("Copy Agent Prompt"), o.error);
            return;
        }
        m_lastPrompt = o.text;
        QApplication::clipboard()->setText(o.text);
        emit promptCopied(o.summary);
    });
    watcher->setFuture(QtConcurrent::run([taskDir, dirs, arch]() -> PromptOutcome {
        PromptOutcome out;
        auto task = loadTask(taskDir.toStdString());
        if (!task) {
            out.error = qs(task.error().message());
            return out;
        }
        agent::PromptOptions options;
        options.skillDirs = dirs;
        options.taskPath = task->directory.string();
        // The workbench's target when the task lists it, else the task's first.
        for (const std::string& a : task->architectures)
            if (qs(a) == arch)
                options.arch = a;
        auto facts = agent::gatherPromptFacts(*task, options);
        if (!facts) {
            out.error = qs(facts.error().message());
            return out;
        }
        auto prompt = agent::renderPrompt(*task, *facts, options);
        if (!prompt) {
            out.error = qs(prompt.error().message());
            return out;
        }
        out.text = qs(prompt->markdown());
        QStringList skills;
        for (const agent::PromptSkill& s : prompt->skills)
            skills << qs(s.name);
        out.summary = tr("Agent prompt for %1 (%2) copied: %3 sections, %4 KB; skills: %5")
                          .arg(qs(task->name), qs(prompt->arch))
                          .arg(prompt->sections.size())
                          .arg((out.text.toUtf8().size() + 1023) / 1024)
                          .arg(skills.isEmpty() ? tr("none") : skills.join(QStringLiteral(", ")));
        for (const Error& e : facts->library.problems)
            out.summary += tr(" (skipped a skill: %1)").arg(qs(e.message()));
        out.ok = true;
        return out;
    }));
}

void AgentController::addCandidateInteractive(const QString& taskDir)
{
    const QString source = QFileDialog::getOpenFileName(m_window, tr("Add Candidate: the kernel"), taskDir,
                                                        tr("CUDA sources (*.cu *.cuh);;All files (*)"));
    if (source.isEmpty())
        return;
    QString plan;
    auto bytes = readFileBytes(source.toStdString());
    auto fence = bytes ? agent::fencedPlan(*bytes, source.toStdString()) : Result<std::optional<agent::FencedPlan>>(Error{});
    if (!fence || !fence->has_value()) {
        const QString guess = QFileInfo(source).absolutePath() + QLatin1Char('/') + QFileInfo(source).completeBaseName()
                              + QStringLiteral(".plan.json");
        plan = QFileDialog::getOpenFileName(m_window, tr("Add Candidate: its launch plan (no ```json fence in the file)"),
                                            QFileInfo::exists(guess) ? guess : QFileInfo(source).absolutePath(),
                                            tr("Launch plans (*.json);;All files (*)"));
        if (plan.isEmpty())
            return;
    }
    addCandidate(taskDir, source, plan);
}

void AgentController::addCandidate(const QString& taskDir, const QString& source, const QString& planFile)
{
    if (m_busy)
        return;
    m_busy = true;
    m_cancel = std::make_shared<std::atomic_bool>(false);
    if (m_window) {
        m_progress = new QProgressDialog(tr("Checking and compiling %1…").arg(QFileInfo(source).fileName()), tr("Cancel"), 0,
                                         0, m_window);
        m_progress->setWindowTitle(tr("Add Candidate"));
        m_progress->setMinimumDuration(300);
        auto cancel = m_cancel;
        connect(m_progress, &QProgressDialog::canceled, this, [cancel] { cancel->store(true); });
    }
    agent::AddCandidateRequest r;
    r.taskDir = taskDir.toStdString();
    r.source = source.toStdString();
    r.planFile = planFile.toStdString();
    auto cancel = m_cancel;
    r.cancelled = [cancel] { return cancel->load(); };
    auto* watcher = new QFutureWatcher<AddOutcome>(this);
    connect(watcher, &QFutureWatcher<AddOutcome>::finished, this, [this, watcher, taskDir] {
        const AddOutcome o = watcher->result();
        watcher->deleteLater();
        if (m_progress)
            m_progress->deleteLater();
        m_busy = false;
        if (!o.ok)
            emit failed(tr("Add Candidate"), o.error);
        else
            emit candidateAdded(taskDir, o.file, o.warnings);
    });
    watcher->setFuture(QtConcurrent::run([r]() -> AddOutcome {
        AddOutcome out;
        auto added = agent::addCandidate(r);
        if (!added) {
            out.error = qs(added.error().message());
            return out;
        }
        if (!added->added) {
            QStringList lines;
            for (const Diagnostic& d : added->diagnostics)
                if (d.severity == Diagnostic::Severity::Error)
                    lines << qs(formatDiagnostic(d));
            out.error = tr("%1 does not compile; nothing was added.\n\n%2")
                            .arg(qs(r.source.filename().string()), lines.mid(0, 8).join(QLatin1Char('\n')));
            return out;
        }
        out.ok = true;
        out.file = qs(added->file.string());
        for (const ScanFinding& f : added->findings)
            out.warnings << tr("line %1: [%2] %3").arg(f.line).arg(qs(f.rule), qs(f.message));
        for (const std::string& n : added->notes)
            out.warnings << qs(n);
        return out;
    }));
}

} // namespace kf::app
