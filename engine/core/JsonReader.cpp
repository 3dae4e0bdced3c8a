#include "engine/core/JsonReader.h"

#include "engine/core/Files.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace kf::json {

void fail(const std::string& pointer, std::string message)
{
    throw SchemaError{pointer.empty() ? "/" : pointer, std::move(message)};
}

std::string child(const std::string& pointer, std::string_view key)
{
    std::string escaped;
    for (char c : key) {
        if (c == '~')
            escaped += "~0";
        else if (c == '/')
            escaped += "~1";
        else
            escaped += c;
    }
    return pointer + "/" + escaped;
}

std::string child(const std::string& pointer, size_t index)
{
    return pointer + "/" + std::to_string(index);
}

std::string describe(const Json& v)
{
    switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    case Json::value_t::string: return "a string (\"" + v.get<std::string>() + "\")";
    case Json::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer (" + v.dump() + ")";
    case Json::value_t::number_float: return "a number (" + v.dump() + ")";
    case Json::value_t::binary: return "binary data";
    case Json::value_t::discarded: return "nothing";
    }
    return "a value";
}

std::string asString(const Json& v, const std::string& ptr)
{
    if (!v.is_string())
        fail(ptr, "expected a string, found " + describe(v));
    return v.get<std::string>();
}

std::int64_t asInteger(const Json& v, const std::string& ptr)
{
    if (v.is_number_integer())
        return v.get<std::int64_t>();
    if (v.is_number_unsigned()) {
        auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(INT64_MAX))
            fail(ptr, "integer " + v.dump() + " is too large");
        return static_cast<std::int64_t>(u);
    }
    fail(ptr, "expected an integer, found " + describe(v));
}

double asNumber(const Json& v, const std::string& ptr)
{
    if (!v.is_number())
        fail(ptr, "expected a number, found " + describe(v));
    return v.get<double>();
}

bool asBool(const Json& v, const std::string& ptr)
{
    if (!v.is_boolean())
        fail(ptr, "expected true or false, found " + describe(v));
    return v.get<bool>();
}

const Json& asArray(const Json& v, const std::string& ptr)
{
    if (!v.is_array())
        fail(ptr, "expected an array, found " + describe(v));
    return v;
}

std::vector<std::string> asStringArray(const Json& v, const std::string& ptr)
{
    std::vector<std::string> out;
    const Json& a = asArray(v, ptr);
    for (size_t i = 0; i < a.size(); ++i)
        out.push_back(asString(a[i], child(ptr, i)));
    return out;
}

Object::Object(const Json& value, std::string pointer)
    : m_value(value), m_pointer(std::move(pointer))
{
    if (!m_value.is_object())
        fail(m_pointer, "expected an object, found " + describe(m_value));
}

bool Object::has(std::string_view key) const
{
    return m_value.contains(key);
}

const Json& Object::required(std::string_view key)
{
    m_known.emplace_back(key);
    auto it = m_value.find(key);
    if (it == m_value.end())
        fail(m_pointer, "missing required key \"" + std::string(key) + "\"");
    return *it;
}

const Json* Object::optional(std::string_view key)
{
    m_known.emplace_back(key);
    auto it = m_value.find(key);
    return it == m_value.end() ? nullptr : &*it;
}

std::string Object::string(std::string_view key) { return asString(required(key), at(key)); }

std::string Object::stringOr(std::string_view key, std::string fallback)
{
    const Json* v = optional(key);
    return v ? asString(*v, at(key)) : fallback;
}

std::int64_t Object::integer(std::string_view key) { return asInteger(required(key), at(key)); }

std::int64_t Object::integerOr(std::string_view key, std::int64_t fallback)
{
    const Json* v = optional(key);
    return v ? asInteger(*v, at(key)) : fallback;
}

double Object::number(std::string_view key) { return asNumber(required(key), at(key)); }

double Object::numberOr(std::string_view key, double fallback)
{
    const Json* v = optional(key);
    return v ? asNumber(*v, at(key)) : fallback;
}

bool Object::booleanOr(std::string_view key, bool fallback)
{
    const Json* v = optional(key);
    return v ? asBool(*v, at(key)) : fallback;
}

void Object::finish() const
{
    for (auto it = m_value.begin(); it != m_value.end(); ++it) {
        if (std::find(m_known.begin(), m_known.end(), it.key()) != m_known.end())
            continue;
        std::vector<std::string> known = m_known;
        std::sort(known.begin(), known.end());
        known.erase(std::unique(known.begin(), known.end()), known.end());
        std::string list;
        for (const auto& k : known)
            list += (list.empty() ? "" : ", ") + k;
        fail(child(m_pointer, it.key()),
             "unknown key \"" + it.key() + "\"; this object accepts: " + list);
    }
}

Result<Json> parseText(std::string_view text, const std::string& origin)
{
    // JSON allows a key twice and nlohmann keeps the last; a file of ours that says two things
    // about one field is refused instead (an edit merged twice, or an attempt to hide one).
    std::vector<std::set<std::string>> keys;
    std::string duplicate;
    // Nesting is bounded too: copying, dumping or destroying a value recurses once per level, so
    // a file of a million brackets would overflow the stack of whoever reads it (no format of
    // ours nests beyond a few dozen levels).
    struct TooDeep {};
    auto callback = [&](int depth, Json::parse_event_t event, Json& parsed) {
        if (depth > static_cast<int>(kMaxJsonDepth))
            throw TooDeep{};
        switch (event) {
        case Json::parse_event_t::object_start: keys.emplace_back(); break;
        case Json::parse_event_t::object_end:
            if (!keys.empty())
                keys.pop_back();
            break;
        case Json::parse_event_t::key:
            if (!keys.empty() && parsed.is_string() && !keys.back().insert(parsed.get<std::string>()).second && duplicate.empty())
                duplicate = parsed.get<std::string>();
            break;
        default: break;
        }
        return true;
    };
    try {
        Json j;
        try {
            j = Json::parse(text.begin(), text.end(), callback);
        } catch (const TooDeep&) {
            return Error{"parse JSON", "invalid JSON: values are nested more than " + std::to_string(kMaxJsonDepth) +
                                           " levels deep",
                         "no KernelForge file nests that deep; the file is damaged or hostile", origin, {}};
        }
        if (!duplicate.empty())
            return Error{"parse JSON", "invalid JSON: the key \"" + duplicate + "\" appears twice in one object",
                         "keep one of them", origin, {}};
        return j;
    } catch (const Json::parse_error& e) {
        // Turn the byte offset into line:column, which is what an editor can jump to.
        size_t offset = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
        int line = 1, col = 1;
        for (size_t i = 0; i < offset; ++i) {
            if (text[i] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
        std::string why = e.what();
        // nlohmann says "[json.exception...] parse error at line L, column C: <detail>"; we
        // already name the position, so keep only the detail.
        if (auto p = why.find("parse error"); p != std::string::npos) {
            auto colon = why.find(": ", p);
            why = colon == std::string::npos ? why.substr(p) : why.substr(colon + 2);
        }
        return Error{"parse JSON",
                     "line " + std::to_string(line) + ", column " + std::to_string(col) +
                         ": invalid JSON: " + why,
                     "fix the syntax at that position", origin, {}};
    } catch (const Json::exception& e) {
        // A number out of range (1e999) and the like: nlohmann names the token, not the place.
        std::string why = e.what();
        if (auto tag = why.find("] "); why.rfind("[json.exception.", 0) == 0 && tag != std::string::npos)
            why = why.substr(tag + 2);
        return Error{"parse JSON", "invalid JSON: " + why, "numbers must fit a 64-bit float or integer", origin, {}};
    }
}

Result<Json> readFile(const std::filesystem::path& file)
{
    // A FIFO or a device would block or never end; a huge file is not one of ours. The one
    // bounded reader (engine/core/Files.h) refuses both before reading more than the cap.
    auto bytes = readFileBytes(file, kMaxJsonFileBytes);
    if (!bytes) {
        Error e = bytes.error();
        if (e.why.rfind("it is not a regular file", 0) == 0)
            e.hint = "give the path of a JSON file";
        return e;
    }
    return parseText(*bytes, file.string());
}

} // namespace kf::json
