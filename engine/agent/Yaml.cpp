#include "engine/agent/Yaml.h"

#include "engine/core/JsonReader.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <vector>

namespace kf::agent {
namespace {

using Json = nlohmann::json;

// Thrown from the handler (yaml-cpp passes it through) to stop at the first problem.
struct Refusal {
    YAML::Mark mark;
    std::string why;
};

bool isNullWord(const std::string& s) { return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL"; }

// YAML 1.2 core schema: [-+]?[0-9]+, 0o[0-7]+, 0x[0-9a-fA-F]+.
bool parseInteger(const std::string& s, std::int64_t& out)
{
    std::string_view v = s;
    int base = 10;
    bool negative = false;
    if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'o')) {
        base = v[1] == 'x' ? 16 : 8;
        v.remove_prefix(2);
    } else if (!v.empty() && (v[0] == '-' || v[0] == '+')) {
        negative = v[0] == '-';
        v.remove_prefix(1);
    }
    if (v.empty())
        return false;
    std::uint64_t magnitude = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), magnitude, base);
    if (ec != std::errc() || end != v.data() + v.size())
        return false;
    if (negative ? magnitude > std::uint64_t(INT64_MAX) + 1 : magnitude > std::uint64_t(INT64_MAX))
        return false;   // too large for an integer: parseFloat reads it as a floating-point number
    out = negative ? std::int64_t(0 - magnitude) : std::int64_t(magnitude);
    return true;
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, plus .inf/.nan spellings.
bool parseFloat(const std::string& s, double& out)
{
    if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf" || s == "+.Inf" || s == "+.INF") {
        out = INFINITY;
        return true;
    }
    if (s == "-.inf" || s == "-.Inf" || s == "-.INF") {
        out = -INFINITY;
        return true;
    }
    if (s == ".nan" || s == ".NaN" || s == ".NAN") {
        out = NAN;
        return true;
    }
    size_t i = 0;
    if (i < s.size() && (s[i] == '-' || s[i] == '+'))
        ++i;
    size_t digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) { ++i; ++digits; }
    if (i < s.size() && s[i] == '.') {
        ++i;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) { ++i; ++digits; }
    }
    if (digits == 0)
        return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '-' || s[i] == '+'))
            ++i;
        size_t expDigits = 0;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) { ++i; ++expDigits; }
        if (expDigits == 0)
            return false;
    }
    if (i != s.size())
        return false;
    errno = 0;
    out = std::strtod(s.c_str(), nullptr);
    return errno == 0 && std::isfinite(out);
}

Json typedScalar(const std::string& tag, const std::string& value)
{
    if (tag == "!")   // quoted: always a string
        return value;
    if (isNullWord(value))
        return nullptr;
    if (value == "true" || value == "True" || value == "TRUE")
        return true;
    if (value == "false" || value == "False" || value == "FALSE")
        return false;
    std::int64_t i = 0;
    if (parseInteger(value, i))
        return i;
    double d = 0;
    if (parseFloat(value, d))
        return d;
    return value;
}

class Builder : public YAML::EventHandler {
public:
    Builder(const YamlLimits& limits, int lineOffset) : m_limits(limits), m_lineOffset(lineOffset) {}

    Json root;
    std::unordered_map<std::string, std::pair<int, int>> where;
    int documents = 0;

    void OnDocumentStart(const YAML::Mark& mark) override
    {
        if (++documents > 1)
            throw Refusal{mark, "a second YAML document ('---') is not allowed here"};
    }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override
    {
        checkAnchor(mark, anchor);
        place(mark, nullptr);
    }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override
    {
        throw Refusal{mark, "YAML aliases ('*name') are not supported; write the value out"};
    }
    void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  const std::string& value) override
    {
        checkAnchor(mark, anchor);
        checkTag(mark, tag);
        if (!m_stack.empty() && m_stack.back().isMap && !m_stack.back().haveKey) {
            // A key: strings only (a plain 1 or true is used as written).
            Frame& f = m_stack.back();
            if (value.size() > kMaxKeyBytes)
                throw Refusal{mark, "a key longer than " + std::to_string(kMaxKeyBytes) + " characters"};
            if (f.value->contains(value))
                throw Refusal{mark, "duplicate key '" + value + "'"};
            f.key = value;
            f.haveKey = true;
            return;
        }
        place(mark, typedScalar(tag, value));
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                         YAML::EmitterStyle::value) override
    {
        checkAnchor(mark, anchor);
        checkTag(mark, tag);
        open(mark, Json::array(), false);
    }
    void OnSequenceEnd() override { m_stack.pop_back(); }
    void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                    YAML::EmitterStyle::value) override
    {
        checkAnchor(mark, anchor);
        checkTag(mark, tag);
        open(mark, Json::object(), true);
    }
    void OnMapEnd() override { m_stack.pop_back(); }

private:
    struct Frame {
        Json* value;
        std::string pointer;
        bool isMap;
        bool haveKey = false;
        std::string key;
    };

    void checkAnchor(const YAML::Mark& mark, YAML::anchor_t anchor) const
    {
        if (anchor != YAML::NullAnchor)
            throw Refusal{mark, "YAML anchors ('&name') are not supported; write the value out"};
    }
    void checkTag(const YAML::Mark& mark, const std::string& tag) const
    {
        if (tag != "?" && tag != "!" && !tag.empty())
            throw Refusal{mark, "YAML tags ('" + tag + "') are not supported; remove the tag"};
    }

    // Puts `v` where the parser is: the root, the next array element, or the pending key's value.
    Json* place(const YAML::Mark& mark, Json v)
    {
        if (++m_nodes > m_limits.maxNodes)
            throw Refusal{mark, "more than " + std::to_string(m_limits.maxNodes) + " YAML values"};
        std::string pointer;
        Json* slot = nullptr;
        if (m_stack.empty()) {
            root = std::move(v);
            slot = &root;
        } else {
            Frame& f = m_stack.back();
            if (f.isMap) {
                if (!f.haveKey)
                    throw Refusal{mark, "only plain text is supported as a mapping key"};
                pointer = kf::json::child(f.pointer, f.key);
                slot = &(*f.value)[f.key];
                *slot = std::move(v);
                f.haveKey = false;
            } else {
                pointer = kf::json::child(f.pointer, f.value->size());
                f.value->push_back(std::move(v));
                slot = &f.value->back();
            }
        }
        // Positions are for messages: past a budget they are no longer recorded (an error then
        // names the nearest recorded parent), so a document's table stays small.
        if (m_whereBytes + pointer.size() <= kMaxWhereBytes) {
            m_whereBytes += pointer.size() + 16;
            where[pointer] = {mark.line + m_lineOffset, mark.column + 1};
        }
        return slot;
    }

    void open(const YAML::Mark& mark, Json v, bool isMap)
    {
        if (int(m_stack.size()) >= m_limits.maxDepth)
            throw Refusal{mark, "YAML nested deeper than " + std::to_string(m_limits.maxDepth) + " levels"};
        std::string pointer = m_stack.empty() ? std::string()
                              : m_stack.back().isMap ? kf::json::child(m_stack.back().pointer, m_stack.back().key)
                                                     : kf::json::child(m_stack.back().pointer, m_stack.back().value->size());
        Json* slot = place(mark, std::move(v));
        m_stack.push_back(Frame{slot, pointer, isMap});
    }

    static constexpr std::size_t kMaxKeyBytes = 1024;
    static constexpr std::size_t kMaxWhereBytes = 1 << 20;

    const YamlLimits& m_limits;
    int m_lineOffset;
    int m_nodes = 0;
    std::size_t m_whereBytes = 0;
    std::vector<Frame> m_stack;
};

} // namespace

std::string YamlDocument::locate(const std::string& origin, const std::string& pointer) const
{
    std::string p = pointer;
    for (;;) {
        auto it = where.find(p);
        if (it != where.end())
            return origin + ":" + std::to_string(it->second.first) + ":" + std::to_string(it->second.second);
        if (p.empty())
            return origin;
        p.resize(p.rfind('/'));
    }
}

Result<YamlDocument> parseYaml(std::string_view text, const std::string& origin, int firstLine,
                               const YamlLimits& limits)
{
    auto fail = [&](int line, int column, std::string why) {
        Error e;
        e.what = "read YAML";
        e.file = line > 0 ? origin + ":" + std::to_string(line) + ":" + std::to_string(column) : origin;
        e.why = std::move(why);
        return e;
    };
    if (text.size() > limits.maxBytes)
        return fail(0, 0, "the YAML text is " + std::to_string(text.size()) + " bytes; at most "
                              + std::to_string(limits.maxBytes) + " are read");
    if (text.find('\0') != std::string_view::npos)
        return fail(0, 0, "the YAML text contains a NUL byte");
    std::istringstream in{std::string(text)};
    Builder builder(limits, firstLine);
    try {
        YAML::Parser parser(in);
        while (parser.HandleNextDocument(builder)) {
        }
    } catch (const Refusal& r) {
        return fail(r.mark.line + firstLine, r.mark.column + 1, r.why);
    } catch (const YAML::Exception& e) {
        if (e.mark.is_null())
            return fail(0, 0, e.msg);
        return fail(e.mark.line + firstLine, e.mark.column + 1, e.msg);
    }
    return YamlDocument{std::move(builder.root), std::move(builder.where)};
}

} // namespace kf::agent
