// The locator's reader of workspace sources (widgets/navigation/Locator.h): the kernel scan that
// every CUDA file of a workspace goes through when Ctrl+K opens, and the ranking of the names it
// finds against a query. The first line of the input is the query, the rest the source.
// Every kernel found must sit where the editor will jump: its name at its line and byte column.
#include "widgets/navigation/Locator.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <cstddef>
#include <cstdio>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    const qsizetype nl = bytes.indexOf('\n');
    const QString query = QString::fromUtf8(nl < 0 ? QByteArray() : bytes.left(nl));
    const QString source = QString::fromUtf8(nl < 0 ? bytes : bytes.mid(nl + 1));

    // The scan reads the UTF-8 the editor holds: invalid bytes were already replaced.
    const QList<QByteArray> lines = source.toUtf8().split('\n');
    std::vector<kf::ui::LocatorItem> items;
    for (const kf::ui::KernelSymbol& k : kf::ui::scanKernels(source)) {
        if (k.name.isEmpty() || k.line < 1 || k.column < 1 || k.line > lines.size())
            __builtin_trap();
        const QByteArray name = k.name.toUtf8();
        if (lines.at(k.line - 1).mid(k.column - 1, name.size()) != name) {
            std::fprintf(stderr, "kernel %s at %d:%d, but that line reads: %s\n", name.constData(), k.line, k.column,
                         lines.at(k.line - 1).constData());
            __builtin_trap();   // goTo(line, column) would land beside the name
        }
        items.push_back({kf::ui::LocatorItem::Kind::Kernel, k.name, QStringLiteral("fuzz.cu:%1").arg(k.line),
                         QStringLiteral("/fuzz/fuzz.cu"), k.line, k.column});
        (void)kf::ui::matchScore(k.name, query);
    }
    items.push_back({kf::ui::LocatorItem::Kind::File, query, QStringLiteral("fuzz"), QStringLiteral("/fuzz/") + query, 0, 0});
    const std::vector<kf::ui::LocatorItem> found = kf::ui::locate(items, query, 50);
    if (found.size() > 50 || found.size() > items.size())
        __builtin_trap();
    (void)kf::ui::parseLocatorQuery(query);
    return 0;
}
