// The tokens the static scan reads (engine/analysis/SourceTokens.h).
#include "engine/analysis/SourceTokens.h"

#include <algorithm>
#include <cctype>

namespace kf {

std::vector<ScanToken> scanTokens(std::string_view s)
{
    std::vector<ScanToken> out;
    bool inMacro = false;   // the body of a #define: scanned as code
    int line = 1;
    size_t lineStart = 0;
    bool lineHasCode = false;
    auto col = [&](size_t i) { return int(i - lineStart) + 1; };
    static const char* const puncts[] = {"<<=", ">>=", "...", "->", "::", "++", "--", "==", "!=", "<=", ">=", "&&", "||",
                                         "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>"};
    size_t i = 0;
    auto newline = [&](size_t at) {
        ++line;
        lineStart = at + 1;
        lineHasCode = false;
    };
    auto push = [&](ScanToken::Kind kind, std::string text, int atLine, int atColumn) {
        out.push_back({kind, std::move(text), atLine, atColumn, inMacro});
    };
    while (i < s.size()) {
        char c = s[i];
        if (c == '\n') {
            newline(i);
            inMacro = false;
            ++i;
            continue;
        }
        if (c == '\\' && inMacro && i + 1 < s.size() && s[i + 1] == '\n') {   // a continued #define
            newline(i + 1);
            i += 2;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            ++i;
            continue;
        }
        if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
            while (i < s.size() && s[i] != '\n')
                ++i;
            continue;
        }
        if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
            i += 2;
            while (i < s.size() && !(s[i] == '*' && i + 1 < s.size() && s[i + 1] == '/')) {
                if (s[i] == '\n')
                    newline(i);
                ++i;
            }
            i = std::min(s.size(), i + 2);
            continue;
        }
        if (c == '#' && !lineHasCode) {   // a preprocessor line, with its continuations
            size_t d = i + 1;
            while (d < s.size() && (s[d] == ' ' || s[d] == '\t'))
                ++d;
            if (s.substr(d, 6) == "define") {   // a macro's body is code that will run
                inMacro = true;
                lineHasCode = true;
                i = d + 6;
                continue;
            }
            while (i < s.size() && s[i] != '\n') {
                if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '\n') {
                    newline(i + 1);
                    i += 2;
                    continue;
                }
                ++i;
            }
            continue;
        }
        lineHasCode = true;
        const int tl = line, tc = col(i);
        if (c == '"' || c == '\'') {
            // A literal ends at its closing quote, or, unterminated, at the end of its line (the
            // newline is left for the loop to count); a backslash-newline inside continues it.
            size_t j = i + 1;
            while (j < s.size() && s[j] != c && s[j] != '\n') {
                if (s[j] == '\\' && j + 1 < s.size()) {
                    if (s[j + 1] == '\n')
                        newline(j + 1);
                    j += 2;
                } else {
                    ++j;
                }
            }
            const bool closed = j < s.size() && s[j] == c;
            push(ScanToken::String, std::string(s.substr(i, j - i + (closed ? 1 : 0))), tl, tc);
            i = closed ? j + 1 : j;
            continue;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            size_t j = i;
            while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_'))
                ++j;
            // R"delim( ... )delim"
            if (j < s.size() && s[j] == '"' && s.substr(i, j - i).back() == 'R') {
                size_t open = s.find('(', j);
                if (open != std::string_view::npos) {
                    std::string close = ")" + std::string(s.substr(j + 1, open - j - 1)) + "\"";
                    size_t end = s.find(close, open);
                    end = end == std::string_view::npos ? s.size() : end + close.size();
                    for (size_t k = i; k < end; ++k)
                        if (s[k] == '\n')
                            newline(k);
                    push(ScanToken::String, std::string(s.substr(i, end - i)), tl, tc);
                    i = end;
                    continue;
                }
            }
            push(ScanToken::Ident, std::string(s.substr(i, j - i)), tl, tc);
            i = j;
            continue;
        }
        if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
            size_t j = i;
            while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '.' || s[j] == '\''
                                    || ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E'))))
                ++j;
            push(ScanToken::Number, std::string(s.substr(i, j - i)), tl, tc);
            i = j;
            continue;
        }
        std::string p(1, c);
        for (const char* q : puncts)
            if (s.substr(i, std::char_traits<char>::length(q)) == q) {
                p = q;
                break;
            }
        push(ScanToken::Punct, p, tl, tc);
        i += p.size();
    }
    return out;
}

} // namespace kf
