#pragma once
// Text for the terminal from report JSON (docs/report-schema.md): numbers that may be "nan" or
// "inf" strings, shapes, headers. Shared by the verify and bench printers.

#include <nlohmann/json.hpp>

#include <string>

namespace kf::cli {

/// A JSON number with `significant` digits; a string ("nan", "inf") as is; anything else "-".
std::string numberText(const nlohmann::json& v, int significant = 3);
/// printf-style with a fixed number of decimals; "-" when `v` is not a number.
std::string fixedText(const nlohmann::json& v, int decimals);
/// The value of a report number: JSON numbers, and the strings "nan", "inf", "-inf"; NaN otherwise.
double numberValue(const nlohmann::json& v);
/// `j[key]` when `j` is an object that has it, else null (never throws).
const nlohmann::json& field(const nlohmann::json& j, const char* key);
/// `j[key]` as a string when it is one, else `fallback`.
std::string stringField(const nlohmann::json& j, const char* key, const std::string& fallback = {});
/// "tail (N=4099)" from a shape entry's "label" and "shape"; adds " [benchmarks]" when `withSet`.
std::string shapeText(const nlohmann::json& shapeEntry, bool withSet);
/// "vector_add/naive.cu [sm_90] — correctness on NVIDIA H100 80GB HBM3".
std::string reportHeader(const nlohmann::json& report);
/// "ERROR: why (hint)" for a report with verdict "error".
std::string errorLine(const nlohmann::json& report);

} // namespace kf::cli
