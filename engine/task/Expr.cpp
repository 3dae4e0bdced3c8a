#include "engine/task/Expr.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>

namespace kf {

struct Expr::Node {
    enum class Kind { Number, Symbol, Unary, Binary, Call };
    Kind kind = Kind::Number;
    Value value;
    std::string name;  // symbol or function name, or operator spelling
    std::vector<std::shared_ptr<const Node>> kids;
    int column = 1;
};

namespace {

using NodePtr = std::shared_ptr<const Expr::Node>;
using Node = Expr::Node;

struct ParseError {
    int column;
    std::string message;
};

class Parser {
public:
    explicit Parser(const std::string& text) : m_text(text) {}

    // Limits that keep a hostile expression from exhausting the stack: a left-deep chain of N
    // operators is N frames deep when evaluated, nesting is as deep as its parentheses.
    static constexpr size_t kMaxLength = 4096;
    static constexpr int kMaxDepth = 200;

    NodePtr parseAll()
    {
        if (m_text.size() > kMaxLength)
            throw ParseError{static_cast<int>(kMaxLength) + 1, "the expression is longer than " + std::to_string(kMaxLength) +
                                                                   " characters"};
        NodePtr n = parseOr();
        skipSpace();
        if (m_pos < m_text.size())
            error("unexpected '" + std::string(1, m_text[m_pos]) + "'");
        return n;
    }

private:
    // One more level of nesting while it lives: an opening parenthesis, a call's or a unary
    // operator's, counted once each, so the limit is what a reader counts in the text (each of
    // them is a few parser frames deep). `column` is the one the message names.
    struct Nest {
        Nest(Parser& p, int column) : parser(p)
        {
            if (++parser.m_depth > kMaxDepth)
                parser.error("the expression nests deeper than " + std::to_string(kMaxDepth) +
                                 " levels (parentheses, calls and unary operators)",
                             column);
        }
        ~Nest() { --parser.m_depth; }
        Parser& parser;
    };

    [[noreturn]] void error(const std::string& message, int column = 0)
    {
        throw ParseError{column ? column : static_cast<int>(m_pos) + 1, message};
    }

    void skipSpace()
    {
        while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos])))
            ++m_pos;
    }

    bool accept(std::string_view tok)
    {
        skipSpace();
        if (m_text.compare(m_pos, tok.size(), tok) == 0) {
            // "<" must not swallow the first half of "<=" and so on.
            if (tok.size() == 1 && m_pos + 1 < m_text.size() && m_text[m_pos + 1] == '=' &&
                (tok == "<" || tok == ">" || tok == "!" || tok == "="))
                return false;
            m_pos += tok.size();
            return true;
        }
        return false;
    }

    NodePtr binary(const std::string& op, NodePtr a, NodePtr b, int column)
    {
        auto n = std::make_shared<Node>();
        n->kind = Node::Kind::Binary;
        n->name = op;
        n->kids = {std::move(a), std::move(b)};
        n->column = column;
        return n;
    }

    template <class Next>
    NodePtr leftAssoc(std::initializer_list<std::string_view> ops, Next next)
    {
        NodePtr lhs = (this->*next)();
        for (;;) {
            skipSpace();
            int col = static_cast<int>(m_pos) + 1;
            bool matched = false;
            for (auto op : ops) {
                if (accept(op)) {
                    lhs = binary(std::string(op), lhs, (this->*next)(), col);
                    matched = true;
                    break;
                }
            }
            if (!matched)
                return lhs;
        }
    }

    NodePtr parseOr() { return leftAssoc({"||"}, &Parser::parseAnd); }
    NodePtr parseAnd() { return leftAssoc({"&&"}, &Parser::parseCmp); }
    NodePtr parseCmp() { return leftAssoc({"==", "!=", "<=", ">=", "<", ">"}, &Parser::parseAdd); }
    NodePtr parseAdd() { return leftAssoc({"+", "-"}, &Parser::parseMul); }
    NodePtr parseMul() { return leftAssoc({"*", "/", "%"}, &Parser::parseUnary); }

    NodePtr parseUnary()
    {
        skipSpace();
        int col = static_cast<int>(m_pos) + 1;
        for (std::string_view op : {"-", "+", "!"}) {
            if (accept(op)) {
                const Nest nest(*this, col);
                auto n = std::make_shared<Node>();
                n->kind = Node::Kind::Unary;
                n->name = std::string(op);
                n->kids = {parseUnary()};
                n->column = col;
                return n;
            }
        }
        return parsePrimary();
    }

    NodePtr parsePrimary()
    {
        skipSpace();
        int col = static_cast<int>(m_pos) + 1;
        if (m_pos >= m_text.size())
            error("expression ends where a value was expected");
        char c = m_text[m_pos];
        if (c == '(') {
            ++m_pos;
            const Nest nest(*this, col);
            NodePtr inner = parseOr();
            if (!accept(")"))
                error("expected ')' to close the '(' at column " + std::to_string(col));
            return inner;
        }
        if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
            size_t start = m_pos;
            bool real = false;
            while (m_pos < m_text.size() &&
                   (std::isalnum(static_cast<unsigned char>(m_text[m_pos])) || m_text[m_pos] == '.' ||
                    ((m_text[m_pos] == '-' || m_text[m_pos] == '+') &&
                     (m_text[m_pos - 1] == 'e' || m_text[m_pos - 1] == 'E')))) {
                if (m_text[m_pos] == '.' || m_text[m_pos] == 'e' || m_text[m_pos] == 'E')
                    real = true;
                ++m_pos;
            }
            std::string lit = m_text.substr(start, m_pos - start);
            auto n = std::make_shared<Node>();
            n->column = col;
            try {
                size_t used = 0;
                if (real) {
                    n->value = Value::real(std::stod(lit, &used));
                } else {
                    n->value = Value::integer(std::stoll(lit, &used, 10));
                }
                if (used != lit.size())
                    error("malformed number '" + lit + "'", col);
            } catch (const std::out_of_range&) {
                error("number '" + lit + "' is out of range", col);
            } catch (const std::invalid_argument&) {
                error("malformed number '" + lit + "'", col);
            }
            return n;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            size_t start = m_pos;
            while (m_pos < m_text.size() &&
                   (std::isalnum(static_cast<unsigned char>(m_text[m_pos])) || m_text[m_pos] == '_'))
                ++m_pos;
            std::string name = m_text.substr(start, m_pos - start);
            auto n = std::make_shared<Node>();
            n->name = name;
            n->column = col;
            if (accept("(")) {
                const Nest nest(*this, static_cast<int>(m_pos));
                n->kind = Node::Kind::Call;
                if (!accept(")")) {
                    do {
                        n->kids.push_back(parseOr());
                    } while (accept(","));
                    if (!accept(")"))
                        error("expected ',' or ')' in the arguments of " + name);
                }
            } else {
                n->kind = Node::Kind::Symbol;
            }
            return n;
        }
        error("unexpected '" + std::string(1, c) + "'");
    }

    const std::string& m_text;
    size_t m_pos = 0;
    int m_depth = 0;
};

struct EvalError {
    int column;
    std::string message;
};

struct FunctionInfo {
    std::string_view name;
    int arity;
};
constexpr FunctionInfo kFunctions[] = {
    {"ceil_div", 2}, {"round_up", 2}, {"min", 2}, {"max", 2},   {"abs", 1},
    {"next_pow2", 1}, {"log2", 1},    {"sqrt", 1}, {"float", 1}, {"int", 1},
};

std::int64_t checked(bool overflow, std::int64_t v, int column)
{
    if (overflow)
        throw EvalError{column, "integer overflow"};
    return v;
}

Value evalNode(const Node& n, const Env& env);

Value evalUnary(const Node& n, const Env& env)
{
    Value a = evalNode(*n.kids[0], env);
    if (n.name == "!")
        return Value::integer(a.asDouble() == 0.0 ? 1 : 0);
    if (n.name == "+")
        return a;
    if (a.isInt) {
        std::int64_t r = 0;
        { const bool ovf = __builtin_sub_overflow(std::int64_t{0}, a.i, &r); return Value::integer(checked(ovf, r, n.column)); }
    }
    return Value::real(-a.d);
}

Value evalBinary(const Node& n, const Env& env)
{
    const std::string& op = n.name;
    if (op == "&&" || op == "||") {
        bool a = evalNode(*n.kids[0], env).asDouble() != 0.0;
        if (op == "&&" && !a)
            return Value::integer(0);
        if (op == "||" && a)
            return Value::integer(1);
        return Value::integer(evalNode(*n.kids[1], env).asDouble() != 0.0 ? 1 : 0);
    }
    Value a = evalNode(*n.kids[0], env);
    Value b = evalNode(*n.kids[1], env);
    if (op == "==" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=") {
        bool r;
        if (a.isInt && b.isInt) {
            r = op == "==" ? a.i == b.i : op == "!=" ? a.i != b.i : op == "<" ? a.i < b.i
              : op == "<=" ? a.i <= b.i : op == ">" ? a.i > b.i : a.i >= b.i;
        } else {
            double x = a.asDouble(), y = b.asDouble();
            r = op == "==" ? x == y : op == "!=" ? x != y : op == "<" ? x < y
              : op == "<=" ? x <= y : op == ">" ? x > y : x >= y;
        }
        return Value::integer(r ? 1 : 0);
    }
    if (a.isInt && b.isInt) {
        std::int64_t r = 0;
        if (op == "+")
            { const bool ovf = __builtin_add_overflow(a.i, b.i, &r); return Value::integer(checked(ovf, r, n.column)); }
        if (op == "-")
            { const bool ovf = __builtin_sub_overflow(a.i, b.i, &r); return Value::integer(checked(ovf, r, n.column)); }
        if (op == "*")
            { const bool ovf = __builtin_mul_overflow(a.i, b.i, &r); return Value::integer(checked(ovf, r, n.column)); }
        if (b.i == 0)
            throw EvalError{n.column, std::string(op == "/" ? "division" : "modulo") + " by zero"};
        if (a.i == INT64_MIN && b.i == -1)
            throw EvalError{n.column, "integer overflow"};
        return Value::integer(op == "/" ? a.i / b.i : a.i % b.i);
    }
    double x = a.asDouble(), y = b.asDouble();
    if (op == "+")
        return Value::real(x + y);
    if (op == "-")
        return Value::real(x - y);
    if (op == "*")
        return Value::real(x * y);
    if (y == 0.0)
        throw EvalError{n.column, std::string(op == "/" ? "division" : "modulo") + " by zero"};
    return Value::real(op == "/" ? x / y : std::fmod(x, y));
}

// A function of kFunctions on its evaluated arguments (their number already checked).
Value callFunction(const Node& n, const std::vector<Value>& args)
{
    const std::string& fn = n.name;
    auto needInts = [&]() {
        for (const auto& a : args)
            if (!a.isInt)
                throw EvalError{n.column, fn + " needs integer arguments"};
    };
    if (fn == "ceil_div" || fn == "round_up") {
        needInts();
        if (args[1].i <= 0)
            throw EvalError{n.column, fn + ": the divisor must be positive, got " + std::to_string(args[1].i)};
        std::int64_t a = args[0].i, b = args[1].i;
        std::int64_t q = a >= 0 ? a / b + (a % b != 0) : a / b;
        if (fn == "ceil_div")
            return Value::integer(q);
        std::int64_t r = 0;
        { const bool ovf = __builtin_mul_overflow(q, b, &r); return Value::integer(checked(ovf, r, n.column)); }
    }
    if (fn == "min" || fn == "max") {
        if (args[0].isInt && args[1].isInt)
            return Value::integer(fn == "min" ? std::min(args[0].i, args[1].i) : std::max(args[0].i, args[1].i));
        double x = args[0].asDouble(), y = args[1].asDouble();
        return Value::real(fn == "min" ? std::min(x, y) : std::max(x, y));
    }
    if (fn == "abs") {
        if (args[0].isInt && args[0].i == std::numeric_limits<std::int64_t>::min())
            throw EvalError{n.column, "integer overflow: abs(" + std::to_string(args[0].i) + ") does not fit in int64"};
        return args[0].isInt ? Value::integer(args[0].i < 0 ? -args[0].i : args[0].i)
                             : Value::real(std::fabs(args[0].d));
    }
    if (fn == "next_pow2") {
        needInts();
        std::int64_t v = 1;
        while (v < args[0].i) {
            if (v > INT64_MAX / 2)
                throw EvalError{n.column, "integer overflow"};
            v *= 2;
        }
        return Value::integer(v);
    }
    if (fn == "log2") {
        if (args[0].isInt) {
            if (args[0].i <= 0)
                throw EvalError{n.column, "log2 of a non-positive integer"};
            std::int64_t r = 0;
            for (std::int64_t v = args[0].i; v > 1; v >>= 1)
                ++r;
            return Value::integer(r);
        }
        return Value::real(std::log2(args[0].d));
    }
    if (fn == "sqrt")
        return Value::real(std::sqrt(args[0].asDouble()));
    if (fn == "float")
        return Value::real(args[0].asDouble());
    // int(): truncation toward zero, like a C cast.
    if (args[0].isInt)
        return args[0];
    if (!std::isfinite(args[0].d) || std::fabs(args[0].d) > 9.2e18)
        throw EvalError{n.column, "int() of a value out of range"};
    return Value::integer(static_cast<std::int64_t>(args[0].d));
}

Value evalCall(const Node& n, const Env& env)
{
    const FunctionInfo* f = nullptr;
    for (const auto& fi : kFunctions)
        if (fi.name == n.name)
            f = &fi;
    if (!f) {
        std::string names;
        for (const auto& fi : kFunctions)
            names += (names.empty() ? "" : ", ") + std::string(fi.name);
        throw EvalError{n.column, "unknown function '" + n.name + "'; available: " + names};
    }
    if (static_cast<int>(n.kids.size()) != f->arity)
        throw EvalError{n.column, n.name + " takes " + std::to_string(f->arity) + " argument" +
                                      (f->arity == 1 ? "" : "s") + ", got " + std::to_string(n.kids.size())};
    std::vector<Value> args;
    for (const auto& k : n.kids)
        args.push_back(evalNode(*k, env));
    return callFunction(n, args);
}

Value evalNode(const Node& n, const Env& env)
{
    switch (n.kind) {
    case Node::Kind::Number:
        return n.value;
    case Node::Kind::Symbol: {
        auto it = env.find(n.name);
        if (it == env.end()) {
            std::string known;
            for (const auto& [k, v] : env)
                known += (known.empty() ? "" : ", ") + k;
            throw EvalError{n.column, "unknown symbol '" + n.name + "'" +
                                          (known.empty() ? "" : "; known symbols: " + known)};
        }
        return it->second;
    }
    case Node::Kind::Unary:
        return evalUnary(n, env);
    case Node::Kind::Binary:
        return evalBinary(n, env);
    case Node::Kind::Call:
        return evalCall(n, env);
    }
    return {};
}

nlohmann::json treeOf(const Node& n)
{
    switch (n.kind) {
    case Node::Kind::Number:
        return n.value.isInt ? nlohmann::json{{"int", n.value.i}} : nlohmann::json{{"real", n.value.d}};
    case Node::Kind::Symbol:
        return {{"sym", n.name}};
    case Node::Kind::Unary:
    case Node::Kind::Binary:
    case Node::Kind::Call: {
        nlohmann::json args = nlohmann::json::array();
        for (const auto& k : n.kids)
            args.push_back(treeOf(*k));
        return {{n.kind == Node::Kind::Call ? "call" : "op", n.name}, {"args", std::move(args)}};
    }
    }
    return nullptr;
}

void collectSymbols(const Node& n, std::set<std::string>& out)
{
    if (n.kind == Node::Kind::Symbol)
        out.insert(n.name);
    for (const auto& k : n.kids)
        collectSymbols(*k, out);
}

} // namespace

nlohmann::json Expr::tree() const
{
    return m_root ? treeOf(*m_root) : nlohmann::json();
}

Expr::Expr() = default;
Expr::~Expr() = default;
Expr::Expr(const Expr&) = default;
Expr& Expr::operator=(const Expr&) = default;
Expr::Expr(Expr&&) noexcept = default;
Expr& Expr::operator=(Expr&&) noexcept = default;

Result<Expr> Expr::parse(const std::string& text)
{
    try {
        Parser p(text);
        Expr e;
        e.m_text = text;
        e.m_root = p.parseAll();
        return e;
    } catch (const ParseError& pe) {
        return Error::failed("parse expression \"" + text + "\"", "column " + std::to_string(pe.column) + ": " + pe.message);
    }
}

Expr Expr::constant(Value v)
{
    Expr e;
    auto n = std::make_shared<Node>();
    n->value = v;
    e.m_root = std::move(n);
    if (v.isInt) {
        e.m_text = std::to_string(v.i);
    } else {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", v.d);
        e.m_text = buf;
    }
    return e;
}

Result<Value> Expr::eval(const Env& env) const
{
    if (!m_root)
        return Error::failed("evaluate expression", "the expression is empty");
    try {
        return evalNode(*m_root, env);
    } catch (const EvalError& ee) {
        return Error::failed("evaluate \"" + m_text + "\"", "column " + std::to_string(ee.column) + ": " + ee.message);
    }
}

Result<std::int64_t> Expr::evalInt(const Env& env) const
{
    auto v = eval(env);
    if (!v)
        return v.error();
    if (!v->isInt)
        return Error::failed("evaluate \"" + m_text + "\"", "the result " + std::to_string(v->d) + " is not an integer", "wrap it in int(...) or use integer arithmetic (ceil_div, /)");
    return v->i;
}

std::vector<std::string> Expr::symbols() const
{
    std::set<std::string> s;
    if (m_root)
        collectSymbols(*m_root, s);
    return {s.begin(), s.end()};
}

} // namespace kf
