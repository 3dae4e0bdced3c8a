#pragma once
// The tokens of a CUDA source as the static scan (engine/analysis/SourceScan.h) reads them:
// comments dropped, string literals kept whole (inline asm templates live in them), preprocessor
// lines skipped except a #define's body, which is code that will run and is marked `macro`.

#include <string>
#include <string_view>
#include <vector>

namespace kf {

struct ScanToken {
    enum Kind { Ident, Punct, String, Number } kind;
    std::string text;
    int line, column;   ///< 1-based
    bool macro = false; ///< inside a #define
};

std::vector<ScanToken> scanTokens(std::string_view source);

} // namespace kf
