// The workbench window end to end, offscreen, with real NVRTC builds and the real runner in
// compile-only mode: what a user sees when they break a kernel, fix it, click a problem, switch
// the architecture, crash, or press F5 on a machine with no GPU.
#include "app/gui/settings/Settings.h"
#include "app/gui/window/CandidateTab.h"
#include "app/gui/window/CompileController.h"
#include "app/gui/window/MainWindow.h"
#include "app/gui/window/RunController.h"
#include "app/gui/window/StatusBar.h"
#include "app/gui/workspace/ExampleWorkspace.h"
#include "engine/compile/CompileTypes.h"
#include "fakerunner.h"
#include "testutil.h"
#include "windowfixture.h"
#include "widgets/diagnostics/DiagnosticsModel.h"
#include "widgets/diagnostics/DiagnosticsPanel.h"
#include "widgets/editor/KernelEditor.h"
#include "widgets/occupancy/OccupancyPanel.h"
#include "widgets/runs/ResultsModel.h"
#include "widgets/runs/RunPanel.h"

#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QHash>
#include <QDir>
#include <QDockWidget>
#include <QScreen>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>
#include <memory>

using namespace kf::app;
using kf::ui::KernelEditor;


class TestMainWindow : public QObject {
    Q_OBJECT
    kf::test::WindowFixture m_fx;
    QString m_workspace;
    Settings* m_settings = nullptr;

    std::unique_ptr<MainWindow> makeWindow(bool withRunner = false, const QString& runnerPath = KF_RUNNER_BIN,
                                           const QString& runnersFile = {})
    {
        MainWindow::Options o = m_fx.options();
        if (!runnersFile.isEmpty())
            o.runnersFile = runnersFile;
        o.probeRunner = withRunner;
        o.runner.runnerPath = runnerPath;
        return m_fx.make(o);
    }

private slots:
    void initTestCase()
    {
        QString error;
        // softmax_fp32, and vector_add: the task the scripted runner's reports are written for (tests/fakerunner.h).
        QVERIFY2(m_fx.setUp({"softmax_fp32", "vector_add"}, &error), qPrintable(error));
        m_workspace = m_fx.workspace();
        m_settings = m_fx.settings();
        m_settings->setCompileDebounceMs(50);
    }

    void opensTheWorkspaceWithAKernel()
    {
        auto w = makeWindow();
        QCOMPARE(w->tabs().size(), 1);
        QVERIFY(w->currentTab()->filePath().endsWith(".cu"));
        QTRY_VERIFY_WITH_TIMEOUT(w->currentTab()->lastResult() != nullptr, 60000);
        QVERIFY(w->currentTab()->lastResult()->success);
        QVERIFY(m_settings->recentWorkspaces().contains(QDir(m_workspace).canonicalPath()) ||
                m_settings->recentWorkspaces().contains(m_workspace));
        QVERIFY(w->statusBarWidget()->compileText().contains("sm_90"));
    }

    void typingAnErrorShowsASquiggleAndFixingClearsIt_data()
    {
        QTest::addColumn<QString>("inserted");
        QTest::addColumn<int>("column");   // 1-based column of the error inside the inserted line
        QTest::newRow("undeclared identifier") << "    float oops = undefined_scale * 2.0f;" << 18;
        QTest::newRow("undeclared after a tab") << "\tint k = missing_count + 1;" << 10;
    }
    void typingAnErrorShowsASquiggleAndFixingClearsIt()
    {
        QFETCH(QString, inserted);
        QFETCH(int, column);
        auto w = makeWindow();
        CandidateTab* t = w->currentTab();
        QTRY_VERIFY_WITH_TIMEOUT(t->lastResult() != nullptr, 60000);
        KernelEditor* e = t->editor();
        // Insert the bad line inside the first kernel body (after the line with its opening brace).
        int braceLine = -1;
        for (int i = 0; i < e->lines() && braceLine < 0; ++i)
            if (e->text(i).contains("__global__"))
                for (int j = i; j < e->lines(); ++j)
                    if (e->text(j).contains("{")) {
                        braceLine = j;
                        break;
                    }
        QVERIFY(braceLine >= 0);
        const int line = braceLine + 2; // 1-based line of the inserted text
        e->insertAt(inserted + "\n", braceLine + 1, 0);
        QTRY_VERIFY_WITH_TIMEOUT(!e->diagnosticsAt(line, column).empty(), 60000);
        QVERIFY2(e->diagnosticsAt(line, column - 1).empty(), "the squiggle starts one column early");
        QCOMPARE(e->diagnosticsAt(line, column).front().line, line);
        QVERIFY(w->diagnosticsPanel()->model()->rowCount() >= 1);
        QVERIFY(w->statusBarWidget()->compileText().contains("error"));

        e->undo();
        QTRY_VERIFY_WITH_TIMEOUT(e->diagnosticsAt(line, column).empty() && t->lastResult()->success, 60000);
        QCOMPARE(w->diagnosticsPanel()->model()->rowCount(), 0);
    }

    void clickingAProblemMovesTheCursor()
    {
        auto w = makeWindow();
        CandidateTab* t = w->currentTab();
        QTRY_VERIFY_WITH_TIMEOUT(t->lastResult() != nullptr, 60000);
        KernelEditor* e = t->editor();
        e->insertAt("int broken = nope;\n", e->lines() - 1, 0);
        const int line = e->lines() - 1; // 1-based: the inserted line is now the second-to-last
        QTRY_VERIFY_WITH_TIMEOUT(w->diagnosticsPanel()->model()->rowCount() >= 1, 60000);
        e->setCursorPosition(0, 0);
        QTableView* view = w->diagnosticsPanel()->view();
        // NVRTC also warns that `broken` is unused (column 5); click the error about `nope`.
        QModelIndex row;
        for (int r = 0; r < view->model()->rowCount(); ++r)
            for (int c = 0; c < view->model()->columnCount(); ++c)
                if (view->model()->index(r, c).data().toString().contains("nope"))
                    row = view->model()->index(r, 0);
        QVERIFY2(row.isValid(), "the Problems panel lists the undefined identifier");
        view->scrollTo(row);
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(row).center());
        int curLine = -1, curIndex = -1;
        e->getCursorPosition(&curLine, &curIndex);
        QCOMPARE(curLine + 1, line);
        QCOMPARE(curIndex + 1, 14); // "nope" starts at column 14
    }

    void changingTheArchitectureRecompilesAndUpdatesOccupancy()
    {
        auto w = makeWindow();
        CandidateTab* t = w->currentTab();
        QTRY_VERIFY_WITH_TIMEOUT(t->lastResult() != nullptr, 60000);
        QTRY_VERIFY(!std::isnan(w->occupancyPanel()->occupancy()));
        auto* combo = w->occupancyPanel()->findChild<QComboBox*>("architectureCombo");
        QVERIFY2(combo, "the occupancy panel names its architecture selector");
        const int sm75 = combo->findData("sm_75");
        QVERIFY(sm75 >= 0);
        combo->setCurrentIndex(sm75); // what a user's click does
        QCOMPARE(w->compileController()->architecture(), QString("sm_75"));
        QTRY_COMPARE_WITH_TIMEOUT(QString::fromStdString(t->lastResult()->arch), QString("sm_75"), 60000);
        QCOMPARE(w->occupancyPanel()->architecture(), QString("sm_75"));
        QTRY_VERIFY(w->statusBarWidget()->compileText().contains("sm_75"));
        m_settings->setDefaultArchitecture("sm_90");
    }

    void unsavedEditsSurviveACrash()
    {
        const QString marker = "// edited before the crash";
        QString file;
        {
            auto w = makeWindow();
            CandidateTab* t = w->currentTab();
            file = t->filePath();
            t->editor()->append("\n" + marker + "\n");
            QVERIFY(t->isModified());
            // The snapshot timer writes the buffer within a few seconds; then "crash": the
            // window goes away without closeEvent, as when the process dies.
            QTRY_COMPARE_WITH_TIMEOUT(w->recoverableCount(), 1, 10000);
        }
        auto w = makeWindow();
        QCOMPARE(w->recoverableCount(), 1);
        w->restoreRecovered(true);
        CandidateTab* t = w->currentTab();
        QCOMPARE(t->filePath(), file);
        QVERIFY(t->text().contains(marker));
        QVERIFY(t->isModified());
        QFile onDisk(file);
        QVERIFY(onDisk.open(QIODevice::ReadOnly));
        QVERIFY2(!onDisk.readAll().contains(marker.toUtf8()), "restore must not save behind the user's back");
        // Saving ends the recovery; the next start offers nothing.
        QVERIFY(w->saveCurrent());
        QCOMPARE(w->recoverableCount(), 0);
    }

    void noGpuIsCompileOnlyMode()
    {
        auto w = makeWindow(true);
        QTRY_COMPARE_WITH_TIMEOUT(w->statusBarWidget()->runnerText(), QString("local · no GPU: compile-only mode"), 120000);
        QSignalSpy finished(w->runController(), &RunController::finished);
        w->verify();
        QVERIFY(finished.wait(120000));
        QCOMPARE(finished.first().at(0).toBool(), false);
        QVERIFY2(w->runPanel()->bannerText().contains("no GPU"), qPrintable(w->runPanel()->bannerText()));
        // The editor is untouched by the failed run.
        QVERIFY(w->currentTab() != nullptr);
    }

    // Issue 23: fault injection with the workbench on top. A runner that crashes mid-launch,
    // writes garbage, stops itself (SIGSTOP) or speaks another protocol: the window stays up,
    // the unsaved edit stays in the editor, and the Runs panel shows one sentence.
    void runnerFaultsLeaveTheWindowAndTheEdits_data()
    {
        QTest::addColumn<int>("behaviour");
        QTest::addColumn<QString>("needle");
        using B = kf::test::FakeRunner::Behaviour;
        QTest::newRow("crash mid-launch") << int(B::Crash) << "SIGSEGV";
        QTest::newRow("garbage on stdout") << int(B::Garbage) << "malformed";
        QTest::newRow("frozen (SIGSTOP)") << int(B::Freeze) << "no sign of life";
        QTest::newRow("another protocol") << int(B::OldProtocol) << "protocol";
    }
    void runnerFaultsLeaveTheWindowAndTheEdits()
    {
        QFETCH(int, behaviour);
        QFETCH(QString, needle);
        kf::test::FakeRunner fake(static_cast<kf::test::FakeRunner::Behaviour>(behaviour));
        auto w = makeWindow(false, fake.path());
        CandidateTab* t = w->currentTab();
        QTRY_VERIFY_WITH_TIMEOUT(t->lastResult() != nullptr, 60000);
        if (!t->lastResult()->success)
            QSKIP("the candidate does not compile here (no NVRTC?)");
        const QString marker = "// an edit the runner must not cost";
        t->editor()->append("\n" + marker + "\n");
        QSignalSpy finished(w->runController(), &RunController::finished);
        w->verify();
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.first().at(0).toBool(), false);
        QVERIFY(w->isVisible());
        QVERIFY(t->text().contains(marker));
        // Verify saved the edit before the run: it is on disk whatever the runner did.
        QFile onDisk(t->filePath());
        QVERIFY(onDisk.open(QIODevice::ReadOnly));
        QVERIFY(onDisk.readAll().contains(marker.toUtf8()));
        const QString banner = w->runPanel()->bannerText();
        QVERIFY2(banner.contains(needle, Qt::CaseInsensitive), qPrintable(banner));
        QVERIFY2(!banner.contains('\n'), qPrintable(banner));
        QVERIFY2(banner.count(QStringLiteral("it was restarted")) <= 1, qPrintable(banner)); // said once
        qInfo("%s: %s", QTest::currentDataTag(), qPrintable(banner));
        // The window still works: the editor takes more typing and saves it.
        t->editor()->append("// and more\n");
        QVERIFY(t->isModified());
        QVERIFY(w->saveCurrent());
        QVERIFY(!t->isModified());
    }

    void toleranceOverrideIsAnnouncedOnTheRun()
    {
        m_settings->setToleranceOverride({0.5, std::nullopt});
        auto w = makeWindow();
        QSignalSpy finished(w->runController(), &RunController::finished);
        w->verify();
        QVERIFY(finished.wait(120000));
        m_settings->setToleranceOverride({});
        QVERIFY2(w->runPanel()->title().contains("tolerance override (rtol 0.5, atol task's)"),
                 qPrintable(w->runPanel()->title()));
    }

    // Issue 19: Run ▸ Verify under compute-sanitizer, its findings at their lines beside NVRTC's
    // diagnostics, and the Runs panel's sanitizer row and placement. The scripted runner answers
    // with two made-up findings in vector_add/naive.cu: memcheck at line 9, a race at lines 9 and 7.
    void sanitizerFindingsBecomeDiagnostics()
    {
        kf::test::FakeRunner fake(kf::test::FakeRunner::Behaviour::SanitizerFindings);
        auto w = makeWindow(false, fake.path());
        QAction* action = w->verifySanitizedAction();
        QVERIFY(action);
        QCOMPARE(action->shortcut(), QKeySequence(QStringLiteral("Ctrl+F5")));
        CandidateTab* t = w->openFile(m_workspace + "/vector_add/naive.cu");
        QVERIFY(t);
        QTRY_VERIFY_WITH_TIMEOUT(t->lastResult() != nullptr, 60000);
        if (!t->lastResult()->success)
            QSKIP("the candidate does not compile here (no NVRTC?)");
        KernelEditor* e = t->editor();
        // An NVRTC warning after the kernel (lines 1-10 stay as the findings name them).
        e->append("\n__device__ int kf_unused_helper() { int unused_value = 3; return 0; }\n");
        QTRY_VERIFY_WITH_TIMEOUT(!t->lastResult()->diagnostics.empty(), 60000);
        const int nvrtcRows = w->diagnosticsPanel()->model()->rowCount();
        QVERIFY(nvrtcRows >= 1);

        QSignalSpy finished(w->runController(), &RunController::finished);
        action->trigger();
        QVERIFY(finished.wait(60000));
        QVERIFY2(w->runPanel()->title().contains("under compute-sanitizer (memcheck, racecheck, initcheck, synccheck)"),
                 qPrintable(w->runPanel()->title()));
        // The request asked for every tool.
        const QStringList sent = fake.requests();
        QCOMPARE(sent.size(), 1);
        const auto request = nlohmann::json::parse(sent.first().toStdString());
        QVERIFY2(request.contains("sanitize"), sent.first().left(400).toUtf8().constData());
        QVERIFY(request["sanitize"]["tools"] == nlohmann::json({"memcheck", "racecheck", "initcheck", "synccheck"}));

        // The editor: errors at line 9, the race's other access as a note at line 7.
        auto bySource = [](const std::vector<kf::Diagnostic>& d, const char* source) {
            return std::count_if(d.begin(), d.end(), [&](const kf::Diagnostic& x) { return x.source == source; });
        };
        QTRY_COMPARE(bySource(e->diagnosticsOnLine(9), "compute-sanitizer memcheck"), 1);
        QCOMPARE(bySource(e->diagnosticsOnLine(9), "compute-sanitizer racecheck"), 1);
        QCOMPARE(bySource(e->diagnosticsOnLine(7), "compute-sanitizer racecheck"), 1);
        QCOMPARE(e->diagnosticsOnLine(7).front().severity, kf::Diagnostic::Severity::Note);
        QCOMPARE(QString::fromStdString(e->diagnosticsOnLine(9).front().message),
                 QString("compute-sanitizer memcheck: out-of-bounds read of 4 bytes in vector_add at naive.cu:9, "
                         "block (16,0,0) thread (3,0,0) (reported 2 times)"));
        QVERIFY(!e->diagnosticsAt(9, 9).empty()); // a squiggle over the line's code
        // Problems: NVRTC's rows and the sanitizer's, side by side.
        const kf::ui::DiagnosticsModel* problems = w->diagnosticsPanel()->model();
        QCOMPARE(problems->rowCount(), nvrtcRows + 3);
        QStringList sources;
        for (int r = 0; r < problems->rowCount(); ++r)
            sources << problems->index(r, kf::ui::DiagnosticsModel::Source).data().toString();
        QCOMPARE(sources.count("NVRTC"), nvrtcRows);
        QCOMPARE(sources.count("compute-sanitizer memcheck"), 1);
        QCOMPARE(sources.count("compute-sanitizer racecheck"), 2);
        QVERIFY2(w->diagnosticsPanel()->summary().contains("2 errors"), qPrintable(w->diagnosticsPanel()->summary()));

        // The Runs panel: the sanitizer's row, where it ran, and a banner that fails the run.
        const kf::ui::ResultsModel* rows = w->runPanel()->model();
        const int row = rows->findSanitizerRow("naive.cu");
        QVERIFY(row >= 0);
        QVERIFY2(rows->index(row, kf::ui::ResultsModel::DetailsColumn).data().toString().startsWith(
                     "compute-sanitizer 2025.3.1.0: 2 findings — first: memcheck: out-of-bounds read of 4 bytes in vector_add"),
                 qPrintable(rows->index(row, kf::ui::ResultsModel::DetailsColumn).data().toString()));
        QCOMPARE(rows->index(rows->findRow("naive.cu", "tail"), kf::ui::ResultsModel::PlacementColumn).data().toString(),
                 QString("box · fake-host · GPU-1a2b3c4d"));
        QVERIFY2(w->runPanel()->bannerText().startsWith("FAIL · 1/1 shapes passed · compute-sanitizer 2025.3.1.0: 2 findings — "
                                                        "first: memcheck: out-of-bounds read"),
                 qPrintable(w->runPanel()->bannerText()));

        // Editing line 9 makes its findings stale (and the note that belongs to the race goes with
        // them); NVRTC's warning stays. Undo brings the verified text, and the findings, back.
        e->setSelection(8, 0, 8, e->text(8).length() - 1);
        e->replaceSelectedText("        c[i] = a[i] - b[i];");
        QTRY_COMPARE_WITH_TIMEOUT(bySource(e->diagnosticsOnLine(9), "compute-sanitizer memcheck"), 0, 60000);
        QCOMPARE(bySource(e->diagnosticsOnLine(7), "compute-sanitizer racecheck"), 0);
        QTRY_COMPARE(problems->rowCount(), nvrtcRows);
        e->undo();
        QTRY_COMPARE_WITH_TIMEOUT(bySource(e->diagnosticsOnLine(9), "compute-sanitizer memcheck"), 1, 60000);
        QTRY_COMPARE(problems->rowCount(), nvrtcRows + 3);

        // The next verification replaces them: one without the tools leaves none.
        kf::test::FakeRunner passing(kf::test::FakeRunner::Behaviour::Pass);
        RunService::Options o = w->runController()->service()->options();
        o.runnerPath = passing.path();
        QVERIFY(w->runController()->service()->setOptions(o));
        finished.clear();
        w->verify();
        QVERIFY(finished.wait(60000));
        QTRY_COMPARE(bySource(e->diagnosticsOnLine(9), "compute-sanitizer memcheck"), 0);
        QCOMPARE(problems->rowCount(), nvrtcRows);
        QCOMPARE(w->runPanel()->model()->findSanitizerRow("naive.cu"), -1);
        // And the status bar names the runner the new options started.
        QTRY_COMPARE(w->statusBarWidget()->runnerText(), QString("local · Fake GPU · GPU-1a2b3c4d · sm_90"));
    }

    // The endpoint of runners.json the workbench runs on, with its GPU, in the status bar; and
    // what it says when the connection to it is lost.
    void statusBarNamesTheEndpoint_data()
    {
        QTest::addColumn<int>("behaviour");
        QTest::addColumn<bool>("run");
        QTest::addColumn<QString>("text"); // the runner text, or its start when it ends in a sentence
        using B = kf::test::FakeRunner::Behaviour;
        QTest::newRow("after the hello") << int(B::Pass) << false << "box · Fake GPU · GPU-1a2b3c4d · sm_90";
        QTest::newRow("connection lost during a run") << int(B::Freeze) << true << "box: connection lost — no message from box";
    }
    void statusBarNamesTheEndpoint()
    {
        QFETCH(int, behaviour);
        QFETCH(bool, run);
        QFETCH(QString, text);
        kf::test::FakeRunner fake(static_cast<kf::test::FakeRunner::Behaviour>(behaviour));
        const QString runners = m_fx.scratch() + "/runners-box.json";
        {
            // An endpoint of kind command around the scripted runner: remote, as far as the
            // supervisor knows, so a silent runner is a lost connection.
            QFile f(runners);
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            const nlohmann::json j = {{"schema_version", 1}, {"default", "box"},
                                      {"endpoints", {{{"name", "box"}, {"kind", "command"}, {"shared_fs", true},
                                                      {"heartbeat_timeout_s", 1}, {"launch_latency_ms", 0},
                                                      {"runner", fake.path().toStdString()},
                                                      {"command", {"sh", "-c", "exec \"$0\"", "{runner}"}}}}}};
            f.write(QByteArray::fromStdString(j.dump()));
        }
        auto w = makeWindow(!run, fake.path(), runners);
        QCOMPARE(w->runController()->service()->endpointName(), QString("box"));
        if (run) {
            CandidateTab* t = w->openFile(m_workspace + "/vector_add/naive.cu");
            QTRY_VERIFY_WITH_TIMEOUT(t->lastResult() != nullptr, 60000);
            if (!t->lastResult()->success)
                QSKIP("the candidate does not compile here (no NVRTC?)");
            QSignalSpy finished(w->runController(), &RunController::finished);
            w->verify();
            QVERIFY(finished.wait(60000));
        }
        QTRY_VERIFY2_WITH_TIMEOUT(w->statusBarWidget()->runnerText().startsWith(text), qPrintable(w->statusBarWidget()->runnerText()),
                                  60000);
        if (run)
            QVERIFY2(w->runPanel()->bannerText().contains("the connection is presumed lost"), qPrintable(w->runPanel()->bannerText()));
    }

    // Issue 20: F5, Ctrl+F5, F6 and F7 on a source that does not compile say so and go to the
    // first error; the runner is never started.
    void uncompilableSourceIsNotRun_data()
    {
        QTest::addColumn<int>("action"); // 0 verify, 1 under compute-sanitizer, 2 benchmark, 3 profile
        QTest::addColumn<QString>("edit");
        QTest::addColumn<QString>("sentence");
        QTest::addColumn<int>("line");
        const QString oneError = "    float oops = ;\n";
        const QString twoErrors = "    float oops = ;\n    undefined_thing(1);\n";
        QTest::newRow("F5, one error") << 0 << oneError << "1 compile error — fix them first" << 8;
        QTest::newRow("Ctrl+F5, one error") << 1 << oneError << "1 compile error — fix them first" << 8;
        QTest::newRow("F6, two errors") << 2 << twoErrors << "2 compile errors — fix them first" << 8;
        QTest::newRow("F7, two errors") << 3 << twoErrors << "2 compile errors — fix them first" << 8;
    }
    void uncompilableSourceIsNotRun()
    {
        QFETCH(int, action);
        QFETCH(QString, edit);
        QFETCH(QString, sentence);
        QFETCH(int, line);
        kf::test::FakeRunner fake(kf::test::FakeRunner::Behaviour::Pass);
        auto w = makeWindow(false, fake.path());
        CandidateTab* t = w->openFile(m_workspace + "/vector_add/naive.cu");
        QVERIFY(t);
        QTRY_VERIFY_WITH_TIMEOUT(t->lastResult() != nullptr, 60000);
        if (!t->lastResult()->success)
            QSKIP("the candidate does not compile here (no NVRTC?)");
        const QString original = t->text();
        // Broken below the opening lines, and F5 at once: before the debounce built the new text.
        QStringList lines = original.split('\n');
        lines.insert(line - 1, edit.chopped(1));
        t->editor()->setText(lines.join('\n'));
        t->editor()->setCursorPosition(0, 0);
        QVERIFY(!t->resultIsCurrent());
        QSignalSpy running(w->runController(), &RunController::runningChanged);
        switch (action) {
        case 0: w->verify(); break;
        case 1: w->verifySanitized(); break;
        case 2: w->benchmark(); break;
        default: w->profile(); break;
        }
        QTRY_VERIFY2_WITH_TIMEOUT(w->runPanel()->bannerText().contains(sentence), qPrintable(w->runPanel()->bannerText()), 60000);
        QCOMPARE(running.count(), 0);
        QVERIFY(!w->runController()->service()->hello().has_value()); // the runner never started
        int cursorLine = -1, cursorColumn = -1;
        t->editor()->getCursorPosition(&cursorLine, &cursorColumn);
        QCOMPARE(cursorLine + 1, line);
        // Nothing was saved: the file on disk is still the one that compiles.
        QFile onDisk(t->filePath());
        QVERIFY(onDisk.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(onDisk.readAll()), original);
        // Fixed, the same key runs.
        t->editor()->setText(original);
        QSignalSpy finished(w->runController(), &RunController::finished);
        w->verify();
        QVERIFY(finished.wait(60000));
        QVERIFY(running.count() > 0);
    }

    // A click in Problems and the run gate's jump share MainWindow::goToDiagnostic: the
    // candidate's own errors stay in its tab, another file's go to its tab or open it.
    void problemGoesToItsFile_data()
    {
        QTest::addColumn<QString>("file");   // as the diagnostic names it; $WS is the workspace
        QTest::addColumn<QString>("expectTab");   // file name of the tab that must be current; empty: none found
        QTest::addColumn<int>("tabsAdded");
        QTest::newRow("own, by file name") << "naive.cu" << "naive.cu" << 0;
        QTest::newRow("own, unnamed (NVRTC's program)") << "" << "naive.cu" << 0;
        QTest::newRow("another open tab, by path") << "$WS/vector_add/optimized.cu" << "optimized.cu" << 0;
        QTest::newRow("a header not open yet") << "$WS/vector_add/helper.cuh" << "helper.cuh" << 1;
        QTest::newRow("a file that is not there") << "$WS/vector_add/missing.cuh" << "" << 0;
    }
    void problemGoesToItsFile()
    {
        QFETCH(QString, file);
        QFETCH(QString, expectTab);
        QFETCH(int, tabsAdded);
        QFile header(m_workspace + "/vector_add/helper.cuh");
        QVERIFY(header.open(QIODevice::WriteOnly | QIODevice::Truncate));
        header.write("#pragma once\n\n\n__device__ inline float twice(float x) { return 2 * x; }\n");
        header.close();
        auto w = makeWindow();
        QVERIFY(w->openFile(m_workspace + "/vector_add/optimized.cu"));
        CandidateTab* naive = w->openFile(m_workspace + "/vector_add/naive.cu");
        QVERIFY(naive);
        naive->editor()->setCursorPosition(0, 0);
        const int tabsBefore = int(w->tabs().size());
        file.replace("$WS", m_workspace);
        // Through the Problems panel's own signal, as a click sends it.
        emit w->diagnosticsPanel()->diagnosticActivated(file, 4, 3);
        QCOMPARE(int(w->tabs().size()), tabsBefore + tabsAdded);
        int line = -1, column = -1;
        w->currentTab()->editor()->getCursorPosition(&line, &column);
        if (expectTab.isEmpty()) {
            QCOMPARE(w->currentTab(), naive);   // nothing moved
            QCOMPARE(line, 0);
            QVERIFY(!w->goToDiagnostic(file, 4, 3));
            return;
        }
        QCOMPARE(w->currentTab()->fileName(), expectTab);
        QCOMPARE(line + 1, 4);
        QCOMPARE(column + 1, 3);
    }

    // Issue 20: the editor gets more than half the window at every size; the Workspace, the
    // right-hand panels and the bottom panels take about 15 %, 30 % and 25 %.
    void layoutGivesTheEditorHalfTheWindow_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1280x800") << QSize(1280, 800);
        QTest::newRow("1920x1080") << QSize(1920, 1080);
        QTest::newRow("2560x1440") << QSize(2560, 1440);
    }
    void layoutGivesTheEditorHalfTheWindow()
    {
        QFETCH(QSize, size);
        auto w = makeWindow();
        // Where a previous test left the docks does not matter: Reset Layout puts them back.
        w->removeDockWidget(w->dock("assistantDock"));
        w->addDockWidget(Qt::RightDockWidgetArea, w->dock("assistantDock"));
        w->dock("workspaceDock")->hide();
        w->resize(size);
        QTRY_COMPARE(w->size(), size);
        w->resetLayout();
        QVERIFY(w->dock("workspaceDock")->isVisible());
        QCOMPARE(w->dockWidgetArea(w->dock("assistantDock")), Qt::BottomDockWidgetArea);
        QCOMPARE(w->dockWidgetArea(w->dock("registryDock")), Qt::RightDockWidgetArea);
        const auto widthShare = [&](const QString& name) { return double(w->dock(name)->width()) / w->width(); };
        QTRY_VERIFY2(std::abs(widthShare("workspaceDock") - 0.15) < 0.04, qPrintable(QString::number(widthShare("workspaceDock"))));
        QTRY_VERIFY2(std::abs(widthShare("assemblyDock") - 0.30) < 0.05, qPrintable(QString::number(widthShare("assemblyDock"))));
        const double bottom = double(w->dock("problemsDock")->height()) / w->height();
        QVERIFY2(std::abs(bottom - 0.25) < 0.05, qPrintable(QString::number(bottom)));
        const QWidget* editor = w->centralWidget();
        QVERIFY2(editor->width() * 2 >= w->width(), qPrintable(QString("%1 of %2").arg(editor->width()).arg(w->width())));
        QVERIFY2(editor->height() * 10 >= w->height() * 6, qPrintable(QString("%1 of %2").arg(editor->height()).arg(w->height())));
        // The bottom panels sit under the editor only: the Workspace runs the full height.
        QVERIFY(w->dock("problemsDock")->geometry().left() >= editor->geometry().left() - 8);
    }

    void firstStartFillsMostOfTheScreen_data()
    {
        QTest::addColumn<QRect>("available");
        QTest::addColumn<QRect>("window");
        QTest::newRow("1280x800") << QRect(0, 0, 1280, 800) << QRect(64, 40, 1152, 720);
        QTest::newRow("1920x1080 below a panel") << QRect(0, 32, 1920, 1048) << QRect(96, 85, 1728, 943);
        QTest::newRow("second screen") << QRect(2560, 0, 2560, 1440) << QRect(2688, 72, 2304, 1296);
    }
    void firstStartFillsMostOfTheScreen()
    {
        QFETCH(QRect, available);
        QFETCH(QRect, window);
        QCOMPARE(MainWindow::defaultGeometry(available), window);
        // A first start (no saved geometry) uses it on the window's screen.
        QSettings fresh(m_fx.scratch() + "/fresh-" + QTest::currentDataTag() + ".ini", QSettings::IniFormat);
        Settings settings(&fresh);
        MainWindow w(&settings, m_fx.options());
        QCOMPARE(w.size(), MainWindow::defaultGeometry(w.screen()->availableGeometry()).size());
    }

    void everyShortcutIsUnique()
    {
        auto w = makeWindow();
        QHash<QString, QString> seen;
        // The window's own keys; a panel's key that works only while it has the focus may repeat one.
        for (QAction* a : w->findChildren<QAction*>()) {
            if (a->shortcutContext() == Qt::WidgetShortcut || a->shortcutContext() == Qt::WidgetWithChildrenShortcut)
                continue;
            for (const QKeySequence& k : a->shortcuts()) {
                const QString key = k.toString();
                QVERIFY2(!seen.contains(key), qPrintable(QString("%1 is both %2 and %3").arg(key, seen.value(key), a->text())));
                seen.insert(key, a->text());
            }
        }
        QCOMPARE(seen.value("Ctrl+F5"), QString("Verify under compute-&sanitizer"));
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
