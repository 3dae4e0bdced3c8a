#include "engine/core/Base64.h"

#include <array>
#include <cstdint>

namespace kf {

namespace {
constexpr char kBase64Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
} // namespace

// Standard alphabet with padding (RFC 4648 section 4): what `base64 -d` and every JSON consumer
// understands without options.
std::string base64Encode(std::string_view in)
{
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 3 <= in.size(); i += 3) {
        std::uint32_t v = (std::uint32_t(std::uint8_t(in[i])) << 16) |
                          (std::uint32_t(std::uint8_t(in[i + 1])) << 8) | std::uint8_t(in[i + 2]);
        out += kBase64Alphabet[(v >> 18) & 63];
        out += kBase64Alphabet[(v >> 12) & 63];
        out += kBase64Alphabet[(v >> 6) & 63];
        out += kBase64Alphabet[v & 63];
    }
    size_t rest = in.size() - i;
    if (rest > 0) {
        std::uint32_t v = std::uint32_t(std::uint8_t(in[i])) << 16;
        if (rest == 2)
            v |= std::uint32_t(std::uint8_t(in[i + 1])) << 8;
        out += kBase64Alphabet[(v >> 18) & 63];
        out += kBase64Alphabet[(v >> 12) & 63];
        out += rest == 2 ? kBase64Alphabet[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

// Strict: length a multiple of 4, padding only at the end, no whitespace. A cubin that decodes
// "mostly" would fail much later with a baffling driver error, so we refuse it here.
bool base64Decode(std::string_view in, std::string& out)
{
    static const std::array<std::int8_t, 256> table = [] {
        std::array<std::int8_t, 256> t{};
        t.fill(-1);
        for (int i = 0; i < 64; ++i)
            t[std::uint8_t(kBase64Alphabet[i])] = std::int8_t(i);
        return t;
    }();
    out.clear();
    if (in.size() % 4 != 0)
        return false;
    out.reserve(in.size() / 4 * 3);
    for (size_t i = 0; i < in.size(); i += 4) {
        const bool last = i + 4 == in.size();
        int pad = 0;
        if (last) {
            if (in[i + 3] == '=')
                pad = in[i + 2] == '=' ? 2 : 1;
        }
        std::uint32_t v = 0;
        for (int k = 0; k < 4 - pad; ++k) {
            std::int8_t d = table[std::uint8_t(in[i + k])];
            if (d < 0)
                return false;
            v |= std::uint32_t(d) << (18 - 6 * k);
        }
        out += char((v >> 16) & 0xff);
        if (pad < 2)
            out += char((v >> 8) & 0xff);
        if (pad < 1)
            out += char(v & 0xff);
    }
    return true;
}

} // namespace kf
