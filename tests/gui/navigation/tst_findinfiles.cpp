// Find in Workspace's core (widgets/navigation/FindInFiles.h): what Ctrl+Shift+F finds with each
// toggle, what it refuses, what it skips, and that it reads open editors before the disk.
#include "widgets/navigation/FindInFiles.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

using namespace kf::ui;

namespace {

bool writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

} // namespace

class TestFindInFiles : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_root;
    QStringList m_files;

    QString path(const QString& name) const { return m_root + "/" + name; }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_root = QDir::cleanPath(m_dir.path());
        QVERIFY(QDir().mkpath(path("task/.hidden")));
        QVERIFY(writeFile(path("task/a.cu"), "float Alpha = 1;\nfloat alpha2 = alpha * 2;\n// ALPHA\n"));
        QVERIFY(writeFile(path("task/b.h"), "int alphabet;\r\n"));
        QVERIFY(writeFile(path("task/bin.dat"), QByteArray("alpha\0binary", 12)));
        QVERIFY(writeFile(path("task/.hidden/c.cu"), "alpha\n"));
        QByteArray big(int(kMaxFindFileBytes) + 10, 'x');
        big.replace(0, 5, "alpha");
        QVERIFY(writeFile(path("task/big.txt"), big));
        m_files = workspaceSearchFiles(m_root);
    }

    void listsTheWorkspaceWithoutHiddenFolders()
    {
        QCOMPARE(m_files, (QStringList{path("task/a.cu"), path("task/b.h"), path("task/big.txt"), path("task/bin.dat")}));
    }

    void findsWithEachToggle_data()
    {
        QTest::addColumn<QString>("pattern");
        QTest::addColumn<bool>("caseSensitive");
        QTest::addColumn<bool>("wholeWords");
        QTest::addColumn<bool>("regex");
        QTest::addColumn<QStringList>("expected");   // file:line:column
        QTest::newRow("plain text ignores case")
            << "alpha" << false << false << false
            << QStringList{"a.cu:1:7", "a.cu:2:7", "a.cu:2:16", "a.cu:3:4", "b.h:1:5"};
        QTest::newRow("case sensitive") << "alpha" << true << false << false
                                        << QStringList{"a.cu:2:7", "a.cu:2:16", "b.h:1:5"};
        QTest::newRow("whole words") << "alpha" << false << true << false
                                     << QStringList{"a.cu:1:7", "a.cu:2:16", "a.cu:3:4"};
        QTest::newRow("whole words and case") << "alpha" << true << true << false << QStringList{"a.cu:2:16"};
        QTest::newRow("regular expression") << "alpha\\d" << false << false << true << QStringList{"a.cu:2:7"};
        QTest::newRow("regular expression metacharacters are literal without the toggle")
            << "alpha * 2" << false << false << false << QStringList{"a.cu:2:16"};
        QTest::newRow("a whole-word regular expression") << "al\\w+" << false << true << true
                                                         << QStringList{"a.cu:1:7", "a.cu:2:7", "a.cu:2:16", "a.cu:3:4", "b.h:1:5"};
        QTest::newRow("no match") << "gamma" << false << false << false << QStringList{};
    }
    void findsWithEachToggle()
    {
        QFETCH(QString, pattern);
        QFETCH(bool, caseSensitive);
        QFETCH(bool, wholeWords);
        QFETCH(bool, regex);
        QFETCH(QStringList, expected);
        const FindResult r = findInFiles(m_files, {pattern, caseSensitive, wholeWords, regex});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QStringList got;
        for (const FileMatches& f : r.files)
            for (const FindMatch& m : f.matches)
                got << QStringLiteral("%1:%2:%3").arg(QFileInfo(f.path).fileName()).arg(m.line).arg(m.column);
        QCOMPARE(got, expected);
        QCOMPARE(r.matchCount, int(expected.size()));
        QCOMPARE(r.skippedBinary, 1);
        QCOMPARE(r.skippedLarge, 1);
    }

    void refusesABadPattern_data()
    {
        QTest::addColumn<QString>("pattern");
        QTest::addColumn<bool>("regex");
        QTest::addColumn<QString>("says");
        QTest::newRow("unbalanced parenthesis") << "alpha(" << true << "Invalid regular expression";
        QTest::newRow("a dangling quantifier") << "*alpha" << true << "Invalid regular expression";
        QTest::newRow("an empty pattern") << "" << false << "Type something";
    }
    void refusesABadPattern()
    {
        QFETCH(QString, pattern);
        QFETCH(bool, regex);
        QFETCH(QString, says);
        const FindResult r = findInFiles(m_files, {pattern, false, false, regex});
        QVERIFY2(r.error.contains(says), qPrintable(r.error));
        QCOMPARE(r.summary(), r.error);
        QCOMPARE(r.filesSearched, 0);
        QVERIFY(r.files.empty());
    }

    void skipsBinaryAndLargeFiles()
    {
        const FindResult r = findInFiles(m_files, {"alpha", false, false, false});
        for (const FileMatches& f : r.files)
            QVERIFY2(!f.path.endsWith("bin.dat") && !f.path.endsWith("big.txt"), qPrintable(f.path));
        QCOMPARE(r.summary(), QStringLiteral("5 matches in 2 files (skipped 1 binary, 1 over 4 MiB)"));
    }

    void reportsWhereTheMatchIs()
    {
        QTemporaryDir dir;
        const QString file = dir.path() + "/u.cu";
        QVERIFY(writeFile(file, "int x;\n// caf\xc3\xa9 alpha here\n"));
        const FindResult r = findInFiles({file}, {"alpha", false, false, false});
        QCOMPARE(r.matchCount, 1);
        const FindMatch& m = r.files.at(0).matches.at(0);
        QCOMPARE(m.line, 2);
        QCOMPARE(m.column, 9);       // UTF-16: "// café " is 8 units
        QCOMPARE(m.byteColumn, 10);  // UTF-8: é is 2 bytes
        QCOMPARE(m.length, 5);
        QCOMPARE(m.lineText, QString::fromUtf8("// caf\xc3\xa9 alpha here"));
        QCOMPARE(r.summary(), QStringLiteral("1 match in 1 file"));
    }

    // An open editor's unsaved text is what the user sees: it is searched, not the file.
    void searchesUnsavedBuffersInsteadOfTheDisk()
    {
        const QHash<QString, QString> buffers{{path("task/a.cu"), "nothing here\nbeta alpha\n"},
                                              {path("task/big.txt"), "small now: alpha"}};
        const FindResult r = findInFiles(m_files, {"alpha", true, true, false}, buffers);
        QStringList got;
        for (const FileMatches& f : r.files)
            got << QStringLiteral("%1:%2:%3:%4")
                       .arg(QFileInfo(f.path).fileName())
                       .arg(f.matches.at(0).line)
                       .arg(f.matches.at(0).column)
                       .arg(int(f.fromBuffer));
        QCOMPARE(got, (QStringList{"a.cu:2:6:1", "big.txt:1:12:1"}));
        QCOMPARE(r.skippedLarge, 0);
    }

    void cancelStopsBeforeTheNextFile_data()
    {
        QTest::addColumn<int>("cancelAfter");   // files searched before the cancel; 0: cancelled before it starts
        QTest::newRow("cancelled before the start") << 0;
        QTest::newRow("cancelled after the first file") << 1;
    }
    void cancelStopsBeforeTheNextFile()
    {
        QFETCH(int, cancelAfter);
        std::atomic_bool cancel{cancelAfter == 0};
        QList<int> progress;
        const FindResult r = findInFiles(m_files, {"alpha", false, false, false}, {}, &cancel, [&](int done, int total) {
            progress << done;
            QCOMPARE(total, int(m_files.size()));
            if (done == cancelAfter)
                cancel = true;
        });
        QVERIFY(r.cancelled);
        QCOMPARE(r.filesSearched, cancelAfter);
        QCOMPARE(progress.size(), cancelAfter);
        QCOMPARE(r.matchCount, cancelAfter == 1 ? 4 : 0);   // a.cu's four
        QVERIFY(r.summary().endsWith("; cancelled"));
    }
};

QTEST_GUILESS_MAIN(TestFindInFiles)
#include "tst_findinfiles.moc"
