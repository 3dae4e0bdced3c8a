#pragma once
// The locator's core (Ctrl+K): the workspace's files and kernels as items, the ranking of items
// against what the user typed, and the kernel scan of CUDA sources. No widgets, so it is tested
// alone (tests/gui/navigation/tst_locator.cpp); LocatorPopup is its view.

#include <QHash>
#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

namespace kf::ui {

/// One thing the locator can open: a file, or a kernel at its line in a file.
struct LocatorItem {
    enum class Kind { File, Kernel };
    Kind kind = Kind::File;
    QString name;     ///< what is matched and shown: "optimized.cu", "softmax_rows"
    QString detail;   ///< shown dimmed beside the name: the file's folder, or "file.cu:12"
    QString path;     ///< absolute path of the file to open
    int line = 0;     ///< kernels: 1-based line of the name
    int column = 0;   ///< kernels: 1-based byte column of the name (KernelEditor::goTo's unit)
};

/// A `__global__` function found in a source.
struct KernelSymbol {
    QString name;
    int line = 0;     ///< 1-based
    int column = 0;   ///< 1-based byte column of the name in its UTF-8 line
};

/// The `__global__` functions defined or declared in `source`, in order. Comments, string
/// literals and preprocessor lines never produce a kernel; attributes between `__global__` and
/// the name (`__launch_bounds__(256)`, `__attribute__((...))`, `[[...]]`) and template heads
/// before it are understood. Cheap: a linear tokenizer pass (engine/analysis/SourceTokens.h).
std::vector<KernelSymbol> scanKernels(const QString& source);

/// How well `query` matches `text`, case-insensitively; higher is better, nullopt: no match.
/// Tiers, best first: the whole text, a prefix, a prefix of a word inside it (after `_`, `.`,
/// `-`, `/`, a space or at a lower-to-upper case change), a substring, then the query's
/// characters in order (fuzzy: "smr" finds "softmax_rows"). Within a tier shorter texts and
/// earlier positions win.
std::optional<int> matchScore(const QString& text, const QString& query);

/// What the user typed, split: "k soft" asks for kernels only, "f task" files only (Qt Creator's
/// locator filters); anything else searches both.
struct LocatorQuery {
    std::optional<LocatorItem::Kind> only;
    QString text;   ///< trimmed
};
LocatorQuery parseLocatorQuery(const QString& input);

/// The items matching `input`, best first, at most `limit`. A query with a `/` matches a file's
/// folder and name ("vector_add/naive"), else the name alone. An empty query lists the items in
/// their given order (files first, as collected). Ties break on the name, then the path.
std::vector<LocatorItem> locate(const std::vector<LocatorItem>& items, const QString& input, int limit = 200);

/// The files a task folder holds that the locator lists: task.json, sources and headers
/// (.cu .cuh .h .hpp .cpp .cc .c .py) and the given extra files (candidates in subfolders, a
/// TorchScript reference), each once, sorted. Reads folders only; cheap.
QStringList taskFiles(const QString& taskDir, const QStringList& extra = {});

/// Items for `files` (absolute paths): one per file, plus one per kernel of each CUDA source
/// (.cu .cuh), read from `buffers` (path -> unsaved editor text) where present, else from disk.
/// `root` shortens the detail column (paths relative to it). Reads files: call it off the GUI
/// thread for large workspaces (QtConcurrent); ~100 files of examples take a few milliseconds.
std::vector<LocatorItem> collectLocatorItems(const QStringList& files, const QString& root,
                                             const QHash<QString, QString>& buffers = {});

} // namespace kf::ui
