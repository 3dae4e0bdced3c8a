#include "widgets/diagnostics/SanitizerDiagnostics.h"

#include <QFileInfo>
#include <QStringList>

#include <algorithm>
#include <cstdint>

namespace kf::ui {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

QString dim3(const std::array<std::int64_t, 3>& v)
{
    return QStringLiteral("(%1,%2,%3)").arg(v[0]).arg(v[1]).arg(v[2]);
}

// The tool names the file as NVRTC was given it (the candidate's full path, or its name).
bool inCandidate(const std::string& file, const QString& candidatePath)
{
    if (file.empty())
        return true;
    const QString f = qs(file);
    return f == candidatePath || QFileInfo(f).fileName() == QFileInfo(candidatePath).fileName();
}

kf::Diagnostic base(const std::string& tool, const QString& candidatePath)
{
    kf::Diagnostic d;
    d.severity = kf::Diagnostic::Severity::Error;
    d.source = "compute-sanitizer " + (tool.empty() ? std::string("(no tool)") : tool);
    d.file = candidatePath.toStdString();
    return d;
}

} // namespace

std::vector<kf::Diagnostic> sanitizerDiagnostics(const kf::protocol::SanitizerSection& section, const QString& candidatePath)
{
    std::vector<kf::Diagnostic> out;
    for (const kf::protocol::SanitizerFinding& f : section.findings) {
        kf::Diagnostic d = base(f.tool, candidatePath);
        if (!inCandidate(f.where.file, candidatePath))
            d.file = f.where.file;
        d.line = std::max(0, f.where.line);
        d.code = f.kind;
        d.message = f.summary();
        if (f.count > 1)
            d.message += " (reported " + std::to_string(f.count) + " times)";
        out.push_back(d);
        // racecheck's pair: the other access gets a note at its own line, so both ends of the race
        // are marked in the editor.
        if (f.other && f.other->line > 0 && (f.other->line != f.where.line || f.other->file != f.where.file)) {
            kf::Diagnostic n = base(f.tool, candidatePath);
            n.severity = kf::Diagnostic::Severity::Note;
            if (!inCandidate(f.other->file, candidatePath))
                n.file = f.other->file;
            n.line = f.other->line;
            n.code = f.kind;
            QString text = QStringLiteral("compute-sanitizer %1: the other access of the race at line %2")
                               .arg(qs(f.tool))
                               .arg(f.where.line);
            if (!f.other->access.empty())
                text += QStringLiteral(": %1").arg(qs(f.other->access));
            if (f.other->block)
                text += QStringLiteral(", block %1").arg(dim3(*f.other->block));
            if (f.other->thread)
                text += QStringLiteral(" thread %1").arg(dim3(*f.other->thread));
            n.message = text.toStdString();
            out.push_back(n);
        }
    }
    // A tool that failed is an error of the verification, not a finding at a line.
    for (const kf::protocol::SanitizerToolRun& t : section.tools) {
        if (t.error.empty())
            continue;
        kf::Diagnostic d = base(t.tool, candidatePath);
        d.code = "tool_error";
        d.message = "compute-sanitizer " + t.tool + ": " + t.error;
        out.push_back(d);
    }
    return out;
}

namespace {

QStringList linesOf(const QString& text)
{
    QStringList lines = text.split(QLatin1Char('\n'));
    for (QString& l : lines)
        if (l.endsWith(QLatin1Char('\r')))
            l.chop(1);
    return lines;
}

// For each line of `a` (0-based), its line in `b`, or -1 when it is not in the longest common
// subsequence of the two. Common head and tail are matched first, so the table covers only what
// changed; a change too large for the table maps only the head and the tail.
std::vector<int> lineMap(const QStringList& a, const QStringList& b)
{
    const int n = int(a.size()), m = int(b.size());
    std::vector<int> map(size_t(n), -1);
    int head = 0;
    while (head < n && head < m && a[head] == b[head]) {
        map[size_t(head)] = head;
        ++head;
    }
    int tail = 0;
    while (tail < n - head && tail < m - head && a[n - 1 - tail] == b[m - 1 - tail]) {
        map[size_t(n - 1 - tail)] = m - 1 - tail;
        ++tail;
    }
    const int rows = n - head - tail, cols = m - head - tail;
    constexpr std::int64_t kMaxCells = 16'000'000;
    if (rows <= 0 || cols <= 0 || std::int64_t(rows) * cols > kMaxCells)
        return map;
    // lcs[i][j]: the longest common subsequence of a[head+i..] and b[head+j..].
    std::vector<std::uint32_t> lcs(size_t(rows + 1) * size_t(cols + 1), 0);
    auto at = [&](int i, int j) -> std::uint32_t& { return lcs[size_t(i) * size_t(cols + 1) + size_t(j)]; };
    for (int i = rows - 1; i >= 0; --i)
        for (int j = cols - 1; j >= 0; --j)
            at(i, j) = a[head + i] == b[head + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    int i = 0, j = 0;
    while (i < rows && j < cols) {
        if (a[head + i] == b[head + j]) {
            map[size_t(head + i)] = head + j;
            ++i;
            ++j;
        } else if (at(i + 1, j) >= at(i, j + 1)) {
            ++i;
        } else {
            ++j;
        }
    }
    return map;
}

} // namespace

std::vector<kf::Diagnostic> followEdits(const std::vector<kf::Diagnostic>& diagnostics, const QString& filePath,
                                        const QString& verifiedText, const QString& currentText)
{
    if (verifiedText == currentText)
        return diagnostics;
    const QStringList before = linesOf(verifiedText);
    const QStringList after = linesOf(currentText);
    const std::vector<int> map = lineMap(before, after);
    std::vector<kf::Diagnostic> out;
    bool primaryKept = true;   // a note belongs to the diagnostic before it, and goes with it
    for (const kf::Diagnostic& d : diagnostics) {
        const bool note = d.severity == kf::Diagnostic::Severity::Note;
        if (note && !primaryKept)
            continue;
        bool keep = true;
        kf::Diagnostic moved = d;
        if (d.line > 0 && inCandidate(d.file, filePath)) {
            // A line the verified text did not have, or one edited or deleted since: the finding
            // no longer describes the code.
            const int now = d.line <= int(map.size()) ? map[size_t(d.line - 1)] : -1;
            keep = now >= 0;
            moved.line = now + 1;
        }
        if (!note)
            primaryKept = keep;
        if (keep)
            out.push_back(std::move(moved));
    }
    return out;
}

} // namespace kf::ui
