#include "engine/core/Result.h"

#include "engine/core/Echo.h"

#include <algorithm>

namespace kf {

namespace {

bool isContinuationByte(char c)
{
    return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

size_t countCharacters(std::string_view s)
{
    size_t n = 0;
    for (char c : s)
        if (!isContinuationByte(c))
            ++n;
    return n;
}

/// 1000000 -> "1 000 000", the way the documentation writes counts.
std::string grouped(size_t n)
{
    std::string digits = std::to_string(n);
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0)
            out += ' ';
        out += digits[i];
    }
    return out;
}

/// `s` if it has at most `max` characters, else its first max - 1 (never half a UTF-8 sequence)
/// and "…": exactly `max` characters either way, so clipping twice changes nothing.
std::string clipped(std::string_view s, size_t max, bool& cut)
{
    size_t chars = 0, i = 0, keep = 0;
    for (; i < s.size(); ++i) {
        if (isContinuationByte(s[i]))
            continue;
        if (chars == max - 1)
            keep = i;
        if (chars++ == max)
            break;
    }
    cut = i < s.size();
    return cut ? std::string(s.substr(0, keep)) + "…" : std::string(s);
}

} // namespace

std::string clipEchoes(std::string_view sentence)
{
    std::string out;
    out.reserve(std::min(sentence.size(), size_t(4096)));
    size_t i = 0;
    while (i < sentence.size()) {
        const char c = sentence[i];
        if (c == '"') {
            const size_t close = sentence.find('"', i + 1);
            if (close != std::string_view::npos) {
                const std::string_view inner = sentence.substr(i + 1, close - i - 1);
                bool cut = false;
                out += '"' + clipped(inner, kMaxQuotedEcho, cut) + '"';
                if (cut)
                    out += " (" + grouped(countCharacters(inner)) + " characters)";
                i = close + 1;
                continue;
            }
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '"') {
            out += c;
            ++i;
            continue;
        }
        // One word: up to the next white space or quote.
        size_t end = i;
        while (end < sentence.size() && sentence[end] != ' ' && sentence[end] != '\t' && sentence[end] != '\n' &&
               sentence[end] != '"')
            ++end;
        // Punctuation that ends the word ("at /pointer: ...") stays after the count.
        size_t core = end;
        while (core > i + 1 && std::string_view(":;,.)").find(sentence[core - 1]) != std::string_view::npos)
            --core;
        const std::string_view word = sentence.substr(i, core - i);
        bool cut = false;
        out += clipped(word, kMaxWordEcho, cut);
        if (cut)
            out += " (" + grouped(countCharacters(word)) + " characters)";
        out += sentence.substr(core, end - core);
        i = end;
    }
    return out;
}

// The sentence repeats the pointer, why and hint clipped (engine/core/Echo.h): the fields keep
// every character, for a caller that locates the value by its pointer.
std::string Error::message() const
{
    std::string s;
    if (!file.empty())
        s += file + ": ";
    if (!pointer.empty())
        s += "at " + clipEchoes(pointer) + ": ";
    s += clipEchoes(why.empty() ? what + " failed" : why);
    if (!hint.empty())
        s += " (" + clipEchoes(hint) + ")";
    return s;
}

} // namespace kf
