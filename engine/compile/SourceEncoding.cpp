#include "engine/compile/SourceEncoding.h"

#include <algorithm>
#include <cstdio>

namespace kf {

namespace {

bool startsWith(std::string_view bytes, std::string_view prefix)
{
    return bytes.substr(0, prefix.size()) == prefix;
}

// The length of the valid UTF-8 sequence at `i`, or 0 when the bytes there are not one
// (the well-formed byte sequences of the Unicode standard, table 3-7).
std::size_t sequenceLength(std::string_view s, std::size_t i)
{
    auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = at(i);
    if (c < 0x80)
        return 1;
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;   // the range of the second byte
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        lo = c == 0xE0 ? 0xA0 : 0x80;     // no overlong forms
        hi = c == 0xED ? 0x9F : 0xBF;     // no surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        lo = c == 0xF0 ? 0x90 : 0x80;
        hi = c == 0xF4 ? 0x8F : 0xBF;     // nothing above U+10FFFF
    } else {
        return 0;                         // a continuation byte, C0, C1 or F5..FF
    }
    if (i + n > s.size() || at(i + 1) < lo || at(i + 1) > hi)
        return 0;
    for (std::size_t k = 2; k < n; ++k)
        if (at(i + k) < 0x80 || at(i + k) > 0xBF)
            return 0;
    return n;
}

EncodingCheck fault(std::string_view bytes, SourceEncoding encoding, std::size_t offset)
{
    EncodingCheck c;
    c.encoding = encoding;
    c.offset = offset;
    c.byte = static_cast<unsigned char>(bytes[offset]);
    c.line = 1 + static_cast<int>(std::count(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
    const std::size_t lineStart = offset == 0 ? std::string_view::npos : bytes.rfind('\n', offset - 1);
    c.column = static_cast<int>(offset - (lineStart == std::string_view::npos ? 0 : lineStart + 1)) + 1;
    return c;
}

} // namespace

std::size_t EncodingCheck::bomSize() const
{
    switch (encoding) {
    case SourceEncoding::Utf8Bom: return 3;
    case SourceEncoding::Utf16Le:
    case SourceEncoding::Utf16Be: return 2;
    case SourceEncoding::Utf32Le:
    case SourceEncoding::Utf32Be: return 4;
    default: return 0;
    }
}

EncodingCheck checkSourceEncoding(std::string_view bytes)
{
    using namespace std::string_view_literals;
    EncodingCheck bom;
    // UTF-32 LE first: its mark begins with UTF-16 LE's.
    if (startsWith(bytes, "\xFF\xFE\0\0"sv))
        bom.encoding = SourceEncoding::Utf32Le;
    else if (startsWith(bytes, "\0\0\xFE\xFF"sv))
        bom.encoding = SourceEncoding::Utf32Be;
    else if (startsWith(bytes, "\xFF\xFE"sv))
        bom.encoding = SourceEncoding::Utf16Le;
    else if (startsWith(bytes, "\xFE\xFF"sv))
        bom.encoding = SourceEncoding::Utf16Be;
    if (bom.encoding != SourceEncoding::Utf8)
        return bom;
    const bool utf8Bom = startsWith(bytes, "\xEF\xBB\xBF"sv);
    for (std::size_t i = utf8Bom ? 3 : 0; i < bytes.size();) {
        if (bytes[i] == '\0')
            return fault(bytes, SourceEncoding::NulByte, i);
        const std::size_t n = sequenceLength(bytes, i);
        if (n == 0)
            return fault(bytes, SourceEncoding::InvalidUtf8, i);
        i += n;
    }
    bom.encoding = utf8Bom ? SourceEncoding::Utf8Bom : SourceEncoding::Utf8;
    return bom;
}

std::string_view encodingName(SourceEncoding encoding)
{
    switch (encoding) {
    case SourceEncoding::Utf8: return "UTF-8";
    case SourceEncoding::Utf8Bom: return "UTF-8 with a byte-order mark";
    case SourceEncoding::Utf16Le: return "UTF-16 LE";
    case SourceEncoding::Utf16Be: return "UTF-16 BE";
    case SourceEncoding::Utf32Le: return "UTF-32 LE";
    case SourceEncoding::Utf32Be: return "UTF-32 BE";
    case SourceEncoding::NulByte: return "binary (a NUL byte)";
    case SourceEncoding::InvalidUtf8: return "not UTF-8";
    }
    return "unknown";
}

std::string encodingProblem(const EncodingCheck& check)
{
    const std::string where = "line " + std::to_string(check.line) + ", column " + std::to_string(check.column);
    switch (check.encoding) {
    case SourceEncoding::Utf8:
    case SourceEncoding::Utf8Bom: return {};
    case SourceEncoding::NulByte:
        return "holds a NUL byte at " + where + " (a binary file, or UTF-16 without a byte-order mark?)";
    case SourceEncoding::InvalidUtf8: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(check.byte));
        return "is not UTF-8: the byte " + std::string(hex) + " at " + where +
               " is not part of a UTF-8 character (Latin-1 or Windows-1252 text?)";
    }
    default: return "is saved as " + std::string(encodingName(check.encoding)) + ", not UTF-8";
    }
}

} // namespace kf
