// Diffing two versions of a kernel: the hunks must be exactly what `diff -u` prints (three lines of
// context, GNU headers), the counts must add up, and line endings alone must not make a change.
#include "testutil.h"

#include "widgets/registry/DiffView.h"
#include "widgets/registry/SourceDiff.h"

#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QTextBlock>

using kf::ui::DiffLine;
using kf::ui::DiffView;
using kf::ui::SourceDiff;

namespace {

// "l1\nl2\n…\nl<n>\n", optionally with line `changed` replaced.
QString lines(int n, int changed = 0, const QString& eol = QStringLiteral("\n"))
{
    QString s;
    for (int i = 1; i <= n; ++i)
        s += (i == changed ? QStringLiteral("L%1") : QStringLiteral("l%1")).arg(i) + eol;
    return s;
}

} // namespace

class TestSourceDiff : public QObject {
    Q_OBJECT

private slots:
    void hunksAreThoseOfDiffU_data();
    void hunksAreThoseOfDiffU();
    void lineNumbersOfBothSides();
    void viewShowsSummaryAndColouredLines();
    void viewShowsMessageInsteadOfDiff();
};

void TestSourceDiff::hunksAreThoseOfDiffU_data()
{
    QTest::addColumn<QString>("oldText");
    QTest::addColumn<QString>("newText");
    QTest::addColumn<QString>("unified"); // without the ---/+++ lines
    QTest::addColumn<int>("added");
    QTest::addColumn<int>("removed");
    QTest::addColumn<bool>("lineEndingsDiffer");
    QTest::addColumn<QString>("summary");

    QTest::newRow("identical") << lines(10) << lines(10) << "" << 0 << 0 << false << "no differences";
    QTest::newRow("one line changed in the middle")
        << lines(10) << lines(10, 5) << "@@ -2,7 +2,7 @@\n l2\n l3\n l4\n-l5\n+L5\n l6\n l7\n l8\n" << 1 << 1 << false
        << "1 line added, 1 removed";
    QTest::newRow("insert at the start")
        << lines(10) << "l0\n" + lines(10) << "@@ -1,3 +1,4 @@\n+l0\n l1\n l2\n l3\n" << 1 << 0 << false << "1 line added, 0 removed";
    QTest::newRow("insert at the end")
        << lines(10) << lines(10) + "l11\n" << "@@ -8,3 +8,4 @@\n l8\n l9\n l10\n+l11\n" << 1 << 0 << false
        << "1 line added, 0 removed";
    QTest::newRow("delete the first line")
        << lines(10) << lines(10).mid(3) << "@@ -1,4 +1,3 @@\n-l1\n l2\n l3\n l4\n" << 0 << 1 << false << "0 lines added, 1 removed";
    QTest::newRow("delete two lines in the middle")
        << lines(10) << lines(10).replace("l5\nl6\n", "") << "@@ -2,8 +2,6 @@\n l2\n l3\n l4\n-l5\n-l6\n l7\n l8\n l9\n" << 0 << 2
        << false << "0 lines added, 2 removed";
    QTest::newRow("empty versus text")
        << "" << "a\nb\nc\n" << "@@ -0,0 +1,3 @@\n+a\n+b\n+c\n" << 3 << 0 << false << "3 lines added, 0 removed";
    QTest::newRow("text versus empty")
        << "a\nb\nc" << "" << "@@ -1,3 +0,0 @@\n-a\n-b\n-c\n" << 0 << 3 << false << "0 lines added, 3 removed";
    QTest::newRow("one-line files: counts of 1 are left out") << "a\n" << "b\n" << "@@ -1 +1 @@\n-a\n+b\n" << 1 << 1 << false
                                                             << "1 line added, 1 removed";
    QTest::newRow("changes far apart: two hunks")
        << lines(20) << lines(20, 2).replace("l18\n", "L18\n")
        << "@@ -1,5 +1,5 @@\n l1\n-l2\n+L2\n l3\n l4\n l5\n@@ -15,6 +15,6 @@\n l15\n l16\n l17\n-l18\n+L18\n l19\n l20\n" << 2 << 2
        << false << "2 lines added, 2 removed";
    QTest::newRow("changes six lines apart share a hunk")
        << lines(20) << lines(20, 5).replace("l12\n", "L12\n")
        << "@@ -2,14 +2,14 @@\n l2\n l3\n l4\n-l5\n+L5\n l6\n l7\n l8\n l9\n l10\n l11\n-l12\n+L12\n l13\n l14\n l15\n" << 2 << 2 << false
        << "2 lines added, 2 removed";
    QTest::newRow("CRLF versus LF, one line changed")
        << lines(10, 0, "\r\n") << lines(10, 5) << "@@ -2,7 +2,7 @@\n l2\n l3\n l4\n-l5\n+L5\n l6\n l7\n l8\n" << 1 << 1 << true
        << "1 line added, 1 removed";
    QTest::newRow("CRLF versus LF alone is no change") << lines(10, 0, "\r\n") << lines(10) << "" << 0 << 0 << true << "no differences";
    QTest::newRow("missing final line break is no change") << "a\nb" << "a\nb\n" << "" << 0 << 0 << false << "no differences";
}

void TestSourceDiff::hunksAreThoseOfDiffU()
{
    QFETCH(QString, oldText);
    QFETCH(QString, newText);
    QFETCH(QString, unified);
    QFETCH(int, added);
    QFETCH(int, removed);
    QFETCH(bool, lineEndingsDiffer);
    QFETCH(QString, summary);

    const SourceDiff d = SourceDiff::compute(oldText, newText);
    QCOMPARE(d.unifiedText(QStringLiteral("v1"), QStringLiteral("v2")), QStringLiteral("--- v1\n+++ v2\n") + unified);
    QCOMPARE(d.added, added);
    QCOMPARE(d.removed, removed);
    QCOMPARE(d.lineEndingsDiffer, lineEndingsDiffer);
    QCOMPARE(d.identical(), added == 0 && removed == 0);
    QCOMPARE(d.summary(), summary);
    // The counts in the headers agree with the lines of each hunk.
    for (const kf::ui::DiffHunk& h : d.hunks) {
        int oldLines = 0, newLines = 0;
        for (const DiffLine& l : h.lines) {
            oldLines += l.kind != DiffLine::Kind::Added;
            newLines += l.kind != DiffLine::Kind::Removed;
        }
        QCOMPARE(h.oldCount, oldLines);
        QCOMPARE(h.newCount, newLines);
    }
}

void TestSourceDiff::lineNumbersOfBothSides()
{
    const SourceDiff d = SourceDiff::compute(lines(10), "l0\n" + lines(10, 5));
    QCOMPARE(int(d.hunks.size()), 1);
    const std::vector<DiffLine>& l = d.hunks.front().lines;
    // +l0, l1..l4, -l5, +L5, l6..l8
    QCOMPARE(int(l.size()), 10);
    QCOMPARE(l[0], (DiffLine{DiffLine::Kind::Added, 0, 1, QStringLiteral("l0")}));
    QCOMPARE(l[1], (DiffLine{DiffLine::Kind::Context, 1, 2, QStringLiteral("l1")}));
    QCOMPARE(l[5], (DiffLine{DiffLine::Kind::Removed, 5, 0, QStringLiteral("l5")}));
    QCOMPARE(l[6], (DiffLine{DiffLine::Kind::Added, 0, 6, QStringLiteral("L5")}));
    QCOMPARE(l[9], (DiffLine{DiffLine::Kind::Context, 8, 9, QStringLiteral("l8")}));
    QCOMPARE(d.hunks.front().header(), QStringLiteral("@@ -1,8 +1,9 @@"));
}

void TestSourceDiff::viewShowsSummaryAndColouredLines()
{
    DiffView view;
    view.showDiff(QStringLiteral("kernel_v1"), lines(20), QStringLiteral("kernel_v2"), lines(20, 5) + "l21\n");
    QCOMPARE(view.summaryText(), QStringLiteral("kernel_v1 → kernel_v2: 2 lines added, 1 removed"));
    const QTextDocument* doc = view.textView()->document();
    // Two hunks: the change at line 5 and the line added at the end (contexts do not meet).
    QStringList texts;
    QList<QColor> backgrounds;
    for (QTextBlock b = doc->begin(); b.isValid(); b = b.next()) {
        texts << b.text();
        backgrounds << b.blockFormat().background().color();
    }
    const int header = static_cast<int>(texts.indexOf(QRegularExpression(QStringLiteral(".*@@ -2,7 \\+2,7 @@$"))));
    QVERIFY2(header >= 0, qPrintable(texts.join('\n')));
    const int removed = static_cast<int>(texts.indexOf(QRegularExpression(QStringLiteral("^ 5    - l5$"))));
    const int added = static_cast<int>(texts.indexOf(QRegularExpression(QStringLiteral("^    5 \\+ L5$"))));
    QVERIFY2(removed > header && added == removed + 1, qPrintable(texts.join('\n')));
    QVERIFY(backgrounds[removed] != backgrounds[added]);
    QVERIFY(backgrounds[removed].red() > backgrounds[removed].green());
    QVERIFY(backgrounds[added].green() > backgrounds[added].red());
    QVERIFY(texts.contains(QStringLiteral("   21 + l21")));
    QCOMPARE(texts.filter(QStringLiteral("@@")).size(), 2);
}

void TestSourceDiff::viewShowsMessageInsteadOfDiff()
{
    DiffView view;
    view.showDiff(QStringLiteral("a"), QStringLiteral("x\n"), QStringLiteral("b"), QStringLiteral("y\n"));
    view.showMessage(QStringLiteral("The source of b could not be read: run `kforge registry check`."));
    QCOMPARE(view.summaryText(), QStringLiteral("The source of b could not be read: run `kforge registry check`."));
    QVERIFY(view.textView()->toPlainText().isEmpty());
    QVERIFY(view.diff().identical());
    view.showDiff(QStringLiteral("a"), QStringLiteral("x\r\n"), QStringLiteral("b"), QStringLiteral("x\n"));
    QCOMPARE(view.summaryText(), QStringLiteral("a → b: no differences (line endings differ: one uses CRLF, the other LF)"));
}

QTEST_MAIN(TestSourceDiff)
#include "tst_sourcediff.moc"
