#pragma once
// Small string_view helpers the text readers share (ptxas reports, PTX, NVRTC logs, line info).

#include <cctype>
#include <string>
#include <string_view>

namespace kf::text {

inline bool startsWith(std::string_view s, std::string_view prefix)
{
    return s.substr(0, prefix.size()) == prefix;
}

/// `s` without leading and trailing white space.
inline std::string_view trim(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

/// At most `max` bytes of `s`, never cut inside a UTF-8 sequence (a cut one would make the JSON
/// it is written into unreadable).
inline std::string clipUtf8(std::string_view s, size_t max)
{
    if (s.size() <= max)
        return std::string(s);
    size_t n = max;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80)
        --n;
    return std::string(s.substr(0, n));
}

} // namespace kf::text
