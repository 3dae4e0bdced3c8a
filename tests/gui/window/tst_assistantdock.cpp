// The Assistant panel (widgets/assistant/AssistantDock) driven by its controller
// (app/gui/window/AssistantController) over the engine's real synthesis loop
// (engine/synth/Synthesis.h) and real NVRTC builds. Two labelled test doubles stand in for what
// this machine does not have, through the controller's test injection point: a scripted model
// (replies from a list, instead of an HTTP server) and a runner that answers with report
// fixtures from tests/data/reports (instead of a GPU). Covered: an existing task to "candidate"
// from the main window (stages, candidates, the task reloaded with the new file); the interview
// with a question answered in the panel and the proposal accepted or rejected by a click; Cancel
// while the model, a question or the proposal waits; Settings ▸ Models round-tripping
// models.json, and a models.json that does not read left as it is. The runs also go, without the
// runner double, to the workbench's RunService over a scripted runner process (tests/fakerunner.h):
// its queue, and closing it while the Assistant waits there. With KF_SCREENSHOT_DIR set it saves
// assistant-dock.png (docs/screenshots).
#include "app/gui/services/RunService.h"
#include "app/gui/settings/ModelsPage.h"
#include "app/gui/settings/Settings.h"
#include "app/gui/settings/SettingsDialog.h"
#include "app/gui/window/AssistantController.h"
#include "app/gui/window/CandidateTab.h"
#include "app/gui/window/MainWindow.h"
#include "app/gui/workspace/ExampleWorkspace.h"
#include "engine/compile/Compiler.h"
#include "engine/core/Files.h"
#include "engine/synth/ModelsConfig.h"
#include "engine/task/Task.h"
#include "fakerunner.h"
#include "reportutil.h"
#include "testutil.h"
#include "widgets/assistant/AssistantDock.h"

#include <QAction>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QDoubleSpinBox>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

#include <nlohmann/json.hpp>

#include <atomic>
#include <mutex>
#include <thread>

using namespace kf::app;
using kf::ui::AssistantDock;
using nlohmann::json;

namespace {

const std::string kKernel = "extern \"C\" __global__ void vadd(const float* a, const float* b, float* c, long long n)\n"
                            "{\n    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
                            "    if (i < n) c[i] = a[i] + b[i];\n}\n";
const std::string kPlan = R"P({"description": "one thread per element", "launches": [{"kernel": "vadd", "grid": "ceil_div(N, 256)", "block": 256, "args": ["a", "b", "c", {"scalar": "N", "type": "int64"}]}]})P";

std::string kernelReply(const std::string& intro)
{
    return intro + "\n\n```cuda\n" + kKernel + "```\n\n```json\n" + kPlan + "\n```\n";
}

// The vector_add example's spec under a new name, as a model would propose it.
std::string proposalReply()
{
    auto text = kf::readFileBytes(std::string(KF_SOURCE_DIR) + "/resources/examples/vector_add/task.json");
    json task = json::parse(text.value());
    task["name"] = "vector_add_assistant";
    task.erase("candidates");
    return "Here is the task.\n\nASSUMPTION: fp32 inputs of equal length\nASSUMPTION: N up to 2^30\n\n```json\n" + task.dump(2) +
           "\n```\n";
}

/// TEST DOUBLE, not a model: answers each call with the next reply of a script, streamed in a
/// few deltas, the way the HTTP ModelClient would deliver a real one. With `blockUntilCancel`
/// it waits for the run's cancel flag instead, like a model that is still thinking.
struct ScriptedModel {
    std::mutex mutex;
    std::vector<std::string> replies;
    std::vector<kf::synth::ModelCall> calls;
    std::atomic<int> callCount{0};
    std::atomic<bool> blockUntilCancel{false};

    AssistantController::ModelHook hook()
    {
        return [this](const kf::synth::ModelCall& call, const kf::synth::TextFn& onText,
                      const std::atomic<bool>* cancel) -> kf::Result<kf::synth::ModelReply> {
            std::string text;
            {
                std::lock_guard lock(mutex);
                calls.push_back(call);
                if (!blockUntilCancel && calls.size() <= replies.size())
                    text = replies[calls.size() - 1];
            }
            ++callCount;
            if (blockUntilCancel) {
                while (!cancel->load())   // the real client polls the same flag
                    std::this_thread::yield();
                return kf::Error::failed("ask the model", "cancelled").withKind(kf::synth::kModelCancelled);
            }
            if (text.empty())
                return kf::Error::failed("ask the model", "the test's script has no more replies").withKind(kf::synth::kModelServer);
            for (size_t at = 0; at < text.size(); at += 40)
                onText(std::string_view(text).substr(at, 40));
            kf::synth::ModelReply r;
            r.text = text;
            r.model = "scripted";
            r.stopReason = "stop";
            r.tokensIn = 1200;
            r.tokensOut = (long long)text.size() / 4;
            return r;
        };
    }
    std::string lastUserMessage()
    {
        std::lock_guard lock(mutex);
        return calls.empty() ? std::string() : calls.back().messages.back().content;
    }
};

/// TEST DOUBLE, not a runner: verify passes and bench reports 1.38x, from the report fixtures.
AssistantController::RunHook fixtureRunner(std::atomic<int>* runs)
{
    return [runs](kf::RunKind kind, const kf::Task&, const std::string&, const std::string&, const kf::RunSettings&,
                  const kf::CancelToken&) -> kf::Result<kf::protocol::RunReport> {
        ++*runs;
        const char* file = kind == kf::RunKind::Verify  ? "/tests/data/reports/verify_softmax_pass.json"
                           : kind == kf::RunKind::Bench ? "/tests/data/reports/bench_softmax_ok.json"
                                                        : "/tests/data/profile/h100_softmax_naive.json";
        return kf::test::report(json::parse(kf::readFileBytes(std::string(KF_SOURCE_DIR) + file).value()));
    };
}

void writeModels(const QString& path)
{
    kf::synth::ModelsConfig c;
    kf::synth::NamedModel m;
    // The test's model hook answers; this endpoint is never contacted.
    m.name = "scripted";
    m.config.baseUrl = "http://127.0.0.1:9/v1";
    m.config.model = "scripted-test-double";
    m.config.priceInPerMTok = 3;
    m.config.priceOutPerMTok = 15;
    c.models.push_back(m);
    c.defaultModel = "scripted";
    QVERIFY(kf::synth::writeModelsConfig(path.toStdString(), c));
}

} // namespace

class TestAssistantDock : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void existingTaskToCandidate();
    void interview_data();
    void interview();
    void cancel_data();
    void cancel();
    void runsGoToTheWorkbenchRunner();
    void closingTheRunnerWhileTheAssistantWaits();
    void modelsPageRoundTrip();
    void modelsPageKeepsAFileThatDoesNotRead();

private:
    QString copyVectorAdd(const QString& to);
    void runInterview(AssistantController& controller, AssistantDock& dock, ScriptedModel& model, const QString& folder,
                      bool accept);

    QTemporaryDir m_tmp;
    QString m_models;
    std::unique_ptr<QSettings> m_qsettings;
    std::unique_ptr<Settings> m_settings;
};

void TestAssistantDock::initTestCase()
{
    QVERIFY(m_tmp.isValid());
    m_models = m_tmp.filePath("config/models.json");
    qputenv("KF_MODELS_FILE", m_models.toUtf8()); // synth::modelsConfigPath(): the panel and the settings read it
    writeModels(m_models);
    m_qsettings = std::make_unique<QSettings>(m_tmp.filePath("settings.ini"), QSettings::IniFormat);
    m_settings = std::make_unique<Settings>(m_qsettings.get());
}

QString TestAssistantDock::copyVectorAdd(const QString& to)
{
    QString error;
    if (!copyFolder(QString(KF_SOURCE_DIR) + "/resources/examples/vector_add", to, &error))
        qFatal("%s", qPrintable(error));
    return to;
}

void TestAssistantDock::existingTaskToCandidate()
{
    if (!kf::nvrtcVersion())
        QSKIP("NVRTC is not available on this machine: the loop compiles every kernel");
    const QString ws = m_tmp.filePath("ws-existing");
    const QString task = copyVectorAdd(ws + "/vector_add");
    MainWindow::Options o;
    o.runnersFile = m_tmp.filePath("no-runners.json");   // never the user's runners.json
    o.followDesktopScheme = false;                        // the same palette on any desktop
    o.workspace = ws;
    o.recoveryDir = m_tmp.filePath("recovery");
    o.cacheDir = m_tmp.filePath("cache");
    o.probeRunner = false;
    o.askToRestore = false;
    MainWindow w(m_settings.get(), o);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));

    // View ▸ Assistant brings the panel, tabbed under the editor (issue 20's layout), forward.
    QDockWidget* dockWidget = w.dock("assistantDock");
    QVERIFY(dockWidget);
    QCOMPARE(w.dockWidgetArea(dockWidget), Qt::BottomDockWidgetArea);
    QCOMPARE(w.assistantAction()->shortcut(), QKeySequence(QStringLiteral("Ctrl+Shift+A")));
    w.assistantAction()->trigger();
    QVERIFY(dockWidget->isVisible());
    AssistantDock* dock = w.assistantDock();
    QCOMPARE(dock->modelName(), QStringLiteral("scripted"));

    ScriptedModel model;
    model.replies = {kernelReply("A grid-stride-free kernel, one element per thread."),
                     kernelReply("The same kernel, tidied.")};
    std::atomic<int> runs{0};
    w.assistantController()->setEngineHooksForTesting(model.hook(), fixtureRunner(&runs));
    QSignalSpy finished(w.assistantController(), &AssistantController::finished);
    QSignalSpy added(w.assistantController(), &AssistantController::candidateAdded);

    QVERIFY(w.currentTab() && QDir::cleanPath(w.currentTab()->taskDir()) == QDir::cleanPath(task)); // the selected task is the target
    QVERIFY(!dock->startButton()->isEnabled());                    // no request yet
    dock->requestBox()->setPlainText("A faster vector add.");
    dock->findChild<QSpinBox*>("assistantAttempts")->setValue(2);
    dock->findChild<QDoubleSpinBox*>("assistantBudget")->setValue(5.5);
    QVERIFY(dock->startButton()->isEnabled());
    QTest::mouseClick(dock->startButton(), Qt::LeftButton);
    QVERIFY(dock->isRunning());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
    QVERIFY2(finished.first().at(0).toString() == "candidate",
             qPrintable(dock->outcome() + "\n" + (dock->candidateCount() ? dock->candidateList()->topLevelItem(0)->text(2) : QString())));
    QCOMPARE(w.assistantController()->lastOutcome(), QStringLiteral("candidate"));

    QCOMPARE(dock->stageStatus("interview"), QStringLiteral("skipped"));
    for (const char* s : {"codegen", "correctness", "performance", "polish"})
        QVERIFY2(dock->stageStatus(s) == "done", qPrintable(QString("%1: %2").arg(s, dock->stageStatus(s))));
    QCOMPARE(dock->candidateCount(), 2); // the codegen kernel and the polished one
    QTreeWidgetItem* first = dock->candidateList()->topLevelItem(0);
    QCOMPARE(first->text(0), QStringLiteral("01-codegen.cu"));
    QCOMPARE(first->text(1), QStringLiteral("1.38×"));
    QVERIFY(QFileInfo(first->data(0, Qt::UserRole).toString()).isFile());
    QVERIFY(dock->modelText().contains("A grid-stride-free kernel"));
    QCOMPARE(runs.load(), 5); // verify, bench and profile; then verify and bench of the polished one
    // The panel's limits reached the run.
    const json trace = json::parse(kf::readFileBytes((w.assistantController()->runDir() + "/synthesis.json").toStdString()).value());
    QCOMPARE(trace["budget"]["max_attempts"].get<int>(), 2);
    QCOMPARE(trace["budget"]["max_usd"].get<double>(), 5.5);
    QVERIFY2(dock->outcome().startsWith("Added synth-") && dock->outcome().contains("1.38× over eager LibTorch") &&
                 dock->outcome().contains(w.assistantController()->runDir()),
             qPrintable(dock->outcome()));
    QVERIFY(!dock->isRunning() && dock->startButton()->isEnabled());

    // The workspace reloads the task and the new candidate opens in a tab.
    QCOMPARE(added.count(), 1);
    const QString file = added.first().at(1).toString();
    auto loaded = kf::loadTask(task.toStdString());
    QVERIFY(loaded);
    QVERIFY(loaded->findCandidate(QFileInfo(file).fileName().toStdString()) != nullptr);
    QCOMPARE(w.currentTab()->filePath(), file);

    // Double-clicking a candidate opens it from the run folder.
    QSignalSpy open(w.assistantController(), &AssistantController::openFileRequested);
    emit dock->candidateList()->itemActivated(first, 0);
    QCOMPARE(open.count(), 1);
    QCOMPARE(w.currentTab()->filePath(), first->data(0, Qt::UserRole).toString());
}

void TestAssistantDock::runInterview(AssistantController& controller, AssistantDock& dock, ScriptedModel& model,
                                     const QString& folder, bool accept)
{
    dock.requestBox()->setPlainText("Add two float vectors.");
    QVERIFY(controller.start(dock.request(), dock.modelName(), folder));
    // The model's question, answered in the panel.
    QTRY_COMPARE_WITH_TIMEOUT(dock.answerBoxes().size(), 2, 30000);
    dock.answerBoxes()[0]->setPlainText("up to 2^30 elements");
    dock.answerBoxes()[1]->setPlainText("fp32");
    QTest::mouseClick(dock.sendAnswersButton(), Qt::LeftButton);
    QVERIFY(dock.answerBoxes().isEmpty());
    // The proposal, accepted or rejected by a click.
    QTRY_VERIFY_WITH_TIMEOUT(dock.acceptButton() != nullptr, 30000);
    const std::string answered = model.lastUserMessage();
    QVERIFY2(answered.find("A: up to 2^30 elements") != std::string::npos && answered.find("A: fp32") != std::string::npos,
             answered.c_str());
    QTest::mouseClick(accept ? dock.acceptButton() : dock.rejectButton(), Qt::LeftButton);
}

void TestAssistantDock::interview_data()
{
    QTest::addColumn<bool>("accept");
    QTest::addColumn<QString>("outcome");
    QTest::addColumn<QString>("interview");   // the stage's status at the end
    QTest::newRow("accepted") << true << "candidate" << "done";
    QTest::newRow("rejected") << false << "refused" << "failed";
}

void TestAssistantDock::interview()
{
    QFETCH(bool, accept);
    QFETCH(QString, outcome);
    QFETCH(QString, interview);
    if (accept && !kf::nvrtcVersion())
        QSKIP("NVRTC is not available on this machine: the loop compiles every kernel");
    const QString folder = m_tmp.filePath(QStringLiteral("new-task-%1").arg(QTest::currentDataTag()));
    QDir().mkpath(folder);
    ScriptedModel model;
    model.replies = {"Two things first.\n\nQUESTION: How long are the vectors?\nQUESTION: Which dtype?\n", proposalReply(),
                     kernelReply("One element per thread."), kernelReply("Tidied.")};
    std::atomic<int> runs{0};
    AssistantDock dock;
    dock.resize(560, 1040);
    dock.show();
    AssistantController controller(&dock);
    controller.reloadModels();
    controller.setEngineHooksForTesting(model.hook(), fixtureRunner(&runs));
    QSignalSpy finished(&controller, &AssistantController::finished);
    runInterview(controller, dock, model, folder, accept);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
    QVERIFY2(controller.lastOutcome() == outcome, qPrintable(dock.outcome()));
    QCOMPARE(dock.stageStatus("interview"), interview);
    if (!accept) {
        QVERIFY(!QFileInfo::exists(folder + "/task.json"));
        QVERIFY2(dock.outcome().startsWith("No task (interview stage): the proposed task was not accepted"), qPrintable(dock.outcome()));
        QCOMPARE(runs.load(), 0);
        return;
    }
    auto task = kf::loadTask(folder.toStdString());
    QVERIFY2(task, task ? "" : task.error().message().c_str());
    QCOMPARE(QString::fromStdString(task->name), QStringLiteral("vector_add_assistant"));
    QCOMPARE(task->candidates.size(), size_t(1));
    QCOMPARE(dock.candidateCount(), 2);
    for (const char* s : {"codegen", "correctness", "performance", "polish"})
        QCOMPARE(dock.stageStatus(s), QStringLiteral("done"));

    if (const QString dir = qEnvironmentVariable("KF_SCREENSHOT_DIR"); !dir.isEmpty()) {
        // The conversation from its start: the question answered, the proposal accepted.
        dock.findChild<QScrollArea*>("assistantConversation")->verticalScrollBar()->setValue(0);
        QDir().mkpath(dir);
        QVERIFY(dock.grab().save(QDir(dir).filePath(QStringLiteral("assistant-dock.png"))));
    }
}

void TestAssistantDock::cancel_data()
{
    QTest::addColumn<QString>("waiting");   // what the run waits on when Cancel is clicked
    QTest::newRow("the model") << "model";
    QTest::newRow("a question") << "question";
    QTest::newRow("the proposal") << "proposal";
}

void TestAssistantDock::cancel()
{
    QFETCH(QString, waiting);
    const QString folder = m_tmp.filePath(QStringLiteral("cancel-%1").arg(waiting));
    if (waiting == "model")
        copyVectorAdd(folder);   // an existing task: codegen's first call blocks
    else
        QDir().mkpath(folder);
    ScriptedModel model;
    if (waiting == "model")
        model.blockUntilCancel = true;
    else if (waiting == "question")
        model.replies = {"QUESTION: How long are the vectors?\n"};
    else
        model.replies = {proposalReply()};
    std::atomic<int> runs{0};
    AssistantDock dock;
    dock.show();
    AssistantController controller(&dock);
    controller.reloadModels();
    controller.setEngineHooksForTesting(model.hook(), fixtureRunner(&runs));
    QSignalSpy finished(&controller, &AssistantController::finished);
    QVERIFY(controller.start("Add two vectors.", "scripted", folder));
    if (waiting == "model")
        QTRY_COMPARE_WITH_TIMEOUT(model.callCount.load(), 1, 30000);
    else if (waiting == "question")
        QTRY_COMPARE_WITH_TIMEOUT(dock.answerBoxes().size(), 1, 30000);
    else
        QTRY_VERIFY_WITH_TIMEOUT(dock.acceptButton() != nullptr, 30000);
    QTest::mouseClick(dock.cancelButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 5000);   // within seconds
    QCOMPARE(controller.lastOutcome(), QStringLiteral("cancelled"));
    QCOMPARE(dock.outcome(), QStringLiteral("Cancelled, everything is in %1").arg(controller.runDir()));
    QVERIFY(!controller.busy() && !dock.isRunning());
    // Everything written so far is kept.
    auto trace = kf::readFileBytes((controller.runDir() + "/synthesis.json").toStdString());
    QVERIFY(trace);
    QCOMPARE(QString::fromStdString(json::parse(*trace)["outcome"].get<std::string>()), QStringLiteral("cancelled"));
    QVERIFY(QFileInfo::exists(controller.runDir() + "/request.md"));
    QVERIFY(!QFileInfo::exists(folder + "/task.json") || waiting == "model");
}

// Without the runner double the kernels run on the RunService the controller was given: the
// workbench's one runner, with the Assistant's title in the Runs panel's signals.
void TestAssistantDock::runsGoToTheWorkbenchRunner()
{
    if (!kf::nvrtcVersion())
        QSKIP("NVRTC is not available on this machine: the loop compiles every kernel");
    const QString folder = copyVectorAdd(m_tmp.filePath("vector_add-on-the-service"));
    kf::test::FakeRunner fake(kf::test::FakeRunner::Behaviour::Pass);
    RunService::Options o;
    o.runnerPath = fake.path();
    o.cacheDir = m_tmp.filePath("cache");
    RunService service(o);
    QSignalSpy started(&service, &RunService::runStarted);
    ScriptedModel model;
    model.replies = {kernelReply("One element per thread.")};
    AssistantDock dock;
    AssistantController controller(&dock);
    controller.reloadModels();
    controller.setRunService(&service);
    controller.setEngineHooksForTesting(model.hook(), {});
    QSignalSpy finished(&controller, &AssistantController::finished);
    QVERIFY(controller.start("A faster vector add.", "scripted", folder));
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
    QVERIFY2(!started.isEmpty(), qPrintable(dock.outcome()));
    const QString title = started.first().at(1).toString();   // "Assistant: verify synth-<run>-01.cu"
    QVERIFY2(title.startsWith("Assistant: verify synth-") && title.endsWith(".cu"), qPrintable(title));
    const QStringList requests = fake.requests();
    QVERIFY(!requests.isEmpty());
    QVERIFY(requests.first().contains("\"type\":\"verify\""));
    QVERIFY2(requests.first().contains(title.mid(int(strlen("Assistant: verify ")))), qPrintable(requests.first().left(400)));
}

// The window closes (its RunService goes) while the Assistant's verify waits in the queue behind
// another run: the synthesis gets an Error at once and ends, nothing hangs.
void TestAssistantDock::closingTheRunnerWhileTheAssistantWaits()
{
    if (!kf::nvrtcVersion())
        QSKIP("NVRTC is not available on this machine: the loop compiles every kernel");
    const QString folder = copyVectorAdd(m_tmp.filePath("vector_add-closing"));
    kf::test::FakeRunner fake(kf::test::FakeRunner::Behaviour::Freeze);   // the run ahead never ends by itself
    RunService::Options o;
    o.runnerPath = fake.path();
    o.cacheDir = m_tmp.filePath("cache");
    auto service = std::make_unique<RunService>(o);
    QVERIFY(service->run(kf::RunKind::Verify, kf::test::vectorAddTask(), "naive.cu", kf::RunSettings{}) != 0);
    ScriptedModel model;
    model.replies = {kernelReply("One element per thread.")};
    AssistantDock dock;
    AssistantController controller(&dock);
    controller.reloadModels();
    controller.setRunService(service.get());
    controller.setEngineHooksForTesting(model.hook(), {});
    QSignalSpy finished(&controller, &AssistantController::finished);
    QVERIFY(controller.start("A faster vector add.", "scripted", folder));
    QTRY_COMPARE_WITH_TIMEOUT(service->submittedRuns(), 1, 60000);
    service.reset();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
    QCOMPARE(controller.lastOutcome(), QStringLiteral("error"));
    QVERIFY2(dock.outcome().contains("the workbench is closing"), qPrintable(dock.outcome()));
}

void TestAssistantDock::modelsPageRoundTrip()
{
    const QString file = m_tmp.filePath("roundtrip/models.json");
    qputenv("KF_MODELS_FILE", file.toUtf8());
    {
        SettingsDialog dialog(m_settings.get());
        ModelsPage* page = dialog.modelsPage();
        QCOMPARE(page->file(), file);
        QCOMPARE(page->table()->rowCount(), 0);
        QVERIFY(page->findChild<QLabel*>("keyNote")->text().contains("never stored"));
        const auto fill = [&](int row, const QString& name, const QString& provider, const QString& url, const QString& model,
                              const QString& key, const QString& in, const QString& out) {
            QTableWidget* t = page->table();
            t->item(row, ModelsPage::Name)->setText(name);
            page->providerPicker(row)->setCurrentText(provider);
            t->item(row, ModelsPage::BaseUrl)->setText(url);
            t->item(row, ModelsPage::Model)->setText(model);
            t->item(row, ModelsPage::KeyVariable)->setText(key);
            t->item(row, ModelsPage::PriceIn)->setText(in);
            t->item(row, ModelsPage::PriceOut)->setText(out);
        };
        QTest::mouseClick(page->findChild<QPushButton*>("addModel"), Qt::LeftButton);
        QTest::mouseClick(page->findChild<QPushButton*>("addModel"), Qt::LeftButton);
        fill(0, "local", "openai", "http://127.0.0.1:8000/v1", "qwen2.5-coder", "", "0", "0");
        fill(1, "claude", "anthropic", "https://api.anthropic.com", "claude-sonnet-4", "ANTHROPIC_API_KEY", "3", "15");
        // The key itself in the variable's column is refused by the engine's reader.
        page->table()->item(1, ModelsPage::KeyVariable)->setText("sk-ant-123");
        QVERIFY2(dialog.validationError().contains("api_key_env"), qPrintable(dialog.validationError()));
        QVERIFY(!dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->isEnabled());
        page->table()->item(1, ModelsPage::KeyVariable)->setText("ANTHROPIC_API_KEY");
        page->defaultPicker()->setCurrentText("local");
        page->escalationPicker()->setCurrentText("claude");
        QVERIFY2(dialog.validationError().isEmpty(), qPrintable(dialog.validationError()));
        dialog.accept();
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
    }
    auto read = kf::synth::readModelsConfig(file.toStdString());
    QVERIFY2(read, read ? "" : read.error().message().c_str());
    QCOMPARE(read->models.size(), size_t(2));
    QCOMPARE(QString::fromStdString(read->defaultModel), QStringLiteral("local"));
    QCOMPARE(QString::fromStdString(read->escalationModel), QStringLiteral("claude"));
    const kf::synth::ModelConfig& claude = read->find("claude")->config;
    QVERIFY(claude.provider == kf::synth::Provider::Anthropic);
    QCOMPARE(QString::fromStdString(claude.baseUrl), QStringLiteral("https://api.anthropic.com"));
    QCOMPARE(QString::fromStdString(claude.model), QStringLiteral("claude-sonnet-4"));
    QCOMPARE(QString::fromStdString(claude.apiKeyEnv), QStringLiteral("ANTHROPIC_API_KEY"));
    QCOMPARE(claude.priceInPerMTok, 3.0);
    QCOMPARE(claude.priceOutPerMTok, 15.0);
    QVERIFY(read->find("local")->config.provider == kf::synth::Provider::OpenAI);

    // Read back by the dialog as it was written.
    SettingsDialog again(m_settings.get());
    QCOMPARE(again.modelsPage()->table()->rowCount(), 2);
    QCOMPARE(again.modelsPage()->defaultPicker()->currentText(), QStringLiteral("local"));
    QCOMPARE(again.modelsPage()->providerPicker(1)->currentText(), QStringLiteral("anthropic"));
    QVERIFY(again.modelsPage()->config().toJson() == read->toJson());

    // What the page does not show survives an edit, and renaming the default model keeps it chosen.
    {
        auto c = *read;
        c.models[1].config.maxTokens = 1234;
        c.models[1].config.temperature = 0.7;
        QVERIFY(kf::synth::writeModelsConfig(file.toStdString(), c));
        SettingsDialog edit(m_settings.get());
        ModelsPage* page = edit.modelsPage();
        page->table()->item(0, ModelsPage::Name)->setText("local2");
        QCOMPARE(page->defaultPicker()->currentText(), QStringLiteral("local2"));
        edit.accept();
    }
    auto edited = kf::synth::readModelsConfig(file.toStdString());
    QVERIFY(edited);
    QCOMPARE(QString::fromStdString(edited->defaultModel), QStringLiteral("local2"));
    QCOMPARE(edited->find("claude")->config.maxTokens, 1234);
    QCOMPARE(edited->find("claude")->config.temperature, 0.7);
    qputenv("KF_MODELS_FILE", m_models.toUtf8());
}

void TestAssistantDock::modelsPageKeepsAFileThatDoesNotRead()
{
    const QString file = m_tmp.filePath("broken/models.json");
    QDir().mkpath(QFileInfo(file).absolutePath());
    const QByteArray broken = R"({"schema_version": 1, "default": "x", "models": [{"name": "x", "provider": "opneai", "base_url": "http://h/v1", "model": "m"}]})";
    {
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(broken);
    }
    qputenv("KF_MODELS_FILE", file.toUtf8());
    {
        SettingsDialog dialog(m_settings.get());
        const QString error = dialog.modelsPage()->loadError();
        QVERIFY2(error.contains(file) && error.contains("/models/0/provider"), qPrintable(error));
        QVERIFY(dialog.findChild<QLabel*>("modelsProblem")->text().contains("/models/0/provider"));
        QVERIFY(!dialog.modelsPage()->table()->isEnabled());
        // Nothing may edit a file that does not read: only Reload stays.
        QVERIFY(!dialog.modelsPage()->findChild<QPushButton*>("addModel")->isEnabled());
        QVERIFY(!dialog.modelsPage()->findChild<QPushButton*>("removeModel")->isEnabled());
        QVERIFY(!dialog.modelsPage()->defaultPicker()->isEnabled());
        QVERIFY(dialog.modelsPage()->findChild<QPushButton*>("reloadModels")->isEnabled());
        dialog.accept(); // the other settings save; the file stays as it is
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
    }
    QFile f(file);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), broken);
    // The panel says so too, and Start stays off.
    AssistantDock dock;
    AssistantController controller(&dock);
    controller.reloadModels();
    QVERIFY(dock.outcome().contains("/models/0/provider"));
    dock.requestBox()->setPlainText("anything");
    QVERIFY(!dock.startButton()->isEnabled());
    qputenv("KF_MODELS_FILE", m_models.toUtf8());
}

QTEST_MAIN(TestAssistantDock)
#include "tst_assistantdock.moc"
