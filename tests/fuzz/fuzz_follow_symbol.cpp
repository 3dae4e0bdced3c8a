// F2's reader of workspace sources (widgets/navigation/FollowSymbol.h): the `#include` line
// matcher, the identifier under a cursor and the token-based definition finder, over a source
// as a workspace file or an editor buffer holds it. The first byte places the cursor; the rest
// is the source. A definition found must sit where the editor will jump: the name at its line
// and byte column.
#include "widgets/navigation/FollowSymbol.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

#include <cstddef>
#include <cstdint>

namespace {

void checkTarget(const std::optional<kf::ui::FollowTarget>& t, const QString& source, const QString& name)
{
    if (!t)
        return;
    const QList<QByteArray> lines = source.toUtf8().split('\n');
    if (t->line < 1 || t->column < 1 || t->line > lines.size())
        __builtin_trap();
    const QByteArray n = name.toUtf8();
    if (lines.at(t->line - 1).mid(t->column - 1, n.size()) != n)
        __builtin_trap();   // goTo(line, column) would land beside the name
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size == 0)
        return 0;
    const int cursor = data[0];
    const QString source = QString::fromUtf8(reinterpret_cast<const char*>(data + 1), qsizetype(size - 1));
    const QStringList lines = source.split(QLatin1Char('\n'));
    int names = 0;
    for (int i = 0; i < lines.size() && names < 8; ++i) {
        const QString& line = lines.at(i);
        (void)kf::ui::includedFile(line);
        const QString name = kf::ui::identifierAt(line, cursor % (int(line.size()) + 1));
        if (name.isEmpty())
            continue;
        if (name.at(0).isDigit() || !line.contains(name))
            __builtin_trap();
        ++names;
        checkTarget(kf::ui::findDefinition(source, name), source, name);
        // The whole F2 path, with no task folder to read (a folder that does not exist).
        const kf::ui::FollowOutcome o = kf::ui::followSymbol(
            QStringLiteral("/nonexistent-kf-fuzz/a.cu"), source, i + 1, cursor % (int(line.size()) + 1),
            QStringLiteral("/nonexistent-kf-fuzz"), [](const QString&) { return std::optional<QString>(); });
        if (o.target.has_value() == !o.message.isEmpty())
            __builtin_trap();   // exactly one of a target and a sentence
    }
    return 0;
}
