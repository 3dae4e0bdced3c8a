// The locator's core (widgets/navigation/Locator.h).
#include "widgets/navigation/Locator.h"

#include "engine/analysis/SourceTokens.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSet>

#include <algorithm>

namespace kf::ui {

namespace {

// Names between __global__ and the kernel's name that take a parenthesised argument.
bool isAttributeCall(const std::string& name)
{
    const bool dunder = name.size() > 4 && name.compare(0, 2, "__") == 0 && name.compare(name.size() - 2, 2, "__") == 0;
    return dunder || name == "alignas" || name == "decltype";
}

// Index of the token closing the bracket that opens at `open` (`(`, `[` or `<`); tokens.size()
// when it never closes.
size_t skipBalanced(const std::vector<kf::ScanToken>& t, size_t open)
{
    const std::string o = t[open].text;
    const std::string c = o == "(" ? ")" : o == "[" ? "]" : ">";
    int depth = 0;
    for (size_t i = open; i < t.size(); ++i) {
        if (t[i].kind != kf::ScanToken::Punct)
            continue;
        if (t[i].text == o)
            ++depth;
        else if (t[i].text == c)
            --depth;
        else if (c == ">" && t[i].text == ">>")
            depth -= 2;
        if (depth <= 0)
            return i;
        if (t[i].text == ";" || t[i].text == "{")   // never past a statement
            return t.size();
    }
    return t.size();
}

bool isWordStart(const QString& text, int p)
{
    if (p == 0)
        return true;
    const QChar prev = text.at(p - 1), cur = text.at(p);
    if (prev == u'_' || prev == u'.' || prev == u'-' || prev == u'/' || prev == u' ')
        return cur != u'_';
    return prev.isLower() && cur.isUpper();
}

const QSet<QString>& sourceSuffixes()
{
    static const QSet<QString> s{"cu", "cuh", "h", "hpp", "cpp", "cc", "c", "py"};
    return s;
}

} // namespace

std::vector<KernelSymbol> scanKernels(const QString& source)
{
    const std::vector<kf::ScanToken> t = kf::scanTokens(source.toStdString());
    std::vector<KernelSymbol> out;
    for (size_t i = 0; i < t.size(); ++i) {
        if (t[i].kind != kf::ScanToken::Ident || t[i].text != "__global__" || t[i].macro)
            continue;
        for (size_t j = i + 1; j < t.size(); ++j) {
            const kf::ScanToken& k = t[j];
            if (k.macro)
                break;
            if (k.kind == kf::ScanToken::Punct) {
                if (k.text == "[" || k.text == "<") {   // [[attributes]], a template return type
                    j = skipBalanced(t, j);
                    continue;
                }
                if (k.text == "::" || k.text == "*" || k.text == "&")
                    continue;
                break;   // ; { } ( = ...: not a function head
            }
            if (k.kind != kf::ScanToken::Ident)
                break;
            const bool call = j + 1 < t.size() && t[j + 1].kind == kf::ScanToken::Punct && t[j + 1].text == "(";
            if (!call)
                continue;   // a qualifier or the return type
            if (isAttributeCall(k.text)) {
                j = skipBalanced(t, j + 1);
                continue;
            }
            out.push_back({QString::fromStdString(k.text), k.line, k.column});
            i = j;
            break;
        }
    }
    return out;
}

std::optional<int> matchScore(const QString& text, const QString& query)
{
    if (query.isEmpty())
        return 0;
    const QString t = text.toLower(), q = query.toLower();
    const int len = std::min<int>(int(text.size()), 999);
    auto score = [len](int tier, int pos) { return tier * 1'000'000 - std::min(pos, 999) * 1000 - len; };
    if (t == q)
        return score(5, 0);
    if (t.startsWith(q))
        return score(4, 0);
    // Lower-casing can change a text's length (rare letters): then camelCase is not told apart.
    const QString& cased = t.size() == text.size() ? text : t;
    int substring = -1;
    for (int p = int(t.indexOf(q)); p >= 0; p = int(t.indexOf(q, p + 1))) {
        if (isWordStart(cased, p))
            return score(3, p);
        if (substring < 0)
            substring = p;
    }
    if (substring >= 0)
        return score(2, substring);
    // Fuzzy: every query character in order; a tighter span is better.
    int first = -1, at = 0;
    for (const QChar c : q) {
        at = int(t.indexOf(c, at));
        if (at < 0)
            return std::nullopt;
        if (first < 0)
            first = at;
        ++at;
    }
    return score(1, at - first);
}

LocatorQuery parseLocatorQuery(const QString& input)
{
    LocatorQuery q;
    QString rest = input;
    if (rest.startsWith(QLatin1String("k "))) {
        q.only = LocatorItem::Kind::Kernel;
        rest = rest.mid(2);
    } else if (rest.startsWith(QLatin1String("f "))) {
        q.only = LocatorItem::Kind::File;
        rest = rest.mid(2);
    }
    q.text = rest.trimmed();
    return q;
}

std::vector<LocatorItem> locate(const std::vector<LocatorItem>& items, const QString& input, int limit)
{
    const LocatorQuery q = parseLocatorQuery(input);
    std::vector<std::pair<int, const LocatorItem*>> scored;
    for (const LocatorItem& item : items) {
        if (q.only && item.kind != *q.only)
            continue;
        // A slash in the query matches a file's folder too: "vector_add/naive".
        const bool byPath = item.kind == LocatorItem::Kind::File && q.text.contains(QLatin1Char('/')) &&
                            !item.detail.isEmpty();
        if (const auto s = matchScore(byPath ? item.detail + QLatin1Char('/') + item.name : item.name, q.text))
            scored.emplace_back(*s, &item);
    }
    if (!q.text.isEmpty())
        std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
            if (a.first != b.first)
                return a.first > b.first;
            const int byName = a.second->name.compare(b.second->name, Qt::CaseInsensitive);
            if (byName != 0)
                return byName < 0;
            return a.second->path < b.second->path;
        });
    std::vector<LocatorItem> out;
    for (const auto& [score, item] : scored) {
        if (int(out.size()) >= limit)
            break;
        out.push_back(*item);
    }
    return out;
}

QStringList taskFiles(const QString& taskDir, const QStringList& extra)
{
    QSet<QString> seen;
    QStringList out;
    auto add = [&](const QString& path) {
        const QString clean = QDir::cleanPath(path);
        if (!seen.contains(clean) && QFileInfo(clean).isFile()) {
            seen.insert(clean);
            out.append(clean);
        }
    };
    const QFileInfoList entries = QDir(taskDir).entryInfoList(QDir::Files | QDir::Readable, QDir::Name);
    for (const QFileInfo& fi : entries)
        if (fi.fileName() == QLatin1String("task.json") || sourceSuffixes().contains(fi.suffix().toLower()))
            add(fi.absoluteFilePath());
    for (const QString& path : extra)
        add(QDir(taskDir).absoluteFilePath(path));
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<LocatorItem> collectLocatorItems(const QStringList& files, const QString& root,
                                             const QHash<QString, QString>& buffers)
{
    const QDir rootDir(root);
    std::vector<LocatorItem> fileItems, kernelItems;
    for (const QString& path : files) {
        const QFileInfo fi(path);
        const QString relative = root.isEmpty() ? path : rootDir.relativeFilePath(path);
        const QString folder = QFileInfo(relative).path();
        fileItems.push_back({LocatorItem::Kind::File, fi.fileName(), folder == QLatin1String(".") ? QString() : folder,
                             path, 0, 0});
        const QString suffix = fi.suffix().toLower();
        if (suffix != QLatin1String("cu") && suffix != QLatin1String("cuh"))
            continue;
        QString text;
        if (const auto it = buffers.constFind(path); it != buffers.constEnd()) {
            text = *it;
        } else {
            QFile f(path);
            if (fi.size() > 4 * 1024 * 1024 || !f.open(QIODevice::ReadOnly))
                continue;   // the file item stays: opening it says why it cannot be read
            text = QString::fromUtf8(f.readAll());
        }
        for (const KernelSymbol& k : scanKernels(text))
            kernelItems.push_back({LocatorItem::Kind::Kernel, k.name, QStringLiteral("%1:%2").arg(relative).arg(k.line),
                                   path, k.line, k.column});
    }
    fileItems.insert(fileItems.end(), kernelItems.begin(), kernelItems.end());
    return fileItems;
}

} // namespace kf::ui
