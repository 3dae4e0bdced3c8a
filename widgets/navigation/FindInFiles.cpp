// Find in Workspace's core (widgets/navigation/FindInFiles.h).
#include "widgets/navigation/FindInFiles.h"

#include <QCoreApplication>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>

#include <algorithm>

namespace kf::ui {

namespace {

QString tr(const char* text)
{
    return QCoreApplication::translate("kf::ui::FindInFiles", text);
}

void searchText(const QString& text, const QRegularExpression& re, FileMatches& into, int* total)
{
    int lineNo = 0;
    qsizetype start = 0;
    while (start <= text.size() && *total < kMaxFindMatches) {
        qsizetype end = text.indexOf(QLatin1Char('\n'), start);
        if (end < 0)
            end = text.size();
        ++lineNo;
        QString line = text.mid(start, end - start);
        if (line.endsWith(QLatin1Char('\r')))
            line.chop(1);
        QRegularExpressionMatchIterator it = re.globalMatch(line);
        while (it.hasNext() && *total < kMaxFindMatches) {
            const QRegularExpressionMatch m = it.next();
            if (m.capturedLength() == 0)
                continue;   // `^`, `\b`, `x*`: nothing to show or select
            const int col = int(m.capturedStart()) + 1;
            into.matches.push_back(
                {lineNo, col, int(m.capturedLength()), int(line.left(col - 1).toUtf8().size()) + 1, line});
            ++*total;
        }
        if (end == text.size())
            break;
        start = end + 1;
    }
}

} // namespace

QString FindResult::summary() const
{
    if (!error.isEmpty())
        return error;
    const auto count = [](int n, const char* one, const char* many) {
        return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? tr(one) : tr(many));
    };
    QString s = matchCount == 0
                    ? tr("No matches in %1").arg(count(filesSearched, "file", "files"))
                    : tr("%1 in %2").arg(count(matchCount, "match", "matches"), count(int(files.size()), "file", "files"));
    QStringList skipped;
    if (skippedBinary > 0)
        skipped << tr("%1 binary").arg(skippedBinary);
    if (skippedLarge > 0)
        skipped << tr("%1 over 4 MiB").arg(skippedLarge);
    if (unreadable > 0)
        skipped << tr("%1 unreadable").arg(unreadable);
    if (!skipped.isEmpty())
        s += tr(" (skipped %1)").arg(skipped.join(QStringLiteral(", ")));
    if (truncated)
        s += tr("; stopped after %1 matches: narrow the search").arg(kMaxFindMatches);
    if (cancelled)
        s += tr("; cancelled");
    return s;
}

std::optional<QRegularExpression> compileFind(const FindOptions& options, QString* error)
{
    if (options.pattern.isEmpty()) {
        if (error)
            *error = tr("Type something to search for.");
        return std::nullopt;
    }
    QString pattern = options.regex ? options.pattern : QRegularExpression::escape(options.pattern);
    if (options.wholeWords)
        pattern = QStringLiteral("(?<!\\w)(?:%1)(?!\\w)").arg(pattern);
    QRegularExpression re(pattern, options.caseSensitive ? QRegularExpression::NoPatternOption
                                                         : QRegularExpression::CaseInsensitiveOption);
    if (!re.isValid()) {
        if (error)
            *error = tr("Invalid regular expression at %1: %2. Fix the pattern or turn off Regular expression.")
                         .arg(re.patternErrorOffset())
                         .arg(re.errorString());
        return std::nullopt;
    }
    return re;
}

QStringList workspaceSearchFiles(const QString& root)
{
    QStringList out;
    if (root.isEmpty())
        return out;
    // No QDir::Hidden: hidden files and folders (.git, .cache) are not the user's workspace.
    QDirIterator it(root, QDir::Files | QDir::Readable | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
    while (it.hasNext())
        out.append(QDir::cleanPath(it.next()));
    std::sort(out.begin(), out.end());
    return out;
}

FindResult findInFiles(const QStringList& files, const FindOptions& options, const QHash<QString, QString>& buffers,
                       const std::atomic_bool* cancel, const std::function<void(int, int)>& progress)
{
    FindResult r;
    const std::optional<QRegularExpression> re = compileFind(options, &r.error);
    if (!re)
        return r;
    const int total = int(files.size());
    for (int i = 0; i < total; ++i) {
        if (cancel && cancel->load()) {
            r.cancelled = true;
            break;
        }
        if (r.matchCount >= kMaxFindMatches) {
            r.truncated = true;
            break;
        }
        const QString& path = files.at(i);
        FileMatches fm{path, false, {}};
        if (const auto it = buffers.constFind(path); it != buffers.constEnd()) {
            fm.fromBuffer = true;
            searchText(*it, *re, fm, &r.matchCount);
        } else {
            QFile f(path);
            if (f.size() > kMaxFindFileBytes) {
                ++r.skippedLarge;
            } else if (!f.open(QIODevice::ReadOnly)) {
                ++r.unreadable;
            } else {
                const QByteArray bytes = f.readAll();
                if (bytes.left(64 * 1024).contains('\0'))
                    ++r.skippedBinary;
                else
                    searchText(QString::fromUtf8(bytes), *re, fm, &r.matchCount);
            }
        }
        ++r.filesSearched;
        if (!fm.matches.empty())
            r.files.push_back(std::move(fm));
        if (progress)
            progress(i + 1, total);
    }
    if (r.matchCount >= kMaxFindMatches)
        r.truncated = true;
    return r;
}

} // namespace kf::ui
