// The Registry dock's controller against a real registry inside a real workspace: the browser
// fills from disk, a version opens as a new candidate of its task with its own launch plan,
// re-verify hands the runner the version folder as a task, remove asks first, deprecate keeps the
// reason, a promote is revealed, and the workspace does not mistake version folders for tasks.
#include "gui/registry/registrysample.h"
#include "testutil.h"

#include "app/gui/registry/RegistryService.h"
#include "app/gui/window/RegistryController.h"
#include "app/gui/workspace/Workspace.h"
#include "widgets/registry/RegistryBrowser.h"
#include "widgets/editor/KernelEditor.h"
#include "widgets/registry/RegistryModel.h"
#include "engine/cast/CastPackage.h"
#include "engine/compile/Compiler.h"

#include <QPushButton>

#include <QSignalSpy>
#include <QTemporaryDir>

using kf::app::RegistryController;
using kf::app::Workspace;
namespace fs = std::filesystem;

class TestRegistryController : public QObject {
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void browserFillsAndWorkspaceSkipsTheRegistry();
    void openAsCandidateAddsTheVersionToItsTask();
    void openAsCandidateWithoutItsTaskSaysWhatToDo();
    void reverifyHandsOverTheVersionFolder();
    void removeAsksFirst_data();
    void removeAsksFirst();
    void deprecateKeepsTheReasonAndCancelDoesNothing();
    void revealSelectsAPromotionFromAnotherProcess();
    void exportCastRunsOffTheUiThread_data();
    void exportCastRunsOffTheUiThread();
    void exportCastCanBeCancelled();

private:
    std::unique_ptr<QTemporaryDir> m_tmp;
    kf::test::SampleRegistry m_sample;
    std::unique_ptr<Workspace> m_workspace;
    std::unique_ptr<kf::ui::RegistryBrowser> m_browser;
    std::unique_ptr<RegistryController> m_controller;
};

void TestRegistryController::init()
{
    m_tmp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_tmp->isValid());
    // The workspace holds the tasks and, as a kernelforge-workspace.json may arrange, the registry.
    m_sample = kf::test::makeSampleRegistry(m_tmp->path().toStdString());
    QVERIFY2(m_sample.error.isEmpty(), qPrintable(m_sample.error));
    m_workspace = std::make_unique<Workspace>();
    QVERIFY(m_workspace->open(m_tmp->path()));
    m_browser = std::make_unique<kf::ui::RegistryBrowser>();
    m_controller = std::make_unique<RegistryController>(m_browser.get(), m_workspace.get(), nullptr);
    m_controller->setDirectory(qs(m_sample.directory.string()));
    QTRY_COMPARE(m_browser->model()->rowCount(), 4);
}

void TestRegistryController::cleanup()
{
    m_controller.reset();
    m_browser.reset();
    m_workspace.reset();
}

void TestRegistryController::browserFillsAndWorkspaceSkipsTheRegistry()
{
    QCOMPARE(m_browser->directory(), qs(m_sample.directory.string()));
    QCOMPARE(m_workspace->taskCount(), 2); // softmax_fp32 and layer_norm_bf16, not the 4 version folders
    QVERIFY(m_browser->selectId(m_sample.layerNorm));
    QTRY_VERIFY(m_browser->sourceView()->text() ==
                QString::fromStdString(kf::readFileBytes(m_sample.directory / m_sample.layerNorm.toStdString() / "optimized.cu").value()));
}

void TestRegistryController::openAsCandidateAddsTheVersionToItsTask()
{
    QSignalSpy open(m_controller.get(), &RegistryController::openFileRequested);
    QSignalSpy problem(m_controller.get(), &RegistryController::problem);
    m_controller->openAsCandidate(m_sample.softmaxV2);
    QCOMPARE(problem.count(), 0);
    QCOMPARE(open.count(), 1);
    const QString path = open.at(0).at(0).toString();
    QVERIFY2(path.endsWith("/softmax_fp32/optimized_v2.cu"), qPrintable(path));
    auto task = kf::loadTask(fs::path(path.toStdString()).parent_path());
    KF_VERIFY_OK(task);
    const kf::Candidate* c = task->findCandidate("optimized_v2.cu");
    QVERIFY(c);
    QCOMPARE(qs(c->description), "from the registry: " + m_sample.softmaxV2);
    // The version's own launch plan, and its source byte for byte.
    const kf::Registry reg(m_sample.directory);
    auto plan = kf::json::readFile(reg.entryDirectory(m_sample.softmaxV2.toStdString()) / "launch.json");
    KF_VERIFY_OK(plan);
    QCOMPARE(qs(c->launches.front().kernel), qs(plan.value()["launches"][0]["kernel"].get<std::string>()));
    QCOMPARE(kf::readFileBytes(path.toStdString()).value(),
             kf::readFileBytes(reg.entryDirectory(m_sample.softmaxV2.toStdString()) / "optimized.cu").value());
    // Again: a new name, never an overwrite.
    m_controller->openAsCandidate(m_sample.softmaxV2);
    QCOMPARE(open.count(), 2);
    QVERIFY(open.at(1).at(0).toString().endsWith("/optimized_v2_2.cu"));
}

void TestRegistryController::openAsCandidateWithoutItsTaskSaysWhatToDo()
{
    QVERIFY(m_workspace->open(qs(m_sample.directory.string()) + "/.."));
    fs::remove_all(m_sample.directory.parent_path() / "layer_norm_bf16");
    m_workspace->rescan();
    QSignalSpy problem(m_controller.get(), &RegistryController::problem);
    QSignalSpy open(m_controller.get(), &RegistryController::openFileRequested);
    m_controller->openAsCandidate(m_sample.layerNorm);
    QCOMPARE(open.count(), 0);
    QCOMPARE(problem.count(), 1);
    QVERIFY(problem.at(0).at(0).toString().contains("No task named layer_norm_bf16 in this workspace"));
}

void TestRegistryController::reverifyHandsOverTheVersionFolder()
{
    QSignalSpy spy(m_controller.get(), &RegistryController::reverifyRequested);
    m_controller->reverify(m_sample.softmaxA100);
    QCOMPARE(spy.count(), 1);
    const auto task = spy.at(0).at(0).value<kf::Task>();
    QCOMPARE(task.candidates.size(), size_t(1));
    QCOMPARE(spy.at(0).at(1).toString(), QString("optimized.cu"));
    QCOMPARE(qs(fs::path(task.directory).filename().string()), m_sample.softmaxA100);
    QCOMPARE(spy.at(0).at(2).toString(), "registry " + m_sample.softmaxA100);
}

void TestRegistryController::removeAsksFirst_data()
{
    QTest::addColumn<bool>("answer");
    QTest::addColumn<int>("rowsAfter");
    QTest::newRow("cancelled") << false << 4;
    QTest::newRow("confirmed") << true << 3;
}

void TestRegistryController::removeAsksFirst()
{
    QFETCH(bool, answer);
    QFETCH(int, rowsAfter);
    QString asked;
    m_controller->setConfirm([&](const QString& title, const QString& text) {
        asked = title + " " + text;
        return answer;
    });
    QSignalSpy done(m_controller->service(), &kf::app::RegistryService::operationFinished);
    m_controller->remove(m_sample.layerNorm);
    QVERIFY(asked.contains("cannot be undone"));
    if (answer)
        QTRY_COMPARE(done.count(), 1);
    QTRY_COMPARE(m_browser->model()->rowCount(), rowsAfter);
    QCOMPARE(fs::exists(m_sample.directory / m_sample.layerNorm.toStdString()), !answer);
}

void TestRegistryController::deprecateKeepsTheReasonAndCancelDoesNothing()
{
    m_controller->setAskReason([](const QString&) { return std::nullopt; });
    m_controller->deprecate(m_sample.layerNorm);
    QCOMPARE(m_controller->service()->jobsInFlight(), 0);
    m_controller->setAskReason([](const QString&) { return std::optional<QString>("numerics drift on sm_100"); });
    m_controller->deprecate(m_sample.layerNorm);
    QTRY_VERIFY(kf::Registry(m_sample.directory).entry(m_sample.layerNorm.toStdString())->deprecated());
    QCOMPARE(qs(kf::Registry(m_sample.directory).entry(m_sample.layerNorm.toStdString())->deprecationReason),
             QString("numerics drift on sm_100"));
}

void TestRegistryController::revealSelectsAPromotionFromAnotherProcess()
{
    // Another writer promotes; reveal() asks before the watcher has brought it.
    const kf::Registry reg(m_sample.directory);
    auto out = reg.promote(kf::test::passingInput(m_sample.directory.parent_path() / "layer_norm_bf16", "optimized.cu"));
    KF_VERIFY_OK(out);
    QVERIFY(out->entry);
    m_controller->reveal(qs(out->entry->id));
    QTRY_COMPARE(m_browser->currentId(), qs(out->entry->id));
}


void TestRegistryController::exportCastRunsOffTheUiThread_data()
{
    QTest::addColumn<QStringList>("versions");   // "v2", "a100", "ln"
    QTest::addColumn<bool>("ok");
    QTest::addColumn<QString>("sentence");
    QTest::newRow("two ops") << QStringList{"v2", "ln"} << true << "cast::softmax_fp32, cast::layer_norm_bf16";
    QTest::newRow("one op on two GPUs") << QStringList{"v2", "a100"} << false << "would both be cast::softmax_fp32";
    QTest::newRow("two ops and a model") << QStringList{"v2", "ln", "model"} << true << "Models: toy (may use 1 packaged op(s))";
}

void TestRegistryController::exportCastRunsOffTheUiThread()
{
    QFETCH(QStringList, versions);
    QFETCH(bool, ok);
    QFETCH(QString, sentence);
    if (auto nvrtc = kf::nvrtcVersion(); !nvrtc)
        QSKIP("export compiles with NVRTC, which this machine lacks");
    const QMap<QString, QString> ids{{"v2", m_sample.softmaxV2}, {"a100", m_sample.softmaxA100}, {"ln", m_sample.layerNorm}};
    const QString out = m_tmp->path() + "/ops.cast";
    // The toy model tests/cast/make_toy_models.py writes (CTest fixture cast_models).
    const QString toy = QString(KF_CAST_FIXTURE_DIR) + "/models/toy_fp32.pt2";
    if (versions.contains("model") && !QFileInfo::exists(toy))
        QSKIP("the toy model needs a Python with torch (CTest fixture cast_models)");
    QString askedFor;
    m_controller->setAskExport([&](const QString& id) -> std::optional<kf::ui::CastExportChoice> {
        askedFor = id;
        kf::ui::CastExportChoice c;
        for (const QString& v : versions)
            if (v == "model")
                c.models.append({"toy", toy, {}});
            else
                c.ids << ids[v];
        c.architectures = {"sm_80", "sm_90"};
        c.output = out;
        return c;
    });
    QVERIFY(m_browser->selectId(m_sample.softmaxV2));
    QVERIFY(m_browser->exportButton()->isEnabled());
    QSignalSpy done(m_controller.get(), &RegistryController::exportFinished);
    m_browser->exportButton()->click();
    QCOMPARE(askedFor, m_sample.softmaxV2);
    QVERIFY(m_controller->exporting());   // the click returned while NVRTC works
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 120000);
    QCOMPARE(done.at(0).at(0).toBool(), ok);
    QVERIFY2(done.at(0).at(1).toString().contains(sentence), qPrintable(done.at(0).at(1).toString()));
    QCOMPARE(QFileInfo::exists(out), ok);
    if (ok) {
        auto pkg = kf::cast::openPackage(out.toStdString());
        QVERIFY2(pkg, pkg ? "" : pkg.error().message().c_str());
        QCOMPARE(pkg->ops.size(), size_t(2));
        QVERIFY(pkg->manifest["architectures"] == nlohmann::json({"sm_80", "sm_90"}));
        QCOMPARE(pkg->models.size(), size_t(versions.contains("model") ? 1 : 0));
    }
}

void TestRegistryController::exportCastCanBeCancelled()
{
    if (auto nvrtc = kf::nvrtcVersion(); !nvrtc)
        QSKIP("export compiles with NVRTC, which this machine lacks");
    const QString out = m_tmp->path() + "/cancelled.cast";
    m_controller->setAskExport([&](const QString&) -> std::optional<kf::ui::CastExportChoice> {
        kf::ui::CastExportChoice c;
        c.ids = {m_sample.softmaxV2, m_sample.layerNorm};
        c.architectures = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"};
        c.output = out;
        return c;
    });
    QSignalSpy done(m_controller.get(), &RegistryController::exportFinished);
    m_controller->exportCast(m_sample.softmaxV2);
    m_controller->cancelExport();
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 120000);
    QCOMPARE(done.at(0).at(0).toBool(), false);
    QVERIFY2(done.at(0).at(1).toString().contains("cancelled"), qPrintable(done.at(0).at(1).toString()));
    QVERIFY(!QFileInfo::exists(out));

    // Asking and then declining does nothing at all.
    m_controller->setAskExport([](const QString&) { return std::nullopt; });
    m_controller->exportCast(m_sample.softmaxV2);
    QVERIFY(!m_controller->exporting());
    QCOMPARE(done.count(), 1);
}

QTEST_MAIN(TestRegistryController)
#include "tst_registrycontroller.moc"
