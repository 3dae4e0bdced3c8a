#include "device/cast/cpp/CastToolArgs.h"

#include <cstdlib>

std::string readCastToolArgs(const std::vector<std::string>& rest, CastToolArgs& a, const OwnOption& own)
{
    for (std::size_t i = 1; i < rest.size(); ++i) {
        const std::string& s = rest[i];
        const OptionValue value = [&]() -> std::string { return i + 1 < rest.size() ? rest[++i] : std::string(); };
        if (s == "--device")
            a.device = value();
        else if (s == "--runs")
            a.runs = std::atoi(value().c_str());
        else if (s == "--no-kernels")
            a.noKernels = true;
        else if (s == "--json")
            a.json = true;
        else if (!s.empty() && s[0] == '-') {
            if (!own(s, value))
                return "unknown option " + s;
        } else if (a.package.empty())
            a.package = s;
        else
            return "one package at a time";
    }
    if (a.package.empty())
        return "name the package";
    return {};
}
