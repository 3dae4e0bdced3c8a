#include "app/gui/window/CompileController.h"

#include "app/gui/services/CompileService.h"
#include "app/gui/window/CandidateTab.h"
#include "app/gui/window/StatusBar.h"
#include "app/gui/workspace/Workspace.h"
#include "engine/compile/TaskCompile.h"
#include "widgets/assembly/AssemblyView.h"
#include "widgets/diagnostics/DiagnosticsPanel.h"
#include "widgets/editor/KernelEditor.h"
#include "widgets/occupancy/LaunchConfig.h"
#include "widgets/occupancy/OccupancyPanel.h"

#include <QFileInfo>

#include <utility>

namespace kf::app {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

// NVRTC names the file as we passed it (the full path for task candidates); prelude and toolkit
// headers keep their own names. A diagnostic belongs to the editor when it names its file.
bool belongsTo(const kf::Diagnostic& d, const QString& filePath)
{
    if (d.file.empty())
        return true;
    const QString f = qs(d.file);
    return f == filePath || QFileInfo(f).fileName() == QFileInfo(filePath).fileName();
}

} // namespace

CompileController::CompileController(Workspace* workspace, CompilePanels panels, const QString& cacheDir,
                                     QObject* parent)
    : QObject(parent)
    , m_workspace(workspace)
    , m_panels(panels)
    , m_service(std::make_unique<CompileService>(cacheDir))
{
    connect(m_service.get(), &CompileService::finished, this,
            [this](const QString& tag, quint64, std::shared_ptr<const kf::CompileResult> r) { onFinished(tag, std::move(r)); });
    connect(m_service.get(), &CompileService::failed, this,
            [this](const QString& tag, quint64, const QString& sentence) { onFailed(tag, sentence); });
    connect(m_service.get(), &CompileService::started, this, [this](const QString& tag, quint64) {
        if (m_current && m_current->filePath() == tag && m_panels.status)
            m_panels.status->setCompile(tr("compiling for %1…").arg(m_arch));
    });
}

CompileController::~CompileController() = default;

void CompileController::setArchitecture(const QString& arch)
{
    if (arch == m_arch)
        return;
    m_arch = arch;
    if (m_panels.occupancy && m_panels.occupancy->architecture() != arch)
        m_panels.occupancy->setArchitecture(arch);
    // Resources depend on the architecture: rebuild what the user is looking at now; the other
    // tabs rebuild when they become current.
    if (m_current)
        requestCompile(m_current);
}

void CompileController::addTab(CandidateTab* tab)
{
    m_tabs.append(tab);
    connect(tab, &CandidateTab::compileDue, this, &CompileController::requestCompile);
    requestCompile(tab);
}

void CompileController::removeTab(CandidateTab* tab)
{
    m_tabs.removeAll(tab);
    m_service->cancel(tab->filePath());
    if (m_current == tab)
        setCurrentTab(nullptr);
}

void CompileController::setCurrentTab(CandidateTab* tab)
{
    m_current = tab;
    if (!tab) {
        if (m_panels.diagnostics)
            m_panels.diagnostics->setDiagnostics(m_workspaceDiagnostics);
        if (m_panels.assembly)
            m_panels.assembly->clear(tr("No kernel open."));
        if (m_panels.occupancy)
            m_panels.occupancy->clear(tr("No kernel open."));
        if (m_panels.status)
            m_panels.status->setCompile({});
        return;
    }
    auto r = tab->lastResult();
    if (!r || qs(r->arch) != m_arch)
        requestCompile(tab);
    if (r)
        showInPanels(tab);
}

void CompileController::requestCompile(CandidateTab* tab)
{
    CompileRequest req;
    const TaskEntry* entry = m_workspace ? m_workspace->taskForFile(tab->filePath()) : nullptr;
    const kf::Candidate* candidate = entry && entry->task ? entry->task->findCandidate(tab->fileName().toStdString()) : nullptr;
    if (candidate) {
        auto built = compileRequestFor(*entry->task, *candidate, m_arch.toStdString());
        if (built)
            req = std::move(built.value());
    }
    // The editor's text, not the file: diagnostics follow what the user sees (a file that is not
    // UTF-8 compiles as its bytes until it is converted, so Problems names its encoding).
    req.source = tab->compileSource();
    req.fileName = tab->filePath().toStdString();
    req.options.arch = m_arch.toStdString();
    req.wantSass = true;
    for (const QString& o : m_extraOptions)
        req.options.extraOptions.push_back(o.toStdString());
    m_requestedRevision.insert(tab->filePath(), tab->textRevision());
    m_service->request(tab->filePath(), std::move(req));
}

CandidateTab* CompileController::tabFor(const QString& tag) const
{
    for (CandidateTab* t : m_tabs)
        if (t->filePath() == tag)
            return t;
    return nullptr;
}

void CompileController::onFinished(const QString& tag, std::shared_ptr<const kf::CompileResult> result)
{
    CandidateTab* tab = tabFor(tag);
    if (!tab)
        return;
    // Results of older requests never arrive (CompileService drops them): this is the latest's.
    tab->setLastResult(result, m_requestedRevision.value(tag));
    paintEditor(tab);
    if (tab == m_current)
        showInPanels(tab);
    emit resultShown(tab);
}

void CompileController::paintEditor(CandidateTab* tab)
{
    std::vector<kf::Diagnostic> own;
    if (auto r = tab->lastResult())
        for (const auto& d : r->diagnostics)
            if (belongsTo(d, tab->filePath()))
                own.push_back(d);
    // The last verification's findings beside the compiler's, never instead of them.
    for (kf::Diagnostic& d : tab->runDiagnostics())
        if (belongsTo(d, tab->filePath()))
            own.push_back(std::move(d));
    tab->editor()->setDiagnostics(own);
}

void CompileController::refreshDiagnostics(CandidateTab* tab)
{
    if (!tab || !m_tabs.contains(tab))
        return;
    paintEditor(tab);
    if (tab == m_current && m_panels.diagnostics)
        m_panels.diagnostics->setDiagnostics(panelDiagnostics(tab));
}

std::vector<kf::Diagnostic> CompileController::panelDiagnostics(CandidateTab* tab) const
{
    std::vector<kf::Diagnostic> all;
    if (auto r = tab->lastResult())
        all = r->diagnostics;
    for (kf::Diagnostic& d : tab->runDiagnostics())
        all.push_back(std::move(d));
    all.insert(all.end(), m_workspaceDiagnostics.begin(), m_workspaceDiagnostics.end());
    return all;
}

void CompileController::setWorkspaceDiagnostics(std::vector<kf::Diagnostic> diagnostics)
{
    m_workspaceDiagnostics = std::move(diagnostics);
    if (!m_panels.diagnostics)
        return;
    if (!m_current)
        m_panels.diagnostics->setDiagnostics(m_workspaceDiagnostics);
    else if (m_current->lastResult())
        m_panels.diagnostics->setDiagnostics(panelDiagnostics(m_current));
    // else: the current tab's first build shows them with its own
}

void CompileController::onFailed(const QString& tag, const QString& sentence)
{
    CandidateTab* tab = tabFor(tag);
    if (!tab)
        return;
    if (tab == m_current) {
        if (m_panels.status)
            m_panels.status->setCompile(tr("cannot compile: %1").arg(sentence));
        if (m_panels.assembly)
            m_panels.assembly->clear(sentence);
        if (m_panels.occupancy)
            m_panels.occupancy->clear(sentence);
    }
    emit resultShown(tab);
}

void CompileController::showInPanels(CandidateTab* tab)
{
    auto r = tab->lastResult();
    if (!r)
        return;
    if (m_panels.diagnostics)
        m_panels.diagnostics->setDiagnostics(panelDiagnostics(tab));
    if (m_panels.assembly) {
        if (r->success)
            m_panels.assembly->setCompileResult(*r, tab->filePath());
        else
            m_panels.assembly->clear(tr("No assembly: the source has errors (see Problems)."));
    }
    if (m_panels.occupancy) {
        if (!r->success) {
            m_panels.occupancy->clear(tr("No resources: the source has errors (see Problems)."));
        } else {
            std::vector<kf::ui::LaunchConfig> launches;
            const TaskEntry* entry = m_workspace ? m_workspace->taskForFile(tab->filePath()) : nullptr;
            if (entry && entry->task) {
                const kf::Candidate* c = entry->task->findCandidate(tab->fileName().toStdString());
                const kf::ShapeBinding* shape = kf::representativeShape(*entry->task);
                if (c && shape)
                    launches = kf::ui::launchConfigsFrom(kf::analyseLaunches(*entry->task, *c, *r, *shape));
            }
            m_panels.occupancy->setKernels(r->kernels, std::move(launches));
        }
    }
    if (m_panels.status) {
        QString text = r->fromCache ? tr("cache hit in %1 ms (%2)").arg(r->compileMs, 0, 'f', 1).arg(qs(r->arch))
                                    : tr("compiled in %1 ms (%2)").arg(r->compileMs, 0, 'f', 0).arg(qs(r->arch));
        const int e = r->errorCount(), w = r->warningCount();
        if (e)
            text += tr(" · %n error(s)", nullptr, e);
        if (w)
            text += tr(" · %n warning(s)", nullptr, w);
        m_panels.status->setCompile(text);
    }
}

} // namespace kf::app
