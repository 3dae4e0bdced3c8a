#pragma once
// Reading and writing the numbers and objects of a report (docs/report-schema.md). Reports are
// read leniently about presence (a missing field takes its default, unknown fields are ignored,
// so an older or newer runner's report still reads) and strictly about types: a value of the
// wrong type is a SchemaError naming its JSON pointer, caught at the top by fromJson. A report
// number is a JSON number or one of the strings "nan", "inf", "-inf".

#include "engine/core/JsonReader.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kf::protocol {

using Json = nlohmann::json;

/// A double as a report writes it: a JSON number, or "nan", "inf", "-inf".
Json numberJson(double v);
/// `v` as a report number; a SchemaError at `pointer` for anything else.
double readNumber(const Json& v, const std::string& pointer);
/// True when `v` is a report number (a JSON number or one of the three strings).
bool isReportNumber(const Json& v);

/// One object of a report being read. Never remembers or rejects unknown keys.
class Fields {
public:
    /// `value` must be an object (else a SchemaError at `pointer`).
    Fields(const Json& value, std::string pointer);

    const std::string& pointer() const { return m_pointer; }
    std::string at(std::string_view key) const { return kf::json::child(m_pointer, key); }
    /// The value under `key`, or nullptr when it is missing or null.
    const Json* find(std::string_view key) const;

    std::string text(std::string_view key, std::string fallback = {}) const;
    double number(std::string_view key, double fallback) const;
    std::optional<double> optionalNumber(std::string_view key) const;
    std::int64_t integer(std::string_view key, std::int64_t fallback = 0) const;
    bool boolean(std::string_view key, bool fallback = false) const;
    std::optional<bool> optionalBoolean(std::string_view key) const;
    std::vector<std::string> texts(std::string_view key) const;
    std::vector<std::int64_t> integers(std::string_view key) const;
    std::vector<double> numbers(std::string_view key) const;
    /// Calls `each(element, pointer)` for every element of the array under `key` (none when missing).
    void forEach(std::string_view key, const std::function<void(const Json&, const std::string&)>& each) const;
    /// The object under `key` (an empty object when missing).
    Fields object(std::string_view key) const;

private:
    const Json& m_value;
    std::string m_pointer;
};

/// Runs `read` and turns a SchemaError or a JSON exception into an Error naming `what` and the pointer.
template <class T>
Result<T> readReport(const std::string& what, const std::function<T()>& read);


// ---------------------------------------------------------------------------------------------

template <class T>
Result<T> readReport(const std::string& what, const std::function<T()>& read)
{
    try {
        return read();
    } catch (const kf::json::SchemaError& e) {
        return Error::inFile({}, e.pointer, what, e.message, "the report format is described in docs/report-schema.md");
    } catch (const nlohmann::json::exception& e) {
        return Error::failed(what, std::string("malformed report: ") + e.what());
    }
}

} // namespace kf::protocol
