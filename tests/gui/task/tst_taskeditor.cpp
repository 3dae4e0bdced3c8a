// The task editor: bundled tasks load valid; the engine's sentence for a bad value appears
// beside the field that holds it; the form and the JSON text stay in sync both ways; broken
// JSON keeps the form and the text; keys the form does not show survive edits.
#include "engine/core/JsonReader.h"
#include "engine/task/Task.h"
#include "testutil.h"
#include "widgets/task/FormSection.h"
#include "widgets/task/JsonTable.h"
#include "widgets/task/JsonTableModel.h"
#include "widgets/task/JsonTextPane.h"
#include "widgets/task/TaskEditor.h"
#include "widgets/task/TaskForm.h"

#include <Qsci/qsciscintilla.h>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTest>

#include <memory>
#include <vector>

using kf::ui::JsonTable;
using kf::ui::JsonTableModel;
using kf::ui::TaskEditor;
using nlohmann::json;

// QCOMPARE cannot print nlohmann::json (and trips over its converting constructors).
#define COMPARE_JSON(actual, expected)                                                            \
    do {                                                                                          \
        const json kf_a_ = (actual), kf_e_ = (expected);                                          \
        QVERIFY2(kf_a_ == kf_e_, qPrintable(QStringLiteral("actual %1\n expected %2")             \
                                                .arg(qs(kf_a_.dump()), qs(kf_e_.dump()))));       \
    } while (0)

namespace {

QString exampleDir(const QString& name)
{
    return QString(KF_SOURCE_DIR) + "/resources/examples/" + name;
}

json readExample(const QString& name)
{
    auto r = kf::json::readFile((exampleDir(name) + QStringLiteral("/task.json")).toStdString());
    if (!r)
        qFatal("%s", r.error().message().c_str());
    return *r;
}

// An editor showing one bundled example, with a model tester on every table it built.
struct Fixture {
    explicit Fixture(const QString& example)
    {
        editor.resize(1000, 800);
        editor.setDocument(readExample(example), exampleDir(example) + QStringLiteral("/task.json"), exampleDir(example));
        for (auto* model : editor.findChildren<JsonTableModel*>())
            testers.push_back(std::make_unique<QAbstractItemModelTester>(
                model, QAbstractItemModelTester::FailureReportingMode::QtTest));
    }
    JsonTableModel* model(const QString& table) const
    {
        auto* t = editor.findChild<JsonTable*>(table);
        return t ? t->model() : nullptr;
    }
    QModelIndex cell(const QString& table, int row, const QString& header) const
    {
        JsonTableModel* m = model(table);
        if (!m)
            return {};
        for (int c = 0; c < m->columnCount(); ++c)
            if (m->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString() == header)
                return m->index(row, c);
        return {};
    }
    QString jsonText() const { return editor.jsonPane()->text(); }
    void typeJson(const QString& text) { editor.jsonPane()->editor()->setText(text); }

    TaskEditor editor;
    std::vector<std::unique_ptr<QAbstractItemModelTester>> testers;
};

bool isChildOf(const QWidget* w, const QString& objectName)
{
    for (; w; w = w->parentWidget())
        if (w->objectName() == objectName)
            return true;
    return false;
}

} // namespace

class TestTaskEditor : public QObject {
    Q_OBJECT
private slots:
    void bundledExampleLoadsValid_data();
    void bundledExampleLoadsValid();
    void badValueShowsEngineSentenceBesideField_data();
    void badValueShowsEngineSentenceBesideField();
    void launchErrorShowsInLaunchPlanOfItsCandidate();
    void renamingInputInFormUpdatesJsonText();
    void editingJsonTextUpdatesForm();
    void invalidJsonKeepsFormAndText_data();
    void invalidJsonKeepsFormAndText();
    void keysTheFormDoesNotShowSurvive();
    void addingAndRemovingRows();
    void modifiedFlagAndSaveShortcut();
};

void TestTaskEditor::bundledExampleLoadsValid_data()
{
    QTest::addColumn<QString>("example");
    const QStringList dirs =
        QDir(QString(KF_SOURCE_DIR) + "/resources/examples").entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QVERIFY(dirs.size() >= 8);
    for (const QString& d : dirs)
        QTest::newRow(qPrintable(d)) << d;
}

void TestTaskEditor::bundledExampleLoadsValid()
{
    QFETCH(QString, example);
    Fixture f(example);
    const json doc = readExample(example);
    QVERIFY2(f.editor.isValid(), qPrintable(f.editor.validationMessage()));
    QCOMPARE(f.editor.validationMessage(), QString());
    QCOMPARE(f.editor.findChild<QLabel*>(QStringLiteral("validationBanner"))->text(), QStringLiteral("Valid task"));
    QVERIFY(!f.editor.isModified());
    COMPARE_JSON(f.editor.document(), doc);

    QCOMPARE(f.editor.findChild<QLineEdit*>(QStringLiteral("nameEdit"))->text(), qs(doc["name"].get<std::string>()));
    JsonTableModel* inputs = f.model(QStringLiteral("inputsTable"));
    QCOMPARE(inputs->rowCount(), int(doc["inputs"].size()));
    for (int i = 0; i < inputs->rowCount(); ++i) {
        QCOMPARE(f.cell(QStringLiteral("inputsTable"), i, QStringLiteral("Name")).data().toString(),
                 qs(doc["inputs"][i]["name"].get<std::string>()));
        QCOMPARE(f.cell(QStringLiteral("inputsTable"), i, QStringLiteral("dtype")).data().toString(),
                 qs(doc["inputs"][i]["dtype"].get<std::string>()));
    }
    // One test-shape column per symbol, plus the label.
    QCOMPARE(f.model(QStringLiteral("testShapesTable"))->columnCount(), int(doc["symbols"].size()) + 1);
    QCOMPARE(f.model(QStringLiteral("testShapesTable"))->rowCount(), int(doc["shapes"]["tests"].size()));
    QCOMPARE(f.model(QStringLiteral("candidatesTable"))->rowCount(), int(doc["candidates"].size()));
    QCOMPARE(f.model(QStringLiteral("launchesTable"))->rowCount(), int(doc["candidates"][0]["launches"].size()));
    // The JSON tab holds the same document, pretty-printed with two spaces.
    COMPARE_JSON(json::parse(f.jsonText().toStdString()), doc);
    QVERIFY(f.jsonText().startsWith(QStringLiteral("{\n  \"")));
}

void TestTaskEditor::badValueShowsEngineSentenceBesideField_data()
{
    QTest::addColumn<QString>("table");       // the table the user edits; empty: the JSON text
    QTest::addColumn<int>("row");
    QTest::addColumn<QString>("column");
    QTest::addColumn<QString>("text");        // typed into the cell, or replacing `column` in the JSON text
    QTest::addColumn<QString>("badPointer");  // where the engine should complain
    QTest::addColumn<QString>("phrase");      // part of the engine's sentence
    QTest::addColumn<QString>("section");     // the form section that should show it
    QTest::addColumn<QString>("highlightedTable");
    QTest::addColumn<QString>("highlightedColumn");

    QTest::newRow("test shape of zero")
        << "testShapesTable" << 2 << "N" << "0" << "/shapes/tests/2/N" << "is outside its range" << "testShapesSection"
        << "testShapesTable" << "N";
    QTest::newRow("test shape above the symbol's max")
        << "testShapesTable" << 0 << "N" << "2000000000" << "/shapes/tests/0/N" << "is outside its range"
        << "testShapesSection" << "testShapesTable" << "N";
    QTest::newRow("benchmark shape not an integer")
        << "benchmarkShapesTable" << 1 << "N" << "lots" << "/shapes/benchmarks/1/N" << "expected an integer"
        << "benchmarkShapesSection" << "benchmarkShapesTable" << "N";
    QTest::newRow("test shape with a fraction")
        << "testShapesTable" << 1 << "N" << "2.5" << "/shapes/tests/1/N" << "expected an integer" << "testShapesSection"
        << "testShapesTable" << "N";
    QTest::newRow("multiple_of that the shapes break")
        << "symbolsTable" << 0 << "multiple_of" << "4" << "/shapes/tests/0/N" << "is not a multiple of 4"
        << "testShapesSection" << "testShapesTable" << "N";
    QTest::newRow("unknown dtype typed into the JSON")
        << "" << 0 << "\"dtype\": \"fp32\"" << "\"dtype\": \"float\"" << "/inputs/0/dtype" << "unknown dtype \"float\""
        << "inputsSection" << "inputsTable" << "dtype";
    QTest::newRow("unknown dtype picked in the outputs table")
        << "outputsTable" << 0 << "dtype" << "half" << "/outputs/0/dtype" << "unknown dtype \"half\""
        << "outputsSection" << "outputsTable" << "dtype";
    QTest::newRow("input shape naming an undeclared symbol")
        << "inputsTable" << 1 << "Shape" << "M" << "/inputs/1/shape/0" << "is not declared in /symbols"
        << "inputsSection" << "inputsTable" << "Shape";
}

void TestTaskEditor::badValueShowsEngineSentenceBesideField()
{
    QFETCH(QString, table);
    QFETCH(int, row);
    QFETCH(QString, column);
    QFETCH(QString, text);
    QFETCH(QString, badPointer);
    QFETCH(QString, phrase);
    QFETCH(QString, section);
    QFETCH(QString, highlightedTable);
    QFETCH(QString, highlightedColumn);

    Fixture f(QStringLiteral("vector_add"));
    const json original = f.editor.document();
    QSignalSpy validity(&f.editor, &TaskEditor::validityChanged);
    QSignalSpy changed(&f.editor, &TaskEditor::documentChanged);

    const QString originalText = f.jsonText();
    const QString before = table.isEmpty() ? QString() : f.cell(table, row, column).data().toString();
    if (table.isEmpty()) {
        QVERIFY(originalText.contains(column));
        QString edited = originalText;
        f.typeJson(edited.replace(edited.indexOf(column), column.size(), text));
    } else {
        const QModelIndex cell = f.cell(table, row, column);
        QVERIFY(cell.isValid());
        QVERIFY(f.model(table)->setData(cell, text, Qt::EditRole));
    }
    QTRY_COMPARE(validity.count(), 1);
    QCOMPARE(validity.at(0).at(0).toBool(), false);
    QVERIFY(changed.count() >= 1);

    // Whatever the editor shows must be exactly what the engine says about the document.
    auto verdict = kf::parseTask(f.editor.document(), "task.json", exampleDir(QStringLiteral("vector_add")).toStdString());
    QVERIFY(!verdict.ok());
    const QString why = qs(verdict.error().why);
    QCOMPARE(qs(verdict.error().pointer), badPointer);
    QVERIFY2(why.contains(phrase), qPrintable(why));
    QCOMPARE(f.editor.validationMessage(), why);
    QCOMPARE(f.editor.errorPointer(), badPointer);
    QCOMPARE(f.editor.messageForPointer(badPointer), why);
    QLabel* label = f.editor.messageLabelFor(badPointer);
    QVERIFY(label);
    QVERIFY(label->isVisibleTo(&f.editor));
    QVERIFY(isChildOf(label, section));
    QVERIFY(f.editor.findChild<QLabel*>(QStringLiteral("validationBanner"))->text().contains(why.toHtmlEscaped()));
    // Only that section speaks.
    for (auto* s : f.editor.findChildren<kf::ui::FormSection*>())
        if (s->objectName() != section)
            QVERIFY2(s->message().isEmpty(), qPrintable(s->objectName()));
    // The offending cell is marked, the others are not.
    int badRow = -1;
    const auto parts = badPointer.split(u'/');
    for (const QString& p : parts) {
        bool ok = false;
        const int n = p.toInt(&ok);
        if (ok) {
            badRow = n;
            break;
        }
    }
    const QModelIndex marked = f.cell(highlightedTable, badRow, highlightedColumn);
    QVERIFY(marked.isValid());
    QVERIFY(marked.data(Qt::BackgroundRole).isValid());
    QCOMPARE(marked.data(Qt::ToolTipRole).toString(), why);
    QVERIFY(!f.cell(highlightedTable, badRow == 0 ? 1 : 0, highlightedColumn).data(Qt::BackgroundRole).isValid());

    // Putting the old value back makes the task valid again.
    if (table.isEmpty())
        f.typeJson(originalText);
    else
        QVERIFY(f.model(table)->setData(f.cell(table, row, column), before, Qt::EditRole));
    QTRY_VERIFY(f.editor.isValid());
    QCOMPARE(validity.last().at(0).toBool(), true);
    QCOMPARE(f.editor.validationMessage(), QString());
    QCOMPARE(f.editor.messageForPointer(badPointer), QString());
    QVERIFY(!f.cell(highlightedTable, badRow, highlightedColumn).data(Qt::BackgroundRole).isValid());
    COMPARE_JSON(f.editor.document(), original);
}

void TestTaskEditor::launchErrorShowsInLaunchPlanOfItsCandidate()
{
    Fixture f(QStringLiteral("vector_add"));
    QCOMPARE(f.model(QStringLiteral("launchesTable"))->rowPointer(0), std::string("/candidates/0/launches/0"));
    // The second candidate's block is in the JSON only; its error must bring its plan into view.
    QString text = f.jsonText();
    const int second = text.indexOf(QStringLiteral("optimized.cu"));
    const QString given = QStringLiteral("\"block\": \"KF_BLOCK\"");   // the example's tune knob
    const int block = text.indexOf(given, second);
    QVERIFY(second > 0 && block > second);
    f.typeJson(text.replace(block, given.size(), QStringLiteral("\"block\": 2048")));
    QTRY_VERIFY(!f.editor.isValid());
    QCOMPARE(f.editor.errorPointer(), QStringLiteral("/candidates/1/launches/0/block"));
    QVERIFY(f.editor.validationMessage().contains(QStringLiteral("1024")));
    QVERIFY(isChildOf(f.editor.messageLabelFor(f.editor.errorPointer()), QStringLiteral("launchSection")));
    QCOMPARE(f.editor.messageForPointer(QStringLiteral("/candidates/1/launches/0/block")), f.editor.validationMessage());
    QCOMPARE(f.model(QStringLiteral("launchesTable"))->rowPointer(0), std::string("/candidates/1/launches/0"));
    QCOMPARE(f.editor.findChild<kf::ui::FormSection*>(QStringLiteral("launchSection"))->title(),
             QStringLiteral("Launch plan of optimized.cu"));
    const QModelIndex cell = f.cell(QStringLiteral("launchesTable"), 0, QStringLiteral("Block"));
    QCOMPARE(cell.data().toString(), QStringLiteral("2048"));
    QVERIFY(cell.data(Qt::BackgroundRole).isValid());
    // Fixing it in the form's launch table.
    QVERIFY(f.model(QStringLiteral("launchesTable"))->setData(cell, QStringLiteral("KF_BLOCK"), Qt::EditRole));
    QVERIFY(f.editor.isValid());
    COMPARE_JSON(f.editor.document(), readExample(QStringLiteral("vector_add")));
}

void TestTaskEditor::renamingInputInFormUpdatesJsonText()
{
    Fixture f(QStringLiteral("vector_add"));
    QSignalSpy changed(&f.editor, &TaskEditor::documentChanged);
    QVERIFY(f.model(QStringLiteral("inputsTable"))
                ->setData(f.cell(QStringLiteral("inputsTable"), 0, QStringLiteral("Name")), QStringLiteral("lhs"), Qt::EditRole));
    QCOMPARE(changed.count(), 1);
    const json shown = json::parse(f.jsonText().toStdString());
    COMPARE_JSON(shown["inputs"][0]["name"], json("lhs"));
    COMPARE_JSON(shown["inputs"][1]["name"], json("b"));
    COMPARE_JSON(shown, f.editor.document());
    // The reference still names "a": the engine says so beside the reference.
    QVERIFY(!f.editor.isValid());
    QVERIFY(f.editor.errorPointer().startsWith(QStringLiteral("/reference")) ||
            f.editor.errorPointer().startsWith(QStringLiteral("/candidates")));
    QVERIFY2(f.editor.validationMessage().contains(QStringLiteral("\"a\"")), qPrintable(f.editor.validationMessage()));

    // Typing into a line edit writes the document too.
    auto* name = f.editor.findChild<QLineEdit*>(QStringLiteral("nameEdit"));
    name->selectAll();
    QTest::keyClicks(name, QStringLiteral("renamed"));
    COMPARE_JSON(f.editor.document()["name"], json("renamed"));
    COMPARE_JSON(json::parse(f.jsonText().toStdString())["name"], json("renamed"));
}

void TestTaskEditor::editingJsonTextUpdatesForm()
{
    Fixture f(QStringLiteral("fused_add_rms_norm_fp16"));
    QSignalSpy changed(&f.editor, &TaskEditor::documentChanged);
    auto* name = f.editor.findChild<QLineEdit*>(QStringLiteral("nameEdit"));
    QString text = f.jsonText();
    text.replace(QStringLiteral("\"name\": \"fused_add_rms_norm_fp16\""), QStringLiteral("\"name\": \"fused\""));
    text.replace(QStringLiteral("\"name\": \"residual\""), QStringLiteral("\"name\": \"res\""));
    f.typeJson(text);
    // Debounced: nothing moves until the pause is over.
    QCOMPARE(name->text(), QStringLiteral("fused_add_rms_norm_fp16"));
    QTRY_COMPARE(name->text(), QStringLiteral("fused"));
    QCOMPARE(f.cell(QStringLiteral("inputsTable"), 1, QStringLiteral("Name")).data().toString(), QStringLiteral("res"));
    QCOMPARE(changed.count(), 1);
    QCOMPARE(f.jsonText(), text); // the user's text is not rewritten under them
    QVERIFY(f.editor.isModified());
}

void TestTaskEditor::invalidJsonKeepsFormAndText_data()
{
    QTest::addColumn<QString>("find");
    QTest::addColumn<QString>("replace");
    QTest::newRow("missing comma") << "\"fp32\",\n" << "\"fp32\"\n";
    QTest::newRow("trailing comma in an array") << "\"N\"\n" << "\"N\",\n";
    QTest::newRow("unclosed string") << "\"name\": \"vector_add\"" << "\"name\": \"vector_add";
    QTest::newRow("text cut short") << "\"cost\"" << "";
}

void TestTaskEditor::invalidJsonKeepsFormAndText()
{
    QFETCH(QString, find);
    QFETCH(QString, replace);
    Fixture f(QStringLiteral("vector_add"));
    QSignalSpy validity(&f.editor, &TaskEditor::validityChanged);
    const json before = f.editor.document();
    const QString good = f.jsonText();
    QString bad = good;
    const int at = bad.indexOf(find);
    QVERIFY(at > 0);
    if (QTest::currentDataTag() == QByteArray("text cut short"))
        bad.truncate(at);
    else
        bad.replace(at, find.size(), replace);
    f.typeJson(bad);
    QTRY_COMPARE(validity.count(), 1);
    QCOMPARE(validity.at(0).at(0).toBool(), false);

    auto expected = kf::json::parseText(bad.toStdString(), "task.json");
    QVERIFY(!expected.ok());
    const QString why = qs(expected.error().why);
    QVERIFY(why.startsWith(QStringLiteral("line ")) && why.contains(QStringLiteral(", column ")));
    QCOMPARE(f.editor.validationMessage(), why);
    QCOMPARE(f.editor.findChild<QLabel*>(QStringLiteral("jsonSyntaxError"))->text(), why);
    // Nothing the user typed is lost and the form keeps the last good document, read-only.
    QCOMPARE(f.jsonText(), bad);
    COMPARE_JSON(f.editor.document(), before);
    QCOMPARE(f.editor.findChild<QLineEdit*>(QStringLiteral("nameEdit"))->text(), QStringLiteral("vector_add"));
    QCOMPARE(f.model(QStringLiteral("inputsTable"))->rowCount(), 2);
    QVERIFY(!f.editor.form()->isEnabled());

    f.typeJson(good);
    QTRY_VERIFY(f.editor.isValid());
    QVERIFY(f.editor.form()->isEnabled());
    QCOMPARE(f.editor.findChild<QLabel*>(QStringLiteral("jsonSyntaxError"))->isVisibleTo(&f.editor), false);
}

void TestTaskEditor::keysTheFormDoesNotShowSurvive()
{
    Fixture f(QStringLiteral("fused_add_rms_norm_fp16"));
    json doc = f.editor.document();
    doc["x_notes"] = {{"owner", "perf team"}, {"ticket", 42}};
    doc["inputs"][0]["x_layout"] = "row-major";
    doc["candidates"][1]["launches"][0]["x_comment"] = "tuned on H100";
    f.editor.setDocument(doc, f.editor.filePath(), f.editor.taskDir());
    // The engine rejects unknown keys; the editor says so but keeps them.
    QVERIFY(!f.editor.isValid());
    COMPARE_JSON(f.editor.document(), doc);

    QVERIFY(f.model(QStringLiteral("inputsTable"))
                ->setData(f.cell(QStringLiteral("inputsTable"), 0, QStringLiteral("dtype")), QStringLiteral("fp32"), Qt::EditRole));
    QVERIFY(f.model(QStringLiteral("symbolsTable"))
                ->setData(f.cell(QStringLiteral("symbolsTable"), 1, QStringLiteral("max")), QStringLiteral("32768"), Qt::EditRole));
    json expected = doc;
    expected["inputs"][0]["dtype"] = "fp32";
    expected["symbols"]["D"]["max"] = 32768;
    COMPARE_JSON(f.editor.document(), expected);
    COMPARE_JSON(f.editor.document()["parameters"], json::object({{"eps", 1e-6}}));
    COMPARE_JSON(f.editor.document()["cost"], doc["cost"]);
    // And through the JSON text and back.
    COMPARE_JSON(json::parse(f.jsonText().toStdString()), expected);
    QString text = f.jsonText();
    f.typeJson(text.replace(QStringLiteral("\"perf team\""), QStringLiteral("\"kernels team\"")));
    QTRY_VERIFY(f.editor.document()["x_notes"]["owner"] == json("kernels team"));
    expected["x_notes"]["owner"] = "kernels team";
    COMPARE_JSON(f.editor.document(), expected);
}

void TestTaskEditor::addingAndRemovingRows()
{
    Fixture f(QStringLiteral("vector_add"));
    auto* tests = f.editor.findChild<JsonTable*>(QStringLiteral("testShapesTable"));
    const int rows = tests->model()->rowCount();
    QVERIFY(tests->model()->insertRows(rows, 1));
    QCOMPARE(f.editor.document()["shapes"]["tests"].size(), size_t(rows + 1));
    COMPARE_JSON(f.editor.document()["shapes"]["tests"][rows], json::object({{"N", 1}}));
    QVERIFY(f.editor.isValid());
    QVERIFY(tests->model()->removeRows(0, 1));
    QCOMPARE(f.editor.document()["shapes"]["tests"].size(), size_t(rows));
    COMPARE_JSON(f.editor.document()["shapes"]["tests"][0]["label"], json("below-vector"));

    // A new symbol becomes a shape column, and the shapes must bind it.
    auto* symbols = f.model(QStringLiteral("symbolsTable"));
    QVERIFY(symbols->insertRows(symbols->rowCount(), 1));
    QCOMPARE(symbols->rowCount(), 2);
    QVERIFY(f.cell(QStringLiteral("testShapesTable"), 0, QStringLiteral("S1")).isValid());
    QVERIFY(!f.editor.isValid());
    QCOMPARE(f.editor.errorPointer(), QStringLiteral("/shapes/tests/0"));
    QVERIFY(isChildOf(f.editor.messageLabelFor(f.editor.errorPointer()), QStringLiteral("testShapesSection")));
    // Renaming the symbol renames its column.
    QVERIFY(symbols->setData(f.cell(QStringLiteral("symbolsTable"), 1, QStringLiteral("Name")), QStringLiteral("T"), Qt::EditRole));
    QVERIFY(f.editor.document()["symbols"].contains("T"));
    QVERIFY(!f.editor.document()["symbols"].contains("S1"));
    QVERIFY(f.cell(QStringLiteral("testShapesTable"), 0, QStringLiteral("T")).isValid());
    QVERIFY(symbols->removeRows(1, 1));
    QVERIFY(f.editor.isValid());
}

void TestTaskEditor::modifiedFlagAndSaveShortcut()
{
    Fixture f(QStringLiteral("vector_add"));
    QSignalSpy modified(&f.editor, &TaskEditor::modifiedChanged);
    QSignalSpy save(&f.editor, &TaskEditor::saveRequested);
    QVERIFY(!f.editor.isModified());
    f.editor.show();
    QApplication::setActiveWindow(&f.editor);
    QVERIFY(QTest::qWaitForWindowActive(&f.editor));
    f.editor.tabs()->setCurrentWidget(f.editor.jsonPane());
    QsciScintilla* text = f.editor.jsonPane()->editor();
    text->setFocus();
    QTRY_VERIFY(text->hasFocus());
    // Typing then saving at once: the save carries what was typed, pause or not.
    text->setCursorPosition(2, 0);
    QString edited = f.jsonText();
    f.typeJson(edited.replace(QStringLiteral("\"vector_add\""), QStringLiteral("\"vector_add2\"")));
    QTest::keyClick(text, Qt::Key_S, Qt::ControlModifier);
    QCOMPARE(save.count(), 1);
    COMPARE_JSON(f.editor.document()["name"], json("vector_add2"));
    QVERIFY(f.editor.isModified());
    QCOMPARE(modified.count(), 1);
    f.editor.setModified(false);
    QVERIFY(!f.editor.isModified());
    QCOMPARE(modified.count(), 2);
}

QTEST_MAIN(TestTaskEditor)
#include "tst_taskeditor.moc"
