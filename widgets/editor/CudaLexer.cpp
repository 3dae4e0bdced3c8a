#include "widgets/editor/CudaLexer.h"

#include "widgets/editor/CudaWords.h"

#include <QApplication>
#include <QFontDatabase>
#include <QPalette>

namespace kf::ui {

namespace {

struct Theme {
    QColor comment, docComment, keyword, builtin, type, number, string, preprocessor, inactive;
};

// Light colours are dark enough for white paper, dark colours bright enough for #1e1e1e;
// both sets keep keywords and builtins far apart in hue so they never look alike.
Theme themeFor(bool dark)
{
    if (dark)
        return {QColor(0x7f, 0x84, 0x8e), QColor(0x6a, 0x99, 0x55), QColor(0x56, 0x9c, 0xd6),
                QColor(0xc5, 0x86, 0xc0), QColor(0x4e, 0xc9, 0xb0), QColor(0xb5, 0xce, 0xa8),
                QColor(0xce, 0x91, 0x78), QColor(0xd7, 0xba, 0x7d), QColor(0x6b, 0x6b, 0x6b)};
    return {QColor(0x6a, 0x73, 0x7d), QColor(0x3b, 0x7a, 0x3b), QColor(0x00, 0x33, 0xb3),
            QColor(0x87, 0x10, 0x94), QColor(0x00, 0x7a, 0x7a), QColor(0x17, 0x50, 0xeb),
            QColor(0x06, 0x7d, 0x17), QColor(0x9e, 0x6a, 0x03), QColor(0xa0, 0xa0, 0xa0)};
}

QByteArray joined(const QStringList& words)
{
    return words.join(u' ').toUtf8();
}

} // namespace

CudaLexer::CudaLexer(QObject* parent)
    : QsciLexerCPP(parent)
    , m_keywords(joined(lexerWords("cuda_keywords.txt")))
    , m_builtins(joined(lexerWords("cuda_builtins.txt") + lexerWords("cuda_types.txt")))
{
    setFoldComments(true);
    setFoldCompact(false);
    setFoldPreprocessor(true);
    const QPalette palette = QApplication::palette();
    setDarkTheme(isDarkPalette(palette), palette.color(QPalette::Base),
                 palette.color(QPalette::Text));
}

const char* CudaLexer::language() const
{
    return "CUDA";
}

const char* CudaLexer::keywords(int set) const
{
    if (set == 1)
        return m_keywords.constData();
    if (set == 2)
        return m_builtins.constData();
    return QsciLexerCPP::keywords(set);
}

QString CudaLexer::description(int style) const
{
    if (style == KeywordSet2)
        return tr("CUDA builtins, intrinsics and types");
    return QsciLexerCPP::description(style);
}

bool CudaLexer::isDarkPalette(const QPalette& palette)
{
    return palette.color(QPalette::Base).lightness() < 128;
}

void CudaLexer::setDarkTheme(bool dark, const QColor& paper, const QColor& text)
{
    m_dark = dark;
    const Theme t = themeFor(dark);
    const QColor background = paper.isValid() ? paper : (dark ? QColor(0x1e, 0x1e, 0x1e) : Qt::white);
    const QColor foreground = text.isValid() ? text : (dark ? QColor(0xd4, 0xd4, 0xd4) : Qt::black);

    QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    setDefaultFont(mono);
    setFont(mono, -1);
    setDefaultPaper(background);
    setPaper(background, -1);
    setDefaultColor(foreground);
    setColor(foreground, -1);

    setColor(t.comment, Comment);
    setColor(t.comment, CommentLine);
    setColor(t.docComment, CommentDoc);
    setColor(t.docComment, CommentLineDoc);
    setColor(t.docComment, CommentDocKeyword);
    setColor(t.keyword, Keyword);
    setColor(t.builtin, KeywordSet2);
    setColor(t.type, GlobalClass);
    setColor(t.number, Number);
    setColor(t.string, DoubleQuotedString);
    setColor(t.string, SingleQuotedString);
    setColor(t.string, RawString);
    setColor(t.string, UnclosedString);
    setColor(t.preprocessor, PreProcessor);
    setColor(t.comment, PreProcessorComment);
    setColor(foreground, Operator);
    setColor(foreground, Identifier);
    // Code in an inactive #if branch keeps its shape but fades.
    for (int style = Default; style <= EscapeSequence; ++style)
        setColor(t.inactive, style + 64);

    QFont bold = mono;
    bold.setBold(true);
    setFont(bold, Keyword);
}

} // namespace kf::ui
