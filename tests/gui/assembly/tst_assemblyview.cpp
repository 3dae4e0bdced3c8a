// The PTX/SASS view on a real build of tests/data/lineinfo/rowsum.cu (saved PTX and nvdisasm -gi
// output, so it runs without NVRTC): source lines mark their instructions, the cursor in the
// listing names its source line, and a missing SASS says why.
#include "engine/compile/CompileTypes.h"
#include "testutil.h"
#include "widgets/assembly/AsmEditor.h"
#include "widgets/assembly/AssemblyView.h"

#include <QComboBox>
#include <QFile>
#include <QSignalSpy>
#include <QTest>

using kf::ui::AsmEditor;
using kf::ui::AssemblyView;
using Kind = AssemblyView::Kind;

Q_DECLARE_METATYPE(AssemblyView::Kind)

namespace {

QString readData(const QString& name)
{
    QFile f(QString(KF_TEST_DATA_DIR) + "/lineinfo/" + name);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("missing test data %s", qPrintable(name));
    return QString::fromUtf8(f.readAll());
}

kf::CompileResult rowSumBuild(bool withSass)
{
    kf::CompileResult r;
    r.success = true;
    r.arch = "sm_90";
    r.ptx = readData(QStringLiteral("rowsum.ptx")).toStdString();
    if (withSass)
        r.sass = readData(QStringLiteral("rowsum-gi.sass")).toStdString();
    kf::KernelResources k;
    k.name = "row_sum";
    k.demangled = "row_sum";
    r.kernels.push_back(k);
    return r;
}

/// 1-based line of the first listing line containing `text`.
int findLine(AsmEditor* e, const QString& text)
{
    for (int i = 0; i < e->lines(); ++i)
        if (e->text(i).contains(text))
            return i + 1;
    return 0;
}

} // namespace

class TestAssemblyView : public QObject {
    Q_OBJECT
private slots:
    void init();
    void cleanup();
    void highlightMarksInstructions_data();
    void highlightMarksInstructions();
    void highlightScrollsToTheCode();
    void cursorNamesSourceLine_data();
    void cursorNamesSourceLine();
    void selectionSpanningLines();
    void sassUnavailableSaysWhy_data();
    void sassUnavailableSaysWhy();
    void kernelSelector();
    void buildErrorsAndClear();
    void highlightSurvivesRebuild();

private:
    AssemblyView* m_view = nullptr;
    AsmEditor* editor(Kind k) const
    {
        return m_view->findChild<AsmEditor*>(k == Kind::Ptx ? QStringLiteral("ptxListing") : QStringLiteral("sassListing"));
    }
};

void TestAssemblyView::init()
{
    m_view = new AssemblyView;
    m_view->resize(720, 360);
    m_view->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_view));
    m_view->setCompileResult(rowSumBuild(true), QStringLiteral("rowsum.cu"));
}

void TestAssemblyView::cleanup()
{
    if (const QByteArray dir = qgetenv("KF_SCREENSHOT_DIR"); !dir.isEmpty()) {
        QCoreApplication::processEvents(); // let the layouts settle after the last change
        m_view->grab().save(QString::fromLocal8Bit(dir) + QLatin1Char('/') +
                            QString::fromLatin1(QTest::currentTestFunction()) + QStringLiteral(".png"));
    }
    delete m_view;
    m_view = nullptr;
}

void TestAssemblyView::highlightMarksInstructions_data()
{
    QTest::addColumn<Kind>("tab");
    QTest::addColumn<int>("sourceLine");
    QTest::addColumn<QStringList>("markedText"); // the marked lines, trimmed, in order
    QTest::addColumn<QString>("opcode");         // must be among them
    QTest::addColumn<int>("opcodeCount");

    QTest::newRow("PTX: store of the sum (line 10)")
        << Kind::Ptx << 10
        << QStringList{"mov.u32 \t%r20, %ctaid.x;", "cvta.to.global.u64 \t%rd6, %rd2;", "mul.wide.u32 \t%rd7, %r20, 4;",
                       "add.s64 \t%rd8, %rd6, %rd7;", "st.global.f32 \t[%rd8], %f3;"}
        << "st.global.f32" << 1;
    QTest::newRow("PTX: prelude warp_reduce_sum call (line 8)") << Kind::Ptx << 8 << QStringList() << "shfl.sync.bfly" << 5;
    QTest::newRow("SASS: prelude warp_reduce_sum call (line 8)") << Kind::Sass << 8 << QStringList() << "SHFL.BFLY" << 5;
    QTest::newRow("SASS: if on threadIdx (line 9)") << Kind::Sass << 9 << QStringList() << "ISETP.NE.AND" << 1;
    QTest::newRow("comment line marks nothing") << Kind::Ptx << 3 << QStringList() << "" << 0;
    QTest::newRow("line 0 clears the marks") << Kind::Sass << 0 << QStringList() << "" << 0;
}

void TestAssemblyView::highlightMarksInstructions()
{
    QFETCH(Kind, tab);
    QFETCH(int, sourceLine);
    QFETCH(QStringList, markedText);
    QFETCH(QString, opcode);
    QFETCH(int, opcodeCount);
    m_view->showTab(tab);
    m_view->highlightSourceLine(10); // something marked before, so clearing is visible
    m_view->highlightSourceLine(sourceLine);
    const QList<int> marked = m_view->highlightedAsmLines();
    QStringList text;
    int count = 0;
    for (int l : marked) {
        const QString t = editor(tab)->text(l - 1).trimmed();
        text << t;
        count += opcode.isEmpty() ? 0 : int(t.contains(opcode));
    }
    if (!markedText.isEmpty())
        QCOMPARE(text, markedText);
    QCOMPARE(count, opcodeCount);
    if (opcode.isEmpty())
        QVERIFY2(marked.isEmpty(), qPrintable(text.join(QLatin1Char('\n'))));
    // The other tab is marked too: switching shows the same source line there.
    const Kind other = tab == Kind::Ptx ? Kind::Sass : Kind::Ptx;
    QCOMPARE(editor(other)->markedLines().isEmpty(), marked.isEmpty());
}

void TestAssemblyView::highlightScrollsToTheCode()
{
    AsmEditor* ptx = editor(Kind::Ptx);
    ptx->setFirstVisibleLine(0);
    m_view->highlightSourceLine(11); // `ret;` near the end of the listing
    const QList<int> marked = m_view->highlightedAsmLines();
    QVERIFY(!marked.isEmpty());
    QVERIFY2(marked.first() > 40, "the row must be off screen at first for this test to mean anything");
    const int first = ptx->firstVisibleLine() + 1;
    const int onScreen = int(ptx->SendScintilla(AsmEditor::SCI_LINESONSCREEN));
    QVERIFY2(marked.first() >= first && marked.first() < first + onScreen,
             qPrintable(QStringLiteral("line %1 not within %2..%3").arg(marked.first()).arg(first).arg(first + onScreen)));
    // A second highlight of a line already on screen must not move the view.
    m_view->highlightSourceLine(11);
    QCOMPARE(ptx->firstVisibleLine() + 1, first);
}

void TestAssemblyView::cursorNamesSourceLine_data()
{
    QTest::addColumn<Kind>("tab");
    QTest::addColumn<QString>("instruction");
    QTest::addColumn<QList<int>>("sourceLines");
    QTest::newRow("PTX store -> line 10") << Kind::Ptx << "st.global.f32" << QList<int>{10};
    QTest::newRow("PTX inlined shuffle -> call line 8") << Kind::Ptx << "shfl.sync.bfly" << QList<int>{8};
    QTest::newRow("SASS inlined shuffle -> call line 8") << Kind::Sass << "SHFL.BFLY" << QList<int>{8};
    QTest::newRow("SASS parameter load -> line 6") << Kind::Sass << "S2R R7, SR_TID.X" << QList<int>{6};
    QTest::newRow("PTX register declaration -> no line") << Kind::Ptx << ".reg .f32" << QList<int>{};
}

void TestAssemblyView::cursorNamesSourceLine()
{
    QFETCH(Kind, tab);
    QFETCH(QString, instruction);
    QFETCH(QList<int>, sourceLines);
    m_view->showTab(tab);
    AsmEditor* e = editor(tab);
    const int line = findLine(e, instruction);
    QVERIFY(line > 0);
    // Start on a line of another source line (the kernel entry), then step onto the target.
    const int start = findLine(e, tab == Kind::Ptx ? QStringLiteral("ld.param.u64") : QStringLiteral("LDC R1"));
    e->setFocus();
    e->setCursorPosition(start - 1, 0);
    QSignalSpy spy(m_view, &AssemblyView::sourceLinesSelected);
    for (int l = start; l < line; ++l)
        QTest::keyClick(e, Qt::Key_Down);
    if (line < start)
        e->setCursorPosition(line - 1, 0);
    QCOMPARE(e->cursorLine(), line);
    QVERIFY(!spy.isEmpty());
    QCOMPARE(spy.last().at(0).value<QList<int>>(), sourceLines);
    // Its siblings are marked: every instruction of that source line.
    if (!sourceLines.isEmpty())
        QVERIFY(m_view->highlightedAsmLines().contains(line));
    else
        QVERIFY(m_view->highlightedAsmLines().isEmpty());
}

void TestAssemblyView::selectionSpanningLines()
{
    AsmEditor* e = editor(Kind::Ptx);
    const int from = findLine(e, "setp.ne.s32"); // line 9
    const int to = findLine(e, "st.global.f32"); // line 10
    QSignalSpy spy(m_view, &AssemblyView::sourceLinesSelected);
    e->setSelection(from - 1, 0, to, 0); // whole lines, ending at the start of the next
    QVERIFY(!spy.isEmpty());
    QCOMPARE(spy.last().at(0).value<QList<int>>(), (QList<int>{9, 10}));
}

void TestAssemblyView::sassUnavailableSaysWhy_data()
{
    QTest::addColumn<QString>("reason");
    QTest::addColumn<QString>("shown");
    QTest::newRow("no disassembler installed")
        << "SASS unavailable: neither nvdisasm nor cuobjdump was found"
        << "SASS unavailable: neither nvdisasm nor cuobjdump was found";
    QTest::newRow("reason without the prefix") << "sm_90 is a virtual architecture"
                                              << "SASS unavailable: sm_90 is a virtual architecture";
    QTest::newRow("no reason given") << "" << "SASS unavailable: the build gave no reason.";
}

void TestAssemblyView::sassUnavailableSaysWhy()
{
    QFETCH(QString, reason);
    QFETCH(QString, shown);
    QCOMPARE(m_view->note(Kind::Sass), QString()); // the listing of init() speaks for itself
    QVERIFY(!editor(Kind::Sass)->isHidden());
    kf::CompileResult r = rowSumBuild(false);
    r.sassUnavailableReason = reason.toStdString();
    m_view->setCompileResult(r, QStringLiteral("rowsum.cu"));
    m_view->showTab(Kind::Sass);
    QCOMPARE(m_view->note(Kind::Sass), shown);
    QCOMPARE(editor(Kind::Sass)->text(), QString());
    QVERIFY2(editor(Kind::Sass)->isHidden(), "an empty listing under the reason only adds noise");
    QCOMPARE(m_view->note(Kind::Ptx), QString()); // the PTX is still there and mapped
    QVERIFY(editor(Kind::Ptx)->lines() > 100);
}

void TestAssemblyView::kernelSelector()
{
    QCOMPARE(m_view->kernelNames(), QStringList{"row_sum"});
    AsmEditor* ptx = editor(Kind::Ptx);
    const int entry = findLine(ptx, ".visible .entry row_sum");
    QVERIFY(entry > 0);
    ptx->setFirstVisibleLine(ptx->lines() - 1);
    m_view->selectKernel(0);
    const int first = ptx->firstVisibleLine() + 1;
    QVERIFY2(entry >= first && entry < first + 10, qPrintable(QString::number(first)));
}

void TestAssemblyView::buildErrorsAndClear()
{
    kf::CompileResult failed;
    failed.success = false;
    m_view->setCompileResult(failed, QStringLiteral("rowsum.cu"));
    QCOMPARE(m_view->note(Kind::Ptx), QStringLiteral("No assembly: the build has errors."));
    QVERIFY(m_view->kernelNames().isEmpty());
    QCOMPARE(editor(Kind::Ptx)->text(), QString());

    m_view->clear(QStringLiteral("Open a candidate to see its PTX."));
    QCOMPARE(m_view->note(Kind::Sass), QStringLiteral("Open a candidate to see its PTX."));
}

// The user keeps editing line 8; the next build must show line 8's code again.
void TestAssemblyView::highlightSurvivesRebuild()
{
    m_view->highlightSourceLine(8);
    const QList<int> before = m_view->highlightedAsmLines();
    QVERIFY(!before.isEmpty());
    m_view->setCompileResult(rowSumBuild(true), QStringLiteral("rowsum.cu"));
    QCOMPARE(m_view->highlightedAsmLines(), before);
}

QTEST_MAIN(TestAssemblyView)
#include "tst_assemblyview.moc"
