#include "engine/cast/ScriptLexer.h"

#include <charconv>
#include <utility>

namespace kf::cast::script {

void fail(int line, std::string why) { throw ScriptError{line, std::move(why), {}}; }

namespace {

bool identStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool identChar(char c) { return identStart(c) || (c >= '0' && c <= '9'); }
bool digit(char c) { return c >= '0' && c <= '9'; }

std::string shown(char c)
{
    if (c >= 0x20 && c < 0x7f)
        return std::string("'") + c + "'";
    static const char* hex = "0123456789abcdef";
    const auto u = static_cast<unsigned char>(c);
    return std::string("byte 0x") + hex[u >> 4] + hex[u & 15];
}

Token number(std::string_view code, std::size_t& i, int line)
{
    const std::size_t start = i;
    bool real = false;
    while (i < code.size() && digit(code[i]))
        ++i;
    if (i < code.size() && code[i] == '.') {
        real = true;
        ++i;
        while (i < code.size() && digit(code[i]))
            ++i;
    }
    if (i < code.size() && (code[i] == 'e' || code[i] == 'E')) {
        real = true;
        ++i;
        if (i < code.size() && (code[i] == '+' || code[i] == '-'))
            ++i;
        if (i >= code.size() || !digit(code[i]))
            fail(line, "the number \"" + std::string(code.substr(start, i - start)) + "\" has no exponent digits");
        while (i < code.size() && digit(code[i]))
            ++i;
    }
    if (i < code.size() && identChar(code[i]))
        fail(line, "the number \"" + std::string(code.substr(start, i + 1 - start)) + "\" is malformed");
    Token t;
    t.line = line;
    t.text = std::string(code.substr(start, i - start));
    std::string digits = t.text;
    if (digits.back() == '.')
        digits += '0';   // "1." as TorchScript prints 1.0
    const char* end = digits.data() + digits.size();
    if (real) {
        t.kind = Token::Kind::Float;
        auto r = std::from_chars(digits.data(), end, t.number);
        if (r.ec != std::errc() || r.ptr != end)
            fail(line, "the number " + t.text + " is out of range");
    } else {
        t.kind = Token::Kind::Int;
        auto r = std::from_chars(digits.data(), end, t.integer);
        if (r.ec != std::errc() || r.ptr != end)
            fail(line, "the integer " + t.text + " is out of range");
    }
    return t;
}

Token string(std::string_view code, std::size_t& i, int line)
{
    const char quote = code[i++];
    Token t;
    t.kind = Token::Kind::Str;
    t.line = line;
    while (true) {
        if (i >= code.size() || code[i] == '\n')
            fail(line, "a string is not terminated on its line");
        const char c = code[i++];
        if (c == quote)
            return t;
        if (c != '\\') {
            t.text += c;
            continue;
        }
        if (i >= code.size() || code[i] == '\n')
            fail(line, "a string is not terminated on its line");
        const char e = code[i++];
        switch (e) {
        case 'n': t.text += '\n'; break;
        case 't': t.text += '\t'; break;
        case 'r': t.text += '\r'; break;
        default: t.text += e; break;   // \\ \' \" and anything else as itself
        }
    }
}

} // namespace

std::vector<Line> logicalLines(std::string_view code)
{
    std::vector<Line> lines;
    std::vector<std::pair<char, int>> open;   // brackets open across lines: closer, line
    Line cur;
    int line = 1;
    bool lineStart = true;
    std::size_t i = 0;
    auto finish = [&] {
        if (!cur.toks.empty())
            lines.push_back(std::move(cur));
        cur = Line{};
        lineStart = true;
    };
    while (i < code.size()) {
        if (lineStart) {
            int indent = 0;
            while (i < code.size() && code[i] == ' ')
                ++indent, ++i;
            if (i < code.size() && code[i] == '\t')
                fail(line, "a tab indents the line; TorchScript indents with spaces");
            cur.indent = indent;
            cur.line = line;
            lineStart = false;
            continue;
        }
        const char c = code[i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
            ++i;
        } else if (c == '#') {
            while (i < code.size() && code[i] != '\n')
                ++i;
        } else if (c == '\\' && i + 1 < code.size() && code[i + 1] == '\n') {
            i += 2;
            ++line;
        } else if (c == '\n') {
            ++i;
            ++line;
            if (open.empty())
                finish();
        } else if (identStart(c)) {
            const std::size_t start = i;
            while (i < code.size() && identChar(code[i]))
                ++i;
            cur.toks.push_back({Token::Kind::Name, std::string(code.substr(start, i - start)), 0, 0.0, line});
        } else if (digit(c)) {
            cur.toks.push_back(number(code, i, line));
        } else if (c == '"' || c == '\'') {
            cur.toks.push_back(string(code, i, line));
        } else {
            static const char* two[] = {"->", "==", "!=", "<=", ">=", "**", "//"};
            std::string op(1, c);
            for (const char* t : two)
                if (code.substr(i, 2) == t)
                    op = t;
            if (op.size() == 1 && std::string_view("()[]{},:.=+-*/%@<>!&|^~;").find(c) == std::string_view::npos)
                fail(line, "unexpected " + shown(c));
            if (c == '(' || c == '[' || c == '{') {
                if (open.size() >= static_cast<std::size_t>(kMaxScriptNesting))
                    fail(line, "brackets nest more than " + std::to_string(kMaxScriptNesting) + " deep");
                open.push_back({c == '(' ? ')' : c == '[' ? ']' : '}', line});
            } else if (c == ')' || c == ']' || c == '}') {
                if (open.empty() || open.back().first != c)
                    fail(line, std::string("'") + c + "' closes no bracket");
                open.pop_back();
            }
            i += op.size();
            cur.toks.push_back({Token::Kind::Op, op, 0, 0.0, line});
        }
    }
    if (!open.empty())
        fail(open.back().second, std::string("a bracket opened here is never closed with '") + open.back().first + "'");
    finish();
    return lines;
}

} // namespace kf::cast::script
