#include "widgets/assembly/AsmEditor.h"

#include "widgets/assembly/AsmLexer.h"

#include <QEvent>
#include <QFontDatabase>
#include <QPalette>

#include <algorithm>
#include <set>

namespace kf::ui {

namespace {
constexpr int kMarker = 0;          // background of the instructions of the chosen source lines
constexpr int kContextLines = 3;    // lines kept above a line scrolled to, so it is not glued to the edge
} // namespace

AsmEditor::AsmEditor(QWidget* parent) : QsciScintilla(parent), m_lexer(new AsmLexer(this))
{
    setReadOnly(true);
    setUtf8(true);
    setLexer(m_lexer);
    setWrapMode(WrapNone);
    setCaretLineVisible(true);
    setMarginType(0, NumberMargin);
    setMarginLineNumbers(0, true);
    setMarginWidth(1, 0);
    setFolding(NoFoldStyle);
    markerDefine(Background, kMarker);
    // The caret line must stay visible on top of a marked line.
    SendScintilla(SCI_SETCARETLINEVISIBLEALWAYS, 1);
    applyPalette();
    connect(this, &QsciScintilla::cursorPositionChanged, this, &AsmEditor::onCursorOrSelection);
    connect(this, &QsciScintilla::selectionChanged, this, &AsmEditor::onCursorOrSelection);
}

void AsmEditor::setAssembly(const QString& text, kf::LineMap map)
{
    m_loading = true;
    m_map = std::move(map);
    m_lastEmitted.clear();
    markerDeleteAll(kMarker);
    setText(text);
    setCursorPosition(0, 0);
    // Room for the widest line number plus a digit of air.
    setMarginWidth(0, QString(QString::number(std::max(lines(), 10)).size() + 1, QLatin1Char('9')));
    m_loading = false;
}

QList<int> AsmEditor::markSourceLines(const QList<int>& sourceLines)
{
    markerDeleteAll(kMarker);
    std::set<int> marked;
    for (int s : sourceLines)
        for (int l : m_map.asmLinesFor(s))
            marked.insert(l);
    for (int l : marked)
        markerAdd(l - 1, kMarker);
    return {marked.begin(), marked.end()};
}

QList<int> AsmEditor::markedLines() const
{
    QList<int> out;
    for (int l = markerFindNext(0, 1u << kMarker); l >= 0; l = markerFindNext(l + 1, 1u << kMarker))
        out << l + 1;
    return out;
}

void AsmEditor::scrollToLine(int line)
{
    if (line < 1)
        return;
    setFirstVisibleLine(std::max(0, line - 1 - kContextLines));
}

int AsmEditor::cursorLine() const
{
    int line = 0, index = 0;
    getCursorPosition(&line, &index);
    return line + 1;
}

void AsmEditor::onCursorOrSelection()
{
    if (m_loading)
        return;
    int lineFrom = 0, indexFrom = 0, lineTo = 0, indexTo = 0;
    getSelection(&lineFrom, &indexFrom, &lineTo, &indexTo);
    if (lineFrom < 0) {
        lineFrom = lineTo = cursorLine() - 1;
    } else if (lineTo > lineFrom && indexTo == 0) {
        --lineTo; // a selection of whole lines ends at the start of the next one
    }
    std::set<int> sources;
    for (int l = lineFrom; l <= lineTo; ++l)
        if (int s = m_map.sourceLineFor(l + 1))
            sources.insert(s);
    QList<int> out(sources.begin(), sources.end());
    if (out == m_lastEmitted)
        return;
    m_lastEmitted = out;
    emit sourceLinesSelected(out);
}

void AsmEditor::applyPalette()
{
    const QPalette pal = palette();
    const bool dark = pal.color(QPalette::Base).lightness() < 128;
    m_lexer->setDarkTheme(dark, pal.color(QPalette::Base), pal.color(QPalette::Text));
    setMarkerBackgroundColor(dark ? QColor(0x6e, 0x5a, 0x10) : QColor(0xff, 0xf1, 0xa8), kMarker);
    setCaretLineBackgroundColor(dark ? QColor(0x2a, 0x33, 0x40) : QColor(0xe8, 0xf0, 0xfe));
    setMarginsBackgroundColor(pal.color(QPalette::Window));
    setMarginsForegroundColor(pal.color(QPalette::PlaceholderText));
    setMarginsFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
}

void AsmEditor::changeEvent(QEvent* e)
{
    QsciScintilla::changeEvent(e);
    if (e->type() == QEvent::PaletteChange)
        applyPalette();
}

} // namespace kf::ui
