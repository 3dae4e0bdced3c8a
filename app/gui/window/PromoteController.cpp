#include "app/gui/window/PromoteController.h"

#include "engine/core/Files.h"
#include "engine/core/Hash.h"
#include "engine/core/JsonReader.h"
#include "engine/registry/Registry.h"
#include "engine/task/Task.h"

#include <QDir>
#include <QMessageBox>
#include <QPushButton>
#include <QSysInfo>
#include <QtConcurrent/QtConcurrentRun>

namespace kf::app {

using nlohmann::json;

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

QString key(const QString& taskDir, const QString& file) { return QDir::cleanPath(taskDir) + '/' + file; }

using Report = std::optional<kf::protocol::RunReport>;

kf::PromotionInput inputFor(const kf::Task& task, const QString& candidate, const Report& correctness, const Report& performance)
{
    kf::PromotionInput in;
    in.task = task;
    in.candidateFile = candidate.toStdString();
    in.correctness = correctness;
    in.performance = performance;
    in.promotedBy = (qEnvironmentVariable("USER", "unknown") + '@' + QSysInfo::machineHostName()).toStdString();
    return in;
}

} // namespace

PromoteController::PromoteController(QWidget* dialogParent, QObject* parent)
    : QObject(parent)
    , m_dialogParent(dialogParent)
{
    m_confirm = [this](const QString& title, const QString& html) {
        QMessageBox box(QMessageBox::Question, title, html, QMessageBox::Cancel, m_dialogParent);
        box.setTextFormat(Qt::RichText);
        QPushButton* go = box.addButton(tr("Promote"), QMessageBox::AcceptRole);
        box.setDefaultButton(go);
        box.exec();
        return box.clickedButton() == go;
    };
    connect(&m_watcher, &QFutureWatcher<Outcome>::finished, this, [this] {
        const Outcome o = m_watcher.result();
        if (o.ok)
            emit promoted(o.id, o.folder);
        else
            emit failed(o.sentence);
        reevaluate();
    });
    setState(false, tr("Verify (F5) and benchmark (F6) a candidate; Promote is enabled when it passes every gate"));
}

PromoteController::~PromoteController() { m_watcher.waitForFinished(); }

void PromoteController::setRegistryDirectory(const QString& dir)
{
    m_registryDir = dir;
    reevaluate();
}

void PromoteController::addReport(const QString& taskDir, const kf::protocol::RunReport& report)
{
    const QString file = qs(report.header().candidate.file);
    if (file.isEmpty() || (!report.verify() && !report.bench()))
        return;
    loadEvidence(key(taskDir, file)); // the other half may be on disk from an earlier session
    Evidence& e = m_evidence[key(taskDir, file)];
    (report.verify() ? e.correctness : e.performance) = report;
    saveEvidence(key(taskDir, file));
    if (key(taskDir, file) == key(m_taskDir, m_candidate))
        reevaluate();
}

void PromoteController::setCurrent(const QString& taskDir, const QString& candidateFile, bool modified)
{
    if (taskDir == m_taskDir && candidateFile == m_candidate && modified == m_modified)
        return;
    m_taskDir = taskDir;
    m_candidate = candidateFile;
    m_modified = modified;
    if (!m_candidate.isEmpty())
        loadEvidence(key(m_taskDir, m_candidate));
    reevaluate();
}

QString PromoteController::evidenceFile(const QString& k) const
{
    if (m_evidenceDir.isEmpty())
        return {};
    return m_evidenceDir + '/' + QString::fromStdString(kf::hashHex(k.toStdString())) + QStringLiteral(".json");
}

void PromoteController::saveEvidence(const QString& k) const
{
    const QString file = evidenceFile(k);
    if (file.isEmpty())
        return;
    const Evidence e = m_evidence.value(k);
    auto raw = [](const Report& r) { return r ? r->document() : json(); };
    const json doc = {{"schema_version", 1}, {"candidate", k.toStdString()}, {"correctness", raw(e.correctness)},
                      {"performance", raw(e.performance)}};
    // Best effort: losing this file only means running F5/F6 again after a restart.
    (void)kf::writeFileAtomic(file.toStdString(), doc.dump(1, ' ', false, json::error_handler_t::replace));
}

void PromoteController::loadEvidence(const QString& k)
{
    const QString file = evidenceFile(k);
    if (file.isEmpty() || m_evidence.contains(k))
        return;
    auto doc = kf::json::readFile(file.toStdString());
    if (!doc || !doc->is_object() || doc->value("candidate", std::string()) != k.toStdString())
        return; // missing or unreadable: no evidence, as before any run
    // Read as any report is: a file edited into something malformed is no evidence at all.
    auto read = [&](const char* which) -> Report {
        auto it = doc->find(which);
        if (it == doc->end() || !it->is_object())
            return std::nullopt;
        auto r = kf::protocol::RunReport::fromJson(*it, file.toStdString());
        return r ? Report(std::move(r.value())) : std::nullopt;
    };
    Evidence e;
    e.correctness = read("correctness");
    e.performance = read("performance");
    m_evidence.insert(k, e);
}

void PromoteController::reevaluate()
{
    m_verdict.reset();
    m_task.reset();
    if (m_candidate.isEmpty() || !m_candidate.endsWith(".cu")) {
        setState(false, tr("Open a candidate kernel to promote it"));
        return;
    }
    if (m_modified) {
        setState(false, tr("%1 has unsaved edits: its evidence is for the saved file. Save, verify (F5) and "
                           "benchmark (F6) again").arg(m_candidate));
        return;
    }
    const auto it = m_evidence.constFind(key(m_taskDir, m_candidate));
    if (it == m_evidence.constEnd()) {
        setState(false, tr("No evidence for %1 yet: verify (F5) and benchmark (F6) it").arg(m_candidate));
        return;
    }
    auto task = kf::loadTask(m_taskDir.toStdString());
    if (!task) {
        setState(false, qs(task.error().message()));
        return;
    }
    const kf::Registry registry(m_registryDir.toStdString());
    auto verdict = registry.gates(inputFor(task.value(), m_candidate, it->correctness, it->performance));
    if (!verdict) {
        setState(false, qs(verdict.error().message()));
        return;
    }
    m_verdict = verdict.value();
    m_task = std::move(task.value());
    if (const kf::GateCheck* f = m_verdict->firstFailure()) {
        setState(false, tr("Blocked by the gate \"%1\": %2").arg(qs(f->title), qs(f->detail)) +
                            (f->hint.empty() ? QString() : tr("\nWhat to do: %1").arg(qs(f->hint))));
        return;
    }
    if (const kf::GateCheck* n = m_verdict->firstNotRun()) {
        setState(true, tr("Promote %1 into the registry %2: it passed %3 gates; not run: %4 (%5)")
                           .arg(m_candidate, m_registryDir)
                           .arg(m_verdict->passedCount())
                           .arg(qs(n->title), qs(n->detail)));
        return;
    }
    setState(true, tr("Promote %1 into the registry %2: it passed all %3 gates")
                       .arg(m_candidate, m_registryDir)
                       .arg(m_verdict->passedCount()));
}

void PromoteController::setState(bool can, const QString& text)
{
    if (m_watcher.isRunning())
        can = false;
    if (can == m_canPromote && text == m_stateText)
        return;
    m_canPromote = can;
    m_stateText = text;
    emit stateChanged(can, text);
}

QString PromoteController::summaryHtml() const
{
    const Evidence& e = m_evidence.value(key(m_taskDir, m_candidate));
    // Judged by the gates just now, so both reports are there.
    const kf::protocol::Environment& env = e.correctness->header().environment;
    QString gates;
    for (const kf::GateCheck& c : m_verdict->checks)
        gates += c.notRun ? tr("<li>– %1 (not run): %2</li>").arg(qs(c.title).toHtmlEscaped(), qs(c.detail).toHtmlEscaped())
                          : QStringLiteral("<li>✓ %1: %2</li>").arg(qs(c.title).toHtmlEscaped(), qs(c.detail).toHtmlEscaped());
    const QString scope = qs(kf::evidenceScope(*m_task, *e.performance->bench()));
    return tr("<p><b>%1 / %2</b> passed every promotion gate that ran on <b>%3</b> (%4, driver %5, NVRTC %6, LibTorch %7).</p>"
              "<ul>%8</ul>"
              "<p>Registry: <code>%9</code></p>"
              "<p><i>Evidence scope: %10.</i></p>")
        .arg(qs(m_task->name).toHtmlEscaped(), m_candidate.toHtmlEscaped(), qs(env.gpu).toHtmlEscaped(),
             qs(e.correctness->header().candidate.arch), qs(env.driver), qs(env.nvrtc), qs(env.torch), gates,
             m_registryDir.toHtmlEscaped(), scope.toHtmlEscaped());
}

void PromoteController::promote()
{
    reevaluate();
    if (!m_canPromote || !m_verdict) {
        emit failed(m_stateText); // the evidence or the registry changed since the button was drawn
        return;
    }
    if (m_confirm && !m_confirm(tr("Promote %1?").arg(m_candidate), summaryHtml()))
        return;
    const Evidence e = m_evidence.value(key(m_taskDir, m_candidate));
    const QString taskDir = m_taskDir, candidate = m_candidate, registryDir = m_registryDir;
    m_watcher.setFuture(QtConcurrent::run([=]() -> Outcome {
        auto task = kf::loadTask(taskDir.toStdString());
        if (!task)
            return {false, {}, {}, qs(task.error().message())};
        const kf::Registry registry(registryDir.toStdString());
        auto out = registry.promote(inputFor(task.value(), candidate, e.correctness, e.performance));
        if (!out)
            return {false, {}, {}, qs(out.error().message())};
        if (!out->entry)
            return {false, {}, {}, qs(out->gates.sentence())};
        return {true, qs(out->entry->id), qs(registry.entryDirectory(out->entry->id).string()), {}};
    }));
    setState(false, tr("Promoting %1…").arg(candidate));
}

} // namespace kf::app
