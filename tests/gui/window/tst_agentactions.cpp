// The agent loop in the workbench (app/gui/window/AgentController): Copy Agent Prompt renders the
// task's prompt off the UI thread onto the clipboard (extra skill folders from the settings),
// and Add Candidate takes a kernel back: a fenced plan is added and loads, scan warnings come
// with it, a bad plan and a kernel that does not compile fail with the engine's sentence and
// leave the task as it was.
#include "app/gui/settings/Settings.h"
#include "app/gui/window/AgentController.h"
#include "engine/compile/Compiler.h"
#include "engine/task/Task.h"

#include "testutil.h"

#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QFile>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using kf::app::AgentController;
using kf::app::Settings;

namespace {

QString copyExample(const QTemporaryDir& tmp, const QString& name)
{
    const QString from = QString(KF_SOURCE_DIR) + "/resources/examples/" + name;
    const QString to = tmp.filePath(name);
    QDir().mkpath(to);
    for (const QString& f : QDir(from).entryList(QDir::Files))
        QFile::copy(from + "/" + f, to + "/" + f);
    return to;
}

void write(const QString& path, const QByteArray& bytes)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

const QByteArray kKernel = "extern \"C\" __global__ void vadd(const float* a, const float* b, float* c, int n)\n"
                           "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) c[i] = a[i] + b[i];\n}\n";
const QByteArray kPlan = R"P({"launches": [{"kernel": "vadd", "grid": "ceil_div(N, 256)", "block": 256, "args": ["a", "b", "c", {"scalar": "N"}]}]})P";

} // namespace

class TestAgentActions : public QObject {
    Q_OBJECT

private slots:
    void init();
    void copyPromptUsesSkillFolders();
    void addCandidate_data();
    void addCandidate();

private:
    std::unique_ptr<QTemporaryDir> m_tmp;
    std::unique_ptr<QSettings> m_qsettings;
    std::unique_ptr<Settings> m_settings;
};

void TestAgentActions::init()
{
    m_tmp = std::make_unique<QTemporaryDir>();
    m_qsettings = std::make_unique<QSettings>(m_tmp->path() + "/settings.ini", QSettings::IniFormat);
    m_settings = std::make_unique<Settings>(m_qsettings.get());
}

void TestAgentActions::copyPromptUsesSkillFolders()
{
    const QString task = copyExample(*m_tmp, "softmax_fp32");
    // A team's own version of a built-in skill replaces it by name.
    write(m_tmp->filePath("team/online-softmax/SKILL.md"),
          "---\nname: online-softmax\ndescription: The team's softmax playbook.\n---\n# Team softmax\n\nOur way.\n");
    m_settings->setAgentSkillDirs({m_tmp->filePath("team")});
    QApplication::clipboard()->clear();
    AgentController agent(m_settings.get(), nullptr);
    QSignalSpy copied(&agent, &AgentController::promptCopied);
    QSignalSpy failed(&agent, &AgentController::failed);
    agent.copyPrompt(task);
    QVERIFY(agent.busy());
    QTRY_COMPARE_WITH_TIMEOUT(copied.count() + failed.count(), 1, 30000);
    QCOMPARE(failed.count(), 0);
    const QString summary = copied.first().at(0).toString();
    QVERIFY2(summary.startsWith("Agent prompt for softmax_fp32 (sm_90) copied: 12 sections") &&
                 summary.contains("skills: correctness-hygiene, measuring-honestly, online-softmax"),
             qPrintable(summary));
    const QString text = QApplication::clipboard()->text();
    QCOMPARE(text, agent.lastPrompt());
    QVERIFY(text.startsWith("# Task: write a faster CUDA kernel for `softmax_fp32` on sm_90"));
    QVERIFY(text.contains("## 12. Skills"));
    QVERIFY2(text.contains("### online-softmax\n\n*Why: op softmax.* The team's softmax playbook.\n\n# Team softmax"),
             qPrintable(text.mid(text.indexOf("## 12. Skills"), 600)));

    // A folder that does not load: the error, not a prompt.
    agent.copyPrompt(m_tmp->filePath("nowhere"));
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 30000);
    QVERIFY(failed.first().at(1).toString().contains("nowhere"));
}

void TestAgentActions::addCandidate_data()
{
    QTest::addColumn<QByteArray>("source");
    QTest::addColumn<QByteArray>("plan");   // empty: no plan file
    QTest::addColumn<bool>("added");
    QTest::addColumn<QString>("says");      // in the warnings, or in the failure
    QTest::newRow("fenced plan") << "/*\n```json\n" + kPlan + "\n```\n*/\n" + kKernel << QByteArray() << true << "";
    QTest::newRow("plan file and a counter")
        << "__device__ int calls;\n" + QByteArray(kKernel).replace("{\n", "{\n    atomicAdd(&calls, 1);\n") << kPlan << true
        << "line 4: [launch-counter]";
    QTest::newRow("bad plan") << kKernel << QByteArray(kPlan).replace("\"block\"", "\"blok\"") << false
                              << "plan.json: at /launches/0";
    QTest::newRow("no plan") << kKernel << QByteArray() << false << "no launch plan";
    QTest::newRow("does not compile") << QByteArray(kKernel).replace("a[i] + b[i]", "a[i] + q") << kPlan << false
                                      << "does not compile; nothing was added";
}

void TestAgentActions::addCandidate()
{
    QFETCH(QByteArray, source);
    QFETCH(QByteArray, plan);
    QFETCH(bool, added);
    QFETCH(QString, says);
    if (says.contains("compile") && !kf::nvrtcVersion())
        QSKIP("NVRTC is not available on this machine: the compile step cannot run");
    const QString task = copyExample(*m_tmp, "vector_add");
    const QByteArray before = readAll(task + "/task.json");
    write(m_tmp->filePath("agent.cu"), source);
    if (!plan.isEmpty())
        write(m_tmp->filePath("plan.json"), plan);
    AgentController agent(m_settings.get(), nullptr);
    QSignalSpy done(&agent, &AgentController::candidateAdded);
    QSignalSpy failed(&agent, &AgentController::failed);
    agent.addCandidate(task, m_tmp->filePath("agent.cu"), plan.isEmpty() ? QString() : m_tmp->filePath("plan.json"));
    QTRY_COMPARE_WITH_TIMEOUT(done.count() + failed.count(), 1, 60000);
    QCOMPARE(done.count(), added ? 1 : 0);
    if (added) {
        QCOMPARE(done.first().at(1).toString(), task + "/agent.cu");
        const QStringList warnings = done.first().at(2).toStringList();
        QVERIFY2(says.isEmpty() ? warnings.isEmpty() : warnings.join('\n').contains(says), qPrintable(warnings.join('\n')));
        auto loaded = kf::loadTask(task.toStdString());
        KF_VERIFY_OK(loaded);
        QVERIFY(loaded->findCandidate("agent.cu"));
    } else {
        QVERIFY2(failed.first().at(1).toString().contains(says), qPrintable(failed.first().at(1).toString()));
        QCOMPARE(readAll(task + "/task.json"), before);
        QVERIFY(!QFile::exists(task + "/agent.cu"));
    }
    QVERIFY(!agent.busy());
}

QTEST_MAIN(TestAgentActions)
#include "tst_agentactions.moc"
