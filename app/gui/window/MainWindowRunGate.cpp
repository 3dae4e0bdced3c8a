// The run actions (F5, Ctrl+F5, F6, F7) and the gate before them: a source that does not compile
// never reaches the runner (MainWindow.h, docs/workbench.md).
#include "app/gui/window/MainWindow.h"

#include "app/gui/window/CandidateTab.h"
#include "app/gui/window/CompileController.h"
#include "app/gui/window/RunController.h"
#include "app/gui/window/StatusBar.h"
#include "engine/compile/CompileTypes.h"
#include "widgets/editor/KernelEditor.h"
#include "widgets/profile/ProfilePanel.h"
#include "widgets/runs/RunPanel.h"

#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QTabWidget>

#include <algorithm>
#include <tuple>
#include <utility>

namespace kf::app {

void MainWindow::verify() { requestRun(kf::RunKind::Verify, false); }
void MainWindow::verifySanitized() { requestRun(kf::RunKind::Verify, true); }
void MainWindow::benchmark() { requestRun(kf::RunKind::Bench, false); }
void MainWindow::profile() { requestRun(kf::RunKind::Profile, false); }

void MainWindow::requestRun(kf::RunKind kind, bool sanitize)
{
    CandidateTab* tab = currentTab();
    if (tab && !m_run->isRunning()) {
        // Before anything else: a run saves the task's files first, and this one must not be saved.
        if (tab->isEncodingLocked()) {
            refuseRun(tab, kind, sanitize,
                      tab->encodingProblem() + (tab->canConvert() ? tr(": convert it with the bar above the editor before running it.")
                                                                  : tr(": a kernel source must be UTF-8 text, so it is not run.")));
            return;
        }
        if (!tab->resultIsCurrent()) {
            // The last build is of older text (or there is none yet): build what the user sees,
            // then decide. The debounce would have done it anyway; this only does it now.
            m_pendingRun = PendingRun{tab, kind, sanitize};
            m_status->showMessage(tr("Compiling %1 before the run…").arg(tab->fileName()), 10000);
            tab->compileNow();
            return;
        }
        if (refuseUncompilable(tab, kind, sanitize))
            return;
    }
    launchRun(kind, sanitize);
}

void MainWindow::onBuildShown(CandidateTab* tab)
{
    if (!m_pendingRun || m_pendingRun->tab != tab)
        return;
    const PendingRun pending = *std::exchange(m_pendingRun, std::nullopt);
    if (m_run->isRunning() || currentTab() != tab)
        return; // another run started, or the user moved on: nothing to do
    // A build that could not run (no NVRTC) decides nothing: the runner compiles and says why.
    if (tab->resultIsCurrent() && refuseUncompilable(tab, pending.kind, pending.sanitize))
        return;
    launchRun(pending.kind, pending.sanitize);
}

bool MainWindow::refuseUncompilable(CandidateTab* tab, kf::RunKind kind, bool sanitize)
{
    const auto result = tab->lastResult();
    const int errors = result ? result->errorCount() : 0;
    if (errors == 0)
        return false;
    // The first error in reading order, the candidate's own before an include's.
    const kf::Diagnostic* first = nullptr;
    auto key = [&](const kf::Diagnostic& d) {
        return std::tuple(!diagnosticIsIn(QString::fromStdString(d.file), tab->filePath()), d.line <= 0, d.line, d.column);
    };
    for (const kf::Diagnostic& d : result->diagnostics)
        if (d.severity == kf::Diagnostic::Severity::Error && (!first || key(d) < key(*first)))
            first = &d;
    const QString sentence = (errors == 1 ? tr("1 compile error") : tr("%1 compile errors").arg(errors)) +
                             tr(" — fix them first");
    refuseRun(tab, kind, sanitize,
              first ? sentence + QStringLiteral(" (line %1: %2)")
                                     .arg(first->line)
                                     .arg(QString::fromStdString(first->message).section(u'\n', 0, 0))
                    : sentence,
              sentence);
    if (first)
        goToDiagnostic(QString::fromStdString(first->file), first->line, first->column, tab);
    return true;
}

void MainWindow::refuseRun(CandidateTab* tab, kf::RunKind kind, bool sanitize, const QString& sentence, QString brief)
{
    if (brief.isEmpty())
        brief = sentence;
    m_runPanel->begin(RunController::runTitle(kind, sanitize) + QLatin1Char(' ') + tab->fileName());
    m_runPanel->fail(sentence);
    if (kind == kf::RunKind::Profile)
        m_profilePanel->setError(tr("Nothing was profiled: %1").arg(brief.endsWith(u'.') ? brief : brief + u'.'));
    dock("runsDock")->raise();
    m_status->showMessage(brief, 10000);
}

void MainWindow::launchRun(kf::RunKind kind, bool sanitize)
{
    if (kind != kf::RunKind::Profile) {
        dock("runsDock")->raise();
        m_run->start(kind, currentTab(), sanitize);
        return;
    }
    // The Runs panel shows the progress; the Profile panel the result.
    dock("profileDock")->raise();
    m_profilePanel->setBusy(tr("Profiling %1 under the hardware counters…").arg(currentTab() ? currentTab()->fileName() : QString()));
    m_profiling = m_run->start(kf::RunKind::Profile, currentTab());
    if (!m_profiling)
        m_profilePanel->setError(tr("Nothing was profiled: see the Runs panel for why."));
}

} // namespace kf::app
