// Find in Workspace's reader of workspace files (widgets/navigation/FindInFiles.h): every file
// under the workspace is read, checked for NUL bytes and size, decoded and searched line by
// line. The input is written to a file and searched from disk, then again as an editor buffer.
// The first byte picks the options and one of a few patterns (or the input's second line, taken
// literally); every match must lie inside its line, and its byte column must be the one the
// editor's goTo needs.
#include "widgets/navigation/FindInFiles.h"

#include <QByteArray>
#include <QFile>
#include <QHash>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <cstddef>
#include <cstdint>

namespace {

void check(const kf::ui::FindResult& r)
{
    if (!r.error.isEmpty())
        return;
    int count = 0;
    for (const kf::ui::FileMatches& f : r.files) {
        for (const kf::ui::FindMatch& m : f.matches) {
            if (m.line < 1 || m.column < 1 || m.length < 1 || m.column - 1 + m.length > m.lineText.size())
                __builtin_trap();
            if (m.byteColumn != m.lineText.left(m.column - 1).toUtf8().size() + 1)
                __builtin_trap();
            if (m.lineText.contains(QLatin1Char('\n')))
                __builtin_trap();
            ++count;
        }
    }
    if (count != r.matchCount || count > kf::ui::kMaxFindMatches)
        __builtin_trap();
    (void)r.summary();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size == 0)
        return 0;
    static QTemporaryDir dir;
    if (!dir.isValid())
        __builtin_trap();
    const QByteArray bytes(reinterpret_cast<const char*>(data + 1), qsizetype(size - 1));
    const unsigned pick = data[0];

    kf::ui::FindOptions o;
    o.caseSensitive = pick & 1;
    o.wholeWords = pick & 2;
    static const char* const patterns[] = {"a", "\xc3\xa9", "__global__", "\\w+", "(?i)stra\xc3\x9f" "e", "x|$", "\\bfloat\\b"};
    const unsigned which = (pick >> 2) % 8;
    if (which < 7) {
        o.pattern = QString::fromUtf8(patterns[which]);
        o.regex = which >= 3;
    } else {
        const QList<QByteArray> lines = bytes.split('\n');
        o.pattern = QString::fromUtf8(lines.size() > 1 ? lines.at(1) : lines.at(0));
    }

    const QString path = dir.filePath(QStringLiteral("input.cu"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(bytes) != bytes.size())
        __builtin_trap();
    f.close();
    check(kf::ui::findInFiles({path}, o));
    check(kf::ui::findInFiles({path}, o, {{path, QString::fromUtf8(bytes)}}));
    return 0;
}
