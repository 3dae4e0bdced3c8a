#include "engine/analysis/LineInfo.h"

#include "engine/core/Text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <set>
#include <tuple>

namespace kf {

namespace {

using text::trim;
using text::startsWith;

std::vector<std::string_view> splitLines(std::string_view text)
{
    // One entry per editor line: a trailing newline opens an (empty) last line, as in QScintilla.
    std::vector<std::string_view> lines;
    size_t start = 0;
    for (;;) {
        size_t nl = text.find('\n', start);
        std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        lines.push_back(line);
        if (nl == std::string_view::npos)
            break;
        start = nl + 1;
    }
    return lines;
}

/// Reads an integer after optional blanks and commas; advances `s`. False when none is there.
bool readInt(std::string_view& s, int& value)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == ','))
        s.remove_prefix(1);
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc())
        return false;
    s.remove_prefix(static_cast<size_t>(ptr - s.data()));
    return true;
}

/// Reads `"text"`; advances `s`.
bool readQuoted(std::string_view& s, std::string_view& value)
{
    size_t open = s.find('"');
    if (open == std::string_view::npos)
        return false;
    size_t close = s.find('"', open + 1);
    if (close == std::string_view::npos)
        return false;
    value = s.substr(open + 1, close - open - 1);
    s.remove_prefix(close + 1);
    return true;
}

// PTX statements begin with an opcode or a predicate guard; directives, labels ($L__BB0_2:),
// braces and comments carry no code of their own.
bool isPtxInstruction(std::string_view t)
{
    return !t.empty() && (std::isalpha(static_cast<unsigned char>(t.front())) || t.front() == '@');
}

// nvdisasm prefixes every instruction with its offset: `/*0040*/`.
bool isSassInstruction(std::string_view t)
{
    if (!startsWith(t, "/*"))
        return false;
    size_t end = t.find("*/", 2);
    if (end == std::string_view::npos || end == 2)
        return false;
    return std::all_of(t.begin() + 2, t.begin() + static_cast<std::ptrdiff_t>(end),
                       [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

} // namespace

bool sameSourceFile(std::string_view path, std::string_view name)
{
    if (path.empty() || name.empty())
        return false;
    if (path == name)
        return true;
    auto endsAtBoundary = [](std::string_view longer, std::string_view shorter) {
        return longer.size() > shorter.size() && longer.substr(longer.size() - shorter.size()) == shorter &&
               longer[longer.size() - shorter.size() - 1] == '/';
    };
    return endsAtBoundary(path, name) || endsAtBoundary(name, path);
}

std::vector<int> LineMap::asmLinesFor(int sourceLine) const
{
    std::vector<int> out;
    if (sourceLine <= 0)
        return out;
    for (size_t i = 0; i < sourceLineOfAsm.size(); ++i)
        if (sourceLineOfAsm[i] == sourceLine)
            out.push_back(static_cast<int>(i) + 1);
    return out;
}

int LineMap::sourceLineFor(int asmLine) const
{
    if (asmLine < 1 || asmLine > static_cast<int>(sourceLineOfAsm.size()))
        return 0;
    return sourceLineOfAsm[static_cast<size_t>(asmLine) - 1];
}

std::vector<int> LineMap::sourceLines() const
{
    std::set<int> lines(sourceLineOfAsm.begin(), sourceLineOfAsm.end());
    lines.erase(0);
    return {lines.begin(), lines.end()};
}

bool LineMap::hasLineInfo() const
{
    return std::any_of(sourceLineOfAsm.begin(), sourceLineOfAsm.end(), [](int l) { return l > 0; });
}

LineMap mapPtxLines(std::string_view ptx, std::string_view sourceFileName)
{
    const auto lines = splitLines(ptx);
    LineMap map;
    map.sourceLineOfAsm.assign(lines.size(), 0);

    // NVRTC writes the `.file` table after the code, so it is read first.
    std::set<int> userFiles;
    for (auto line : lines) {
        std::string_view t = trim(line);
        if (!startsWith(t, ".file"))
            continue;
        t.remove_prefix(5);
        int index = 0;
        std::string_view name;
        if (readInt(t, index) && readQuoted(t, name) && sameSourceFile(name, sourceFileName))
            userFiles.insert(index);
    }
    if (userFiles.empty())
        return map;

    // Where each header location was last inlined into the user's file. Nested inlining names
    // its parent by location (`inlined_at 2 83 5`), and NVVM emits the parent's .loc first.
    std::map<std::tuple<int, int, int>, int> callSiteOf;
    std::map<std::pair<int, int>, int> callSiteOfLine;
    auto resolve = [&](int file, int line, int col) {
        if (userFiles.count(file))
            return line;
        if (auto it = callSiteOf.find({file, line, col}); it != callSiteOf.end())
            return it->second;
        if (auto it = callSiteOfLine.find({file, line}); it != callSiteOfLine.end())
            return it->second;
        return 0;
    };

    int current = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
        std::string_view t = trim(lines[i]);
        if (startsWith(t, ".loc")) {
            t.remove_prefix(4);
            int file = 0, line = 0, col = 0;
            if (!readInt(t, file) || !readInt(t, line))
                continue;
            (void)readInt(t, col);
            int value = 0;
            if (userFiles.count(file)) {
                value = line; // line 0 is "compiler-generated": no source line
            } else if (size_t at = t.find("inlined_at"); at != std::string_view::npos) {
                std::string_view rest = t.substr(at + 10);
                int f2 = 0, l2 = 0, c2 = 0;
                if (readInt(rest, f2) && readInt(rest, l2)) {
                    (void)readInt(rest, c2);
                    value = resolve(f2, l2, c2);
                }
            }
            callSiteOf[{file, line, col}] = value;
            callSiteOfLine[{file, line}] = value;
            current = value;
        } else if (t == "}" || t.find(".entry") != std::string_view::npos || t.find(".func") != std::string_view::npos) {
            current = 0; // a new function starts without a location
        } else if (isPtxInstruction(t)) {
            map.sourceLineOfAsm[i] = current;
        }
    }
    return map;
}

LineMap mapSassLines(std::string_view sass, std::string_view sourceFileName)
{
    const auto lines = splitLines(sass);
    LineMap map;
    map.sourceLineOfAsm.assign(lines.size(), 0);

    // With -gi one location is a run of comments, innermost first and the user's line last:
    //   //## File "kf/reduce.cuh", line 55 inlined at "kf/reduce.cuh", line 83
    //   //## File "kf/reduce.cuh", line 83 inlined at "kernel.cu", line 8
    //   //## File "kernel.cu", line 8
    // The run's last line that reaches the user's file wins.
    int current = 0;
    bool inRun = false;
    for (size_t i = 0; i < lines.size(); ++i) {
        std::string_view t = trim(lines[i]);
        if (startsWith(t, "//##")) {
            if (!inRun)
                current = 0;
            inRun = true;
            std::string_view rest = t.substr(4);
            std::string_view file;
            int line = 0;
            size_t lineKey = 0;
            if (!readQuoted(rest, file) || (lineKey = rest.find("line")) == std::string_view::npos)
                continue;
            rest.remove_prefix(lineKey + 4);
            if (!readInt(rest, line))
                continue;
            int value = 0;
            if (sameSourceFile(file, sourceFileName)) {
                value = line;
            } else if (size_t at = rest.find("inlined at"); at != std::string_view::npos) {
                rest.remove_prefix(at + 10);
                std::string_view outer;
                int outerLine = 0;
                if (readQuoted(rest, outer) && sameSourceFile(outer, sourceFileName) &&
                    (lineKey = rest.find("line")) != std::string_view::npos) {
                    rest.remove_prefix(lineKey + 4);
                    if (readInt(rest, outerLine))
                        value = outerLine;
                }
            }
            if (value > 0)
                current = value;
            continue;
        }
        inRun = false;
        if (startsWith(t, ".section") || startsWith(t, "//-----"))
            current = 0;
        else if (isSassInstruction(t))
            map.sourceLineOfAsm[i] = current;
    }
    return map;
}

namespace {

// The name after `marker` (up to one of `stops`) on every line that `wanted` accepts, with the
// line's 1-based number.
template <class Wanted>
std::vector<AsmSymbol> symbolLines(std::string_view text, Wanted wanted, std::string_view marker, const char* stops)
{
    std::vector<AsmSymbol> out;
    const auto lines = splitLines(text);
    for (size_t i = 0; i < lines.size(); ++i) {
        const std::string_view t = trim(lines[i]);
        const size_t at = wanted(t) ? t.find(marker) : std::string_view::npos;
        if (at == std::string_view::npos)
            continue;
        const std::string_view rest = trim(t.substr(at + marker.size()));
        if (const std::string_view name = rest.substr(0, rest.find_first_of(stops)); !name.empty())
            out.push_back({std::string(name), static_cast<int>(i) + 1});
    }
    return out;
}

} // namespace

std::vector<AsmSymbol> ptxEntries(std::string_view ptx)
{
    // Not in comments: "// .globl name" repeats the name.
    return symbolLines(ptx, [](std::string_view t) { return !startsWith(t, "//"); }, ".entry", "( \t");
}

std::vector<AsmSymbol> sassFunctions(std::string_view sass)
{
    // The visible banner: //--------------------- .text.NAME --------------------------
    return symbolLines(sass, [](std::string_view t) { return startsWith(t, "//-----"); }, ".text.", " \t");
}

} // namespace kf
