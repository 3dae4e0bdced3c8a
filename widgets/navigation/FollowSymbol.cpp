// Follow Symbol Under Cursor's core (widgets/navigation/FollowSymbol.h).
#include "widgets/navigation/FollowSymbol.h"

#include "engine/analysis/SourceTokens.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>
#include <vector>

namespace kf::ui {

namespace {

using Tokens = std::vector<kf::ScanToken>;

QString tr(const char* text)
{
    return QCoreApplication::translate("kf::ui::FollowSymbol", text);
}

bool isPunct(const Tokens& t, size_t i, const char* text)
{
    return i < t.size() && t[i].kind == kf::ScanToken::Punct && t[i].text == text;
}

bool isIdent(const Tokens& t, size_t i, const char* text)
{
    return i < t.size() && t[i].kind == kf::ScanToken::Ident && t[i].text == text;
}

// The `)` closing the `(` at `open`; t.size() when it never closes.
size_t closeParen(const Tokens& t, size_t open)
{
    int depth = 0;
    for (size_t i = open; i < t.size(); ++i) {
        if (isPunct(t, i, "("))
            ++depth;
        else if (isPunct(t, i, ")") && --depth == 0)
            return i;
    }
    return t.size();
}

// Words that put a call, not a declaration, before `name(`.
bool isStatementWord(const std::string& w)
{
    static const QSet<QString> words{"return", "new", "delete", "sizeof", "alignof", "if", "while", "for", "switch",
                                     "case", "else", "do", "throw", "goto", "co_return", "co_await", "co_yield"};
    return words.contains(QString::fromStdString(w));
}

// `name(` at i: a function definition when a type or qualifier precedes it and a body follows.
bool isFunctionDefinition(const Tokens& t, size_t i)
{
    if (i == 0 || !isPunct(t, i + 1, "("))
        return false;
    const kf::ScanToken& prev = t[i - 1];
    const bool typed = prev.kind == kf::ScanToken::Ident ? !isStatementWord(prev.text)
                                                         : prev.kind == kf::ScanToken::Punct &&
                                                               (prev.text == "*" || prev.text == "&" ||
                                                                prev.text == "&&" || prev.text == ">");
    if (!typed)
        return false;
    for (size_t k = closeParen(t, i + 1) + 1; k < t.size(); ++k) {
        if (isPunct(t, k, "{"))
            return true;
        if (isPunct(t, k, "->") || isPunct(t, k, ":") || isPunct(t, k, "::") || isPunct(t, k, "<") ||
            isPunct(t, k, ">") || isPunct(t, k, "*") || isPunct(t, k, "&"))
            continue;   // a trailing return type, a constructor's initializers
        if (t[k].kind == kf::ScanToken::Ident) {
            if (isPunct(t, k + 1, "("))   // noexcept(...), __attribute__((...)), an initializer
                k = closeParen(t, k + 1);
            continue;
        }
        return false;   // ; = , ) ...: a declaration or a call
    }
    return false;
}

bool isTypeDefinition(const Tokens& t, size_t i)
{
    if (i == 0 || t[i - 1].kind != kf::ScanToken::Ident)
        return false;
    const std::string& prev = t[i - 1].text;
    if (prev == "using")
        return isPunct(t, i + 1, "=");
    if (prev != "struct" && prev != "class" && prev != "union" && prev != "enum")
        return false;
    return isPunct(t, i + 1, "{") || isPunct(t, i + 1, ":") || isIdent(t, i + 1, "final");
}

// The name a typedef starting at `start` declares: `(*name)` or the last identifier before `;`.
size_t typedefName(const Tokens& t, size_t start)
{
    size_t last = t.size();
    for (size_t k = start + 1; k < t.size() && !isPunct(t, k, ";"); ++k) {
        if (isPunct(t, k, "(") && isPunct(t, k + 1, "*") && k + 2 < t.size() &&
            t[k + 2].kind == kf::ScanToken::Ident && isPunct(t, k + 3, ")"))
            return k + 2;
        if (isPunct(t, k, "{")) {   // typedef struct { ... } name;
            for (int depth = 0; k < t.size(); ++k) {
                depth += isPunct(t, k, "{") ? 1 : isPunct(t, k, "}") ? -1 : 0;
                if (depth == 0)
                    break;
            }
        } else if (isPunct(t, k, "[")) {   // array extents come after the name
            while (k < t.size() && !isPunct(t, k, "]"))
                ++k;
        } else if (t[k].kind == kf::ScanToken::Ident)
            last = k;
    }
    return last;
}

int lineOfOffset(const QString& text, qsizetype offset)
{
    return int(QStringView(text).left(offset).count(QLatin1Char('\n'))) + 1;
}

} // namespace

QString includedFile(const QString& lineText)
{
    static const QRegularExpression re(QStringLiteral(R"(^\s*#\s*include\s*["<]([^">]+)[">])"));
    const QRegularExpressionMatch m = re.match(lineText);
    return m.hasMatch() ? m.captured(1).trimmed() : QString();
}

QString identifierAt(const QString& lineText, int index)
{
    auto isWord = [&](int i) {
        return i >= 0 && i < lineText.size() && (lineText.at(i).isLetterOrNumber() || lineText.at(i) == u'_');
    };
    if (!isWord(index))
        --index;   // the cursor right after a word
    if (!isWord(index))
        return {};
    int start = index, end = index;
    while (isWord(start - 1))
        --start;
    while (isWord(end + 1))
        ++end;
    if (lineText.at(start).isDigit())
        return {};
    return lineText.mid(start, end - start + 1);
}

std::optional<FollowTarget> findDefinition(const QString& source, const QString& name)
{
    if (name.isEmpty())
        return std::nullopt;
    // A #define first: the tokenizer does not mark which macro token is the name.
    const QRegularExpression define(QStringLiteral("^[ \\t]*#[ \\t]*define[ \\t]+(%1)\\b")
                                        .arg(QRegularExpression::escape(name)),
                                    QRegularExpression::MultilineOption);
    std::optional<FollowTarget> best;
    if (const QRegularExpressionMatch m = define.match(source); m.hasMatch()) {
        const int line = lineOfOffset(source, m.capturedStart(1));
        const qsizetype lineStart = source.lastIndexOf(QLatin1Char('\n'), m.capturedStart(1) - 1) + 1;
        const int column = int(QStringView(source).mid(lineStart, m.capturedStart(1) - lineStart).toUtf8().size()) + 1;
        best = FollowTarget{QString(), line, column};
    }
    const std::string n = name.toStdString();
    const Tokens t = kf::scanTokens(source.toStdString());
    for (size_t i = 0; i < t.size(); ++i) {
        if (best && (t[i].line > best->line))
            break;   // the #define comes first
        if (t[i].macro || t[i].kind != kf::ScanToken::Ident)
            continue;
        if (t[i].text == "typedef") {
            const size_t k = typedefName(t, i);
            if (k < t.size() && t[k].text == n)
                return FollowTarget{QString(), t[k].line, t[k].column};
        }
        if (t[i].text == n && (isFunctionDefinition(t, i) || isTypeDefinition(t, i)))
            return FollowTarget{QString(), t[i].line, t[i].column};
    }
    return best;
}

QStringList followSearchFiles(const QString& taskDir)
{
    QStringList out;
    const QFileInfoList entries =
        QDir(taskDir).entryInfoList({"*.cu", "*.cuh", "*.h", "*.hpp", "*.cpp"}, QDir::Files | QDir::Readable, QDir::Name);
    for (const QFileInfo& fi : entries)
        out.append(QDir::cleanPath(fi.absoluteFilePath()));
    return out;
}

FollowOutcome followSymbol(const QString& filePath, const QString& text, int line, int index, const QString& taskDir,
                           const std::function<std::optional<QString>(const QString& path)>& readText)
{
    const QStringList lines = text.split(QLatin1Char('\n'));
    if (line < 1 || line > lines.size())
        return {std::nullopt, tr("Nothing to follow here.")};
    const QString lineText = lines.at(line - 1);

    if (const QString include = includedFile(lineText); !include.isEmpty()) {
        const QString fileDir = QFileInfo(filePath).absolutePath();
        for (const QString& dir : {fileDir, taskDir}) {
            const QString candidate = QDir::cleanPath(QDir(dir).absoluteFilePath(include));
            if (!dir.isEmpty() && QFileInfo(candidate).isFile())
                return {FollowTarget{candidate, 0, 0}, QString()};
        }
        return {std::nullopt, tr("Cannot find %1 next to %2 or in the task folder.")
                                  .arg(include, QFileInfo(filePath).fileName())};
    }

    const QString name = identifierAt(lineText, index);
    if (name.isEmpty())
        return {std::nullopt, tr("No symbol under the cursor.")};
    if (auto here = findDefinition(text, name)) {
        here->path = filePath;
        return {here, QString()};
    }
    const QString self = QDir::cleanPath(QFileInfo(filePath).absoluteFilePath());
    for (const QString& path : followSearchFiles(taskDir)) {
        if (path == self)
            continue;
        const std::optional<QString> other = readText(path);
        if (!other)
            continue;
        if (auto there = findDefinition(*other, name)) {
            there->path = path;
            return {there, QString()};
        }
    }
    return {std::nullopt, tr("No definition of %1 in this task.").arg(name)};
}

} // namespace kf::ui
