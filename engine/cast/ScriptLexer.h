#pragma once
// The lexer of the TorchScript reader (engine/cast/ScriptSyntax.h): code/__torch__.py cut into
// logical lines of tokens, as Python does it: physical lines joined inside brackets and after a
// backslash, comments and blank lines dropped, the indentation of each line kept. Bracket
// nesting is bounded by kMaxScriptNesting; a problem is a ScriptError naming the line.

#include "engine/cast/ScriptSyntax.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kf::cast::script {

struct Token {
    enum class Kind { Name, Int, Float, Str, Op, End };
    Kind kind = Kind::End;
    std::string text;
    std::int64_t integer = 0;
    double number = 0.0;
    int line = 0;
};

/// One logical line: physical lines joined inside brackets, comments and blank lines dropped.
struct Line {
    int indent = 0;
    int line = 0;
    std::vector<Token> toks;
};

[[noreturn]] void fail(int line, std::string why);

std::vector<Line> logicalLines(std::string_view code);

} // namespace kf::cast::script
