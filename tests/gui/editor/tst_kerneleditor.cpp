// KernelEditor and CudaLexer against real NVRTC diagnostics: squiggles land on the token the
// compiler pointed at, follow edits, explain themselves on hover, and go away once fixed.
#include "engine/compile/Compiler.h"
#include "testutil.h"
#include "widgets/editor/CudaCompletions.h"
#include "widgets/editor/CudaLexer.h"
#include "widgets/editor/CudaWords.h"
#include "widgets/editor/KernelEditor.h"

#include <QApplication>
#include <QDir>
#include <QSignalSpy>
#include <QTest>
#include <QToolTip>

using kf::Diagnostic;
using kf::ui::CudaLexer;
using kf::ui::KernelEditor;
using Severity = kf::Diagnostic::Severity;

Q_DECLARE_METATYPE(Severity)

namespace {

const char* kUndeclared = "__global__ void k(float* out)\n"
                          "{\n"
                          "    out[0] = undefined_thing + 1.0f;\n"
                          "}\n";
const char* kMissingSemicolon = "__global__ void k(float* out)\n"
                                "{\n"
                                "    float x = 1.0f\n"
                                "    out[0] = x;\n"
                                "}\n";
const char* kUnusedVariable = "__global__ void k(float* out)\n"
                              "{\n"
                              "    int unused = 3;\n"
                              "    out[0] = 1.0f;\n"
                              "}\n";
const char* kTabs = "__global__ void k(float* out)\n"
                    "{\n"
                    "\tif (out)\n"
                    "\t\tout[0] = \tbogus;\n"
                    "}\n";

kf::Result<kf::CompileResult> compileSource(const std::string& source)
{
    kf::CompileRequest request;
    request.source = source;
    request.fileName = "kernel.cu";
    request.options.arch = "sm_90";
    request.wantSass = false;
    return kf::compile(request);
}

// Every position covered by `indicator`, as (start, end) runs.
QList<QPair<int, int>> indicatorRuns(const KernelEditor& e, int indicator)
{
    QList<QPair<int, int>> runs;
    const auto length = static_cast<int>(e.SendScintilla(QsciScintillaBase::SCI_GETLENGTH));
    int start = -1;
    for (int pos = 0; pos <= length; ++pos) {
        const bool on = pos < length &&
                        e.SendScintilla(QsciScintillaBase::SCI_INDICATORVALUEAT, indicator, pos) != 0;
        if (on && start < 0)
            start = pos;
        if (!on && start >= 0) {
            runs.append({start, pos});
            start = -1;
        }
    }
    return runs;
}

bool hasMarker(const KernelEditor& e, int line, int marker)
{
    return (e.SendScintilla(QsciScintillaBase::SCI_MARKERGET, line - 1) & (1 << marker)) != 0;
}

int styleAt(KernelEditor& e, const QString& word)
{
    const int index = e.text().indexOf(word);
    return index < 0 ? -1
                     : static_cast<int>(e.SendScintilla(QsciScintillaBase::SCI_GETSTYLEAT,
                                                        static_cast<unsigned long>(e.text().left(index).toUtf8().size())));
}

double luminance(const QColor& c)
{
    auto channel = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
}

double contrast(const QColor& a, const QColor& b)
{
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

} // namespace

class TestKernelEditor : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void squiggleCoversTheReportedToken_data();
    void squiggleCoversTheReportedToken();
    void fixingTheSourceClearsMarks();
    void squigglesMoveWithEdits();
    void diagnosticsOutsideTheDocumentGetNoSquiggle_data();
    void diagnosticsOutsideTheDocumentGetNoSquiggle();
    void hoverShowsSeverityCodeAndMessage();
    void marginHoverShowsTheLinesDiagnostics();

    void goToMovesTheCursor_data();
    void goToMovesTheCursor();
    void goToUnfoldsAFoldedBody();
    void cursorLineChangedFollowsTheCursor();
    void highlightedLinesAreMarkedAndCleared();
    void lineNumberMarginGrowsWithTheDocument();

    void lexerStylesCudaWordsDistinctly_data();
    void lexerStylesCudaWordsDistinctly();
    void themeColoursAreReadable_data();
    void themeColoursAreReadable();
    void followsTheApplicationPalette();
    void completionOffersCudaAndPreludeNames_data();
    void completionOffersCudaAndPreludeNames();
    void typingShowsTheCompletionList();

    void screenshots();

private:
    bool m_haveNvrtc = false;
    QString m_noNvrtcReason;
};

void TestKernelEditor::initTestCase()
{
    auto version = kf::nvrtcVersion();
    m_haveNvrtc = version.ok();
    if (!m_haveNvrtc)
        m_noNvrtcReason = qs(version.error().message());
}

#define REQUIRE_NVRTC()                                                                          \
    do {                                                                                         \
        if (!m_haveNvrtc)                                                                        \
            QSKIP(qPrintable(QStringLiteral("no NVRTC: ") + m_noNvrtcReason));                  \
    } while (0)

void TestKernelEditor::squiggleCoversTheReportedToken_data()
{
    QTest::addColumn<QString>("source");
    QTest::addColumn<Severity>("severity");
    QTest::addColumn<QString>("messagePart");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("token");

    QTest::newRow("undeclared identifier") << QString(kUndeclared) << Severity::Error
                                           << "is undefined" << 3 << 14 << "undefined_thing";
    QTest::newRow("missing semicolon") << QString(kMissingSemicolon) << Severity::Error
                                       << "expected a \";\"" << 4 << 5 << "out";
    QTest::newRow("unused variable warning") << QString(kUnusedVariable) << Severity::Warning
                                             << "never referenced" << 3 << 9 << "unused";
    QTest::newRow("error on a line with tabs") << QString(kTabs) << Severity::Error
                                               << "is undefined" << 4 << 13 << "bogus";
}

void TestKernelEditor::squiggleCoversTheReportedToken()
{
    REQUIRE_NVRTC();
    QFETCH(QString, source);
    QFETCH(Severity, severity);
    QFETCH(QString, messagePart);
    QFETCH(int, line);
    QFETCH(int, column);
    QFETCH(QString, token);

    auto result = compileSource(source.toStdString());
    KF_VERIFY_OK(result);
    auto found = std::find_if(result->diagnostics.begin(), result->diagnostics.end(),
                              [&](const Diagnostic& d) {
                                  return d.severity == severity && qs(d.message).contains(messagePart);
                              });
    QVERIFY2(found != result->diagnostics.end(), result->log.c_str());
    QCOMPARE(found->line, line);
    QCOMPARE(found->column, column);

    KernelEditor editor;
    editor.setText(source);
    editor.setDiagnostics(result->diagnostics);

    const int indicator = severity == Severity::Error ? editor.errorIndicator() : editor.warningIndicator();
    const int pos = editor.positionAt(line, column);
    QCOMPARE(editor.text(line - 1).mid(column - 1, token.size()), token);
    // The squiggle is exactly the token: not the column before, not the one after.
    QVERIFY(indicatorRuns(editor, indicator).contains(qMakePair(pos, pos + int(token.size()))));
    QCOMPARE(editor.SendScintilla(QsciScintillaBase::SCI_INDICATORVALUEAT, indicator, pos - 1), 0);
    QCOMPARE(editor.SendScintilla(QsciScintillaBase::SCI_INDICATORVALUEAT, indicator,
                                  pos + token.size()), 0);

    const auto at = editor.diagnosticsAt(line, column);
    QVERIFY(!at.empty());
    QVERIFY(qs(at.front().message).contains(messagePart));
    QCOMPARE(at.front().severity, severity);
    const auto lastOfToken = editor.diagnosticsAt(line, column + int(token.size()) - 1);
    QVERIFY(!lastOfToken.empty());
    for (const auto& d : editor.diagnosticsAt(line, column - 1))
        QVERIFY2(!qs(d.message).contains(messagePart), "squiggle starts a column early");

    const int marker = severity == Severity::Error ? editor.errorMarker() : editor.warningMarker();
    QVERIFY(hasMarker(editor, line, marker));
}

void TestKernelEditor::fixingTheSourceClearsMarks()
{
    REQUIRE_NVRTC();
    KernelEditor editor;
    editor.setText(QString(kUndeclared));
    auto broken = compileSource(kUndeclared);
    KF_VERIFY_OK(broken);
    QVERIFY(!broken->success);
    editor.setDiagnostics(broken->diagnostics);
    QVERIFY(!indicatorRuns(editor, editor.errorIndicator()).isEmpty());

    // The user retypes the identifier; the marks stay until the next build says otherwise.
    const int pos = editor.positionAt(3, 14);
    editor.SendScintilla(QsciScintillaBase::SCI_SETTARGETRANGE, pos, pos + 15);
    editor.SendScintilla(QsciScintillaBase::SCI_REPLACETARGET, -1, "out[1]");
    QVERIFY(hasMarker(editor, 3, editor.errorMarker()));

    auto fixed = compileSource(editor.text().toStdString());
    KF_VERIFY_OK(fixed);
    QVERIFY2(fixed->success, fixed->log.c_str());
    QVERIFY(fixed->diagnostics.empty());
    editor.setDiagnostics(fixed->diagnostics);

    for (int indicator : {editor.errorIndicator(), editor.warningIndicator(), editor.infoIndicator()})
        QVERIFY(indicatorRuns(editor, indicator).isEmpty());
    const int mask = (1 << editor.errorMarker()) | (1 << editor.warningMarker()) | (1 << editor.infoMarker());
    QCOMPARE(editor.SendScintilla(QsciScintillaBase::SCI_MARKERNEXT, 0, mask), -1);
    QVERIFY(editor.diagnosticsAt(3, 14).empty());
    QVERIFY(editor.diagnosticToolTip(3, 14).isEmpty());
}

void TestKernelEditor::squigglesMoveWithEdits()
{
    REQUIRE_NVRTC();
    KernelEditor editor;
    editor.setText(QString(kUndeclared));
    auto result = compileSource(kUndeclared);
    KF_VERIFY_OK(result);
    editor.setDiagnostics(result->diagnostics);

    editor.SendScintilla(QsciScintillaBase::SCI_INSERTTEXT, 0UL, "#include <kf/prelude.cuh>\n\n");
    QVERIFY(editor.diagnosticsAt(3, 14).empty());
    const auto moved = editor.diagnosticsAt(5, 14);
    QCOMPARE(moved.size(), size_t(1));
    QVERIFY(qs(moved.front().message).contains("undefined_thing"));
    QVERIFY(hasMarker(editor, 5, editor.errorMarker()));
    QVERIFY(!hasMarker(editor, 3, editor.errorMarker()));
    QCOMPARE(editor.diagnosticsOnLine(5).size(), size_t(1));
}

void TestKernelEditor::diagnosticsOutsideTheDocumentGetNoSquiggle_data()
{
    QTest::addColumn<int>("line");
    QTest::newRow("ptxas message without a line") << 0;
    QTest::newRow("line past the end") << 99;
}

void TestKernelEditor::diagnosticsOutsideTheDocumentGetNoSquiggle()
{
    QFETCH(int, line);
    KernelEditor editor;
    editor.setText(QString(kUndeclared));
    Diagnostic d;
    d.file = "ptxas";
    d.line = line;
    d.message = "too many resources requested for launch";
    editor.setDiagnostics({d});
    QVERIFY(indicatorRuns(editor, editor.errorIndicator()).isEmpty());
    QCOMPARE(editor.SendScintilla(QsciScintillaBase::SCI_MARKERNEXT, 0, 1 << editor.errorMarker()), -1);
}

void TestKernelEditor::hoverShowsSeverityCodeAndMessage()
{
    REQUIRE_NVRTC();
    KernelEditor editor;
    editor.resize(600, 300);
    editor.setText(QString(kUnusedVariable));
    auto result = compileSource(kUnusedVariable);
    KF_VERIFY_OK(result);
    editor.setDiagnostics(result->diagnostics);

    const QString tip = editor.diagnosticToolTip(3, 9);
    QVERIFY2(tip.contains("warning #177-D"), qPrintable(tip));
    QVERIFY2(tip.contains("variable \"unused\" was declared but never referenced"), qPrintable(tip));
    QVERIFY(editor.diagnosticToolTip(3, 8).isEmpty());

    // A real dwell over the middle of the squiggle shows the tooltip; leaving hides it.
    editor.show();
    QVERIFY(QTest::qWaitForWindowExposed(&editor));
    const int pos = editor.positionAt(3, 11);
    const int x = static_cast<int>(editor.SendScintilla(QsciScintillaBase::SCI_POINTXFROMPOSITION, 0, pos)) + 2;
    const int y = static_cast<int>(editor.SendScintilla(QsciScintillaBase::SCI_POINTYFROMPOSITION, 0, pos)) + 4;
    emit editor.SCN_DWELLSTART(pos, x, y);
    QTRY_VERIFY(QToolTip::isVisible());
    QVERIFY(QToolTip::text().contains("never referenced"));
    QVERIFY(QToolTip::text().contains("177-D"));
    emit editor.SCN_DWELLEND(pos, x, y);
    QTRY_VERIFY(!QToolTip::isVisible());

    // Hovering plain text shows nothing.
    const int plain = editor.positionAt(4, 6);
    emit editor.SCN_DWELLSTART(plain,
        static_cast<int>(editor.SendScintilla(QsciScintillaBase::SCI_POINTXFROMPOSITION, 0, plain)) + 2,
        static_cast<int>(editor.SendScintilla(QsciScintillaBase::SCI_POINTYFROMPOSITION, 0, plain)) + 4);
    QVERIFY(!QToolTip::isVisible());
}

void TestKernelEditor::marginHoverShowsTheLinesDiagnostics()
{
    REQUIRE_NVRTC();
    KernelEditor editor;
    editor.resize(600, 300);
    editor.setText(QString(kMissingSemicolon));
    auto result = compileSource(kMissingSemicolon);
    KF_VERIFY_OK(result);
    editor.setDiagnostics(result->diagnostics);
    editor.show();
    QVERIFY(QTest::qWaitForWindowExposed(&editor));

    QVERIFY(hasMarker(editor, 4, editor.errorMarker()));
    QVERIFY(hasMarker(editor, 3, editor.warningMarker()));
    const int lineNumbers = static_cast<int>(editor.SendScintilla(QsciScintillaBase::SCI_GETMARGINWIDTHN, 0));
    const int y = static_cast<int>(editor.SendScintilla(QsciScintillaBase::SCI_POINTYFROMPOSITION, 0,
                                                        editor.positionAt(4, 1))) + 4;
    emit editor.SCN_DWELLSTART(-1, lineNumbers + 4, y);
    QTRY_VERIFY(QToolTip::isVisible());
    QVERIFY2(QToolTip::text().contains("expected a"), qPrintable(QToolTip::text()));
    QVERIFY(!QToolTip::text().contains("never referenced"));
    emit editor.SCN_DWELLEND(-1, lineNumbers + 4, y);
    QTRY_VERIFY(!QToolTip::isVisible());
}

void TestKernelEditor::goToMovesTheCursor_data()
{
    QTest::addColumn<QString>("source");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");
    QTest::addColumn<int>("expectedLine");
    QTest::addColumn<int>("expectedColumn");
    QTest::newRow("undeclared identifier") << QString(kUndeclared) << 3 << 14 << 3 << 14;
    QTest::newRow("after tabs") << QString(kTabs) << 4 << 13 << 4 << 13;
    QTest::newRow("column 0 means line start") << QString(kTabs) << 2 << 0 << 2 << 1;
    QTest::newRow("column past the end clamps") << QString(kUndeclared) << 2 << 40 << 2 << 2;
    QTest::newRow("line past the end clamps") << QString(kUndeclared) << 99 << 1 << 5 << 1;
}

void TestKernelEditor::goToMovesTheCursor()
{
    QFETCH(QString, source);
    QFETCH(int, line);
    QFETCH(int, column);
    QFETCH(int, expectedLine);
    QFETCH(int, expectedColumn);

    KernelEditor editor;
    editor.setText(source);
    editor.show();
    QVERIFY(QTest::qWaitForWindowExposed(&editor));
    editor.goTo(line, column);
    int l = -1, index = -1;
    editor.getCursorPosition(&l, &index);
    QCOMPARE(l + 1, expectedLine);
    QCOMPARE(index + 1, expectedColumn);
    QCOMPARE(editor.SendScintilla(QsciScintillaBase::SCI_GETCURRENTPOS),
             editor.positionAt(expectedLine, expectedColumn));
    QTRY_COMPARE(QApplication::focusWidget(), static_cast<QWidget*>(&editor));
}

void TestKernelEditor::goToUnfoldsAFoldedBody()
{
    KernelEditor editor;
    editor.setText(QString(kUndeclared));
    editor.SendScintilla(QsciScintillaBase::SCI_COLOURISE, 0, -1);
    editor.SendScintilla(QsciScintillaBase::SCI_FOLDALL, QsciScintillaBase::SC_FOLDACTION_CONTRACT);
    QCOMPARE(editor.SendScintilla(QsciScintillaBase::SCI_GETLINEVISIBLE, 2), 0);
    editor.goTo(3, 14);
    QCOMPARE(editor.SendScintilla(QsciScintillaBase::SCI_GETLINEVISIBLE, 2), 1);
}

void TestKernelEditor::cursorLineChangedFollowsTheCursor()
{
    KernelEditor editor;
    editor.setText(QString(kUndeclared));
    editor.show();
    QVERIFY(QTest::qWaitForWindowExposed(&editor));
    QSignalSpy spy(&editor, &KernelEditor::cursorLineChanged);
    editor.goTo(4, 1);
    QTRY_COMPARE(spy.count(), 1);
    QCOMPARE(spy.takeFirst().at(0).toInt(), 4);
    editor.goTo(4, 2); // same line: no signal
    editor.goTo(2, 1);
    QTRY_COMPARE(spy.count(), 1);
    QCOMPARE(spy.takeFirst().at(0).toInt(), 2);
}

void TestKernelEditor::highlightedLinesAreMarkedAndCleared()
{
    KernelEditor editor;
    editor.setText(QString(kUndeclared));
    editor.setHighlightedLines({2, 4, 40});
    QVERIFY(hasMarker(editor, 2, editor.highlightMarker()));
    QVERIFY(!hasMarker(editor, 3, editor.highlightMarker()));
    QVERIFY(hasMarker(editor, 4, editor.highlightMarker()));
    QCOMPARE(editor.highlightedLines(), (QList<int>{2, 4}));
    // Background marks never show up as symbols in the diagnostics margin.
    QCOMPARE(editor.SendScintilla(QsciScintillaBase::SCI_GETMARGINMASKN, 1) & (1 << editor.highlightMarker()), 0);
    editor.setHighlightedLines({});
    QCOMPARE(editor.SendScintilla(QsciScintillaBase::SCI_MARKERNEXT, 0, 1 << editor.highlightMarker()), -1);
}

void TestKernelEditor::lineNumberMarginGrowsWithTheDocument()
{
    KernelEditor editor;
    editor.setText(QString(kUndeclared));
    const auto small = editor.SendScintilla(QsciScintillaBase::SCI_GETMARGINWIDTHN, 0);
    QString big;
    for (int i = 0; i < 12000; ++i)
        big += QStringLiteral("// line\n");
    editor.setText(big);
    QVERIFY(editor.SendScintilla(QsciScintillaBase::SCI_GETMARGINWIDTHN, 0) > small);
}

void TestKernelEditor::lexerStylesCudaWordsDistinctly_data()
{
    QTest::addColumn<QString>("word");
    QTest::addColumn<int>("style");
    QTest::newRow("CUDA qualifier __global__") << "__global__" << int(CudaLexer::Keyword);
    QTest::newRow("C++ keyword const") << "const" << int(CudaLexer::Keyword);
    QTest::newRow("built-in threadIdx") << "threadIdx" << int(CudaLexer::KeywordSet2);
    QTest::newRow("intrinsic __shfl_xor_sync") << "__shfl_xor_sync" << int(CudaLexer::KeywordSet2);
    QTest::newRow("type __nv_bfloat16") << "__nv_bfloat16" << int(CudaLexer::KeywordSet2);
    QTest::newRow("ordinary identifier") << "my_value" << int(CudaLexer::Identifier);
}

void TestKernelEditor::lexerStylesCudaWordsDistinctly()
{
    QFETCH(QString, word);
    QFETCH(int, style);
    KernelEditor editor;
    QCOMPARE(QString(editor.lexer()->language()), QString("CUDA"));
    editor.setText("__global__ void k(const __nv_bfloat16* in)\n"
                   "{\n"
                   "    float my_value = __shfl_xor_sync(0xffffffffu, 1.0f, threadIdx.x);\n"
                   "}\n");
    editor.SendScintilla(QsciScintillaBase::SCI_COLOURISE, 0, -1);
    QCOMPARE(styleAt(editor, word), style);
    // Distinct styles must also look distinct.
    auto* lexer = editor.cudaLexer();
    if (style != CudaLexer::Identifier)
        QVERIFY(lexer->color(style) != lexer->color(CudaLexer::Identifier));
    QVERIFY(lexer->color(CudaLexer::Keyword) != lexer->color(CudaLexer::KeywordSet2));
}

void TestKernelEditor::themeColoursAreReadable_data()
{
    QTest::addColumn<bool>("dark");
    QTest::newRow("light") << false;
    QTest::newRow("dark") << true;
}

void TestKernelEditor::themeColoursAreReadable()
{
    QFETCH(bool, dark);
    KernelEditor editor;
    editor.setDarkTheme(dark);
    QCOMPARE(editor.isDarkTheme(), dark);
    auto* lexer = editor.cudaLexer();
    const QColor paper = lexer->paper(CudaLexer::Default);
    QCOMPARE(paper.lightness() < 128, dark);
    for (int style : {int(CudaLexer::Default), int(CudaLexer::Keyword), int(CudaLexer::KeywordSet2),
                      int(CudaLexer::Comment), int(CudaLexer::Number), int(CudaLexer::DoubleQuotedString),
                      int(CudaLexer::PreProcessor), int(CudaLexer::Identifier)}) {
        const double ratio = contrast(lexer->color(style), paper);
        QVERIFY2(ratio >= 3.0, qPrintable(QStringLiteral("%1 contrast %2").arg(lexer->description(style)).arg(ratio)));
    }
}

void TestKernelEditor::followsTheApplicationPalette()
{
    const QPalette original = QApplication::palette();
    QVERIFY(!CudaLexer::isDarkPalette(original));
    KernelEditor editor;
    QVERIFY(!editor.isDarkTheme());

    QPalette dark = original;
    dark.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
    dark.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
    dark.setColor(QPalette::Text, QColor(0xdc, 0xdc, 0xdc));
    dark.setColor(QPalette::WindowText, QColor(0xdc, 0xdc, 0xdc));
    QApplication::setPalette(dark);
    QTRY_VERIFY(editor.isDarkTheme());
    QCOMPARE(editor.cudaLexer()->paper(CudaLexer::Default), QColor(0x1e, 0x1e, 0x1e));
    QCOMPARE(editor.cudaLexer()->color(CudaLexer::Identifier), QColor(0xdc, 0xdc, 0xdc));

    QApplication::setPalette(original);
    QTRY_VERIFY(!editor.isDarkTheme());
}

void TestKernelEditor::completionOffersCudaAndPreludeNames_data()
{
    QTest::addColumn<QStringList>("context");
    QTest::addColumn<QString>("offered");
    QTest::addColumn<QString>("notOffered");
    QTest::newRow("built-in variable") << QStringList{"thread"} << "threadIdx" << "blockIdx";
    QTest::newRow("warp shuffle") << QStringList{"__shfl_x"} << "__shfl_xor_sync" << "__shfl_sync";
    QTest::newRow("prelude block reduce") << QStringList{"block_reduce_s"} << "block_reduce_sum" << "block_reduce_max";
    QTest::newRow("prelude name after kf::") << QStringList{"kf", "warp_"} << "warp_reduce_sum" << "__syncwarp";
    QTest::newRow("CUDA type") << QStringList{"__nv_bf"} << "__nv_bfloat16" << "__half";
    QTest::newRow("case-sensitive") << QStringList{"Thread"} << "" << "threadIdx";
    QTest::newRow("threadIdx members") << QStringList{"threadIdx", ""} << "x" << "threadIdx";
}

void TestKernelEditor::completionOffersCudaAndPreludeNames()
{
    QFETCH(QStringList, context);
    QFETCH(QString, offered);
    QFETCH(QString, notOffered);
    KernelEditor editor;
    QStringList list;
    editor.completions()->updateAutoCompletionList(context, list);
    if (!offered.isEmpty())
        QVERIFY2(list.contains(offered), qPrintable(list.join(' ')));
    else
        QVERIFY2(list.isEmpty(), qPrintable(list.join(' ')));
    QVERIFY2(!list.contains(notOffered), qPrintable(list.join(' ')));
}

void TestKernelEditor::typingShowsTheCompletionList()
{
    QVERIFY(kf::ui::preludeIdentifiers().contains("warp_reduce_sum"));
    QVERIFY2(!kf::ui::preludeIdentifiers().contains("SumOp"), "kf::detail leaks into completion");
    QVERIFY(kf::ui::lexerWords("cuda_builtins.txt").contains("threadIdx"));

    KernelEditor editor;
    editor.show();
    QVERIFY(QTest::qWaitForWindowExposed(&editor));
    QVERIFY(editor.completions()->words().contains("threadIdx"));
    QVERIFY(editor.completions()->words().contains("__shfl_xor_sync"));
    QVERIFY(editor.completions()->words().contains("block_reduce_sum"));
    editor.setFocus();
    QTest::keyClicks(editor.viewport(), "__shfl_x");
    QTRY_VERIFY(editor.SendScintilla(QsciScintillaBase::SCI_AUTOCACTIVE) != 0);
    QTest::keyClick(editor.viewport(), Qt::Key_Return);
    QCOMPARE(editor.text(), QString("__shfl_xor_sync"));
}

void TestKernelEditor::screenshots()
{
    const QString dir = qEnvironmentVariable("KF_SCREENSHOT_DIR");
    if (dir.isEmpty())
        QSKIP("set KF_SCREENSHOT_DIR to save editor screenshots");
    REQUIRE_NVRTC();
    for (bool dark : {false, true}) {
        KernelEditor editor;
        editor.resize(640, 260);
        editor.setDarkTheme(dark);
        editor.setText(QString(kMissingSemicolon) + "\n" + kUndeclared);
        auto result = compileSource(editor.text().toStdString());
        KF_VERIFY_OK(result);
        editor.setDiagnostics(result->diagnostics);
        editor.setHighlightedLines({2});
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        editor.goTo(8, 5);
        QVERIFY(editor.grab().save(QDir(dir).filePath(dark ? "editor-dark.png" : "editor-light.png")));
    }
}

QTEST_MAIN(TestKernelEditor)
#include "tst_kerneleditor.moc"
