// The workbench from the keyboard, offscreen: Qt Creator's keys (Ctrl+K locate, Ctrl+Shift+F
// find in workspace, F2 follow symbol) do what they say in a real main window, no two actions
// share a key, and Help ▸ Keyboard Shortcuts lists what the menus hold.
#include "app/gui/settings/Settings.h"
#include "app/gui/window/CandidateTab.h"
#include "app/gui/window/MainWindow.h"
#include "app/gui/workspace/ExampleWorkspace.h"
#include "testutil.h"
#include "windowfixture.h"
#include "widgets/editor/KernelEditor.h"
#include "widgets/navigation/FindInWorkspacePanel.h"
#include "widgets/navigation/LocatorPopup.h"
#include "widgets/navigation/ShortcutsDialog.h"
#include "widgets/task/JsonTextPane.h"
#include "widgets/task/TaskEditor.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QSettings>
#include <QShortcut>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTabWidget>
#include <QTreeWidget>

#include <Qsci/qsciscintilla.h>
#include <nlohmann/json.hpp>

#include <memory>

using namespace kf::app;
using kf::ui::KernelEditor;

namespace {

// 0-based line of the first editor line containing `needle`; -1 if none.
int lineOf(KernelEditor* e, const QString& needle)
{
    for (int i = 0; i < e->lines(); ++i)
        if (e->text(i).contains(needle))
            return i;
    return -1;
}

QString fileText(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

int cursorLine(KernelEditor* e)
{
    int line = 0, index = 0;
    e->getCursorPosition(&line, &index);
    return line;
}

// One key binding and where it can fire: the whole window, or inside `widget`.
struct Binding {
    QString owner;
    bool windowWide = true;
    const QWidget* widget = nullptr;
};

bool overlap(const Binding& a, const Binding& b)
{
    if (a.windowWide || b.windowWide)
        return true;
    return a.widget == b.widget || (a.widget && a.widget->isAncestorOf(b.widget)) ||
           (b.widget && b.widget->isAncestorOf(a.widget));
}

} // namespace

class TestKeyboard : public QObject {
    Q_OBJECT
    kf::test::WindowFixture m_fx;
    QString m_workspace;

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

    QAction* actionNamed(MainWindow* w, const QString& text)
    {
        for (const kf::ui::ShortcutEntry& e : kf::ui::menuShortcuts(w->menuBar()))
            if (e.action == text)
                return e.source;
        return nullptr;
    }

private slots:
    void initTestCase()
    {
        QString error;
        QVERIFY2(m_fx.setUp({"softmax_fp32", "vector_add"}, &error), qPrintable(error));
        m_workspace = m_fx.workspace();
        m_fx.settings()->setCompileDebounceMs(60000);   // no builds needed here
    }

    void qtCreatorKeys_data()
    {
        QTest::addColumn<QString>("action");
        QTest::addColumn<QKeySequence>("key");
        QTest::newRow("locate") << "Locate File or Kernel" << QKeySequence(Qt::CTRL | Qt::Key_K);
        QTest::newRow("find in workspace") << "Find in Workspace" << QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F);
        QTest::newRow("follow symbol") << "Follow Symbol Under Cursor" << QKeySequence(Qt::Key_F2);
        QTest::newRow("verify") << "Verify" << QKeySequence(Qt::Key_F5);
    }
    void qtCreatorKeys()
    {
        QFETCH(QString, action);
        QFETCH(QKeySequence, key);
        auto w = makeWindow();
        QAction* a = actionNamed(w.get(), action);
        QVERIFY2(a, qPrintable(action + " is not in a menu with a shortcut"));
        QVERIFY2(a->shortcuts().contains(key), qPrintable(a->shortcut().toString()));
    }

    // Two bindings of one key that can fire in the same place are ambiguous: Qt then fires neither.
    void noTwoActionsShareAKey()
    {
        auto w = makeWindow();
        w->openFile(m_workspace + "/softmax_fp32/task.json");   // the Task panel's own bindings too
        QHash<QString, QList<Binding>> byKey;
        for (const QAction* a : w->findChildren<QAction*>()) {
            const QWidget* widget = qobject_cast<const QWidget*>(a->parent());
            const bool windowWide = a->shortcutContext() == Qt::WindowShortcut || a->shortcutContext() == Qt::ApplicationShortcut;
            for (const QKeySequence& k : a->shortcuts())
                if (!k.isEmpty())
                    byKey[k.toString(QKeySequence::PortableText)].append({a->text(), windowWide, widget});
        }
        for (const QShortcut* s : w->findChildren<QShortcut*>()) {
            if (!s->isEnabled())
                continue;
            const bool windowWide = s->context() == Qt::WindowShortcut || s->context() == Qt::ApplicationShortcut;
            for (const QKeySequence& k : s->keys())
                if (!k.isEmpty())
                    byKey[k.toString(QKeySequence::PortableText)].append(
                        {QStringLiteral("a shortcut of %1").arg(s->parent()->metaObject()->className()), windowWide,
                         qobject_cast<const QWidget*>(s->parent())});
        }
        QVERIFY(byKey.contains("Ctrl+K"));
        QStringList clashes;
        for (auto it = byKey.constBegin(); it != byKey.constEnd(); ++it)
            for (int i = 0; i < it->size(); ++i)
                for (int j = i + 1; j < it->size(); ++j)
                    if (overlap(it->at(i), it->at(j)))
                        clashes << QStringLiteral("%1: %2 and %3").arg(it.key(), it->at(i).owner, it->at(j).owner);
        QVERIFY2(clashes.isEmpty(), qPrintable(clashes.join("; ")));
    }

    // The Task panel had its own Ctrl+S beside File ▸ Save: the two were ambiguous and neither saved.
    void ctrlSInTheTaskPanelSavesTaskJson()
    {
        auto w = makeWindow();
        const QString json = m_workspace + "/vector_add/task.json";
        w->openFile(json);
        kf::ui::TaskEditor* editor = w->taskEditor();
        QTRY_COMPARE(editor->filePath(), json);
        nlohmann::json doc = editor->document();
        doc["description"] = "saved with Ctrl+S";
        editor->setDocument(doc, json, m_workspace + "/vector_add");
        editor->setModified(true);
        w->dock("taskDock")->raise();
        editor->tabs()->setCurrentWidget(editor->jsonPane());
        QsciScintilla* text = editor->jsonPane()->editor();
        text->setFocus();
        QTRY_VERIFY(text->hasFocus());
        QTest::keyClick(text, Qt::Key_S, Qt::ControlModifier);
        QTRY_VERIFY2(fileText(json).contains("saved with Ctrl+S"), qPrintable(w->statusBar()->currentMessage()));
    }

    void shortcutsPageListsTheMenus()
    {
        auto w = makeWindow();
        QAction* help = nullptr;
        for (QAction* top : w->menuBar()->actions())
            if (top->menu())
                for (QAction* a : top->menu()->actions())
                    if (a->text().remove('&') == "Keyboard Shortcuts")
                        help = a;
        QVERIFY(help);
        help->trigger();
        auto* dialog = w->findChild<kf::ui::ShortcutsDialog*>();
        QVERIFY(dialog);
        QTreeWidget* tree = dialog->tree();
        QTreeWidgetItem* verify = nullptr;
        for (int g = 0; g < tree->topLevelItemCount(); ++g)
            for (int i = 0; i < tree->topLevelItem(g)->childCount(); ++i)
                if (tree->topLevelItem(g)->child(i)->text(0) == "Verify")
                    verify = tree->topLevelItem(g)->child(i);
        QVERIFY(verify);
        QCOMPARE(verify->parent()->text(0), QStringLiteral("Run"));
        QCOMPARE(verify->text(1), QKeySequence(Qt::Key_F5).toString(QKeySequence::NativeText));
        // Every action the menus give a key is listed: the page is read from them, not written by hand.
        int rows = 0;
        for (int g = 0; g < tree->topLevelItemCount(); ++g)
            rows += tree->topLevelItem(g)->childCount();
        QCOMPARE(rows, int(kf::ui::menuShortcuts(w->menuBar()).size()));

        dialog->filterEdit()->setText("follow");
        int shown = 0;
        for (int g = 0; g < tree->topLevelItemCount(); ++g)
            for (int i = 0; i < tree->topLevelItem(g)->childCount(); ++i)
                shown += tree->topLevelItem(g)->isHidden() || tree->topLevelItem(g)->child(i)->isHidden() ? 0 : 1;
        QCOMPARE(shown, 1);
        QVERIFY(verify->isHidden() || verify->parent()->isHidden());
    }

    void ctrlKGoesToAKernel_data()
    {
        QTest::addColumn<QString>("typed");
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("lineWith");
        QTest::newRow("a kernel with launch bounds") << "k softmax_bl" << "softmax_fp32/optimized.cu" << "softmax_block(";
        QTest::newRow("an extern C kernel in another file") << "k softmax_na" << "softmax_fp32/naive.cu" << "softmax_naive(";
        QTest::newRow("a file of another task") << "f vector_add/naive" << "vector_add/naive.cu" << "";
    }
    void ctrlKGoesToAKernel()
    {
        QFETCH(QString, typed);
        QFETCH(QString, file);
        QFETCH(QString, lineWith);
        auto w = makeWindow();
        KernelEditor* start = w->currentTab()->editor();
        start->setFocus();
        QTRY_VERIFY(start->hasFocus());
        QTest::keyClick(start, Qt::Key_K, Qt::ControlModifier);   // the editor must not swallow it
        auto* locator = w->findChild<kf::ui::LocatorPopup*>();
        QVERIFY(locator);
        QTRY_VERIFY(locator->isVisible() && locator->lineEdit()->hasFocus());
        QTRY_VERIFY(!locator->isScanning());
        QTest::keyClicks(locator->lineEdit(), typed);
        QVERIFY(!locator->shown().empty());
        QTest::keyClick(locator->lineEdit(), Qt::Key_Return);
        QVERIFY(!locator->isVisible());
        QVERIFY2(w->currentTab()->filePath().endsWith("/" + file), qPrintable(w->currentTab()->filePath()));
        KernelEditor* e = w->currentTab()->editor();
        if (!lineWith.isEmpty())
            QCOMPARE(cursorLine(e), lineOf(e, lineWith));
    }

    void escapeClosesTheLocator()
    {
        auto w = makeWindow();
        KernelEditor* e = w->currentTab()->editor();
        e->setFocus();
        QTRY_VERIFY(e->hasFocus());
        QTest::keyClick(e, Qt::Key_K, Qt::ControlModifier);
        auto* locator = w->findChild<kf::ui::LocatorPopup*>();
        QTRY_VERIFY(locator->isVisible());
        QTest::keyClick(locator->lineEdit(), Qt::Key_Escape);
        QVERIFY(!locator->isVisible());
        QTRY_VERIFY(e->hasFocus());
    }

    void ctrlShiftFFindsInTheWorkspace()
    {
        auto w = makeWindow();
        KernelEditor* e = w->currentTab()->editor();
        // An unsaved edit is searched as the user sees it.
        e->insertAt("// unsaved_marker_token\n", 0, 0);
        const int row = lineOf(e, "softmax_row(");
        QVERIFY(row >= 0);
        e->setCursorPosition(row, e->text(row).indexOf("softmax_row(") + 3);
        e->setFocus();
        QTRY_VERIFY(e->hasFocus());
        QTest::keyClick(e, Qt::Key_F, Qt::ControlModifier | Qt::ShiftModifier);
        auto* panel = w->findChild<kf::ui::FindInWorkspacePanel*>();
        QVERIFY(panel);
        QTRY_VERIFY(w->dock("searchResultsDock")->isVisible());
        QCOMPARE(panel->queryEdit()->text(), QStringLiteral("softmax_row"));   // the word under the cursor
        QTRY_VERIFY(panel->queryEdit()->hasFocus());

        QSignalSpy finished(panel, &kf::ui::FindInWorkspacePanel::searchFinished);
        panel->queryEdit()->setText("unsaved_marker_token");
        QTest::keyClick(panel->queryEdit(), Qt::Key_Return);
        QTRY_COMPARE(finished.count(), 1);
        QCOMPARE(panel->result().matchCount, 1);
        QVERIFY(panel->result().files.at(0).fromBuffer);
        QCOMPARE(panel->summaryLabel()->text(), QStringLiteral("1 match in 1 file"));

        // Activating a match opens its file at its line.
        panel->queryEdit()->setText("vector_add");
        panel->wholeWordsBox()->setChecked(true);
        panel->search();
        QTRY_COMPARE(finished.count(), 2);
        QTreeWidget* tree = panel->resultTree();
        QTreeWidgetItem* match = nullptr;
        for (int i = 0; i < tree->topLevelItemCount() && !match; ++i)
            if (tree->topLevelItem(i)->text(0).startsWith("vector_add/naive.cu"))
                match = tree->topLevelItem(i)->child(0);
        QVERIFY(match);
        emit tree->itemActivated(match, 0);
        QVERIFY2(w->currentTab()->filePath().endsWith("/vector_add/naive.cu"), qPrintable(w->currentTab()->filePath()));
        QCOMPARE(cursorLine(w->currentTab()->editor()) + 1, match->data(0, kf::ui::FindInWorkspacePanel::LineRole).toInt());

        // A bad regular expression says so in the panel.
        panel->regexBox()->setChecked(true);
        panel->queryEdit()->setText("softmax(");
        panel->search();
        QTRY_COMPARE(finished.count(), 3);
        QVERIFY2(panel->summaryLabel()->text().startsWith("Invalid regular expression"),
                 qPrintable(panel->summaryLabel()->text()));
        QCOMPARE(tree->topLevelItemCount(), 0);
    }

    void f2FollowsTheSymbol()
    {
        auto w = makeWindow();
        KernelEditor* e = w->currentTab()->editor();
        const int call = lineOf(e, "softmax_row<THREADS, CACHE, 4>(");
        const int definition = lineOf(e, "void softmax_row(");
        QVERIFY(call >= 0 && definition >= 0 && call != definition);
        e->setCursorPosition(call, e->text(call).indexOf("softmax_row") + 2);
        e->setFocus();
        QTRY_VERIFY(e->hasFocus());
        QTest::keyClick(e, Qt::Key_F2);
        QCOMPARE(cursorLine(e), definition);

        // An include of a header that is not in the task: the status bar says so.
        const int include = lineOf(e, "#include <kf/prelude.cuh>");
        QVERIFY(include >= 0);
        e->setCursorPosition(include, 12);
        QTest::keyClick(e, Qt::Key_F2);
        QVERIFY2(w->statusBar()->currentMessage().contains("Cannot find kf/prelude.cuh"),
                 qPrintable(w->statusBar()->currentMessage()));

        // A name defined nowhere in the task.
        e->insertAt("int probe = no_such_function_here(1);\n", 0, 0);
        e->setCursorPosition(0, 16);
        QTest::keyClick(e, Qt::Key_F2);
        QCOMPARE(w->statusBar()->currentMessage(), QStringLiteral("No definition of no_such_function_here in this task."));
        QCOMPARE(cursorLine(e), 0);
    }
};

QTEST_MAIN(TestKeyboard)
#include "tst_keyboard.moc"
