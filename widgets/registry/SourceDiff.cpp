#include "widgets/registry/SourceDiff.h"

#include <QObject>

#include <dtl/dtl.hpp>

#include <algorithm>

namespace kf::ui {

namespace {

std::vector<QString> splitLines(QString text)
{
    std::vector<QString> lines;
    if (text.isEmpty())
        return lines;
    text.replace(QStringLiteral("\r\n"), QStringLiteral("\n"));
    text.replace(QLatin1Char('\r'), QLatin1Char('\n'));
    if (text.endsWith(QLatin1Char('\n')))
        text.chop(1);
    for (const QString& line : text.split(QLatin1Char('\n')))
        lines.push_back(line);
    return lines;
}

// "N" or "N,M": GNU diff leaves out a count of 1.
QString range(int start, int count)
{
    return count == 1 ? QString::number(start) : QStringLiteral("%1,%2").arg(start).arg(count);
}

DiffHunk makeHunk(const std::vector<DiffLine>& all, size_t begin, size_t end)
{
    DiffHunk h;
    int oldBefore = 0;
    int newBefore = 0;
    for (size_t i = 0; i < begin; ++i) {
        oldBefore += all[i].kind != DiffLine::Kind::Added;
        newBefore += all[i].kind != DiffLine::Kind::Removed;
    }
    h.lines.assign(all.begin() + static_cast<std::ptrdiff_t>(begin), all.begin() + static_cast<std::ptrdiff_t>(end));
    for (const DiffLine& l : h.lines) {
        h.oldCount += l.kind != DiffLine::Kind::Added;
        h.newCount += l.kind != DiffLine::Kind::Removed;
    }
    h.oldStart = h.oldCount > 0 ? oldBefore + 1 : oldBefore;
    h.newStart = h.newCount > 0 ? newBefore + 1 : newBefore;
    return h;
}

} // namespace

QString DiffHunk::header() const
{
    return QStringLiteral("@@ -%1 +%2 @@").arg(range(oldStart, oldCount), range(newStart, newCount));
}

QString SourceDiff::summary() const
{
    if (identical())
        return QObject::tr("no differences");
    return QObject::tr("%1 %2 added, %3 removed")
        .arg(added)
        .arg(added == 1 ? QObject::tr("line") : QObject::tr("lines"))
        .arg(removed);
}

QString SourceDiff::unifiedText(const QString& oldName, const QString& newName) const
{
    QString out = QStringLiteral("--- %1\n+++ %2\n").arg(oldName, newName);
    for (const DiffHunk& h : hunks) {
        out += h.header() + QLatin1Char('\n');
        for (const DiffLine& l : h.lines) {
            const QChar mark = l.kind == DiffLine::Kind::Added ? QLatin1Char('+')
                               : l.kind == DiffLine::Kind::Removed ? QLatin1Char('-')
                                                                  : QLatin1Char(' ');
            out += mark + l.text + QLatin1Char('\n');
        }
    }
    return out;
}

SourceDiff SourceDiff::compute(const QString& oldText, const QString& newText, int context)
{
    SourceDiff d;
    d.lineEndingsDiffer = oldText.contains(QStringLiteral("\r\n")) != newText.contains(QStringLiteral("\r\n"));
    const std::vector<QString> a = splitLines(oldText);
    const std::vector<QString> b = splitLines(newText);

    dtl::Diff<QString, std::vector<QString>> diff(a, b, /*deletesFirst=*/true);
    diff.compose();
    std::vector<DiffLine> all;
    int oldLine = 0;
    int newLine = 0;
    for (const auto& [text, info] : diff.getSes().getSequence()) {
        DiffLine l;
        l.text = text;
        if (info.type == dtl::SES_ADD) {
            l.kind = DiffLine::Kind::Added;
            l.newLine = ++newLine;
            ++d.added;
        } else if (info.type == dtl::SES_DELETE) {
            l.kind = DiffLine::Kind::Removed;
            l.oldLine = ++oldLine;
            ++d.removed;
        } else {
            l.oldLine = ++oldLine;
            l.newLine = ++newLine;
        }
        all.push_back(std::move(l));
    }

    // Changes closer than two contexts share a hunk, as in `diff -u`.
    const size_t ctx = static_cast<size_t>(std::max(0, context));
    size_t i = 0;
    while (i < all.size()) {
        if (all[i].kind == DiffLine::Kind::Context) {
            ++i;
            continue;
        }
        const size_t begin = i > ctx ? i - ctx : 0;
        size_t lastChange = i;
        size_t j = i + 1;
        while (j < all.size()) {
            if (all[j].kind != DiffLine::Kind::Context) {
                lastChange = j;
            } else if (j - lastChange > 2 * ctx) {
                break;
            }
            ++j;
        }
        const size_t end = std::min(all.size(), lastChange + ctx + 1);
        d.hunks.push_back(makeHunk(all, begin, end));
        i = end;
    }
    return d;
}

} // namespace kf::ui
