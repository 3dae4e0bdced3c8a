#include "widgets/assembly/AsmLexer.h"

#include <Qsci/qsciscintilla.h>

#include <QColor>
#include <QFontDatabase>
#include <QRegularExpression>

#include <vector>

namespace kf::ui {

namespace {

bool isWordChar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '$' || c == '%';
}

// SASS registers (with an optional .reuse suffix) and PTX's %-prefixed ones.
bool isRegister(const QByteArray& w)
{
    static const QRegularExpression sass(
        QStringLiteral("^!?(U?R[0-9]+|U?RZ|U?P[0-7T]|SR_[A-Z0-9_.]+|B[0-9]+)(\\.reuse)?$"));
    return w.startsWith('%') || (w.startsWith('!') && w.size() > 1 && w[1] == '%') ||
           sass.match(QString::fromLatin1(w)).hasMatch();
}

bool isNumber(const QByteArray& w)
{
    static const QRegularExpression num(QStringLiteral("^-?(0[xXfFdD][0-9a-fA-F]+|[0-9]+(\\.[0-9]+)?)$"));
    return num.match(QString::fromLatin1(w)).hasMatch();
}

} // namespace

AsmLexer::AsmLexer(QObject* parent) : QsciLexerCustom(parent)
{
    setDefaultFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    setDarkTheme(false, QColor(Qt::white), QColor(Qt::black));
}

const char* AsmLexer::language() const { return "Assembly"; }

QString AsmLexer::description(int style) const
{
    switch (style) {
    case Default: return tr("Default");
    case Comment: return tr("Comment");
    case LineInfo: return tr("Line info");
    case Directive: return tr("Directive");
    case Opcode: return tr("Opcode");
    case Register: return tr("Register");
    case Number: return tr("Number");
    case Label: return tr("Label");
    case String: return tr("String");
    default: return {};
    }
}

void AsmLexer::setDarkTheme(bool dark, const QColor& paper, const QColor& text)
{
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    struct Colour { Style style; const char* light; const char* dark; bool bold; };
    static const Colour colours[] = {
        {Comment, "#6a737d", "#8b949e", false},   {LineInfo, "#9aa0a6", "#6e7681", false},
        {Directive, "#6f42c1", "#d2a8ff", false}, {Opcode, "#005cc5", "#79c0ff", true},
        {Register, "#b35900", "#ffa657", false},  {Number, "#22863a", "#7ee787", false},
        {Label, "#d73a49", "#ff7b72", true},      {String, "#032f62", "#a5d6ff", false},
    };
    setDefaultPaper(paper);
    setDefaultColor(text);
    setPaper(paper, -1);
    setColor(text, Default);
    setFont(mono, -1);
    for (const auto& c : colours) {
        setColor(QColor(QLatin1String(dark ? c.dark : c.light)), c.style);
        QFont f = mono;
        f.setBold(c.bold);
        f.setItalic(c.style == LineInfo);
        setFont(f, c.style);
    }
}

void AsmLexer::styleText(int start, int end)
{
    if (!editor() || end <= start)
        return;
    const QByteArray text = editor()->bytes(start, end).left(end - start);
    startStyling(start);
    qsizetype from = 0;
    while (from < text.size()) {
        qsizetype nl = text.indexOf('\n', from);
        qsizetype to = nl < 0 ? text.size() : nl + 1;
        styleLine(text.mid(from, to - from));
        from = to;
    }
}

void AsmLexer::styleLine(const QByteArray& line)
{
    std::vector<int> style(static_cast<size_t>(line.size()), Default);
    auto fill = [&](qsizetype a, qsizetype b, int s) {
        for (qsizetype k = a; k < b && k < line.size(); ++k)
            style[static_cast<size_t>(k)] = s;
    };
    qsizetype i = 0;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
        ++i;
    if (line.mid(i, 4) == "//##") {
        fill(i, line.size(), LineInfo);
    } else {
        bool expectOpcode = true; // the first word of a statement, after offset and predicate
        while (i < line.size()) {
            const char c = line[i];
            if (c == '/' && i + 1 < line.size() && line[i + 1] == '/') {
                fill(i, line.size(), Comment);
                break;
            }
            if (c == '/' && i + 1 < line.size() && line[i + 1] == '*') { // SASS offsets /*0040*/
                qsizetype close = line.indexOf("*/", i + 2);
                qsizetype stop = close < 0 ? line.size() : close + 2;
                fill(i, stop, Comment);
                i = stop;
                continue;
            }
            if (c == '"') {
                qsizetype close = line.indexOf('"', i + 1);
                qsizetype stop = close < 0 ? line.size() : close + 1;
                fill(i, stop, String);
                i = stop;
                continue;
            }
            if (c == '@') { // predicate guard: @P0, @!P1, @%p2
                qsizetype j = i + 1;
                while (j < line.size() && (isWordChar(line[j]) || line[j] == '!'))
                    ++j;
                fill(i, j, Register);
                i = j;
                continue;
            }
            if (isWordChar(c) || (c == '-' && i + 1 < line.size() && line[i + 1] >= '0' && line[i + 1] <= '9') ||
                (c == '!' && i + 1 < line.size() && isWordChar(line[i + 1]))) {
                qsizetype j = i + 1;
                while (j < line.size() && isWordChar(line[j]))
                    ++j;
                const QByteArray word = line.mid(i, j - i);
                int s = Default;
                if (j < line.size() && line[j] == ':' && expectOpcode) {
                    s = Label;
                    ++j;
                } else if (word.startsWith('.')) {
                    s = Directive;
                } else if (isNumber(word)) {
                    s = Number;
                } else if (isRegister(word)) {
                    s = Register;
                } else if (expectOpcode) {
                    s = Opcode;
                }
                if (s != Label)
                    expectOpcode = false;
                fill(i, j, s);
                i = j;
                continue;
            }
            ++i;
        }
    }
    qsizetype runStart = 0;
    for (qsizetype k = 1; k <= line.size(); ++k)
        if (k == line.size() || style[static_cast<size_t>(k)] != style[static_cast<size_t>(runStart)]) {
            setStyling(static_cast<int>(k - runStart), style[static_cast<size_t>(runStart)]);
            runStart = k;
        }
}

} // namespace kf::ui
