// First start copies the bundled examples to the user's folder, and the copy is theirs: later
// starts never overwrite it, and nothing the user does touches the bundled originals.
#include "app/gui/workspace/ExampleWorkspace.h"
#include "testutil.h"

#include <QDir>
#include <QFile>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace kf::app;

class TestExampleWorkspace : public QObject {
    Q_OBJECT
    QTemporaryDir m_home;

private slots:
    void initTestCase()
    {
        qputenv("XDG_DATA_HOME", m_home.path().toUtf8());
        QCoreApplication::setOrganizationName("KernelForge");
        QCoreApplication::setApplicationName("KernelForgeTest");
    }

    void firstStartCopiesTheExamples()
    {
        QString warning;
        const QString ws = userExampleWorkspace(&warning);
        QVERIFY2(warning.isEmpty(), qPrintable(warning));
        QVERIFY(ws.startsWith(m_home.path()));
        QCOMPARE(QDir(ws).entryList(QDir::Dirs | QDir::NoDotAndDotDot),
                 QDir(QString(KF_SOURCE_DIR) + "/resources/examples").entryList(QDir::Dirs | QDir::NoDotAndDotDot));
        QVERIFY(QFile::exists(ws + "/softmax_fp32/task.json"));
        QVERIFY(!QFile::exists(ws + ".partial"));
    }

    void laterStartsKeepTheUsersEdits()
    {
        const QString ws = userExampleWorkspace();
        QFile f(ws + "/vector_add/naive.cu");
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Append));
        f.write("// my edit\n");
        f.close();
        QCOMPARE(userExampleWorkspace(), ws);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.readAll().endsWith("// my edit\n"));
        QFile bundled(QString(KF_SOURCE_DIR) + "/resources/examples/vector_add/naive.cu");
        QVERIFY(bundled.open(QIODevice::ReadOnly));
        QVERIFY(!bundled.readAll().contains("// my edit"));
    }

    void copyFolderNamesWhatFailed()
    {
        QString error;
        QVERIFY(!copyFolder(m_home.path() + "/does-not-exist", m_home.path() + "/x", &error));
        QVERIFY2(error.contains("does-not-exist"), qPrintable(error));
    }
};

QTEST_GUILESS_MAIN(TestExampleWorkspace)
#include "tst_exampleworkspace.moc"
