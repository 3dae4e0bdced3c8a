#include "ReportText.h"

#include "engine/core/ReportFields.h"

#include <cmath>
#include <cstdio>
#include <limits>

using nlohmann::json;

namespace kf::cli {

const json& field(const json& j, const char* key) { return report::field(j, key); }

std::string stringField(const json& j, const char* key, const std::string& fallback)
{
    return report::text(j, key, fallback);
}

std::string numberText(const json& v, int significant)
{
    if (v.is_number_integer())
        return v.dump();
    if (v.is_number()) {
        char b[64];
        std::snprintf(b, sizeof b, "%.*g", significant, v.get<double>());
        return b;
    }
    if (v.is_string())
        return v.get<std::string>();
    return "-";
}

std::string fixedText(const json& v, int decimals)
{
    if (!v.is_number())
        return v.is_string() ? v.get<std::string>() : "-";
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", decimals, v.get<double>());
    return b;
}

double numberValue(const json& v) { return report::number(v); }

std::string shapeText(const json& entry, bool withSet)
{
    std::string dims;
    const json& shape = field(entry, "shape");
    if (shape.is_object())
        for (auto it = shape.begin(); it != shape.end(); ++it)
            dims += (dims.empty() ? "" : " ") + it.key() + "=" + numberText(it.value(), 17);
    std::string label = stringField(entry, "label");
    std::string text = label.empty() ? dims : dims.empty() ? label : label + " (" + dims + ")";
    if (withSet && !stringField(entry, "set").empty())
        text += " [" + stringField(entry, "set") + "]";
    return text;
}

std::string reportHeader(const json& report)
{
    const json& cand = field(report, "candidate");
    std::string text = stringField(field(report, "task"), "name", "?") + "/" + stringField(cand, "file", "?");
    if (std::string arch = stringField(cand, "arch"); !arch.empty())
        text += " [" + arch + "]";
    text += " — " + stringField(report, "kind", "report");
    if (std::string gpu = stringField(field(report, "environment"), "gpu"); !gpu.empty())
        text += " on " + gpu;
    return text;
}

std::string errorLine(const json& report)
{
    const json& e = field(report, "error");
    std::string why = stringField(e, "why", stringField(report, "summary", "the run could not be done"));
    std::string hint = stringField(e, "hint");
    return "ERROR: " + why + (hint.empty() ? "" : " (" + hint + ")");
}

} // namespace kf::cli
