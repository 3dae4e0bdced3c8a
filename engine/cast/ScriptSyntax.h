#pragma once
// The syntax half of the TorchScript reader (engine/cast/ScriptTape.h): the Python-like code that
// torch.jit.save writes to code/__torch__.py, cut into logical lines and parsed into the forward
// method of one module class. Only what a straight-line forward needs is understood: calls,
// names, attributes, literals, lists, tuples, assignments and return. Everything else is parsed
// far enough to be named in a refusal (`if`, `for`, indexing) or refused as a syntax error.
// The bytes are untrusted: the code is bounded (kMaxScriptBytes), nesting is bounded
// (kMaxScriptNesting) in the lexer and in the parser alike, and every problem is a ScriptError
// that carries the line, never a crash.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kf::cast::script {

inline constexpr std::size_t kMaxScriptBytes = std::size_t(1) << 20;
inline constexpr int kMaxScriptNesting = 64;

/// A refusal at `line` (1-based) of the code; `why` is one sentence without the place.
/// `hint` empty: the caller's default hint.
struct ScriptError {
    int line = 0;
    std::string why;
    std::string hint;
};

struct Node {
    enum class Kind { Name, Int, Float, Bool, None, Str, List, Tuple, Call, Attr, Subscript };
    Kind kind = Kind::None;
    int line = 0;
    std::string text;                  ///< Name: the name; Attr: the attribute; Str: the value
    std::int64_t integer = 0;
    double number = 0.0;
    bool flag = false;
    /// List, Tuple: the items. Call: the callee, the positional arguments, then the values of
    /// the keyword arguments. Attr: the object. Subscript: the object.
    std::vector<Node> children;
    /// Call: the names of the keyword arguments, in order; the last children are their values.
    /// (Not pairs with a Node: std::pair may not hold the incomplete Node.)
    std::vector<std::string> keywords;
};

struct Stmt {
    enum class Kind { Assign, Return, Expr, Unsupported, Broken };
    Kind kind = Kind::Expr;
    int line = 0;
    std::vector<std::string> targets;  ///< Assign: one name, or several unpacked from a tuple
    Node value;                        ///< Assign, Return (None when bare), Expr
    std::string keyword;               ///< Unsupported: "if", "for", "while", "assert"...
    std::string why;                   ///< Broken: the syntax error, raised when reached
};

struct Param {
    std::string name;
    std::string annotation;            ///< the type as written, "" when none ("Tensor")
    int line = 0;
};

struct Forward {
    std::string className;
    int line = 0;                      ///< of `def forward`
    std::vector<Param> params;         ///< `self` first
    std::vector<Stmt> body;
};

/// Parses `def forward` of class `className` in `code` (an empty name: the first class that has
/// one). Throws ScriptError.
Forward parseForward(std::string_view code, std::string_view className);

/// "torch.nn.functional.gelu" for a chain of attributes over a name, "" for anything else.
std::string dottedName(const Node& n);

} // namespace kf::cast::script
