// Run ▸ Tune through the window: which candidate it searches, the sentence when the task has
// none to search, and a search on the scripted runner (tests/fakerunner.h) whose points come to
// the Tune view, whose run shows in the Runs panel, and whose point opens as a new candidate.
// The scripted runner answers the bench with a correctness report, so no point is timed: the
// search's decisions against real reports are tests/tst_tune.cpp's.
#include "app/gui/window/CandidateTab.h"
#include "app/gui/window/MainWindow.h"
#include "app/gui/window/TuneController.h"
#include "engine/core/Files.h"
#include "fakerunner.h"
#include "testutil.h"
#include "widgets/runs/RunPanel.h"
#include "widgets/tune/TuneTableModel.h"
#include "widgets/tune/TuneView.h"
#include "windowfixture.h"

#include <QAction>
#include <QDialog>
#include <QFile>
#include <QLabel>
#include <QMenuBar>
#include <QPushButton>
#include <QTest>

#include <nlohmann/json.hpp>

using namespace kf;
using kf::app::MainWindow;
using kf::app::TuneController;

namespace {

/// vector_add's naive.cu with a "tune" block: BLOCK in {256, 128}, the launch's block size.
bool makeTunable(const QString& taskDir)
{
    const std::filesystem::path dir = taskDir.toStdString();
    auto text = readFileBytes(dir / "task.json");
    if (!text)
        return false;
    auto j = nlohmann::json::parse(*text);
    auto& naive = j["candidates"][0];
    naive["defines"] = {{"BLOCK", 256}};
    naive["launches"][0]["grid"] = "ceil_div(N, BLOCK)";
    naive["launches"][0]["block"] = "BLOCK";
    naive["tune"] = {{"space", {{"BLOCK", {128, 256}}}}};
    j["candidates"][1].erase("tune");   // the example's optimized.cu has a space of its own: not here

    return bool(writeFileAtomic(dir / "task.json", j.dump(2)));
}

QAction* tuneAction(MainWindow& w)
{
    for (QAction* top : w.menuBar()->actions())
        if (top->menu())
            for (QAction* a : top->menu()->actions())
                if (a->text() == "&Tune…")
                    return a;
    return nullptr;
}

} // namespace

class TestTuneController : public QObject {
    Q_OBJECT
    kf::test::WindowFixture m_fx;

private slots:
    void initTestCase()
    {
        QString error;
        QVERIFY2(m_fx.setUp({"vector_add", "gemm_fp16"}, &error), qPrintable(error));
        QVERIFY(makeTunable(m_fx.workspace() + "/vector_add"));
    }

    void chooseCandidate_data()
    {
        QTest::addColumn<QString>("task");
        QTest::addColumn<QString>("inEditor");
        QTest::addColumn<QString>("chosen");
        QTest::newRow("the editor's candidate has a tune block") << "vector_add" << "naive.cu" << "naive.cu";
        QTest::newRow("the editor's has none: the task's first that has one") << "vector_add" << "optimized.cu" << "naive.cu";
        QTest::newRow("no candidate has one") << "gemm_fp16" << "optimized.cu" << "";
    }
    void chooseCandidate()
    {
        QFETCH(QString, task);
        QFETCH(QString, inEditor);
        QFETCH(QString, chosen);
        auto t = loadTask((m_fx.workspace() + "/" + task).toStdString());
        KF_VERIFY_OK(t);
        QCOMPARE(QString::fromStdString(TuneController::chooseCandidate(*t, inEditor.toStdString()).value_or("")), chosen);
    }

    void aTaskWithoutATuneBlockSaysSo()
    {
        auto w = m_fx.make(m_fx.options());
        QVERIFY(w->openFile(m_fx.workspace() + "/gemm_fp16/optimized.cu"));
        QAction* tune = tuneAction(*w);
        QVERIFY(tune);
        QCOMPARE(tune->shortcut(), QKeySequence("Ctrl+F6"));
        tune->trigger();
        QTRY_VERIFY(w->tuneController()->window() && w->tuneController()->window()->isVisible());
        const QString said = w->tuneController()->view()->findChild<QLabel*>("tuneTarget")->text();
        QVERIFY2(said.contains("No candidate of task gemm_fp16 has a \"tune\" block"), qPrintable(said));
        QVERIFY(!w->tuneController()->view()->findChild<QPushButton*>("tuneStart")->isEnabled());
    }

    // The real runner in CPU mode (the fixture forces it): nothing is compiled or timed, the
    // window says why and what to do, and the status bar shows compile-only mode.
    void withoutAGpuTuneSaysWhy()
    {
        MainWindow::Options o = m_fx.options();
        o.runner.runnerPath = KF_RUNNER_BIN;
        auto w = m_fx.make(o);
        QVERIFY(w->openFile(m_fx.workspace() + "/vector_add/naive.cu"));
        tuneAction(*w)->trigger();
        kf::ui::TuneView* view = w->tuneController()->view();
        view->findChild<QPushButton*>("tuneStart")->click();
        QTRY_VERIFY_WITH_TIMEOUT(!view->isRunning(), 120000);
        const QString said = view->findChild<QLabel*>("tuneStage")->text();
        QVERIFY2(said.contains("no GPU: no CUDA device") && said.contains("need a CUDA device"), qPrintable(said));
        QVERIFY(!view->outcome());
        QVERIFY(!QFile::exists(m_fx.workspace() + "/vector_add/naive_tuned.cu"));
    }

    void aSearchRunsAndAPointOpensAsACandidate()
    {
        kf::test::FakeRunner fake(kf::test::FakeRunner::Behaviour::Pass);
        MainWindow::Options o = m_fx.options();
        o.runner.runnerPath = fake.path();
        auto w = m_fx.make(o);
        const QString dir = m_fx.workspace() + "/vector_add";
        QVERIFY(w->openFile(dir + "/naive.cu"));
        tuneAction(*w)->trigger();
        kf::ui::TuneView* view = w->tuneController()->view();
        QCOMPARE(view->findChild<QLabel*>("tuneTarget")->text(), QString("vector_add / naive.cu · 2 points of BLOCK"));
        view->setBudgetS(60);
        view->findChild<QPushButton*>("tuneStart")->click();
        QVERIFY(view->isRunning());
        QCOMPARE(w->runPanel()->title(), QString("Tune vector_add/naive.cu"));
        QTRY_VERIFY_WITH_TIMEOUT(!view->isRunning(), 120000);
        QVERIFY(view->outcome());
        const kf::tune::Outcome& out = *view->outcome();
        if (!out.points.empty() && out.points.front().stage == kf::tune::Stage::CompileFailed)
            QSKIP(qPrintable("NVRTC unavailable: " + QString::fromStdString(out.points.front().reason)));
        QCOMPARE(view->model()->rowCount(), 2);
        for (int row = 0; row < 2; ++row)
            QCOMPARE(view->model()->index(row, kf::ui::TuneTableModel::Stage).data().toString(), QString("bench failed"));
        const QString ending = view->findChild<QLabel*>("tuneStage")->text();
        QVERIFY2(ending.contains("no point passed verify and was timed"), qPrintable(ending));
        QVERIFY(!QFile::exists(dir + "/naive_tuned.cu"));   // no winner, nothing written

        // Open as Candidate: the point written back with its define, then open in the editor.
        view->selectPoint(2);
        QCOMPARE(view->model()->index(1, kf::ui::TuneTableModel::Parameters).data().toString(), QString("BLOCK=128"));
        view->openButton()->click();
        QTRY_COMPARE(w->currentTab()->fileName(), QString("naive_tuned.cu"));
        auto task = loadTask(dir.toStdString());
        KF_VERIFY_OK(task);
        const Candidate* c = task->findCandidate("naive_tuned.cu");
        QVERIFY(c);
        QCOMPARE(*c->define("BLOCK"), std::string("128"));
    }
};

QTEST_MAIN(TestTuneController)
#include "tst_tunecontroller.moc"
