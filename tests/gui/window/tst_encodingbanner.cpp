// A kernel file that is not UTF-8, through the real window (offscreen): what Windows editors save
// as "Unicode" (UTF-16 with a byte-order mark), UTF-32, a Latin-1 comment and a binary file. The
// file opens read-only under a banner that says what it is; typing, Ctrl+S and F5 leave its bytes
// on disk exactly as they were and F5 starts no runner; the banner's button converts it only when
// pressed, and Ctrl+S then writes the text as UTF-8. A UTF-8 byte-order mark survives a save.
#include "app/gui/window/CandidateTab.h"
#include "app/gui/window/MainWindow.h"
#include "app/gui/window/RunController.h"
#include "app/gui/services/RunService.h"
#include "fakerunner.h"
#include "windowfixture.h"
#include "widgets/editor/KernelEditor.h"
#include "widgets/runs/RunPanel.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QStringEncoder>
#include <QTabWidget>
#include <QTest>

#include <memory>

using namespace kf::app;

namespace {

QByteArray fileBytes(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("(unreadable)");
}

bool writeBytes(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

QByteArray encoded(QStringConverter::Encoding e, const QString& text)
{
    return QStringEncoder(e, QStringEncoder::Flag::WriteBom)(text);
}

} // namespace

class TestEncodingBanner : public QObject {
    Q_OBJECT
    kf::test::WindowFixture m_fx;
    QString m_candidate;   // vector_add/naive.cu in the scratch workspace
    QString m_text;        // its text, with a comment that is not ASCII

    std::unique_ptr<MainWindow> makeWindow(const QString& runnerPath)
    {
        MainWindow::Options o = m_fx.options();
        o.runner.runnerPath = runnerPath;
        auto w = m_fx.make(o);
        QApplication::setActiveWindow(w.get());
        if (!QTest::qWaitForWindowActive(w.get()))
            qWarning("the window did not become active");
        return w;
    }

    static QLabel* bannerText(CandidateTab* t) { return t->findChild<QLabel*>(QStringLiteral("encodingBannerText")); }
    static QPushButton* bannerButton(CandidateTab* t) { return t->findChild<QPushButton*>(QStringLiteral("encodingAction")); }

    // Focus in the editor, as a user's Ctrl+S and F5 come from there.
    static void press(CandidateTab* t, Qt::Key key, Qt::KeyboardModifiers modifiers = {})
    {
        t->editor()->setFocus();
        QTest::keyClick(t->editor(), key, modifiers);
    }

private slots:
    void initTestCase()
    {
        QString error;
        QVERIFY2(m_fx.setUp({"vector_add"}, &error), qPrintable(error));
        m_fx.settings()->setCompileDebounceMs(50);
        m_candidate = m_fx.workspace() + "/vector_add/naive.cu";
        m_text = QString::fromUtf8(fileBytes(m_candidate)) + QStringLiteral("// caf\u00e9: 2\u00d7 the bytes of naive loads\n");
    }

    void cleanup() { QVERIFY(writeBytes(m_candidate, m_text.toUtf8())); }

    void nonUtf8FileIsNeverOverwritten_data()
    {
        QTest::addColumn<QByteArray>("original");
        QTest::addColumn<QString>("said");       // in the banner and the run gate's sentence
        QTest::addColumn<QString>("action");     // the banner's button; empty: none
        QTest::addColumn<QByteArray>("converted"); // the file after the button and Ctrl+S
        const QByteArray utf8 = m_text.toUtf8();
        QTest::newRow("UTF-16 LE, as Windows editors save \"Unicode\"")
            << encoded(QStringConverter::Utf16LE, m_text) << "naive.cu is saved as UTF-16 LE, not UTF-8" << "Convert to UTF-8" << utf8;
        QTest::newRow("UTF-16 BE") << encoded(QStringConverter::Utf16BE, m_text) << "naive.cu is saved as UTF-16 BE, not UTF-8"
                                   << "Convert to UTF-8" << utf8;
        QTest::newRow("UTF-32 LE") << encoded(QStringConverter::Utf32LE, m_text) << "naive.cu is saved as UTF-32 LE, not UTF-8"
                                   << "Convert to UTF-8" << utf8;
        QTest::newRow("a Latin-1 comment") << m_text.toLatin1() << "naive.cu is not UTF-8: the byte 0xE9 at line 11, column 7"
                                           << "Open as Latin-1" << utf8;
        QByteArray binary = utf8;
        binary.insert(binary.indexOf("extern"), QByteArray("\0\0\x01", 3));
        QTest::newRow("a NUL byte (a binary file)") << binary << "naive.cu holds a NUL byte at line 4, column 1" << QString()
                                                    << QByteArray();
    }
    void nonUtf8FileIsNeverOverwritten()
    {
        QFETCH(QByteArray, original);
        QFETCH(QString, said);
        QFETCH(QString, action);
        QFETCH(QByteArray, converted);
        QVERIFY(writeBytes(m_candidate, original));
        kf::test::FakeRunner runner(kf::test::FakeRunner::Behaviour::Pass);
        auto w = makeWindow(runner.path());
        CandidateTab* t = w->openFile(m_candidate);
        QVERIFY(t);

        // Typing, then Ctrl+S: the bytes on disk are still the file's.
        QTest::keyClicks(t->editor(), "oops");
        press(t, Qt::Key_S, Qt::ControlModifier);
        QCOMPARE(fileBytes(m_candidate), original);
        QVERIFY(!t->text().contains("oops"));

        // The banner says what the file is.
        QLabel* banner = bannerText(t);
        QVERIFY2(banner && banner->isVisible(), "no banner says that the file is not UTF-8");
        QVERIFY2(banner->text().startsWith(said) && banner->text().contains(": it is open read-only"), qPrintable(banner->text()));

        // F5 saves first: one sentence, no runner, the bytes untouched.
        QSignalSpy running(w->runController(), &RunController::runningChanged);
        press(t, Qt::Key_F5);
        QTRY_VERIFY2(w->runPanel()->bannerText().contains(said), qPrintable(w->runPanel()->bannerText()));
        QVERIFY2(!w->runPanel()->bannerText().contains('\n'), qPrintable(w->runPanel()->bannerText()));
        QCOMPARE(running.count(), 0);
        QVERIFY(!w->runController()->service()->hello().has_value());   // the runner never started
        QCOMPARE(fileBytes(m_candidate), original);

        QPushButton* button = bannerButton(t);
        if (action.isEmpty()) {   // nothing converts a binary file
            QVERIFY(!button || !button->isVisible());
            return;
        }
        // Converted only when asked, then saved as UTF-8 with Ctrl+S.
        QVERIFY(button && button->isVisible());
        QCOMPARE(button->text(), action);
        QTest::mouseClick(button, Qt::LeftButton);
        QVERIFY(!banner->isVisible());
        QVERIFY(t->isModified());
        QCOMPARE(w->tabWidget()->tabText(w->tabWidget()->indexOf(t)), QString("naive.cu*"));
        QCOMPARE(fileBytes(m_candidate), original);   // not yet: the user saves
        QCOMPARE(t->text(), m_text);
        press(t, Qt::Key_S, Qt::ControlModifier);
        QTRY_COMPARE(fileBytes(m_candidate), converted);
        QVERIFY(!t->isModified());
        // Editable now, and saved as typed.
        t->editor()->append("// edited\n");
        press(t, Qt::Key_S, Qt::ControlModifier);
        QTRY_COMPARE(fileBytes(m_candidate), converted + "// edited\n");
    }

    // A UTF-8 file with a byte-order mark opens for editing and keeps its mark, at the start.
    void utf8ByteOrderMarkIsKept()
    {
        const QByteArray bom("\xEF\xBB\xBF");
        QVERIFY(writeBytes(m_candidate, bom + m_text.toUtf8()));
        kf::test::FakeRunner runner(kf::test::FakeRunner::Behaviour::Pass);
        auto w = makeWindow(runner.path());
        CandidateTab* t = w->openFile(m_candidate);
        QVERIFY(t);
        QLabel* banner = bannerText(t);
        QVERIFY(!banner || !banner->isVisible());
        t->editor()->insertAt("// first line\n", 0, 0);   // at the very start of the text
        press(t, Qt::Key_S, Qt::ControlModifier);
        QTRY_COMPARE(fileBytes(m_candidate), bom + "// first line\n" + m_text.toUtf8());
    }

    // The banner's picture for the docs (docs/screenshots/encoding-banner.png).
    void screenshot()
    {
        const QString dir = qEnvironmentVariable("KF_SCREENSHOT_DIR");
        if (dir.isEmpty())
            QSKIP("set KF_SCREENSHOT_DIR to save the encoding banner's screenshot");
        QVERIFY(writeBytes(m_candidate, encoded(QStringConverter::Utf16LE, m_text)));
        auto w = makeWindow(m_fx.scratch() + "/no-runner");
        w->resize(1280, 800);
        CandidateTab* t = w->openFile(m_candidate);
        QVERIFY(t);
        QTRY_VERIFY(bannerText(t) && bannerText(t)->isVisible());
        QVERIFY(w->tabWidget()->grab().save(QDir(dir).filePath("encoding-banner.png")));
    }
};

QTEST_MAIN(TestEncodingBanner)
#include "tst_encodingbanner.moc"
