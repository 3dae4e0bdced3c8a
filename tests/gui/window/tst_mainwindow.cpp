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
#include "widgets/diagnostics/DiagnosticsModel.h"
#include "widgets/diagnostics/DiagnosticsPanel.h"
#include "widgets/editor/KernelEditor.h"
#include "widgets/occupancy/OccupancyPanel.h"
#include "widgets/runs/RunPanel.h"

#include <QComboBox>
#include <QDir>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <memory>

using namespace kf::app;
using kf::ui::KernelEditor;


class TestMainWindow : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_workspace;
    std::unique_ptr<QSettings> m_qsettings;
    std::unique_ptr<Settings> m_settings;

    std::unique_ptr<MainWindow> makeWindow(bool withRunner = false, const QString& runnerPath = KF_RUNNER_BIN)
    {
        MainWindow::Options o;
        o.workspace = m_workspace;
        o.recoveryDir = m_tmp.path() + "/recovery";
        o.cacheDir = m_tmp.path() + "/cache";
        o.probeRunner = withRunner;
        o.askToRestore = false;
        o.runner.runnerPath = runnerPath;
        o.runner.extraEnv = {"KF_RUNNER_FORCE_CPU=1"}; // CI has no GPU; make that true everywhere
        auto w = std::make_unique<MainWindow>(m_settings.get(), o);
        w->show();
        return w;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        m_workspace = m_tmp.path() + "/ws";
        QString error;
        QVERIFY2(copyFolder(KF_SOURCE_DIR "/resources/examples/softmax_fp32", m_workspace + "/softmax_fp32", &error),
                 qPrintable(error));
        m_qsettings = std::make_unique<QSettings>(m_tmp.path() + "/settings.ini", QSettings::IniFormat);
        m_settings = std::make_unique<Settings>(m_qsettings.get());
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
        QTRY_COMPARE_WITH_TIMEOUT(w->statusBarWidget()->runnerText(), QString("no GPU: compile-only mode"), 120000);
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
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
