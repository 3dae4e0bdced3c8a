#include "app/gui/window/Screenshots.h"

#include "app/gui/settings/RunnersPage.h"
#include "app/gui/settings/SettingsDialog.h"
#include "app/gui/window/CandidateTab.h"
#include "app/gui/window/CompileController.h"
#include "app/gui/window/MainWindow.h"
#include "app/gui/window/PromoteController.h"
#include "app/gui/window/InspectController.h"
#include "app/gui/window/RunController.h"
#include "app/gui/window/TuneController.h"
#include "app/gui/workspace/Workspace.h"
#include "engine/core/InstallLayout.h"
#include "widgets/editor/KernelEditor.h"
#include "widgets/inspect/TensorCanvas.h"
#include "widgets/inspect/TensorInspector.h"
#include "widgets/navigation/FindInWorkspacePanel.h"
#include "widgets/navigation/LocatorPopup.h"
#include "widgets/profile/ProfilePanel.h"
#include "widgets/registry/RegistryBrowser.h"
#include "widgets/runs/ResultsModel.h"
#include "widgets/runs/RunLogView.h"
#include "widgets/runs/RunPanel.h"
#include "widgets/tune/TuneView.h"

#include <QAction>
#include <QPushButton>
#include <QApplication>
#include <QLineEdit>
#include <QDir>
#include <QFileInfo>
#include <QDockWidget>
#include <QFile>
#include <QComboBox>
#include <QDialog>
#include <QMessageBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QTableView>
#include <QPixmap>
#include <QScrollArea>
#include <QTemporaryDir>
#include <QScrollBar>
#include <QTimer>

#include <cstdio>
#include <functional>
#include <memory>

namespace kf::app {

namespace {

class Tour : public QObject {
public:
    Tour(MainWindow& w, QString dir, bool withRuns)
        : QObject(&w), m_w(w), m_dir(std::move(dir)), m_withRuns(withRuns)
    {
        QDir().mkpath(m_dir);
    }

    void start()
    {
        waitForCompile([this] { step1(); });
        if (CandidateTab* t = m_w.currentTab(); t && t->lastResult())
            QTimer::singleShot(0, this, [this] { step1(); });
    }

private:
    // Calls `next` once, after the next compile result is painted (and the event loop settles).
    void waitForCompile(std::function<void()> next)
    {
        auto conn = std::make_shared<QMetaObject::Connection>();
        auto done = std::make_shared<bool>(false);
        *conn = connect(m_w.compileController(), &CompileController::resultShown, this, [this, conn, done, next] {
            if (*done)
                return;
            *done = true;
            disconnect(*conn);
            QTimer::singleShot(150, this, next); // let docks and charts finish their layout
        });
    }
    void waitForRun(std::function<void()> next)
    {
        auto conn = std::make_shared<QMetaObject::Connection>();
        *conn = connect(m_w.runController(), &RunController::finished, this, [this, conn, next] {
            disconnect(*conn);
            QTimer::singleShot(150, this, next);
        });
    }
    // Calls `next` once `ready` holds (checked every 100 ms), or after `timeoutMs` regardless,
    // saying so: a screenshot of half-rendered tiles is worse than a slow tour.
    void waitUntil(std::function<bool()> ready, int timeoutMs, const char* what, std::function<void()> next)
    {
        auto timer = new QTimer(this);
        auto waited = std::make_shared<int>(0);
        connect(timer, &QTimer::timeout, this, [timer, waited, ready, timeoutMs, what, next] {
            *waited += 100;
            const bool ok = ready();
            if (!ok && *waited < timeoutMs)
                return;
            if (!ok)
                std::printf("%s: not ready after %d ms; saving anyway\n", what, timeoutMs);
            timer->deleteLater();
            timer->stop();
            next();
        });
        timer->start(100);
    }
    void save(const QString& name)
    {
        const QString path = m_dir + "/" + name;
        const bool ok = m_w.grab().save(path);
        std::printf("%s %s\n", ok ? "saved" : "FAILED to save", qPrintable(path));
        std::fflush(stdout);
    }
    void raise(const char* dock) { m_w.dock(dock)->raise(); }

    void step1()
    {
        if (m_started)
            return;
        m_started = true;
        CandidateTab* t = m_w.currentTab();
        if (!t) {
            std::printf("no kernel open; nothing to show\n");
            qApp->exit(1);
            return;
        }
        raise("assemblyDock");
        raise("problemsDock");
        // Put the cursor on a line of real work so the assembly view shows its instructions.
        KernelEditor* e = t->editor();
        int codeLine = 1;
        for (int i = 0; i < e->lines(); ++i)
            if (e->text(i).contains("__shfl") || e->text(i).contains("load_vec")) {
                codeLine = i + 1;
                break;
            }
        e->goTo(codeLine, 1);
        QTimer::singleShot(150, this, [this] {
            save("workbench.png");
            raise("occupancyDock");
            QTimer::singleShot(150, this, [this] {
                save("occupancy.png");
                raise("taskDock");
                QTimer::singleShot(150, this, [this] {
                    save("task-editor.png");
                    showNavigation([this] { breakKernel(); });
                });
            });
        });
    }

    QAction* actionWithKey(const QKeySequence& key) const
    {
        for (QAction* a : m_w.findChildren<QAction*>())
            if (a->shortcuts().contains(key))
                return a;
        return nullptr;
    }

    // Ctrl+K and Ctrl+Shift+F as a user presses them (their menu actions), over the open kernel.
    void showNavigation(std::function<void()> next)
    {
        auto* locator = m_w.findChild<kf::ui::LocatorPopup*>();
        auto* find = m_w.findChild<kf::ui::FindInWorkspacePanel*>();
        QAction* locate = actionWithKey(QKeySequence(QStringLiteral("Ctrl+K")));
        QAction* search = actionWithKey(QKeySequence(QStringLiteral("Ctrl+Shift+F")));
        if (!locator || !find || !locate || !search) {
            next();
            return;
        }
        auto scanned = std::make_shared<QMetaObject::Connection>();
        *scanned = connect(locator, &kf::ui::LocatorPopup::scanFinished, this, [=, this] {
            disconnect(*scanned);
            locator->lineEdit()->setText(QStringLiteral("soft"));
            QTimer::singleShot(150, this, [=, this] {
                save("locator.png");
                locator->hide();
                search->trigger();
                find->queryEdit()->setText(QStringLiteral("__syncthreads"));
                auto found = std::make_shared<QMetaObject::Connection>();
                *found = connect(find, &kf::ui::FindInWorkspacePanel::searchFinished, this, [=, this] {
                    disconnect(*found);
                    QTimer::singleShot(150, this, [=, this] {
                        save("find-in-workspace.png");
                        raise("problemsDock");
                        next();
                    });
                });
                find->search();
            });
        });
        locate->trigger();
    }

    void breakKernel()
    {
        raise("assemblyDock");
        CandidateTab* t = m_w.currentTab();
        // A typo a user makes: an undeclared identifier in the kernel body.
        KernelEditor* e = t->editor();
        int line = 0;
        for (int i = 0; i < e->lines(); ++i)
            if (e->text(i).contains("threadIdx")) {
                line = i;
                break;
            }
        e->insertAt("    float oops = undefined_scale * 2.0f;\n", line + 1, 0);
        e->goTo(line + 2, 5);
        waitForCompile([this] {
            save("diagnostics.png");
            m_w.currentTab()->editor()->undo();
            waitForCompile([this] { runs(); });
        });
    }

    void runs()
    {
        // Results need room: give the Runs panel half the window for the run screenshots.
        m_w.resizeDocks({m_w.dock("runsDock")}, {m_w.height() / 2}, Qt::Vertical);
        if (!m_withRuns) {
            m_w.verify(); // without a GPU this shows the compile-only sentence
            waitForRun([this] { save("runs.png"); showRegistry({}); });
            return;
        }
        m_w.verify();
        waitForRun([this] {
            save("verify.png");
            m_w.benchmark();
            waitForRun([this] {
                save("benchmark.png");
                promote();
            });
        });
    }

    // Promote the kernel just verified and benchmarked: the confirmation as the user sees it,
    // then the registry browser with the new entry selected.
    void promote()
    {
        PromoteController* p = m_w.promoteController();
        std::printf("promote: %s (%s)\n", p->canPromote() ? "enabled" : "disabled", qPrintable(p->stateText()));
        if (!p->canPromote()) {
            showRegistry({});
            return;
        }
        p->setConfirm([this](const QString& title, const QString& html) {
            QMessageBox box(QMessageBox::Question, title, html, QMessageBox::Cancel, &m_w);
            box.setTextFormat(Qt::RichText);
            box.addButton(QObject::tr("Promote"), QMessageBox::AcceptRole);
            box.show();
            box.adjustSize();
            QApplication::processEvents();
            const QString path = m_dir + "/promote-confirm.png";
            std::printf("%s %s\n", box.grab().save(path) ? "saved" : "FAILED to save", qPrintable(path));
            return true;
        });
        auto conn = std::make_shared<QMetaObject::Connection>();
        auto failConn = std::make_shared<QMetaObject::Connection>();
        *conn = connect(p, &PromoteController::promoted, this, [this, conn, failConn](const QString& id, const QString& folder) {
            disconnect(*conn);
            disconnect(*failConn);
            std::printf("promoted %s into %s\n", qPrintable(id), qPrintable(folder));
            std::fflush(stdout);
            if (++m_promotions == 2) {
                QTimer::singleShot(300, this, [this, id] { showRegistry(id); });
                return;
            }
            // A second version, so the registry has something to diff: a documented edit, saved,
            // verified and benchmarked again, then promoted as v2.
            CandidateTab* t = m_w.currentTab();
            t->editor()->append("\n// v2: promoted again after review; same code path as v1\n");
            m_w.saveCurrent();
            m_w.verify();
            waitForRun([this] {
                m_w.benchmark();
                waitForRun([this] { promote(); });
            });
        });
        *failConn = connect(p, &PromoteController::failed, this, [this, failConn, conn](const QString& why) {
            disconnect(*failConn);
            disconnect(*conn);
            std::printf("promote failed: %s\n", qPrintable(why));
            finish();
        });
        p->promote();
    }

    // The Registry dock: the entry's evidence, its speedup chart, and a diff when it has an
    // older version. Details load off the UI thread; the pauses let them arrive and paint.
    void showRegistry(const QString& id)
    {
        kf::ui::RegistryBrowser* b = m_w.registryBrowser();
        m_w.dock("registryDock")->raise();
        if (!id.isEmpty())
            b->selectId(id);
        else if (b->table()->model()->rowCount() > 0)
            b->table()->selectRow(0);
        QTimer::singleShot(800, this, [this, b] {
            b->tabs()->setCurrentIndex(kf::ui::RegistryBrowser::EvidenceTab);
            save("registry.png");
            b->tabs()->setCurrentIndex(kf::ui::RegistryBrowser::ChartTab);
            QTimer::singleShot(300, this, [this, b] {
                save("registry-chart.png");
                if (b->diffCombo()->count() == 0) {
                    finish();
                    return;
                }
                b->tabs()->setCurrentIndex(kf::ui::RegistryBrowser::DiffTab);
                QTimer::singleShot(800, this, [this] {
                    save("registry-diff.png");
                    finish();
                });
            });
        });
    }

    // A new user breaks an example kernel (softmax forgets to normalise the part of a long row
    // that does not fit its register cache), runs it, and opens the inspector on the failure.
    void inspectFailure()
    {
        const QString file = m_w.workspace()->root() + "/softmax_fp32/optimized.cu";
        if (!m_withRuns || !QFileInfo::exists(file)) {
            qApp->exit(0);
            return;
        }
        m_w.openFile(file);
        KernelEditor* e = m_w.currentTab()->editor();
        const QString wrong = "out[j] = expf(v[j] - m_row) * inv_sum;";
        for (int i = 0; i < e->lines(); ++i)
            if (const int col = e->text(i).indexOf(wrong); col >= 0) {
                e->setSelection(i, col, i, col + int(wrong.size()));
                e->replaceSelectedText("out[j] = expf(v[j] - m_row); // BUG: not normalised");
                break;
            }
        waitForCompile([this] {
            m_w.verify();
            waitForRun([this] {
                save("inspector-run.png");
                QString dir; // the first failing row with a saved case, as a user would double-click
                const kf::ui::ResultsModel* rows = m_w.runPanel()->model();
                for (int i = 0; i < rows->rowCount() && dir.isEmpty(); ++i)
                    if (rows->rowAt(i).canInspect())
                        dir = rows->rowAt(i).correctness.caseDirs.first();
                std::printf("inspect: first case %s\n", qPrintable(dir));
                if (dir.isEmpty() || !m_w.inspectController()->open(dir)) {
                    qApp->exit(0);
                    return;
                }
                m_w.resizeDocks({m_w.dock("inspectorDock")}, {m_w.height() * 3 / 5}, Qt::Vertical);
                using Pane = kf::ui::TensorInspector::Pane;
                auto rendered = [this] {
                    const kf::ui::TensorInspector* in = m_w.inspector();
                    return in->isAnalysed() && in->pane(Pane::Reference)->isComplete() &&
                           in->pane(Pane::Candidate)->isComplete() && in->pane(Pane::Difference)->isComplete();
                };
                waitUntil(rendered, 15000, "inspector", [this, rendered] {
                    m_w.inspector()->next();
                    waitUntil(rendered, 15000, "inspector at the first mismatch", [this] {
                        save("inspector.png");
                        const QString path = m_dir + "/inspector-detail.png";
                        std::printf("%s %s\n", m_w.inspector()->grab().save(path) ? "saved" : "FAILED to save",
                                    qPrintable(path));
                        profileKernel();
                    });
                });
            });
        });
    }

    // F7 on the naive softmax: its counters beside LibTorch's, the roofline and the hints.
    void profileKernel()
    {
        const QString file = m_w.workspace()->root() + "/softmax_fp32/naive.cu";
        if (!QFileInfo::exists(file)) {
            qApp->exit(0);
            return;
        }
        m_w.openFile(file);
        waitForCompile([this] {
            m_w.profile();
            waitForRun([this] {
                m_w.resizeDocks({m_w.dock("profileDock")}, {m_w.height() * 3 / 5}, Qt::Vertical);
                QTimer::singleShot(800, this, [this] {
                    save("profile.png");
                    const QString path = m_dir + "/profile-detail.png";
                    // The whole panel, not the dock's visible part: the roofline sits below the fold.
                    QWidget* content = m_w.profilePanel();
                    if (auto* area = m_w.profilePanel()->findChild<QScrollArea*>(); area && area->widget())
                        content = area->widget();
                    std::printf("%s %s\n", content->grab().save(path) ? "saved" : "FAILED to save", qPrintable(path));
                    tuneKernel();
                });
            });
        });
    }

    // Run ▸ Tune on the workspace's first candidate with a "tune" block: a one-minute search on
    // the GPU, the winner's verify and bench, then the Tune window. Skipped, saying so, without one.
    void tuneKernel()
    {
        QString file;
        for (const QString& dir : QDir(m_w.workspace()->root()).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
            if (auto task = loadTask((m_w.workspace()->root() + "/" + dir).toStdString()); task && file.isEmpty())
                if (auto c = TuneController::chooseCandidate(*task, {}))
                    file = m_w.workspace()->root() + "/" + dir + "/" + QString::fromStdString(*c);
        if (file.isEmpty()) {
            std::printf("tune: no candidate in the workspace has a \"tune\" block; skipped\n");
            qApp->exit(0);
            return;
        }
        m_w.openFile(file);
        TuneController* tune = m_w.tuneController();
        tune->show(m_w.currentTab());
        tune->view()->setBudgetS(60);
        tune->view()->findChild<QPushButton*>(QStringLiteral("tuneStart"))->click();
        waitUntil([tune] { return !tune->view()->isRunning(); }, 10 * 60 * 1000, "tune", [this, tune] {
            QTimer::singleShot(300, this, [this, tune] {
                const QString path = m_dir + "/tune.png";
                std::printf("%s %s\n", tune->window()->grab().save(path) ? "saved" : "FAILED to save", qPrintable(path));
                save("tune-runs.png");   // the winner's verify and bench in the Runs panel
                qApp->exit(0);
            });
        });
    }

    void finish() { sanitizerFindings(); }

    // Issue 19: a kernel that reads past the end of its input (the answer is still right, so every
    // shape passes) and compute-sanitizer's finding at its line, in Problems and in the Runs panel.
    // With real runs: Run ▸ Verify under compute-sanitizer on the GPU. Without: the same report
    // shape opened from a fixture file (Run ▸ Open Report…), which the Runs panel's title names.
    void sanitizerFindings()
    {
        const QString file = m_w.workspace()->root() + "/vector_add/naive.cu";
        if (!QFileInfo::exists(file)) {
            std::printf("sanitizer: %s not found; skipped\n", qPrintable(file));
            runnersSettings();
            return;
        }
        m_w.openFile(file);
        KernelEditor* e = m_w.currentTab()->editor();
        const QString right = "c[i] = a[i] + b[i];";
        m_brokenLine = -1;
        for (int i = 0; i < e->lines(); ++i)
            if (const int col = e->text(i).indexOf(right); col >= 0) {
                e->setSelection(i, col, i, col + int(right.size()));
                e->replaceSelectedText("c[i] = a[i] + b[i] + 0.0f * a[i + 1]; // BUG: the last thread reads a[n]");
                m_brokenLine = i + 1;
                break;
            }
        m_w.saveCurrent();
        waitForCompile([this] {
            // Problems and Runs side by side for this one, instead of tabbed, under the whole width.
            // (A dock split from a tabbed one joins its tabs, so the bottom docks come out first.)
            QDockWidget* problems = m_w.dock("problemsDock");
            QDockWidget* runs = m_w.dock("runsDock");
            m_w.setCorner(Qt::BottomRightCorner, Qt::BottomDockWidgetArea);
            for (const char* name : {"problemsDock", "runsDock", "inspectorDock", "profileDock"})
                m_w.removeDockWidget(m_w.dock(name));
            m_w.addDockWidget(Qt::BottomDockWidgetArea, problems);
            m_w.splitDockWidget(problems, runs, Qt::Vertical);
            problems->show();
            runs->show();
            raise("assemblyDock");
            m_w.resizeDocks({m_w.dock("workspaceDock"), m_w.dock("assemblyDock")}, {200, m_w.width() * 33 / 100}, Qt::Horizontal);
            m_w.resizeDocks({problems, runs}, {m_w.height() * 3 / 20, m_w.height() * 9 / 20}, Qt::Vertical);
            if (m_withRuns) {
                m_w.verifySanitized();
                waitForRun([this] { shootSanitizer(); });
                return;
            }
            const QString report = QString::fromStdString(
                installedPath(InstallDir::Data, "screenshots/vector_add-oob.fixture.json",
                              KF_EXAMPLES_DIR "/../screenshots/vector_add-oob.fixture.json").string());
            std::printf("sanitizer: no GPU here; opening the fixture report %s\n", qPrintable(QDir::cleanPath(report)));
            m_w.openReport(report);
            QTimer::singleShot(300, this, [this] { shootSanitizer(); });
        });
    }

    void shootSanitizer()
    {
        CandidateTab* t = m_w.currentTab();
        if (t && m_brokenLine > 0)
            t->editor()->goTo(m_brokenLine, 1);
        m_w.runPanel()->resultsView()->scrollToBottom();
        // The log's newest lines (this report's), from their start.
        m_w.runPanel()->log()->verticalScrollBar()->setValue(m_w.runPanel()->log()->verticalScrollBar()->maximum());
        m_w.runPanel()->log()->horizontalScrollBar()->setValue(0);
        QTimer::singleShot(150, this, [this, t] {
            save("sanitizer-findings.png");
            // Put the kernel and the layout back as they were.
            if (t) {
                t->editor()->undo();
                m_w.saveCurrent();
            }
            // View ▸ Reset Layout: every bottom panel tabbed under the editor again (putting back
            // only the four moved left Assistant and Search Results split off beside them).
            m_w.setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
            m_w.resetLayout();
            m_w.dock("problemsDock")->raise();
            runnersSettings();
        });
    }

    // Settings ▸ Runners on the endpoints of docs/runners.md's example (a file of the tour's own,
    // never the user's runners.json), after Check has started the local runner for real.
    void runnersSettings()
    {
        m_runnersDir = std::make_unique<QTemporaryDir>();
        const QString path = m_runnersDir->filePath("runners.json");
        {
            QFile f(path);
            if (f.open(QIODevice::WriteOnly))
                f.write(R"json({"schema_version": 1, "default": "local",
 "endpoints": [
  {"name": "h100-1", "kind": "local", "env": {"CUDA_VISIBLE_DEVICES": "1"}},
  {"name": "box", "kind": "ssh", "host": "gpu-box.lan", "user": "me", "port": 2222,
   "runner": "/opt/kernelforge/bin/kforge-runner", "identity_file": "~/.ssh/id_kf", "shared_fs": true},
  {"name": "cluster", "kind": "srun", "srun_args": ["--gres=gpu:1", "--time=10", "--partition=gpu"]},
  {"name": "wrapped", "kind": "command", "command": ["docker", "exec", "-i", "kf-gpu", "{runner}"]}]}
)json");
        }
        auto* dialog = new SettingsDialog(m_w.settings(), &m_w, path);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        dialog->resize(980, 600);
        if (auto* tabs = dialog->findChild<QTabWidget*>("settingsTabs"))
            tabs->setCurrentWidget(dialog->runnersPage());
        dialog->show();
        RunnersPage* page = dialog->runnersPage();
        page->table()->setCurrentCell(0, 0);
        connect(page, &RunnersPage::checkFinished, this, [this, dialog](const EndpointCheck& c) {
            std::printf("runners: check of %s: %s\n", qPrintable(c.endpoint), qPrintable(c.text()));
            QTimer::singleShot(150, this, [this, dialog] {
                const QString out = m_dir + "/settings-runners.png";
                std::printf("%s %s\n", dialog->grab().save(out) ? "saved" : "FAILED to save", qPrintable(out));
                std::fflush(stdout);
                dialog->close();
                inspectFailure();
            });
        });
        if (!page->check(0)) {
            dialog->close();
            inspectFailure();
        }
    }

    using KernelEditor = kf::ui::KernelEditor;
    MainWindow& m_w;
    QString m_dir;
    bool m_withRuns = false;
    bool m_started = false;
    int m_promotions = 0;
    int m_brokenLine = -1;
    std::unique_ptr<QTemporaryDir> m_runnersDir;
};

} // namespace

void takeScreenshots(MainWindow& window, const QString& dir, bool withRuns)
{
    auto* tour = new Tour(window, dir, withRuns);
    tour->start();
}

} // namespace kf::app
