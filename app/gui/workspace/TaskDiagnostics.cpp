#include "app/gui/workspace/TaskDiagnostics.h"

#include "engine/core/Files.h"
#include "engine/core/Text.h"

#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>

#include <algorithm>
#include <cctype>
#include <string>
#include <tuple>

namespace kf::app {

namespace {

/// What the Problems panel echoes of an error: enough to act on, never a megabyte of a name.
constexpr std::size_t kMaxMessageBytes = 1000;

void skipSpace(std::string_view t, std::size_t& i)
{
    while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
        ++i;
}

/// Reads the string at `i` (on its opening quote) into `out`, leaving `i` after the closing
/// quote. Escapes are decoded as far as a key comparison needs (\uXXXX of the BMP included).
bool readString(std::string_view t, std::size_t& i, std::string* out)
{
    if (i >= t.size() || t[i] != '"')
        return false;
    for (++i; i < t.size(); ++i) {
        const char c = t[i];
        if (c == '"') {
            ++i;
            return true;
        }
        if (c != '\\') {
            if (out)
                out->push_back(c);
            continue;
        }
        if (++i >= t.size())
            return false;
        const char e = t[i];
        if (e == 'u' && i + 4 < t.size()) {
            unsigned cp = 0;
            for (std::size_t k = i + 1; k <= i + 4; ++k) {
                const char h = static_cast<char>(std::tolower(static_cast<unsigned char>(t[k])));
                if (!std::isxdigit(static_cast<unsigned char>(h)))
                    return false;
                cp = cp * 16 + static_cast<unsigned>(h <= '9' ? h - '0' : h - 'a' + 10);
            }
            i += 4;
            if (out) {
                if (cp < 0x80) {
                    out->push_back(static_cast<char>(cp));
                } else if (cp < 0x800) {
                    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
                    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
                } else {
                    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
                    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
                    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
                }
            }
        } else if (out) {
            const std::string_view from = "bfnrt", to = "\b\f\n\r\t";
            const auto k = from.find(e);
            out->push_back(k == std::string_view::npos ? e : to[k]);
        }
    }
    return false;
}

/// Moves `i` past the value that starts there (objects and arrays by counting brackets outside
/// strings, so nesting costs nothing). False on text that is not JSON.
bool skipValue(std::string_view t, std::size_t& i)
{
    if (i >= t.size())
        return false;
    if (t[i] == '"')
        return readString(t, i, nullptr);
    if (t[i] != '{' && t[i] != '[') {
        while (i < t.size() && t[i] != ',' && t[i] != '}' && t[i] != ']' && !std::isspace(static_cast<unsigned char>(t[i])))
            ++i;
        return true;
    }
    std::size_t depth = 0;
    while (i < t.size()) {
        const char c = t[i];
        if (c == '"') {
            if (!readString(t, i, nullptr))
                return false;
            continue;
        }
        ++i;
        if (c == '{' || c == '[')
            ++depth;
        else if ((c == '}' || c == ']') && --depth == 0)
            return true;
    }
    return false;
}

/// Moves `i` (on an object or array) to the value of member or element `token`; false when it is not there.
bool enter(std::string_view t, std::size_t& i, const std::string& token)
{
    const bool object = t[i] == '{';
    const bool digits = !token.empty() && std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!object && (!digits || token.size() > 9))
        return false;
    const long index = object ? -1 : std::stol(token);
    ++i;
    for (long n = 0;; ++n) {
        skipSpace(t, i);
        if (i >= t.size() || t[i] == '}' || t[i] == ']')
            return false;
        bool match = n == index;
        if (object) {
            std::string key;
            if (!readString(t, i, &key))
                return false;
            skipSpace(t, i);
            if (i >= t.size() || t[i] != ':')
                return false;
            ++i;
            skipSpace(t, i);
            match = key == token;
        }
        if (match)
            return true;
        if (!skipValue(t, i))
            return false;
        skipSpace(t, i);
        if (i >= t.size() || t[i] != ',')
            return false;
        ++i;
    }
}

} // namespace

std::pair<int, int> locateJsonPointer(std::string_view text, std::string_view pointer)
{
    std::size_t i = 0;
    skipSpace(text, i);
    if (i >= text.size())
        return {0, 0};
    std::size_t found = i;
    // Each reference token in turn ("~1" is "/", "~0" is "~"), while the text has it.
    for (std::size_t start = 1; !pointer.empty() && start <= pointer.size();) {
        std::size_t end = pointer.find('/', start);
        if (end == std::string_view::npos)
            end = pointer.size();
        std::string token;
        for (std::size_t k = start; k < end; ++k) {
            if (pointer[k] == '~' && k + 1 < end && (pointer[k + 1] == '0' || pointer[k + 1] == '1'))
                token.push_back(pointer[++k] == '0' ? '~' : '/');
            else
                token.push_back(pointer[k]);
        }
        if ((text[i] != '{' && text[i] != '[') || !enter(text, i, token))
            break;
        found = i;
        start = end + 1;
    }
    const auto before = text.substr(0, found);
    const int line = 1 + static_cast<int>(std::count(before.begin(), before.end(), '\n'));
    const std::size_t lineStart = before.rfind('\n');
    return {line, static_cast<int>(found - (lineStart == std::string_view::npos ? 0 : lineStart + 1)) + 1};
}

kf::Diagnostic taskDiagnostic(const TaskEntry& entry)
{
    kf::Diagnostic d;
    d.severity = kf::Diagnostic::Severity::Error;
    d.source = "task";
    if (!entry.error) {
        d.file = entry.jsonPath.toStdString();
        d.message = "the task did not load";
        return d;
    }
    const kf::Error& e = *entry.error;
    QString file = e.file.empty() ? entry.jsonPath : QString::fromStdString(e.file);
    if (QFileInfo(file).isRelative())
        file = QDir(entry.dir).filePath(file);
    d.file = QDir::cleanPath(file).toStdString();
    std::string message = (e.pointer.empty() ? std::string() : "at " + e.pointer + ": ") + (e.why.empty() ? e.what + " failed" : e.why);
    if (!e.hint.empty())
        message += " (" + e.hint + ")";
    d.message = kf::text::clipUtf8(message, kMaxMessageBytes);
    if (d.message.size() < message.size())
        d.message += "…";
    // The JSON reader names the place of a syntax error itself; a schema error names a pointer.
    static const QRegularExpression place(QStringLiteral("^line (\\d+), column (\\d+)"));
    if (const auto m = place.match(QString::fromStdString(e.why.substr(0, 64))); m.hasMatch()) {
        d.line = m.captured(1).toInt();
        d.column = m.captured(2).toInt();
    } else if (!e.pointer.empty()) {
        if (auto text = kf::readFileBytes(d.file))
            std::tie(d.line, d.column) = locateJsonPointer(*text, e.pointer);
    }
    return d;
}

std::vector<kf::Diagnostic> taskDiagnostics(const Workspace& workspace)
{
    std::vector<kf::Diagnostic> out;
    for (const TaskEntry& e : workspace.tasks())
        if (e.error)
            out.push_back(taskDiagnostic(e));
    return out;
}

} // namespace kf::app
