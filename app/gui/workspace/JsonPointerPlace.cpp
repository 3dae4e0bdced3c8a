#include "app/gui/workspace/JsonPointerPlace.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace kf::app {

namespace {

void skipSpace(std::string_view t, std::size_t& i)
{
    while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
        ++i;
}

/// The four hex digits at `at` as a number; false when they are not there.
bool hex4(std::string_view t, std::size_t at, unsigned* value)
{
    if (at + 4 > t.size())
        return false;
    *value = 0;
    for (std::size_t k = at; k < at + 4; ++k) {
        const unsigned char h = static_cast<unsigned char>(std::tolower(static_cast<unsigned char>(t[k])));
        if (!std::isxdigit(h))
            return false;
        *value = *value * 16 + static_cast<unsigned>(h <= '9' ? h - '0' : h - 'a' + 10);
    }
    return true;
}

void appendUtf8(std::string& out, unsigned cp)
{
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

/// Reads the string at `i` (on its opening quote) into `out`, leaving `i` after the closing
/// quote. Escapes are decoded as a JSON reader decodes them (surrogate pairs included).
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
        if (e == 'u') {
            unsigned cp = 0;
            if (!hex4(t, i + 1, &cp))
                return false;
            i += 4;
            // A surrogate pair is one character.
            unsigned low = 0;
            if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 < t.size() && t[i + 1] == '\\' && t[i + 2] == 'u' &&
                hex4(t, i + 3, &low) && low >= 0xDC00 && low <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                i += 6;
            }
            if (out)
                appendUtf8(*out, cp);
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

/// Moves `i` (on an object or array) to the value of member or element `token`; false when it is
/// not there. A key given twice is found where a JSON reader keeps it: the last time.
bool enter(std::string_view t, std::size_t& i, const std::string& token)
{
    const bool object = t[i] == '{';
    const bool digits = !token.empty() && std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!object && (!digits || token.size() > 9))
        return false;
    const long index = object ? -1 : std::stol(token);
    std::size_t last = std::string_view::npos;
    ++i;
    for (long n = 0;; ++n) {
        skipSpace(t, i);
        if (i >= t.size() || t[i] == '}' || t[i] == ']')
            break;
        if (object) {
            std::string key;
            if (!readString(t, i, &key))
                break;
            skipSpace(t, i);
            if (i >= t.size() || t[i] != ':')
                break;
            ++i;
            skipSpace(t, i);
            if (key == token && i < t.size())
                last = i;
        } else if (n == index) {
            return true;
        }
        if (!skipValue(t, i))
            break;
        skipSpace(t, i);
        if (i >= t.size() || t[i] != ',')
            break;
        ++i;
    }
    if (last == std::string_view::npos)
        return false;
    i = last;
    return true;
}

} // namespace

std::pair<int, int> locateJsonPointer(std::string_view text, std::string_view pointer)
{
    std::size_t i = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;   // a UTF-8 byte-order mark, as readers skip it
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
        if (pointer.front() != '/' || i >= text.size() || (text[i] != '{' && text[i] != '[') || !enter(text, i, token))
            break;
        found = i;
        start = end + 1;
    }
    const auto before = text.substr(0, found);
    const int line = 1 + static_cast<int>(std::count(before.begin(), before.end(), '\n'));
    const std::size_t lineStart = before.rfind('\n');
    return {line, static_cast<int>(found - (lineStart == std::string_view::npos ? 0 : lineStart + 1)) + 1};
}

} // namespace kf::app
