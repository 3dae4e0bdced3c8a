#include "widgets/editor/KernelEditor.h"

#include "widgets/editor/CudaLexer.h"
#include "widgets/editor/CudaCompletions.h"

#include <QEvent>
#include <QFontDatabase>
#include <QImage>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <tuple>

namespace kf::ui {

namespace {

using Severity = kf::Diagnostic::Severity;

QColor mix(const QColor& a, const QColor& b, double t)
{
    return QColor::fromRgbF(float(a.redF() * (1 - t) + b.redF() * t),
                            float(a.greenF() * (1 - t) + b.greenF() * t),
                            float(a.blueF() * (1 - t) + b.blueF() * t));
}

QColor severityColor(Severity s, bool dark)
{
    switch (s) {
    case Severity::Error: return dark ? QColor(0xf1, 0x4c, 0x4c) : QColor(0xd7, 0x1a, 0x1a);
    case Severity::Warning: return dark ? QColor(0xe0, 0xb0, 0x30) : QColor(0xc0, 0x7d, 0x00);
    case Severity::Remark:
    case Severity::Note: break;
    }
    return dark ? QColor(0x4d, 0xa3, 0xff) : QColor(0x1a, 0x6f, 0xd6);
}

// Margin symbols are drawn here rather than taken from the style so they look the same on
// every platform theme and stay crisp at the margin's size.
QImage markerImage(Severity s, int size)
{
    QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter p(&image);
    p.setRenderHint(QPainter::Antialiasing);
    const QRectF box(1, 1, size - 2, size - 2);
    const QColor fill = severityColor(s, false);
    p.setPen(Qt::NoPen);
    p.setBrush(fill);
    QPen mark(Qt::white, size / 7.0, Qt::SolidLine, Qt::RoundCap);
    if (s == Severity::Warning) {
        QPainterPath triangle;
        triangle.moveTo(box.center().x(), box.top());
        triangle.lineTo(box.right(), box.bottom());
        triangle.lineTo(box.left(), box.bottom());
        triangle.closeSubpath();
        p.drawPath(triangle);
        p.setPen(mark);
        const double x = box.center().x();
        p.drawLine(QPointF(x, box.top() + size * 0.35), QPointF(x, box.bottom() - size * 0.3));
        p.drawPoint(QPointF(x, box.bottom() - size * 0.13));
    } else {
        p.drawEllipse(box);
        p.setPen(mark);
        const QRectF in = box.adjusted(size * 0.3, size * 0.3, -size * 0.3, -size * 0.3);
        if (s == Severity::Error) {
            p.drawLine(in.topLeft(), in.bottomRight());
            p.drawLine(in.topRight(), in.bottomLeft());
        } else {
            const double x = box.center().x();
            p.drawPoint(QPointF(x, in.top()));
            p.drawLine(QPointF(x, in.top() + size * 0.18), QPointF(x, in.bottom()));
        }
    }
    return image;
}

int severityRank(Severity s)
{
    return static_cast<int>(s); // Error < Warning < Remark < Note
}

bool isWordByte(char c)
{
    const auto u = static_cast<unsigned char>(c);
    return std::isalnum(u) || c == '_' || u >= 0x80;
}

bool isSpaceByte(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

constexpr int kSymbolMargin = 1;
constexpr int kFoldMargin = 2;
constexpr int kMarkerSize = 14;

} // namespace

KernelEditor::KernelEditor(QWidget* parent)
    : QsciScintilla(parent)
    , m_lexer(new CudaLexer(this))
{
    setUtf8(true);
    setEolMode(EolUnix);

    // The completion source attaches itself to the lexer, so create it before handing the
    // lexer to the editor.
    m_completions = new CudaCompletions(m_lexer);
    setLexer(m_lexer);

    setAutoCompletionSource(AcsAll);
    setAutoCompletionThreshold(2);
    setAutoCompletionCaseSensitivity(true);
    setAutoCompletionReplaceWord(false);
    setAutoCompletionUseSingle(AcusNever);

    setAutoIndent(true);
    setIndentationsUseTabs(false);
    setIndentationWidth(4);
    setTabWidth(4);
    setBackspaceUnindents(true);
    setBraceMatching(SloppyBraceMatch);
    setCaretLineVisible(true);
    setCaretWidth(2);
    setScrollWidthTracking(true);
    setScrollWidth(1);

    // Margins: 0 line numbers (no symbols), 1 diagnostic symbols, 2 folding.
    setMarginType(0, NumberMargin);
    setMarginMarkerMask(0, 0);
    setMarginType(kSymbolMargin, SymbolMargin);
    setMarginWidth(kSymbolMargin, kMarkerSize + 4);
    setMarginSensitivity(kSymbolMargin, false);
    setFolding(BoxedTreeFoldStyle, kFoldMargin);

    m_errorMarker = markerDefine(markerImage(Severity::Error, kMarkerSize));
    m_warningMarker = markerDefine(markerImage(Severity::Warning, kMarkerSize));
    m_infoMarker = markerDefine(markerImage(Severity::Note, kMarkerSize));
    m_highlightMarker = markerDefine(Background);
    setMarginMarkerMask(kSymbolMargin,
                        (1 << m_errorMarker) | (1 << m_warningMarker) | (1 << m_infoMarker));

    m_errorIndicator = indicatorDefine(SquigglePixmapIndicator);
    m_warningIndicator = indicatorDefine(SquigglePixmapIndicator);
    m_infoIndicator = indicatorDefine(DotsIndicator);
    for (int indicator : {m_errorIndicator, m_warningIndicator, m_infoIndicator})
        SendScintilla(SCI_INDICSETUNDER, indicator, false);

    SendScintilla(SCI_SETMOUSEDWELLTIME, 400);
    connect(this, &QsciScintillaBase::SCN_DWELLSTART, this,
            [this](int position, int x, int y) { showToolTipAt(position, x, y); });
    connect(this, &QsciScintillaBase::SCN_DWELLEND, this, [] { QToolTip::hideText(); });

    connect(this, &QsciScintilla::cursorPositionChanged, this, [this](int line, int) {
        if (line + 1 != m_lastCursorLine) {
            m_lastCursorLine = line + 1;
            emit cursorLineChanged(m_lastCursorLine);
        }
    });
    m_lastCursorLine = 1;
    connect(this, &QsciScintilla::linesChanged, this, &KernelEditor::updateLineNumberWidth);

    applyTheme(CudaLexer::isDarkPalette(palette()));
    updateLineNumberWidth();
}

void KernelEditor::updateLineNumberWidth()
{
    const int digits = std::max(2, static_cast<int>(QString::number(std::max(1, lines())).size()));
    if (digits == m_lineDigits)
        return;
    m_lineDigits = digits;
    setMarginWidth(0, QString(digits + 1, u'9'));
}

// --- diagnostics ------------------------------------------------------------------------------

int KernelEditor::positionAt(int line, int column) const
{
    if (line < 1 || line > lines())
        return -1;
    const auto start = static_cast<int>(SendScintilla(SCI_POSITIONFROMLINE, line - 1));
    const auto end = static_cast<int>(SendScintilla(SCI_GETLINEENDPOSITION, line - 1));
    return std::clamp(start + std::max(column, 1) - 1, start, end);
}

KernelEditor::Range KernelEditor::squiggleRange(int line, int column) const
{
    const auto lineStart = static_cast<int>(SendScintilla(SCI_POSITIONFROMLINE, line - 1));
    const auto lineEnd = static_cast<int>(SendScintilla(SCI_GETLINEENDPOSITION, line - 1));
    auto at = [this](int pos) { return static_cast<char>(SendScintilla(SCI_GETCHARAT, pos)); };
    auto wholeLine = [&] {
        Range r{lineStart, lineEnd};
        while (r.start < r.end && isSpaceByte(at(r.start)))
            ++r.start;
        while (r.end > r.start && isSpaceByte(at(r.end - 1)))
            --r.end;
        return r;
    };
    if (column <= 0 || lineStart + column - 1 >= lineEnd)
        return wholeLine();

    int start = lineStart + column - 1;
    while (start < lineEnd && isSpaceByte(at(start))) // a caret on blanks means the next token
        ++start;
    if (start >= lineEnd)
        return wholeLine();
    int end = start + 1;
    const char first = at(start);
    if (isWordByte(first)) {
        while (end < lineEnd && isWordByte(at(end)))
            ++end;
    } else if (first == '"' || first == '\'') {
        while (end < lineEnd && at(end) != first)
            end += at(end) == '\\' ? 2 : 1;
        end = std::min(end + 1, lineEnd);
    } else if (std::strchr("+-*/%=<>!&|^~:?.", first)) {
        while (end < lineEnd && end - start < 3 && std::strchr("+-*/%=<>!&|^~:?.", at(end)))
            ++end;
    }
    return {start, end};
}

int KernelEditor::indicatorFor(Severity severity) const
{
    switch (severity) {
    case Severity::Error: return m_errorIndicator;
    case Severity::Warning: return m_warningIndicator;
    case Severity::Remark:
    case Severity::Note: break;
    }
    return m_infoIndicator;
}

int KernelEditor::markerFor(Severity severity) const
{
    switch (severity) {
    case Severity::Error: return m_errorMarker;
    case Severity::Warning: return m_warningMarker;
    case Severity::Remark:
    case Severity::Note: break;
    }
    return m_infoMarker;
}

void KernelEditor::setDiagnostics(const std::vector<kf::Diagnostic>& diagnostics)
{
    clearDiagnostics();
    std::map<std::tuple<int, int, int>, int> groupOf; // (indicator, start, end) -> group
    for (const auto& d : diagnostics) {
        const int index = static_cast<int>(m_marks.size());
        Mark mark{d, -1};
        if (d.line >= 1 && d.line <= lines()) {
            mark.markerHandle = markerAdd(d.line - 1, markerFor(d.severity));
            const Range r = squiggleRange(d.line, d.column);
            if (r.end > r.start) {
                const auto key = std::make_tuple(indicatorFor(d.severity), r.start, r.end);
                auto [it, inserted] = groupOf.emplace(key, static_cast<int>(m_groups.size()));
                if (inserted)
                    m_groups.emplace_back();
                m_groups[static_cast<size_t>(it->second)].push_back(index);
            }
        }
        m_marks.push_back(std::move(mark));
    }
    for (const auto& [key, group] : groupOf) {
        const auto [indicator, start, end] = key;
        SendScintilla(SCI_SETINDICATORCURRENT, indicator);
        SendScintilla(SCI_SETINDICATORVALUE, group + 1);
        SendScintilla(SCI_INDICATORFILLRANGE, start, end - start);
    }
}

void KernelEditor::clearDiagnostics()
{
    const auto length = static_cast<int>(SendScintilla(SCI_GETLENGTH));
    for (int indicator : {m_errorIndicator, m_warningIndicator, m_infoIndicator}) {
        SendScintilla(SCI_SETINDICATORCURRENT, indicator);
        SendScintilla(SCI_INDICATORCLEARRANGE, 0, length);
    }
    for (int marker : {m_errorMarker, m_warningMarker, m_infoMarker})
        markerDeleteAll(marker);
    m_marks.clear();
    m_groups.clear();
}

std::vector<kf::Diagnostic> KernelEditor::sorted(std::vector<int> indices) const
{
    std::sort(indices.begin(), indices.end());
    indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
    std::stable_sort(indices.begin(), indices.end(), [this](int a, int b) {
        return severityRank(m_marks[size_t(a)].diagnostic.severity) <
               severityRank(m_marks[size_t(b)].diagnostic.severity);
    });
    std::vector<kf::Diagnostic> out;
    for (int i : indices)
        out.push_back(m_marks[size_t(i)].diagnostic);
    return out;
}

std::vector<kf::Diagnostic> KernelEditor::diagnosticsAt(int line, int column) const
{
    const int pos = positionAt(line, column);
    if (pos < 0)
        return {};
    std::vector<int> indices;
    for (int indicator : {m_errorIndicator, m_warningIndicator, m_infoIndicator}) {
        const auto value = static_cast<int>(SendScintilla(SCI_INDICATORVALUEAT, indicator, pos));
        if (value >= 1 && value <= static_cast<int>(m_groups.size())) {
            const auto& group = m_groups[static_cast<size_t>(value - 1)];
            indices.insert(indices.end(), group.begin(), group.end());
        }
    }
    return sorted(std::move(indices));
}

std::vector<kf::Diagnostic> KernelEditor::diagnosticsOnLine(int line) const
{
    std::vector<int> indices;
    for (size_t i = 0; i < m_marks.size(); ++i) {
        const int handle = m_marks[i].markerHandle;
        if (handle >= 0 && SendScintilla(SCI_MARKERLINEFROMHANDLE, handle) == line - 1)
            indices.push_back(static_cast<int>(i));
    }
    return sorted(std::move(indices));
}

QString KernelEditor::describe(const kf::Diagnostic& d)
{
    QString text = QString::fromUtf8(severityName(d.severity).data(),
                                     qsizetype(severityName(d.severity).size()));
    // A compiler code is worth its number; another tool's message names the tool and says its kind.
    if (!d.code.empty() && d.source.empty())
        text += QStringLiteral(" #") + QString::fromStdString(d.code);
    return text + QStringLiteral(": ") + QString::fromStdString(d.message);
}

QString KernelEditor::diagnosticToolTip(int line, int column) const
{
    QStringList parts;
    for (const auto& d : diagnosticsAt(line, column))
        parts << describe(d);
    return parts.join(u'\n');
}

void KernelEditor::showToolTipAt(int position, int x, int y)
{
    int marginsWidth = 0;
    const auto margins = static_cast<int>(SendScintilla(SCI_GETMARGINS));
    for (int m = 0; m < margins; ++m)
        marginsWidth += static_cast<int>(SendScintilla(SCI_GETMARGINWIDTHN, m));

    std::vector<kf::Diagnostic> found;
    if (x < marginsWidth) {
        const auto pos = SendScintilla(SCI_POSITIONFROMPOINT, marginsWidth, y);
        found = diagnosticsOnLine(static_cast<int>(SendScintilla(SCI_LINEFROMPOSITION, pos)) + 1);
    } else {
        // The character under the pointer, not the nearest caret position (which is the next
        // character over the right half of a glyph).
        auto pos = static_cast<int>(SendScintilla(SCI_CHARPOSITIONFROMPOINTCLOSE, x, y));
        if (pos < 0)
            pos = position;
        if (pos >= 0) {
            const auto line = static_cast<int>(SendScintilla(SCI_LINEFROMPOSITION, pos));
            const auto column = pos - static_cast<int>(SendScintilla(SCI_POSITIONFROMLINE, line)) + 1;
            found = diagnosticsAt(line + 1, column);
        }
    }
    if (found.empty()) {
        QToolTip::hideText();
        return;
    }
    QStringList parts;
    for (const auto& d : found) {
        QString text = describe(d).toHtmlEscaped();
        text.replace(u'\n', QStringLiteral("<br>"));
        const QString name = QString::fromUtf8(severityName(d.severity).data());
        // Bold severity word, coloured like its squiggle.
        text.replace(0, name.size(),
                     QStringLiteral("<b style=\"color:%1\">%2</b>")
                         .arg(severityColor(d.severity, isDarkTheme()).name(), name));
        parts << text;
    }
    QToolTip::showText(viewport()->mapToGlobal(QPoint(x, y)),
                       QStringLiteral("<qt>") + parts.join(QStringLiteral("<br>")) +
                           QStringLiteral("</qt>"),
                       viewport());
}

// --- navigation and highlighting ---------------------------------------------------------------

void KernelEditor::goTo(int line, int column)
{
    const int target = std::clamp(line, 1, std::max(1, lines()));
    const int pos = positionAt(target, column);
    SendScintilla(SCI_ENSUREVISIBLEENFORCEPOLICY, target - 1);
    SendScintilla(SCI_GOTOPOS, std::max(pos, 0));
    setFocus(Qt::OtherFocusReason);
}

void KernelEditor::setHighlightedLines(const QList<int>& lines)
{
    markerDeleteAll(m_highlightMarker);
    m_highlighted.clear();
    for (int line : lines) {
        if (line >= 1 && line <= this->lines() && !m_highlighted.contains(line)) {
            markerAdd(line - 1, m_highlightMarker);
            m_highlighted << line;
        }
    }
}

QList<int> KernelEditor::highlightedLines() const
{
    return m_highlighted;
}

// --- theme -------------------------------------------------------------------------------------

void KernelEditor::setDarkTheme(bool dark)
{
    applyTheme(dark);
}

bool KernelEditor::isDarkTheme() const
{
    return m_lexer->isDarkTheme();
}

void KernelEditor::changeEvent(QEvent* event)
{
    QsciScintilla::changeEvent(event);
    if (m_applyingTheme)
        return;
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange)
        applyTheme(CudaLexer::isDarkPalette(palette()));
}

void KernelEditor::applyTheme(bool dark)
{
    m_applyingTheme = true;
    const QPalette pal = palette();
    // Use the palette's own colours when it agrees with the requested theme; otherwise fall
    // back to the lexer's defaults for that theme.
    const bool paletteAgrees = CudaLexer::isDarkPalette(pal) == dark;
    m_lexer->setDarkTheme(dark, paletteAgrees ? pal.color(QPalette::Base) : QColor(),
                          paletteAgrees ? pal.color(QPalette::Text) : QColor());
    const QColor paper = m_lexer->QsciLexer::defaultPaper();
    const QColor text = m_lexer->QsciLexer::defaultColor();

    const QColor marginBack = dark ? paper.lighter(125) : paper.darker(104);
    const QColor marginText = mix(text, marginBack, 0.45);
    setMarginsBackgroundColor(marginBack);
    setMarginsForegroundColor(marginText);
    setMarginsFont(m_lexer->QsciLexer::defaultFont());
    setFoldMarginColors(marginBack, marginBack);
    for (int marker = int(SC_MARKNUM_FOLDEREND); marker <= int(SC_MARKNUM_FOLDEROPEN); ++marker) {
        SendScintilla(SCI_MARKERSETFORE, marker, marginBack);
        SendScintilla(SCI_MARKERSETBACK, marker, marginText);
    }

    setCaretForegroundColor(text);
    setCaretLineBackgroundColor(mix(paper, text, dark ? 0.08 : 0.06));
    setSelectionBackgroundColor(mix(paper, pal.color(QPalette::Highlight), dark ? 0.5 : 0.35));
    resetSelectionForegroundColor();
    setMatchedBraceBackgroundColor(mix(paper, QColor(0x3c, 0xb3, 0x71), 0.35));
    setMatchedBraceForegroundColor(text);
    setUnmatchedBraceForegroundColor(severityColor(Severity::Error, dark));
    // Lines mapped from the assembly view: a warm tint, unlike the neutral caret line.
    setMarkerBackgroundColor(dark ? QColor(0x4a, 0x3f, 0x12) : QColor(0xff, 0xf0, 0xb3),
                             m_highlightMarker);

    setIndicatorForegroundColor(severityColor(Severity::Error, dark), m_errorIndicator);
    setIndicatorForegroundColor(severityColor(Severity::Warning, dark), m_warningIndicator);
    setIndicatorForegroundColor(severityColor(Severity::Note, dark), m_infoIndicator);
    m_applyingTheme = false;
}

} // namespace kf::ui
