#include "engine/protocol/ReportJson.h"
#include "engine/protocol/Report.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace kf::protocol {

namespace jr = kf::json;

Json numberJson(double v)
{
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    return v;
}

bool isReportNumber(const Json& v)
{
    if (v.is_number())
        return true;
    if (!v.is_string())
        return false;
    const auto& s = v.get_ref<const std::string&>();
    return s == "nan" || s == "inf" || s == "-inf";
}

double readNumber(const Json& v, const std::string& pointer)
{
    if (v.is_number())
        return v.get<double>();
    if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        if (s == "nan")
            return std::numeric_limits<double>::quiet_NaN();
        if (s == "inf")
            return std::numeric_limits<double>::infinity();
        if (s == "-inf")
            return -std::numeric_limits<double>::infinity();
    }
    jr::fail(pointer, "expected a number (or \"nan\", \"inf\", \"-inf\"), found " + jr::describe(v));
}

Fields::Fields(const Json& value, std::string pointer) : m_value(value), m_pointer(std::move(pointer))
{
    if (!m_value.is_object())
        jr::fail(m_pointer, "expected an object, found " + jr::describe(m_value));
}

const Json* Fields::find(std::string_view key) const
{
    auto it = m_value.find(key);
    return it == m_value.end() || it->is_null() ? nullptr : &*it;
}

std::string Fields::text(std::string_view key, std::string fallback) const
{
    const Json* v = find(key);
    return v ? jr::asString(*v, at(key)) : fallback;
}

double Fields::number(std::string_view key, double fallback) const
{
    const Json* v = find(key);
    return v ? readNumber(*v, at(key)) : fallback;
}

std::optional<double> Fields::optionalNumber(std::string_view key) const
{
    const Json* v = find(key);
    if (!v)
        return std::nullopt;
    return readNumber(*v, at(key));
}

std::int64_t Fields::integer(std::string_view key, std::int64_t fallback) const
{
    const Json* v = find(key);
    return v ? jr::asInteger(*v, at(key)) : fallback;
}

bool Fields::boolean(std::string_view key, bool fallback) const
{
    const Json* v = find(key);
    return v ? jr::asBool(*v, at(key)) : fallback;
}

std::optional<bool> Fields::optionalBoolean(std::string_view key) const
{
    const Json* v = find(key);
    if (!v)
        return std::nullopt;
    return jr::asBool(*v, at(key));
}

std::vector<std::string> Fields::texts(std::string_view key) const
{
    const Json* v = find(key);
    return v ? jr::asStringArray(*v, at(key)) : std::vector<std::string>{};
}

std::vector<std::int64_t> Fields::integers(std::string_view key) const
{
    std::vector<std::int64_t> out;
    forEach(key, [&](const Json& e, const std::string& p) { out.push_back(jr::asInteger(e, p)); });
    return out;
}

std::vector<double> Fields::numbers(std::string_view key) const
{
    std::vector<double> out;
    forEach(key, [&](const Json& e, const std::string& p) { out.push_back(readNumber(e, p)); });
    return out;
}

void Fields::forEach(std::string_view key, const std::function<void(const Json&, const std::string&)>& each) const
{
    const Json* v = find(key);
    if (!v)
        return;
    const Json& a = jr::asArray(*v, at(key));
    for (size_t i = 0; i < a.size(); ++i)
        each(a[i], jr::child(at(key), i));
}

Fields Fields::object(std::string_view key) const
{
    static const Json empty = Json::object();
    const Json* v = find(key);
    return Fields(v ? *v : empty, at(key));
}

std::string formatNumber(double v, int significant)
{
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    char b[64];
    std::snprintf(b, sizeof b, "%.*g", significant, v);
    return b;
}

std::string formatFixed(double v, int decimals)
{
    if (!std::isfinite(v))
        return formatNumber(v);
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", decimals, v);
    return b;
}

} // namespace kf::protocol
