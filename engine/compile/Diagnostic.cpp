#include "engine/compile/Diagnostic.h"

#include "engine/core/Text.h"

#include <sstream>

namespace kf {

std::string_view severityName(Diagnostic::Severity s)
{
    switch (s) {
    case Diagnostic::Severity::Error: return "error";
    case Diagnostic::Severity::Warning: return "warning";
    case Diagnostic::Severity::Remark: return "remark";
    case Diagnostic::Severity::Note: return "note";
    }
    return "error";
}

static Diagnostic::Severity severityFromText(const std::string& s)
{
    if (s.find("warning") != std::string::npos)
        return Diagnostic::Severity::Warning;
    if (s.find("remark") != std::string::npos)
        return Diagnostic::Severity::Remark;
    return Diagnostic::Severity::Error; // "error", "catastrophic error", "internal error"
}

// NVRTC's log can hold NUL bytes between the front end's part and ptxas' part (a ptxas error
// after a NUL was once lost this way), so a NUL ends a line like a newline does.
static std::vector<std::string> splitLines(std::string_view text)
{
    std::vector<std::string> lines;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find_first_of(std::string_view("\n\0", 2), start);
        if (end == std::string_view::npos)
            end = text.size();
        std::string line(text.substr(start, end - start));
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        lines.push_back(std::move(line));
        if (end == text.size())
            break;
        start = end + 1;
    }
    return lines;
}

static bool isCaretLine(const std::string& line)
{
    auto caret = line.find('^');
    return caret != std::string::npos && line.find_first_not_of(" \t") == caret &&
           line.find_first_not_of(" \t", caret + 1) == std::string::npos;
}

// Display column of each character when tabs advance to the next multiple of 8, which is how
// the front end lays out the caret under an echoed line containing tabs.
static int columnFromCaret(const std::string& echo, const std::string& caretLine)
{
    int caretDisplay = 0;
    for (char c : caretLine) {
        if (c == '^')
            break;
        caretDisplay = c == '\t' ? (caretDisplay / 8 + 1) * 8 : caretDisplay + 1;
    }
    // NVRTC indents the echoed source by two spaces; the caret line shares that indent.
    const int indent = echo.rfind("  ", 0) == 0 ? 2 : 0;
    int display = 0;
    for (size_t i = static_cast<size_t>(indent); i < echo.size(); ++i) {
        if (display + indent >= caretDisplay)
            return static_cast<int>(i) - indent + 1;
        display = echo[i] == '\t' ? ((display + indent) / 8 + 1) * 8 - indent : display + 1;
    }
    // Caret past the end of the line (e.g. "expected a ';'" at end of line).
    return static_cast<int>(echo.size()) - indent + 1 + (caretDisplay - indent - display);
}

namespace {

using text::startsWith;

/// `file(line): severity[ #code[-D]]: message`. Hand-written rather than std::regex, whose
/// backtracking recurses once per character and overflows the stack on a megabyte-long line.
bool parseHeader(std::string_view line, Diagnostic& d)
{
    for (size_t close = line.find("): "); close != std::string_view::npos; close = line.find("): ", close + 1)) {
        size_t open = close;
        while (open > 0 && line[open - 1] >= '0' && line[open - 1] <= '9')
            --open;
        if (open == close || open == 0 || line[open - 1] != '(' || close - open > 9)
            continue;
        std::string_view rest = line.substr(close + 3);
        static constexpr std::string_view severities[] = {"catastrophic error", "internal error", "error", "warning", "remark"};
        std::string_view severity;
        for (auto s : severities)
            if (startsWith(rest, s)) {
                severity = s;
                break;
            }
        if (severity.empty())
            continue;
        rest.remove_prefix(severity.size());
        std::string code;
        if (startsWith(rest, " #")) {
            size_t k = 2;
            while (k < rest.size() && rest[k] >= '0' && rest[k] <= '9')
                ++k;
            if (k == 2)
                continue;
            if (startsWith(rest.substr(k), "-D"))
                k += 2;
            code = std::string(rest.substr(2, k - 2));
            rest.remove_prefix(k);
        }
        if (!startsWith(rest, ": "))
            continue;
        d.file = std::string(line.substr(0, open - 1));
        d.line = std::stoi(std::string(line.substr(open, close - open)));
        d.severity = severityFromText(std::string(severity));
        d.code = std::move(code);
        d.message = std::string(rest.substr(2));
        return true;
    }
    return false;
}

/// `ptxas application ptx input, line 29; error   : Unknown modifier '.instruction'` (or
/// `; fatal   : Parsing error near ';': syntax error`): ptxas on the PTX NVRTC made (bad inline
/// asm). The PTX line is kept; Compiler maps it to the source.
bool parsePtxInputLine(std::string_view line, Diagnostic& d)
{
    static constexpr std::string_view lead = "ptxas application ptx input, line ";
    if (!startsWith(line, lead))
        return false;
    std::string_view rest = line.substr(lead.size());
    int ptxLine = 0;
    size_t i = 0;
    while (i < rest.size() && i < 9 && rest[i] >= '0' && rest[i] <= '9')
        ptxLine = ptxLine * 10 + (rest[i++] - '0');
    if (i == 0 || i >= rest.size() || rest[i] != ';')
        return false;
    rest.remove_prefix(i + 1);
    rest.remove_prefix(std::min(rest.size(), rest.find_first_not_of(" \t")));
    // "fatal" is what ptxas says of a syntax error ("Parsing error near ';'"): an error too.
    const bool warning = startsWith(rest, "warning");
    if (!warning && !startsWith(rest, "error") && !startsWith(rest, "fatal"))
        return false;
    const size_t colon = rest.find(':');
    if (colon == std::string_view::npos)
        return false;
    std::string_view text = rest.substr(colon + 1);
    text.remove_prefix(std::min(text.size(), text.find_first_not_of(" \t")));
    d.file = "ptxas";
    d.severity = warning ? Diagnostic::Severity::Warning : Diagnostic::Severity::Error;
    d.ptxLine = ptxLine;
    d.message = std::string(text) + " (PTX line " + std::to_string(ptxLine) + ")";
    return true;
}

/// `ptxas error   : message`, `nvlink fatal : …`, `ptxas warning : …` (also indented).
bool parseToolLine(std::string_view line, Diagnostic& d)
{
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos)
        return false;
    line.remove_prefix(first);
    if (parsePtxInputLine(line, d))
        return true;
    static constexpr std::string_view tools[] = {"ptxas", "nvlink", "nvrtc", "fatbinary"};
    for (auto tool : tools) {
        if (!startsWith(line, tool))
            continue;
        std::string_view rest = line.substr(tool.size());
        if (startsWith(rest, " "))
            rest.remove_prefix(1);
        static constexpr std::string_view kinds[] = {"error", "warning", "fatal"};
        for (auto kind : kinds) {
            if (!startsWith(rest, kind))
                continue;
            std::string_view tail = rest.substr(kind.size());
            const size_t colon = tail.find_first_not_of(" \t");
            if (colon == std::string_view::npos || tail[colon] != ':')
                return false;
            tail.remove_prefix(colon + 1);
            const size_t text = tail.find_first_not_of(" \t");
            d.file = std::string(tool);
            d.severity = kind == "warning" ? Diagnostic::Severity::Warning : Diagnostic::Severity::Error;
            d.message = text == std::string_view::npos ? std::string() : std::string(tail.substr(text));
            return true;
        }
        return false;
    }
    return false;
}

} // namespace

std::vector<Diagnostic> parseNvrtcLog(std::string_view log)
{
    std::vector<Diagnostic> out;
    auto lines = splitLines(log);
    for (size_t i = 0; i < lines.size(); ++i) {
        Diagnostic d;
        if (parseHeader(lines[i], d)) {
            // Body: continuation lines, then optionally an echoed source line and its caret.
            std::vector<std::string> body;
            size_t j = i + 1;
            Diagnostic next;
            while (j < lines.size() && !lines[j].empty() && !parseHeader(lines[j], next) && !parseToolLine(lines[j], next))
                body.push_back(lines[j++]);
            if (body.size() >= 2 && isCaretLine(body.back())) {
                const std::string& echo = body[body.size() - 2];
                d.column = columnFromCaret(echo, body.back());
                d.sourceLine = echo.rfind("  ", 0) == 0 ? echo.substr(2) : echo;
                body.resize(body.size() - 2);
            }
            for (const auto& extra : body) {
                auto first = extra.find_first_not_of(" \t");
                if (first != std::string::npos)
                    d.message += "\n" + extra.substr(first);
            }
            out.push_back(std::move(d));
            i = j - 1;
        } else if (parseToolLine(lines[i], d)) {
            out.push_back(std::move(d));
        }
    }
    return out;
}

std::vector<Diagnostic> failedBuildDiagnostics(std::string_view log, std::string_view fileName, std::string_view status)
{
    std::vector<Diagnostic> out = parseNvrtcLog(log);
    for (const auto& d : out)
        if (d.severity == Diagnostic::Severity::Error)
            return out;
    // No line had a form we know: the log's own words, so a failed build never reads "0 errors".
    Diagnostic d;
    d.file = std::string(fileName);
    std::string text;
    for (const auto& line : splitLines(log)) {
        const auto first = line.find_first_not_of(" \t");
        if (first == std::string::npos || line.find("info    :") != std::string::npos)
            continue;
        if (!text.empty())
            text += "\n";
        text += line.substr(first);
        if (text.size() > 4000) {
            text.resize(4000);
            text += " …";
            break;
        }
    }
    d.message = text.empty() ? "the build failed (" + std::string(status) + ") and NVRTC's log is empty"
                             : "the build failed (" + std::string(status) + "): " + text;
    out.push_back(std::move(d));
    return out;
}

std::string formatDiagnostic(const Diagnostic& d)
{
    std::ostringstream s;
    s << d.file;
    if (d.line > 0) {
        s << ':' << d.line;
        if (d.column > 0)
            s << ':' << d.column;
    }
    s << ": " << severityName(d.severity);
    if (!d.code.empty())
        s << " #" << d.code;
    s << ": " << d.message << '\n';
    if (!d.sourceLine.empty()) {
        s << "  " << d.sourceLine << '\n';
        if (d.column > 0) {
            s << "  ";
            // Keep tabs so the caret lines up in a terminal.
            for (int c = 1; c < d.column && c - 1 < static_cast<int>(d.sourceLine.size()); ++c)
                s << (d.sourceLine[static_cast<size_t>(c - 1)] == '\t' ? '\t' : ' ');
            for (int c = static_cast<int>(d.sourceLine.size()) + 1; c < d.column; ++c)
                s << ' ';
            s << "^\n";
        }
    }
    return s.str();
}

nlohmann::json toJson(const Diagnostic& d)
{
    nlohmann::json j = {{"file", d.file},   {"line", d.line},       {"column", d.column},
                        {"severity", std::string(severityName(d.severity))},
                        {"code", d.code},   {"message", d.message}, {"source_line", d.sourceLine}};
    if (!d.source.empty()) // the compiler's own diagnostics keep their documented form
        j["source"] = d.source;
    return j;
}

Diagnostic diagnosticFromJson(const nlohmann::json& j)
{
    Diagnostic d;
    d.file = j.value("file", "");
    d.line = j.value("line", 0);
    d.column = j.value("column", 0);
    const std::string sev = j.value("severity", "error");
    d.severity = sev == "warning" ? Diagnostic::Severity::Warning
                 : sev == "remark" ? Diagnostic::Severity::Remark
                 : sev == "note"   ? Diagnostic::Severity::Note
                                   : Diagnostic::Severity::Error;
    d.code = j.value("code", "");
    d.message = j.value("message", "");
    d.sourceLine = j.value("source_line", "");
    d.source = j.value("source", "");
    return d;
}

} // namespace kf
