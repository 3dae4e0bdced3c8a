// The tokens the static scan reads (engine/analysis/SourceTokens.h).
#include "engine/analysis/SourceTokens.h"

#include <algorithm>
#include <cctype>

namespace kf {

namespace {

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool isDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)); }

// One pass over the source: where it is, which line it is on, and the tokens so far. Each scanner
// below starts at `i` on the first character of its kind and leaves `i` just past what it read.
struct Cursor {
    std::string_view s;
    size_t i = 0;
    int line = 1;
    size_t lineStart = 0;
    bool lineHasCode = false;
    bool inMacro = false;   // the body of a #define: scanned as code
    std::vector<ScanToken> out;

    bool at(size_t k, char c) const { return k < s.size() && s[k] == c; }
    int column(size_t k) const { return int(k - lineStart) + 1; }
    void newline(size_t at)
    {
        ++line;
        lineStart = at + 1;
        lineHasCode = false;
    }
    void push(ScanToken::Kind kind, std::string text, int atLine, int atColumn)
    {
        out.push_back({kind, std::move(text), atLine, atColumn, inMacro});
    }

    void skipLineComment()
    {
        while (i < s.size() && s[i] != '\n')
            ++i;
    }
    void skipBlockComment()
    {
        i += 2;
        while (i < s.size() && !(s[i] == '*' && at(i + 1, '/'))) {
            if (s[i] == '\n')
                newline(i);
            ++i;
        }
        i = std::min(s.size(), i + 2);
    }
    // A preprocessor line with its continuations is skipped, except a #define, whose body is code
    // that will run: the loop goes on scanning it, marked as a macro, up to its last line.
    void preprocessorLine()
    {
        size_t d = i + 1;
        while (d < s.size() && (s[d] == ' ' || s[d] == '\t'))
            ++d;
        if (s.substr(d, 6) == "define") {
            inMacro = true;
            lineHasCode = true;
            i = d + 6;
            return;
        }
        while (i < s.size() && s[i] != '\n') {
            if (s[i] == '\\' && at(i + 1, '\n')) {
                newline(i + 1);
                i += 2;
                continue;
            }
            ++i;
        }
    }
    // A literal ends at its closing quote, or, unterminated, at the end of its line (the newline
    // is left for the loop to count); a backslash-newline inside continues it.
    void quoted(int tl, int tc)
    {
        const char q = s[i];
        size_t j = i + 1;
        while (j < s.size() && s[j] != q && s[j] != '\n') {
            if (s[j] == '\\' && j + 1 < s.size()) {
                if (s[j + 1] == '\n')
                    newline(j + 1);
                j += 2;
            } else {
                ++j;
            }
        }
        const bool closed = at(j, q);
        push(ScanToken::String, std::string(s.substr(i, j - i + (closed ? 1 : 0))), tl, tc);
        i = closed ? j + 1 : j;
    }
    // R"delim( ... )delim" starting at i, its prefix ending at `quote`; false when no '(' opens it.
    bool rawString(size_t quote, int tl, int tc)
    {
        const size_t open = s.find('(', quote);
        if (open == std::string_view::npos)
            return false;
        const std::string close = ")" + std::string(s.substr(quote + 1, open - quote - 1)) + "\"";
        size_t end = s.find(close, open);
        end = end == std::string_view::npos ? s.size() : end + close.size();
        for (size_t k = i; k < end; ++k)
            if (s[k] == '\n')
                newline(k);
        push(ScanToken::String, std::string(s.substr(i, end - i)), tl, tc);
        i = end;
        return true;
    }
    // An identifier, or the prefix of a raw string literal.
    void word(int tl, int tc)
    {
        size_t j = i;
        while (j < s.size() && isIdentChar(s[j]))
            ++j;
        if (at(j, '"') && s[j - 1] == 'R' && rawString(j, tl, tc))
            return;
        push(ScanToken::Ident, std::string(s.substr(i, j - i)), tl, tc);
        i = j;
    }
    // A pp-number: digits, letters, '.', digit separators and an exponent's sign.
    void number(int tl, int tc)
    {
        size_t j = i;
        while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '.' || s[j] == '\''
                                || ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E'))))
            ++j;
        push(ScanToken::Number, std::string(s.substr(i, j - i)), tl, tc);
        i = j;
    }
    // The longest multi-character operator here, else the one character.
    void punct(int tl, int tc)
    {
        static const char* const puncts[] = {"<<=", ">>=", "...", "->", "::", "++", "--", "==", "!=", "<=", ">=", "&&", "||",
                                             "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>"};
        std::string p(1, s[i]);
        for (const char* q : puncts)
            if (s.substr(i, std::char_traits<char>::length(q)) == q) {
                p = q;
                break;
            }
        push(ScanToken::Punct, p, tl, tc);
        i += p.size();
    }

    // What is not a token: line ends, a #define's continuation, blanks, comments, preprocessor
    // lines. Returns false, having read nothing, when a token starts at i.
    bool skipped()
    {
        const char c = s[i];
        if (c == '\n') {
            newline(i);
            inMacro = false;
            ++i;
        } else if (c == '\\' && inMacro && at(i + 1, '\n')) {   // a continued #define
            newline(i + 1);
            i += 2;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            ++i;
        } else if (c == '/' && at(i + 1, '/')) {
            skipLineComment();
        } else if (c == '/' && at(i + 1, '*')) {
            skipBlockComment();
        } else if (c == '#' && !lineHasCode) {
            preprocessorLine();
        } else {
            return false;
        }
        return true;
    }
    void token()
    {
        lineHasCode = true;
        const char c = s[i];
        const int tl = line, tc = column(i);
        if (c == '"' || c == '\'')
            quoted(tl, tc);
        else if (isIdentStart(c))
            word(tl, tc);
        else if (isDigit(c) || (c == '.' && i + 1 < s.size() && isDigit(s[i + 1])))
            number(tl, tc);
        else
            punct(tl, tc);
    }
};

} // namespace

std::vector<ScanToken> scanTokens(std::string_view s)
{
    Cursor cur{s};
    while (cur.i < s.size())
        if (!cur.skipped())
            cur.token();
    return std::move(cur.out);
}

} // namespace kf
