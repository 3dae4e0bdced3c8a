#include "widgets/runs/ReportJson.h"

#include "engine/core/ReportFields.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace kf::ui::reportjson {

const nlohmann::json& field(const nlohmann::json& j, const char* key) { return kf::report::field(j, key); }

QString text(const nlohmann::json& j, const char* key, const QString& fallback)
{
    const nlohmann::json& v = field(j, key);
    return v.is_string() ? QString::fromStdString(v.get<std::string>()) : fallback;
}

bool isNumber(const nlohmann::json& v)
{
    if (v.is_number())
        return true;
    if (!v.is_string())
        return false;
    const std::string& s = v.get_ref<const std::string&>();
    return s == "nan" || s == "inf" || s == "-inf";
}

double number(const nlohmann::json& v) { return kf::report::number(v); }

QString numberText(double v, int significant)
{
    if (std::isnan(v))
        return QStringLiteral("nan");
    if (std::isinf(v))
        return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    char b[64];
    std::snprintf(b, sizeof b, "%.*g", significant, v);
    return QString::fromLatin1(b);
}

QString dimsText(const nlohmann::json& shapeEntry)
{
    QString dims;
    const nlohmann::json& shape = field(shapeEntry, "shape");
    if (!shape.is_object())
        return dims;
    for (auto it = shape.begin(); it != shape.end(); ++it) {
        if (!dims.isEmpty())
            dims += QLatin1Char(' ');
        const QString value = it.value().is_number_integer() ? QString::number(it.value().get<long long>())
                                                               : numberText(number(it.value()), 17);
        dims += QString::fromStdString(it.key()) + QLatin1Char('=') + value;
    }
    return dims;
}

} // namespace kf::ui::reportjson
