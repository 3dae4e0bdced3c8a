#pragma once
// Find in Workspace's core (Ctrl+Shift+F): which files a workspace search reads, and the search
// itself. No widgets and no GUI-thread state, so FindInWorkspacePanel runs it through
// QtConcurrent and tests call it directly (tests/gui/navigation/tst_findinfiles.cpp).

#include <QHash>
#include <QRegularExpression>
#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>
#include <optional>
#include <vector>

namespace kf::ui {

struct FindOptions {
    QString pattern;
    bool caseSensitive = false;
    bool wholeWords = false;
    bool regex = false;   ///< Perl-style (QRegularExpression); otherwise the pattern is literal
};

/// One match on one line. Columns count UTF-16 units of `lineText` (for painting the match);
/// byteColumn is the 1-based column KernelEditor::goTo takes.
struct FindMatch {
    int line = 0;         ///< 1-based
    int column = 0;       ///< 1-based
    int length = 0;
    int byteColumn = 0;   ///< 1-based, in bytes of the UTF-8 line
    QString lineText;     ///< the whole line, without its end of line
};

struct FileMatches {
    QString path;
    bool fromBuffer = false;   ///< searched the open editor's unsaved text, not the file
    std::vector<FindMatch> matches;
};

struct FindResult {
    std::vector<FileMatches> files;   ///< files with at least one match, in search order
    int matchCount = 0;
    int filesSearched = 0;
    int skippedBinary = 0;   ///< files holding a NUL byte
    int skippedLarge = 0;    ///< files over kMaxFindFileBytes
    int unreadable = 0;
    bool cancelled = false;
    bool truncated = false;  ///< stopped at kMaxFindMatches
    QString error;           ///< a bad pattern: the sentence to show; then nothing was searched

    /// "12 matches in 4 files", with what was skipped or why it stopped.
    QString summary() const;
};

inline constexpr qint64 kMaxFindFileBytes = 4 * 1024 * 1024;
inline constexpr int kMaxFindMatches = 20000;

/// The expression `options` stand for; nullopt with a sentence in `error` when the pattern is
/// empty or not a valid regular expression ("Invalid regular expression at 3: missing )").
std::optional<QRegularExpression> compileFind(const FindOptions& options, QString* error);

/// The files a workspace search reads: every file under `root`, skipping hidden folders and
/// files, sorted. Walks the disk: call it off the GUI thread.
QStringList workspaceSearchFiles(const QString& root);

/// Searches `files` for `options`. Where `buffers` (path -> text) holds a file, its text is
/// searched instead of the disk's (an open editor's unsaved changes). Skips files over
/// kMaxFindFileBytes and binary files (a NUL byte in the first 64 KiB). `cancel`, when set
/// (from any thread), stops the search before the next file with `cancelled` set and the
/// matches so far. `progress(done, total)` is called after each file, on the calling thread.
/// Thread-safe: reads only its arguments and the disk.
FindResult findInFiles(const QStringList& files, const FindOptions& options, const QHash<QString, QString>& buffers = {},
                       const std::atomic_bool* cancel = nullptr,
                       const std::function<void(int done, int total)>& progress = {});

} // namespace kf::ui
