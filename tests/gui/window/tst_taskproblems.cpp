// A task.json that does not load, through the real window (offscreen): beside the red mark in the
// Workspace, the engine's error is a row in Problems at its line and column; clicking it opens
// the file in the Task panel's JSON tab at that place, with the file's own text; fixed there and
// saved with Ctrl+S, the row goes. Also locateJsonPointer, which places a schema error.
#include "app/gui/window/MainWindow.h"
#include "app/gui/workspace/JsonPointerPlace.h"
#include "app/gui/workspace/Workspace.h"
#include "windowfixture.h"
#include "widgets/diagnostics/DiagnosticsModel.h"
#include "widgets/diagnostics/DiagnosticsPanel.h"
#include "widgets/task/JsonTextPane.h"
#include "widgets/task/TaskEditor.h"

#include <Qsci/qsciscintilla.h>

#include <QAbstractItemModel>
#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QTabWidget>
#include <QTableView>
#include <QTest>

#include <algorithm>
#include <memory>

using namespace kf::app;

namespace {

QByteArray fileBytes(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool writeBytes(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

/// The row of the Problems table (as shown, sorted) whose File column names `name`; -1: none.
int rowNaming(const QAbstractItemModel* shown, const QString& name)
{
    for (int r = 0; r < shown->rowCount(); ++r)
        if (shown->index(r, kf::ui::DiagnosticsModel::File).data().toString().endsWith(name))
            return r;
    return -1;
}

} // namespace

class TestTaskProblems : public QObject {
    Q_OBJECT
    kf::test::WindowFixture m_fx;
    QString m_json;        // vector_add/task.json in the scratch workspace
    QByteArray m_good;

    std::unique_ptr<MainWindow> makeWindow()
    {
        MainWindow::Options o = m_fx.options();
        o.runner.runnerPath = m_fx.scratch() + "/no-runner";   // nothing here runs a kernel
        auto w = m_fx.make(o);
        QApplication::setActiveWindow(w.get());
        if (!QTest::qWaitForWindowActive(w.get()))
            qWarning("the window did not become active");
        return w;
    }

private slots:
    void initTestCase()
    {
        QString error;
        QVERIFY2(m_fx.setUp({"softmax_fp32", "vector_add"}, &error), qPrintable(error));
        m_fx.settings()->setCompileDebounceMs(50);
        m_json = m_fx.workspace() + "/vector_add/task.json";
        m_good = fileBytes(m_json);
        QVERIFY(!m_good.isEmpty());
    }

    void cleanup() { QVERIFY(writeBytes(m_json, m_good)); }

    void brokenTaskJsonIsAProblem_data()
    {
        QTest::addColumn<QByteArray>("from");   // replaced in the example's task.json
        QTest::addColumn<QByteArray>("to");
        QTest::addColumn<QString>("inMessage");
        QTest::addColumn<int>("line");     // -1: not checked (the reader may or may not name one)
        QTest::addColumn<int>("column");   // 0: not checked
        QTest::newRow("a comma missing (syntax)") << QByteArray(R"("sm_90", "sm_80")") << QByteArray(R"("sm_90" "sm_80")")
                                                  << "invalid JSON" << 5 << 0;
        QTest::newRow("a dtype that does not exist (schema)")
            << QByteArray(R"({"name": "b", "dtype": "fp32")") << QByteArray(R"({"name": "b", "dtype": "fp33")")
            << "at /inputs/1/dtype: unknown dtype \"fp33\"" << 11 << 28;
        QTest::newRow("a key given twice") << QByteArray(R"("schema_version": 1,)")
                                           << QByteArray(R"("schema_version": 1, "schema_version": 1,)")
                                           << "appears twice" << -1 << 0;
    }
    void brokenTaskJsonIsAProblem()
    {
        QFETCH(QByteArray, from);
        QFETCH(QByteArray, to);
        QFETCH(QString, inMessage);
        QFETCH(int, line);
        QFETCH(int, column);
        QByteArray broken = m_good;
        broken.replace(from, to);
        QVERIFY(broken != m_good);
        QVERIFY(writeBytes(m_json, broken));
        auto w = makeWindow();
        QTableView* view = w->diagnosticsPanel()->view();
        QTRY_VERIFY2(rowNaming(view->model(), "task.json") >= 0, "Problems does not list the task.json that does not load");

        const kf::ui::DiagnosticsModel* model = w->diagnosticsPanel()->model();
        const int source = rowNaming(model, "task.json");
        const kf::Diagnostic& d = model->diagnosticAt(source);
        QCOMPARE(QString::fromStdString(d.file), m_json);
        QCOMPARE(d.severity, kf::Diagnostic::Severity::Error);
        QVERIFY2(QString::fromStdString(d.message).contains(inMessage), d.message.c_str());
        if (line >= 0)
            QCOMPARE(d.line, line);
        if (column > 0)
            QCOMPARE(d.column, column);
        const int placeLine = std::max(d.line, 1), placeColumn = std::max(d.column, 1);

        // A click opens task.json in the JSON tab, with the file's text, at the place.
        const QModelIndex row = view->model()->index(rowNaming(view->model(), "task.json"), 0);
        view->scrollTo(row);
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(row).center());
        kf::ui::TaskEditor* task = w->taskEditor();
        QCOMPARE(task->filePath(), m_json);
        QCOMPARE(task->tabs()->currentWidget(), task->jsonPane());
        QCOMPARE(task->jsonPane()->text(), QString::fromUtf8(broken));
        QsciScintilla* text = task->jsonPane()->editor();
        int cursorLine = -1, cursorColumn = -1;
        text->getCursorPosition(&cursorLine, &cursorColumn);
        QCOMPARE(cursorLine + 1, placeLine);
        QCOMPARE(cursorColumn + 1, placeColumn);

        // Fixed in the JSON tab and saved: the row goes, and the task loads.
        text->setText(QString::fromUtf8(m_good));
        text->setFocus();
        QTRY_VERIFY(text->hasFocus());
        QTest::keyClick(text, Qt::Key_S, Qt::ControlModifier);
        QTRY_VERIFY2(rowNaming(view->model(), "task.json") < 0, qPrintable(w->diagnosticsPanel()->summary()));
        const TaskEntry* entry = w->workspace()->taskForDir(m_fx.workspace() + "/vector_add");
        QVERIFY(entry && entry->task);
    }

    // Text that does not parse, saved from the JSON tab, is saved as typed: before, the last
    // document that parsed (an empty task, for a file that never did) replaced the file.
    void unparsableTextIsSavedAsTyped()
    {
        QByteArray broken = m_good;
        broken.replace(R"("sm_90", "sm_80")", R"("sm_90" "sm_80")");
        QVERIFY(writeBytes(m_json, broken));
        auto w = makeWindow();
        w->openFile(m_json);
        kf::ui::TaskEditor* task = w->taskEditor();
        QTRY_COMPARE(task->filePath(), m_json);
        w->dock("taskDock")->raise();
        task->tabs()->setCurrentWidget(task->jsonPane());
        QsciScintilla* text = task->jsonPane()->editor();
        const QString typed = QString::fromUtf8(broken).replace("vector_add", "vector_add_renamed");
        text->setText(typed);
        text->setFocus();
        QTRY_VERIFY(text->hasFocus());
        QTest::keyClick(text, Qt::Key_S, Qt::ControlModifier);
        QTRY_COMPARE(QString::fromUtf8(fileBytes(m_json)), typed);
    }

    void locatesAPointer_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("pointer");
        QTest::addColumn<int>("line");
        QTest::addColumn<int>("column");
        const QString doc = "{\n  \"a\": {\"b\": [10, {\"c\": \"x\"}]},\n  \"d~/e\": 2\n}\n";
        QTest::newRow("the root") << doc << "" << 1 << 1;
        QTest::newRow("a member") << doc << "/a" << 2 << 8;
        QTest::newRow("an array element") << doc << "/a/b/1" << 2 << 19;
        QTest::newRow("deep") << doc << "/a/b/1/c" << 2 << 25;
        QTest::newRow("escaped key") << doc << "/d~0~1e" << 3 << 11;
        QTest::newRow("missing: its parent") << doc << "/a/zz" << 2 << 8;
        QTest::newRow("index past the end: the array") << doc << "/a/b/7" << 2 << 14;
        QTest::newRow("not JSON") << "" << "/a" << 0 << 0;
        QTest::newRow("a million brackets") << QString(1000000, '[') << "/0/0" << 1 << 3;
        // fuzz_json_pointer's first find: the key's value was read past the end of the text.
        QTest::newRow("a key at the end of the text") << "{\"a\": " << "/a/b" << 1 << 1;
    }
    void locatesAPointer()
    {
        QFETCH(QString, text);
        QFETCH(QString, pointer);
        QFETCH(int, line);
        QFETCH(int, column);
        const auto [l, c] = locateJsonPointer(text.toStdString(), pointer.toStdString());
        QCOMPARE(l, line);
        QCOMPARE(c, column);
    }
};

QTEST_MAIN(TestTaskProblems)
#include "tst_taskproblems.moc"
