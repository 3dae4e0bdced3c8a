#pragma once
// Strict JSON reading for every file format we own: unknown keys are errors, every error names
// the JSON pointer of the offending value and says in one sentence what to fix.
//
// Parsers throw SchemaError internally; the public parse functions catch it at the top and turn
// it into a kf::Error carrying the file name. Not thread-affine; values are read, never copied.

#include "engine/core/Result.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace kf::json {

using Json = nlohmann::json;

struct SchemaError {
    std::string pointer;
    std::string message;
};

[[noreturn]] void fail(const std::string& pointer, std::string message);

std::string child(const std::string& pointer, std::string_view key);
std::string child(const std::string& pointer, size_t index);
/// "a string", "an integer", "an object"... for messages.
std::string describe(const Json& value);

std::string asString(const Json& v, const std::string& ptr);
std::int64_t asInteger(const Json& v, const std::string& ptr);
double asNumber(const Json& v, const std::string& ptr);
bool asBool(const Json& v, const std::string& ptr);
const Json& asArray(const Json& v, const std::string& ptr);
std::vector<std::string> asStringArray(const Json& v, const std::string& ptr);

/// One JSON object being read. Every key looked up is remembered; finish() rejects the rest.
class Object {
public:
    Object(const Json& value, std::string pointer);

    const std::string& pointer() const { return m_pointer; }
    std::string at(std::string_view key) const { return child(m_pointer, key); }
    bool has(std::string_view key) const;

    const Json& required(std::string_view key);
    const Json* optional(std::string_view key);

    std::string string(std::string_view key);
    std::string stringOr(std::string_view key, std::string fallback);
    std::int64_t integer(std::string_view key);
    std::int64_t integerOr(std::string_view key, std::int64_t fallback);
    double number(std::string_view key);
    double numberOr(std::string_view key, double fallback);
    bool booleanOr(std::string_view key, bool fallback);

    /// Fails on any key not looked up so far, listing the keys this object accepts.
    void finish() const;

    const Json& raw() const { return m_value; }

private:
    const Json& m_value;
    std::string m_pointer;
    std::vector<std::string> m_known;
};

/// The largest JSON file readFile reads (reports of big runs are a few MiB).
inline constexpr std::uintmax_t kMaxJsonFileBytes = std::uintmax_t(256) << 20;

/// The deepest nesting readFile and parseText accept (objects and arrays within each other).
inline constexpr std::size_t kMaxJsonDepth = 256;

/// Reads and parses a JSON file; a syntax error names line and column. Refuses anything but a
/// regular file (a FIFO would block, /dev/zero never end) and files over kMaxJsonFileBytes.
Result<Json> readFile(const std::filesystem::path& file);
/// Parses JSON text; `origin` names it in errors.
Result<Json> parseText(std::string_view text, const std::string& origin);

} // namespace kf::json
