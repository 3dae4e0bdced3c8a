#include "engine/core/JsonReader.h"

#include "engine/core/Echo.h"
#include "engine/core/Files.h"
#include "engine/core/JsonCost.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <optional>
#include <sstream>

namespace kf::json {

void fail(const std::string& pointer, std::string message)
{
    throw SchemaError{pointer.empty() ? "/" : pointer, clipEchoes(message)};
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

namespace {

/// A pointer into the text that counts the bytes nlohmann's lexer takes from it: the lexer reads
/// each byte once, so after any event the count is the offset just past the token it ends.
class CountingIterator {
public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;

    CountingIterator(const char* at, std::size_t* reads) : m_at(at), m_reads(reads) {}
    reference operator*() const
    {
        ++*m_reads;
        return *m_at;
    }
    CountingIterator& operator++()
    {
        ++m_at;
        return *this;
    }
    CountingIterator operator++(int)
    {
        CountingIterator before = *this;
        ++m_at;
        return before;
    }
    bool operator==(const CountingIterator& other) const { return m_at == other.m_at; }
    bool operator!=(const CountingIterator& other) const { return m_at != other.m_at; }

private:
    const char* m_at;
    std::size_t* m_reads;
};

/// Why the builder stopped, and where: a byte offset into the text and, when known, the pointer.
struct Refusal {
    std::size_t offset = 0;
    std::string pointer;
    std::string why;
    std::string hint;
};

/// Builds the value from nlohmann's SAX events in constant work per event (its callback parser
/// rescans the enclosing array at the end of every object, which made an array of a million
/// objects take minutes). Refuses a key given twice in one object and nesting deeper than
/// kMaxJsonDepth, naming the pointer; positions come from the counting iterator.
class Builder {
public:
    Builder(std::string_view text, const std::size_t& reads) : m_text(text), m_reads(reads) {}

    bool null() { return value(nullptr); }
    bool boolean(bool v) { return value(v); }
    bool number_integer(Json::number_integer_t v) { return value(v); }
    bool number_unsigned(Json::number_unsigned_t v) { return value(v); }
    bool number_float(Json::number_float_t v, const std::string&) { return value(v); }
    bool string(std::string& v) { return value(std::move(v)); }
    bool binary(Json::binary_t& v) { return value(Json::binary(std::move(v))); }
    bool start_object(std::size_t) { return open(Json::object()); }
    bool start_array(std::size_t) { return open(Json::array()); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }

    bool key(std::string& k)
    {
        ++events;
        auto& members = m_open.back().value->get_ref<Json::object_t&>();
        auto [it, inserted] = members.emplace(std::move(k), nullptr);
        m_open.back().key = &it->first;
        if (!inserted) {
            // JSON allows a key twice and keeps the last; a file of ours that says two things
            // about one field is refused instead (an edit merged twice, or an attempt to hide one).
            refusal = Refusal{stringStart(m_reads), pointerOfNext(), "the key \"" + it->first + "\" appears twice in one object",
                              "keep one of them"};
            return false;
        }
        m_slot = &it->second;
        return true;
    }

    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e)
    {
        std::string why = e.what();
        // nlohmann says "[json.exception.parse_error.101] parse error at line L, column C:
        // <detail>"; we name the position ourselves, so keep only the detail.
        if (auto p = why.find("parse error"); p != std::string::npos) {
            auto colon = why.find(": ", p);
            why = colon == std::string::npos ? why.substr(p) : why.substr(colon + 2);
        } else if (auto tag = why.find("] "); why.rfind("[json.exception.", 0) == 0 && tag != std::string::npos) {
            why = why.substr(tag + 2); // a number out of range (1e999)
        }
        const bool range = e.id >= 400 && e.id < 500; // nlohmann's out_of_range ids
        refusal = Refusal{position == 0 ? 0 : position - 1, {}, why,
                          range ? "numbers must fit a 64-bit float or integer" : "fix the syntax at that position"};
        return false;
    }

    Json root;
    std::optional<Refusal> refusal;
    std::size_t events = 0;

private:
    struct Open {
        Json* value;
        const std::string* key = nullptr; // the member being read, in an object
    };

    template <class V>
    bool value(V&& v)
    {
        put(std::forward<V>(v));
        return true;
    }

    /// Stores the next value where it goes (the root, the end of the open array or the slot of
    /// the last key) and returns it.
    template <class V>
    Json* put(V&& v)
    {
        ++events;
        if (m_open.empty()) {
            root = Json(std::forward<V>(v));
            return &root;
        }
        Json& parent = *m_open.back().value;
        if (parent.is_array()) {
            auto& items = parent.get_ref<Json::array_t&>();
            items.emplace_back(std::forward<V>(v));
            return &items.back();
        }
        *m_slot = Json(std::forward<V>(v));
        return m_slot;
    }

    bool open(Json&& empty)
    {
        // Copying, dumping or destroying a value recurses once per level, so a file of a million
        // brackets would overflow the stack of whoever reads it (no format of ours nests beyond a
        // few dozen levels).
        if (m_open.size() >= kMaxJsonDepth) {
            refusal = Refusal{m_reads - 1, pointerOfNext(),
                              "values are nested more than " + std::to_string(kMaxJsonDepth) + " levels deep",
                              "no KernelForge file nests that deep; the file is damaged or hostile"};
            return false;
        }
        m_open.push_back(Open{put(std::move(empty))});
        return true;
    }

    bool close()
    {
        ++events;
        m_open.pop_back();
        return true;
    }

    /// The JSON pointer of the value being read in the innermost open one: the member of the
    /// last key in an object, the next item in an array.
    std::string pointerOfNext() const
    {
        std::string pointer;
        for (std::size_t i = 0; i < m_open.size(); ++i) {
            const Json& v = *m_open[i].value;
            if (v.is_array())
                pointer = child(pointer, i + 1 == m_open.size() ? v.size() : v.size() - 1);
            else if (m_open[i].key)
                pointer = child(pointer, *m_open[i].key);
        }
        return pointer;
    }

    /// The offset of the opening quote of the string token that ends just before `end`.
    std::size_t stringStart(std::size_t end) const
    {
        std::size_t i = end >= 2 ? end - 2 : 0; // end - 1 is the closing quote
        for (; i > 0; --i) {
            if (m_text[i] != '"')
                continue;
            std::size_t slashes = 0; // each backslash run precedes one quote: linear in all
            while (slashes < i && m_text[i - 1 - slashes] == '\\')
                ++slashes;
            if (slashes % 2 == 0)
                break;
        }
        return i;
    }

    std::string_view m_text;
    const std::size_t& m_reads;
    std::vector<Open> m_open;
    Json* m_slot = nullptr;
};

/// "line L, column C" of a byte offset: the one pass over the text made for a position, run only
/// once a parse has failed.
std::string lineAndColumn(std::string_view text, std::size_t offset, ParseCost* cost)
{
    if (cost)
        ++cost->positionPasses;
    offset = std::min(offset, text.size());
    int line = 1, col = 1;
    for (std::size_t i = 0; i < offset; ++i) {
        if (text[i] == '\n') {
            ++line;
            col = 1;
        } else {
            ++col;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

} // namespace

Result<Json> parseText(std::string_view text, const std::string& origin, ParseCost* cost)
{
    std::size_t reads = 0;
    Builder builder(text, reads);
    const bool ok = Json::sax_parse(CountingIterator(text.data(), &reads), CountingIterator(text.data() + text.size(), &reads),
                                    &builder);
    if (cost) {
        cost->bytesRead = reads;
        cost->events = builder.events;
    }
    if (ok) {
        // nlohmann's lexer takes a NUL byte for the end of the input (C strings end so), so a
        // value followed by a NUL and anything at all would pass; a NUL inside a value is a
        // syntax error, so the first NUL of a text that parsed lies after its value.
        if (const auto nul = text.find('\0'); nul != std::string_view::npos)
            builder.refusal = Refusal{nul, {}, "a NUL byte follows the end of the JSON value",
                                      "nothing but white space may follow the closing bracket; remove the rest"};
        else
            return std::move(builder.root);
    }
    if (!builder.refusal) // a parse nlohmann stopped without saying why: never seen, still refused
        builder.refusal = Refusal{reads, {}, "the text ends before the JSON value does", "fix the syntax at that position"};
    const Refusal& r = *builder.refusal;
    return Error::inFile(origin, r.pointer, "parse JSON", clipEchoes(lineAndColumn(text, r.offset, cost) + ": invalid JSON: " + r.why), r.hint);
}

Result<Json> parseText(std::string_view text, const std::string& origin)
{
    return parseText(text, origin, nullptr);
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
