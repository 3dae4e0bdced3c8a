#pragma once
// How one form field shows a JSON value as text and turns the user's text back into JSON.
// A field never refuses what the user typed: text that does not fit the kind is stored as a
// string, so the engine's validator names the problem and nothing typed is lost.

#include <nlohmann/json.hpp>

#include <QString>

#include <optional>

namespace kf::ui {

enum class CellKind {
    Text,     ///< a string; empty text removes the key
    Integer,  ///< an integer ("7"); a non-integer stays as typed for the validator to reject
    Number,   ///< a number ("1e-3"); integers stay integers
    List,     ///< an array as "B, D"; integer items become integers ("4" → 4)
    Expr,     ///< an expression or an array of 1–3 of them: "ceil_div(N, 256), 4"
    Json,     ///< any value as compact JSON: attrs, args, distributions
    Bool,     ///< true/false
};

/// The text a field shows for `value` (absent when `value` is null or missing).
QString cellText(const nlohmann::json* value, CellKind kind);
/// The JSON for `text`; std::nullopt means "remove the key" (empty text of an optional field).
std::optional<nlohmann::json> cellValue(const QString& text, CellKind kind);

} // namespace kf::ui
