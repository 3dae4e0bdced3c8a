#pragma once
// The expression language of launch plans, shape constraints and cost formulas.
//
//   ceil_div(N, 256)      B * D * 2 + D * 2      min(1024, next_pow2(D))      D % 8 == 0 && B >= 1
//
// Values are 64-bit integers or doubles; integer arithmetic stays exact (`/` on two integers
// truncates, as in C). Functions: ceil_div, round_up, min, max, abs, next_pow2, log2 (floor for
// integers), sqrt, float, int. Comparisons and && || ! yield 0 or 1. Symbols are shape symbols
// and task parameters. Parsing and evaluation never throw; errors name the column.

#include "engine/core/Result.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kf {

struct Value {
    bool isInt = true;
    std::int64_t i = 0;
    double d = 0.0;

    static Value integer(std::int64_t v) { return {true, v, static_cast<double>(v)}; }
    static Value real(double v) { return {false, 0, v}; }
    double asDouble() const { return isInt ? static_cast<double>(i) : d; }
};

using Env = std::map<std::string, Value, std::less<>>;

class Expr {
public:
    struct Node;

    Expr();
    ~Expr();
    Expr(const Expr&);
    Expr& operator=(const Expr&);
    Expr(Expr&&) noexcept;
    Expr& operator=(Expr&&) noexcept;

    /// Parses `text`. Errors: "column 7: expected ')' after the arguments of min".
    static Result<Expr> parse(const std::string& text);
    /// A constant expression (used when JSON gives a bare number).
    static Expr constant(Value v);

    /// Evaluates with the given symbols. Errors: unknown symbol (listing the known ones),
    /// division by zero, integer overflow, wrong argument count.
    Result<Value> eval(const Env& env) const;
    /// Evaluates and requires an integer result (grid, block, sizes).
    Result<std::int64_t> evalInt(const Env& env) const;

    /// Symbols referenced, sorted and unique.
    std::vector<std::string> symbols() const;
    const std::string& text() const { return m_text; }
    /// The parsed tree as JSON, for runtimes that evaluate plans without this parser (the .cast
    /// manifest, docs/cast-format.md): {"int": 4}, {"real": 0.5}, {"sym": "B"},
    /// {"op": "-", "args": [x]} (unary), {"op": "*", "args": [a, b]}, {"call": "ceil_div", "args": [...]}.
    /// Null for an empty expression.
    nlohmann::json tree() const;
    bool empty() const { return !m_root; }

private:
    std::string m_text;
    std::shared_ptr<const Node> m_root;
};

} // namespace kf
