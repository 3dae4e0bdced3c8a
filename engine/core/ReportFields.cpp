#include "engine/core/ReportFields.h"

#include <limits>

namespace kf::report {

const nlohmann::json& field(const nlohmann::json& j, const char* key)
{
    static const nlohmann::json null;
    if (!j.is_object())
        return null;
    auto it = j.find(key);
    return it == j.end() ? null : *it;
}

std::string text(const nlohmann::json& j, const char* key, const std::string& fallback)
{
    const nlohmann::json& v = field(j, key);
    return v.is_string() ? v.get<std::string>() : fallback;
}

double number(const nlohmann::json& v)
{
    if (v.is_number())
        return v.get<double>();
    if (v.is_string()) {
        const std::string& s = v.get_ref<const std::string&>();
        if (s == "inf")
            return std::numeric_limits<double>::infinity();
        if (s == "-inf")
            return -std::numeric_limits<double>::infinity();
    }
    return std::numeric_limits<double>::quiet_NaN();
}

} // namespace kf::report
