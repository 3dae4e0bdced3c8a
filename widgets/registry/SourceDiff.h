#pragma once
// A line diff of two kernel sources in unified-diff form (hunks of changes with three lines of
// context), so two versions of a registry kernel can be compared line by line.

#include <QString>

#include <vector>

namespace kf::ui {

/// One line of a hunk. Line numbers are 1-based; 0 on the side the line is not on.
struct DiffLine {
    enum class Kind { Context, Added, Removed };
    Kind kind = Kind::Context;
    int oldLine = 0;
    int newLine = 0;
    QString text; ///< without its line break

    bool operator==(const DiffLine&) const = default;
};

/// A run of changes with its context, as `diff -u` prints it.
struct DiffHunk {
    int oldStart = 0; ///< first old line; for an empty range, the line before it (0 at the top)
    int oldCount = 0;
    int newStart = 0;
    int newCount = 0;
    std::vector<DiffLine> lines;

    /// "@@ -3,7 +3,8 @@" (a count of 1 is left out, as GNU diff does).
    QString header() const;
};

/// The difference between an old and a new text. A plain value: cheap to move, safe to pass
/// between threads.
struct SourceDiff {
    std::vector<DiffHunk> hunks;
    int added = 0;
    int removed = 0;
    /// One text uses CRLF line breaks and the other LF. Lines are compared without their breaks,
    /// so this alone makes no hunk; the view says so instead.
    bool lineEndingsDiffer = false;

    bool identical() const { return added == 0 && removed == 0; }
    /// "3 lines added, 1 removed", "1 line added, 0 removed", or "no differences".
    QString summary() const;
    /// The whole diff as `diff -u` text, with "--- oldName" and "+++ newName" headers.
    QString unifiedText(const QString& oldName, const QString& newName) const;

    /// Compares `oldText` with `newText` line by line (Wu–Manber–Myers O(NP) through dtl).
    /// CRLF, CR and LF all end a line; a missing final line break is not a difference.
    static SourceDiff compute(const QString& oldText, const QString& newText, int context = 3);
};

} // namespace kf::ui
