#pragma once
// Small string_view helpers the text readers share (ptxas reports, PTX, NVRTC logs, line info).

#include <cctype>
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

} // namespace kf::text
