// The task browser's data: a Workspace found on disk and its tree model. Runs offscreen with
// real files in temporary folders; disk edits are picked up by the file watcher (QTRY_*).
#include "testutil.h"

#include "app/gui/workspace/Templates.h"
#include "app/gui/workspace/Workspace.h"
#include "app/gui/workspace/WorkspaceModel.h"

#include "engine/core/Files.h"
#include "engine/task/Task.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QPersistentModelIndex>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <utility>

using kf::app::Workspace;
using kf::app::WorkspaceModel;

namespace {

const QString kExamples = QString(KF_SOURCE_DIR) + "/resources/examples";

std::filesystem::path fsp(const QString& p) { return std::filesystem::path(p.toStdString()); }

void copyTree(const QString& from, const QString& to)
{
    QDirIterator it(from, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString f = it.next();
        const QString target = to + QLatin1Char('/') + QDir(from).relativeFilePath(f);
        QDir().mkpath(QFileInfo(target).absolutePath());
        QVERIFY(QFile::copy(f, target));
        QFile::setPermissions(target, QFile::permissions(target) | QFileDevice::WriteOwner);
    }
}

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Writes like a plain editor (truncate + write in place) or like a careful one (rename over).
void writeFile(const QString& path, const QByteArray& bytes, bool byRename)
{
    if (byRename) {
        KF_VERIFY_OK(kf::writeFileAtomic(fsp(path), bytes.toStdString()));
        return;
    }
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(bytes), bytes.size());
}

QStringList childNames(const QAbstractItemModel& m, const QModelIndex& parent)
{
    QStringList out;
    for (int r = 0; r < m.rowCount(parent); ++r)
        out << m.index(r, 0, parent).data().toString();
    return out;
}

QModelIndex taskRow(const QAbstractItemModel& m, const QString& name)
{
    for (int r = 0; r < m.rowCount(); ++r)
        if (m.index(r, 0).data().toString() == name)
            return m.index(r, 0);
    return {};
}

} // namespace

class TestWorkspaceModel : public QObject {
    Q_OBJECT
private slots:
    void examplesShowEveryTaskWithItsCandidates_data();
    void examplesShowEveryTaskWithItsCandidates();
    void openingAMissingFolderKeepsTheOldWorkspace();
    void brokenTaskShowsTheEngineSentence_data();
    void brokenTaskShowsTheEngineSentence();
    void editingTaskJsonOnDiskUpdatesTheTree_data();
    void editingTaskJsonOnDiskUpdatesTheTree();
    void fixingABrokenTaskOnDiskClearsTheError();
    void taskFoldersAppearAndVanish();
    void nestedTaskFoldersAreFoundTwoLevelsDeep();
    void createTaskMakesALoadableTask();
    void createTaskRefusesBadNames_data();
    void createTaskRefusesBadNames();
    void createCandidateFromTemplate();
    void createCandidateFromTemplateForATemplatedKernel();
    void createCandidateAsACopy();
    void createCandidateRefuses_data();
    void createCandidateRefuses();
    void createdCandidateAppearsInTheOpenTree();
    void templateTaskLoads();
};

void TestWorkspaceModel::examplesShowEveryTaskWithItsCandidates_data()
{
    QTest::addColumn<QString>("task");
    QTest::addColumn<QStringList>("children");
    for (const char* name : {"cumsum_fp32", "fused_add_rms_norm_fp16", "gemm_fp16", "layer_norm_bf16",
                             "rms_norm_fp16", "softmax_fp32", "transpose_fp32", "vector_add"})
        QTest::newRow(name) << QString::fromLatin1(name)
                            << QStringList{"task.json", "naive.cu", "optimized.cu"};
}

void TestWorkspaceModel::examplesShowEveryTaskWithItsCandidates()
{
    QFETCH(QString, task);
    QFETCH(QStringList, children);
    Workspace ws;
    QString error;
    QVERIFY2(ws.open(kExamples, &error), qPrintable(error));
    WorkspaceModel model(&ws);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);

    QCOMPARE(model.rowCount(), 8);
    const QModelIndex t = taskRow(model, task);
    QVERIFY2(t.isValid(), qPrintable(task + " is not in the tree"));
    QCOMPARE(childNames(model, t), children);

    const QString dir = QDir::cleanPath(kExamples + QLatin1Char('/') + task);
    const kf::app::TaskEntry* entry = ws.taskForDir(dir);
    QVERIFY(entry && entry->task);
    QCOMPARE(t.data(Qt::ToolTipRole).toString(), qs(entry->task->description));
    QVERIFY(!t.data(Qt::DecorationRole).value<QIcon>().isNull());
    QVERIFY(t.data(WorkspaceModel::ErrorRole).toString().isEmpty());
    QCOMPARE(t.data(WorkspaceModel::KindRole).toInt(), int(WorkspaceModel::Kind::Task));

    const QModelIndex json = model.index(0, 0, t);
    QCOMPARE(json.data(WorkspaceModel::KindRole).toInt(), int(WorkspaceModel::Kind::TaskJson));
    QCOMPARE(json.data(WorkspaceModel::PathRole).toString(), dir + "/task.json");
    const QModelIndex naive = model.index(1, 0, t);
    QCOMPARE(naive.data(WorkspaceModel::KindRole).toInt(), int(WorkspaceModel::Kind::Candidate));
    QCOMPARE(naive.data(WorkspaceModel::PathRole).toString(), dir + "/naive.cu");
    QCOMPARE(naive.data(WorkspaceModel::TaskDirRole).toString(), dir);
    QCOMPARE(naive.data(Qt::ToolTipRole).toString(), qs(entry->task->candidates[0].description));
    QVERIFY(QFileInfo::exists(naive.data(WorkspaceModel::PathRole).toString()));
    QCOMPARE(model.indexForPath(dir + "/naive.cu"), naive);
    QCOMPARE(model.indexForTaskDir(dir), t);
    QCOMPARE(ws.taskForFile(dir + "/optimized.cu"), entry);
}

void TestWorkspaceModel::openingAMissingFolderKeepsTheOldWorkspace()
{
    Workspace ws;
    QVERIFY(ws.open(kExamples));
    QString error;
    QVERIFY(!ws.open(kExamples + "/does-not-exist", &error));
    QVERIFY2(error.contains("does-not-exist"), qPrintable(error));
    QCOMPARE(ws.root(), QDir::cleanPath(kExamples));
    QCOMPARE(ws.taskCount(), 8);
}

void TestWorkspaceModel::brokenTaskShowsTheEngineSentence_data()
{
    QTest::addColumn<QByteArray>("from");
    QTest::addColumn<QByteArray>("to");
    QTest::addColumn<QString>("removeFile");
    QTest::addColumn<QString>("sentencePart");
    QTest::newRow("unknown dtype") << QByteArray("\"dtype\": \"fp32\"") << QByteArray("\"dtype\": \"float\"")
                                   << QString() << QString("unknown dtype");
    QTest::newRow("json syntax error") << QByteArray("\"schema_version\": 1,") << QByteArray("\"schema_version\": 1,,")
                                       << QString() << QString("task.json");
    QTest::newRow("candidate file deleted") << QByteArray() << QByteArray() << QString("naive.cu")
                                            << QString("does not exist");
}

void TestWorkspaceModel::brokenTaskShowsTheEngineSentence()
{
    QFETCH(QByteArray, from);
    QFETCH(QByteArray, to);
    QFETCH(QString, removeFile);
    QFETCH(QString, sentencePart);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    copyTree(kExamples, tmp.path());
    const QString dir = tmp.path() + "/vector_add";
    if (!from.isEmpty()) {
        QByteArray json = readAll(dir + "/task.json");
        QVERIFY(json.contains(from));
        writeFile(dir + "/task.json", json.replace(from, to), false);
    }
    if (!removeFile.isEmpty())
        QVERIFY(QFile::remove(dir + "/" + removeFile));
    auto expected = kf::loadTask(fsp(dir));
    QVERIFY(!expected.ok());

    Workspace ws;
    QVERIFY(ws.open(tmp.path()));
    WorkspaceModel model(&ws);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 8); // the broken task stays listed, the others are unaffected

    const QModelIndex t = model.indexForTaskDir(dir);
    QVERIFY(t.isValid());
    QCOMPARE(t.data().toString(), QString("vector_add")); // the folder name stands in
    const QString tip = t.data(Qt::ToolTipRole).toString();
    QCOMPARE(tip, qs(expected.error().message()));
    QVERIFY2(tip.contains(sentencePart), qPrintable(tip));
    QCOMPARE(t.data(WorkspaceModel::ErrorRole).toString(), tip);
    QVERIFY(t.data(Qt::DecorationRole).value<QIcon>().cacheKey()
            != model.indexForTaskDir(tmp.path() + "/softmax_fp32").data(Qt::DecorationRole).value<QIcon>().cacheKey());
    // Only task.json is offered, so the user can open it and fix it.
    QCOMPARE(childNames(model, t), QStringList{"task.json"});
    QVERIFY(ws.taskForDir(dir)->error.has_value());
}

void TestWorkspaceModel::editingTaskJsonOnDiskUpdatesTheTree_data()
{
    QTest::addColumn<bool>("byRename");
    QTest::newRow("saved in place") << false;
    QTest::newRow("replaced by rename") << true;
}

void TestWorkspaceModel::editingTaskJsonOnDiskUpdatesTheTree()
{
    QFETCH(bool, byRename);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    copyTree(kExamples + "/vector_add", tmp.path() + "/vector_add");
    copyTree(kExamples + "/softmax_fp32", tmp.path() + "/softmax_fp32");
    const QString dir = tmp.path() + "/vector_add";
    Workspace ws;
    QVERIFY(ws.open(tmp.path()));
    WorkspaceModel model(&ws);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy reloaded(&ws, &Workspace::taskReloaded);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);

    const QModelIndex t = model.indexForTaskDir(dir);
    QCOMPARE(model.rowCount(t), 3);
    const QPersistentModelIndex naive = model.index(1, 0, t);

    // Add a candidate the way a user would in another editor: the file, then task.json.
    QVERIFY(QFile::copy(dir + "/naive.cu", dir + "/extra.cu"));
    const QByteArray original = readAll(dir + "/task.json");
    QByteArray json = original;
    const QByteArray anchor = "  \"cost\": {";
    QVERIFY(json.contains(anchor));
    json.replace("    }\n  ],\n" + anchor,
                 "    },\n    {\"file\": \"extra.cu\", \"description\": \"a third one\", \"launches\": [{\"kernel\": "
                 "\"vector_add\", \"grid\": \"ceil_div(N, 256)\", \"block\": 256, \"args\": [\"a\", \"b\", \"c\", "
                 "{\"scalar\": \"N\", \"type\": \"int64\"}]}]}\n  ],\n" + anchor);
    QVERIFY(json != original);
    writeFile(dir + "/task.json", json, byRename);

    QTRY_COMPARE(model.rowCount(model.indexForTaskDir(dir)), 4);
    const QModelIndex extra = model.index(3, 0, model.indexForTaskDir(dir));
    QCOMPARE(extra.data().toString(), QString("extra.cu"));
    QCOMPARE(extra.data(Qt::ToolTipRole).toString(), QString("a third one"));
    QVERIFY(reloaded.count() >= 1);
    QCOMPARE(reloaded.first().first().toString(), QDir::cleanPath(dir));
    QCOMPARE(reset.count(), 0);       // a row was inserted, the view keeps its state
    QVERIFY(inserted.count() >= 1);
    QVERIFY(naive.isValid());         // a selected candidate stays selected
    QCOMPARE(naive.data().toString(), QString("naive.cu"));

    // A second edit must be seen too: a file replaced by rename is watched again.
    writeFile(dir + "/task.json", original, byRename);
    QTRY_COMPARE(model.rowCount(model.indexForTaskDir(dir)), 3);
    QVERIFY(naive.isValid());
}

void TestWorkspaceModel::fixingABrokenTaskOnDiskClearsTheError()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    copyTree(kExamples + "/vector_add", tmp.path() + "/vector_add");
    const QString json = tmp.path() + "/vector_add/task.json";
    const QByteArray good = readAll(json);
    writeFile(json, QByteArray(good).replace("\"fp32\"", "\"float\""), false);

    Workspace ws;
    QVERIFY(ws.open(tmp.path()));
    WorkspaceModel model(&ws);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(!model.index(0, 0).data(WorkspaceModel::ErrorRole).toString().isEmpty());
    QCOMPARE(model.rowCount(model.index(0, 0)), 1);

    writeFile(json, good, false);
    QTRY_VERIFY(model.index(0, 0).data(WorkspaceModel::ErrorRole).toString().isEmpty());
    QCOMPARE(childNames(model, model.index(0, 0)), (QStringList{"task.json", "naive.cu", "optimized.cu"}));
    QCOMPARE(model.index(0, 0).data(Qt::ToolTipRole).toString(), qs(ws.taskAt(0).task->description));
}

void TestWorkspaceModel::taskFoldersAppearAndVanish()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    copyTree(kExamples + "/softmax_fp32", tmp.path() + "/softmax_fp32");
    Workspace ws;
    QVERIFY(ws.open(tmp.path()));
    WorkspaceModel model(&ws);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy added(&ws, &Workspace::taskAdded);
    QCOMPARE(model.rowCount(), 1);

    copyTree(kExamples + "/vector_add", tmp.path() + "/a_copy");
    QTRY_COMPARE(model.rowCount(), 2);
    QCOMPARE(added.count(), 1);
    // Sorted by folder: a_copy before softmax_fp32; the name shown is the task's own.
    QCOMPARE(model.index(0, 0).data().toString(), QString("vector_add"));
    QCOMPARE(model.index(0, 0).data(WorkspaceModel::TaskDirRole).toString(), QDir::cleanPath(tmp.path() + "/a_copy"));

    QVERIFY(QDir(tmp.path() + "/softmax_fp32").removeRecursively());
    QTRY_COMPARE(model.rowCount(), 1);
    QCOMPARE(model.index(0, 0).data().toString(), QString("vector_add"));
    QVERIFY(!ws.taskForDir(tmp.path() + "/softmax_fp32"));
}

void TestWorkspaceModel::nestedTaskFoldersAreFoundTwoLevelsDeep()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    copyTree(kExamples + "/vector_add", tmp.path() + "/group/vector_add");
    copyTree(kExamples + "/softmax_fp32", tmp.path() + "/a/b/too_deep");
    copyTree(kExamples + "/cumsum_fp32", tmp.path() + "/.hidden/cumsum_fp32");
    Workspace ws;
    QVERIFY(ws.open(tmp.path()));
    QCOMPARE(ws.taskCount(), 1);
    QCOMPARE(ws.taskAt(0).dir, QDir::cleanPath(tmp.path() + "/group/vector_add"));

    // A task appearing inside an existing group folder is found by the watcher.
    copyTree(kExamples + "/cumsum_fp32", tmp.path() + "/group/cumsum");
    QTRY_COMPARE(ws.taskCount(), 2);
}

void TestWorkspaceModel::createTaskMakesALoadableTask()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    auto dir = kf::app::createTask(tmp.path(), "my_relu");
    KF_VERIFY_OK(dir);
    QCOMPARE(*dir, QDir::cleanPath(tmp.path() + "/my_relu"));
    auto task = kf::loadTask(fsp(*dir));
    KF_VERIFY_OK(task);
    QCOMPARE(qs(task->name), QString("my_relu"));
    QCOMPARE(task->candidates.size(), size_t(1));
    QVERIFY(QFileInfo(*dir + "/" + qs(task->candidates[0].file)).isFile());

    auto again = kf::app::createTask(tmp.path(), "my_relu");
    QVERIFY(!again.ok());
    QVERIFY2(qs(again.error().message()).contains("already exists"), again.error().message().c_str());
}

void TestWorkspaceModel::createTaskRefusesBadNames_data()
{
    QTest::addColumn<QString>("name");
    QTest::newRow("empty") << QString();
    QTest::newRow("has a space") << QString("my task");
    QTest::newRow("path separator") << QString("a/b");
    QTest::newRow("parent folder") << QString("..");
    QTest::newRow("starts with a dash") << QString("-x");
}

void TestWorkspaceModel::createTaskRefusesBadNames()
{
    QFETCH(QString, name);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    auto r = kf::app::createTask(tmp.path(), name);
    QVERIFY(!r.ok());
    QVERIFY2(qs(r.error().message()).contains("not a valid task name"), r.error().message().c_str());
    QCOMPARE(QDir(tmp.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden), QStringList());
}

void TestWorkspaceModel::createCandidateFromTemplate()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    copyTree(kExamples + "/vector_add", tmp.path() + "/vector_add");
    const QString dir = tmp.path() + "/vector_add";
    auto before = kf::loadTask(fsp(dir));
    KF_VERIFY_OK(before);

    auto file = kf::app::createCandidate(dir, "tuned");
    KF_VERIFY_OK(file);
    QCOMPARE(QFileInfo(*file).fileName(), QString("tuned.cu"));
    auto after = kf::loadTask(fsp(dir));
    KF_VERIFY_OK(after);
    QCOMPARE(after->candidates.size(), before->candidates.size() + 1);
    const kf::Candidate& added = after->candidates.back();
    QCOMPARE(qs(added.file), QString("tuned.cu"));
    QCOMPARE(qs(added.launches.at(0).kernel), QString("vector_add")); // the first candidate's plan
    // Other keys survive the rewrite.
    QCOMPARE(after->description, before->description);
    QCOMPARE(after->bytesFormula.text(), before->bytesFormula.text());
    QCOMPARE(after->testShapes.size(), before->testShapes.size());

    const QString src = QString::fromUtf8(readAll(*file));
    QVERIFY2(src.contains("extern \"C\" __global__ void vector_add(const float* __restrict__ a, "
                          "const float* __restrict__ b, float* __restrict__ c, long long N)"),
             qPrintable(src));
}

void TestWorkspaceModel::createCandidateFromTemplateForATemplatedKernel()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    copyTree(kExamples + "/softmax_fp32", tmp.path() + "/softmax_fp32");
    const QString dir = tmp.path() + "/softmax_fp32";
    // Make the templated candidate the first one, whose plan a new candidate inherits.
    auto json = nlohmann::ordered_json::parse(readAll(dir + "/task.json").toStdString());
    std::swap(json["candidates"][0], json["candidates"][1]);
    writeFile(dir + "/task.json", QByteArray::fromStdString(json.dump(2)), false);

    auto file = kf::app::createCandidate(dir, "mine.cu", QString());
    KF_VERIFY_OK(file);
    const QString src = QString::fromUtf8(readAll(*file));
    QVERIFY2(src.contains("template <int P0, int P1> __global__ void softmax_block(const float* __restrict__ x"),
             qPrintable(src));
    // Copying from naive.cu takes its plan, not the first candidate's.
    auto copy = kf::app::createCandidate(dir, "mine2.cu", "naive.cu");
    KF_VERIFY_OK(copy);
    auto task = kf::loadTask(fsp(dir));
    KF_VERIFY_OK(task);
    QCOMPARE(qs(task->findCandidate("mine.cu")->launches.at(0).kernel), QString("softmax_block<KF_THREADS, KF_CACHE>"));
    QCOMPARE(*task->findCandidate("mine.cu")->define("KF_THREADS"), std::string("256"));   // the plan's knobs come along
    QCOMPARE(qs(task->findCandidate("mine2.cu")->launches.at(0).kernel), QString("softmax_naive"));
}

void TestWorkspaceModel::createCandidateAsACopy()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    copyTree(kExamples + "/vector_add", tmp.path() + "/vector_add");
    const QString dir = tmp.path() + "/vector_add";
    auto file = kf::app::createCandidate(dir, "vec4_copy.cu", dir + "/optimized.cu");
    KF_VERIFY_OK(file);
    QCOMPARE(readAll(*file), readAll(dir + "/optimized.cu"));
    auto task = kf::loadTask(fsp(dir));
    KF_VERIFY_OK(task);
    const kf::Candidate* c = task->findCandidate("vec4_copy.cu");
    QVERIFY(c);
    QCOMPARE(qs(c->launches.at(0).kernel), QString("vector_add_vec4<KF_UNROLL>"));
    QCOMPARE(*c->define("KF_UNROLL"), std::string("2"));
    QCOMPARE(qs(c->description), QString("copy of optimized.cu"));
}

void TestWorkspaceModel::createCandidateRefuses_data()
{
    QTest::addColumn<QString>("fileName");
    QTest::addColumn<QString>("copyFrom");
    QTest::addColumn<bool>("breakTask");
    QTest::addColumn<QString>("sentencePart");
    QTest::newRow("name already taken") << "naive.cu" << QString() << false << "already exists";
    QTest::newRow("outside the task folder") << "../escape.cu" << QString() << false << "not a plain file name";
    QTest::newRow("copy of a missing file") << "x.cu" << "nope.cu" << false << "does not exist";
    QTest::newRow("task.json is broken") << "x.cu" << QString() << true << "does not load";
}

void TestWorkspaceModel::createCandidateRefuses()
{
    QFETCH(QString, fileName);
    QFETCH(QString, copyFrom);
    QFETCH(bool, breakTask);
    QFETCH(QString, sentencePart);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    copyTree(kExamples + "/vector_add", tmp.path() + "/vector_add");
    const QString dir = tmp.path() + "/vector_add";
    if (breakTask)
        writeFile(dir + "/task.json", readAll(dir + "/task.json").replace("\"fp32\"", "\"float\""), false);
    const QByteArray jsonBefore = readAll(dir + "/task.json");
    const QStringList filesBefore = QDir(dir).entryList(QDir::Files, QDir::Name);

    auto r = kf::app::createCandidate(dir, fileName, copyFrom);
    QVERIFY(!r.ok());
    QVERIFY2(qs(r.error().message()).contains(sentencePart), r.error().message().c_str());
    QCOMPARE(readAll(dir + "/task.json"), jsonBefore);
    QCOMPARE(QDir(dir).entryList(QDir::Files, QDir::Name), filesBefore);
    QVERIFY(!QFileInfo::exists(tmp.path() + "/escape.cu"));
}

void TestWorkspaceModel::createdCandidateAppearsInTheOpenTree()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    Workspace ws;
    QVERIFY(ws.open(tmp.path()));
    WorkspaceModel model(&ws);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);

    auto dir = kf::app::createTask(tmp.path(), "fresh");
    KF_VERIFY_OK(dir);
    QTRY_COMPARE(model.rowCount(), 1);
    const QModelIndex t = model.index(0, 0);
    QCOMPARE(t.data().toString(), QString("fresh"));
    QCOMPARE(childNames(model, t), (QStringList{"task.json", "kernel.cu"}));

    auto file = kf::app::createCandidate(*dir, "faster.cu");
    KF_VERIFY_OK(file);
    QTRY_COMPARE(model.rowCount(model.index(0, 0)), 3);
    QCOMPARE(model.index(2, 0, model.index(0, 0)).data(WorkspaceModel::PathRole).toString(), *file);
}

void TestWorkspaceModel::templateTaskLoads()
{
    KF_VERIFY_OK(kf::loadTask(fsp(kf::app::templatesDir() + "/task")));
    QVERIFY(QFileInfo(kf::app::templatesDir() + "/candidate.cu").isFile());
}

QTEST_MAIN(TestWorkspaceModel)
#include "tst_workspacemodel.moc"
