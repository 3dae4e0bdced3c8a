#pragma once
// Reading report JSON (docs/report-schema.md) without throwing: every field may be missing or of
// the wrong type, and non-finite numbers arrive as the strings "nan", "inf" and "-inf". The text
// forms match what `kforge verify|bench` prints, so the table and the terminal agree digit for
// digit. Field access and numbers come from engine/core/ReportFields, as in the CLI's ReportText.

#include <nlohmann/json.hpp>

#include <QString>

namespace kf::ui::reportjson {

/// `j[key]` when `j` is an object that has it, else a null value (never throws).
const nlohmann::json& field(const nlohmann::json& j, const char* key);
/// `j[key]` as a QString when it is a string, else `fallback`.
QString text(const nlohmann::json& j, const char* key, const QString& fallback = {});
/// A report number: JSON numbers and the strings "nan", "inf", "-inf"; NaN for anything else.
double number(const nlohmann::json& v);
/// True when `v` holds a report number (a JSON number or one of the non-finite strings).
bool isNumber(const nlohmann::json& v);
/// `%.<significant>g` for numbers, integers in full, "nan"/"inf" as is, "-" when absent.
QString numberText(double v, int significant = 3);
/// "B=7 D=4099" from a shape entry's "shape", keys in the report's order, as the CLI writes them.
QString dimsText(const nlohmann::json& shapeEntry);

} // namespace kf::ui::reportjson
