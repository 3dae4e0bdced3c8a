#pragma once
// Reading report JSON (docs/report-schema.md) without throwing: any field may be missing or of
// the wrong type, and non-finite numbers arrive as the strings "nan", "inf" and "-inf". The one
// implementation the gates, the registry, the CLI printers and the result widgets share.

#include <nlohmann/json.hpp>

#include <string>

namespace kf::report {

/// `j[key]` when `j` is an object that has it, else a null value.
const nlohmann::json& field(const nlohmann::json& j, const char* key);
/// `j[key]` when it is a string, else `fallback`.
std::string text(const nlohmann::json& j, const char* key, const std::string& fallback = {});
/// A report number: JSON numbers and the strings "inf", "-inf"; NaN for anything else ("nan" included).
double number(const nlohmann::json& v);

} // namespace kf::report
