#include "engine/compile/Diagnostic.h"

#include <regex>
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

static std::vector<std::string> splitLines(std::string_view text)
{
    std::vector<std::string> lines;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find('\n', start);
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

std::vector<Diagnostic> parseNvrtcLog(std::string_view log)
{
    // file(line): severity[ #code[-D]]: message
    static const std::regex header(
        R"(^(.*)\((\d+)\): (catastrophic error|internal error|error|warning|remark)(?: #([0-9]+(?:-D)?))?: (.*)$)");
    // ptxas error   : message / ptxas warning : message / nvlink error : ...
    static const std::regex tool(R"(^(ptxas|nvlink|nvrtc) (error|warning|fatal)\s*:\s*(.*)$)");

    std::vector<Diagnostic> out;
    auto lines = splitLines(log);
    for (size_t i = 0; i < lines.size(); ++i) {
        std::smatch m;
        if (std::regex_match(lines[i], m, header)) {
            Diagnostic d;
            d.file = m[1];
            d.line = std::stoi(m[2]);
            d.severity = severityFromText(m[3]);
            d.code = m[4];
            d.message = m[5];
            // Body: continuation lines, then optionally an echoed source line and its caret.
            std::vector<std::string> body;
            size_t j = i + 1;
            while (j < lines.size() && !lines[j].empty() && !std::regex_match(lines[j], header))
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
        } else if (std::regex_match(lines[i], m, tool)) {
            Diagnostic d;
            d.file = m[1];
            d.severity = m[2] == "warning" ? Diagnostic::Severity::Warning : Diagnostic::Severity::Error;
            d.message = m[3];
            out.push_back(std::move(d));
        }
    }
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
    return {{"file", d.file},   {"line", d.line},       {"column", d.column},
            {"severity", std::string(severityName(d.severity))},
            {"code", d.code},   {"message", d.message}, {"source_line", d.sourceLine}};
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
    return d;
}

} // namespace kf
