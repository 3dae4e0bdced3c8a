#include "engine/analysis/SourceScan.h"

#include <algorithm>
#include <map>
#include <set>

namespace kf {
namespace {

struct Token {
    enum Kind { Ident, Punct, String, Number } kind;
    std::string text;
    int line, column;
};

// Comments and preprocessor lines are skipped; strings kept (asm templates live in them).
std::vector<Token> tokenize(std::string_view s)
{
    std::vector<Token> out;
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
    while (i < s.size()) {
        char c = s[i];
        if (c == '\n') {
            newline(i);
            ++i;
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
            size_t j = i + 1;
            while (j < s.size() && s[j] != c && s[j] != '\n')
                j += s[j] == '\\' ? 2 : 1;
            j = std::min(j, s.size());
            out.push_back({Token::String, std::string(s.substr(i, j - i + 1)), tl, tc});
            i = j + 1;
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
                    out.push_back({Token::String, std::string(s.substr(i, end - i)), tl, tc});
                    i = end;
                    continue;
                }
            }
            out.push_back({Token::Ident, std::string(s.substr(i, j - i)), tl, tc});
            i = j;
            continue;
        }
        if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
            size_t j = i;
            while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '.' || s[j] == '\''
                                    || ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E'))))
                ++j;
            out.push_back({Token::Number, std::string(s.substr(i, j - i)), tl, tc});
            i = j;
            continue;
        }
        std::string p(1, c);
        for (const char* q : puncts)
            if (s.substr(i, std::char_traits<char>::length(q)) == q) {
                p = q;
                break;
            }
        out.push_back({Token::Punct, p, tl, tc});
        i += p.size();
    }
    return out;
}

bool isAssignment(const std::string& t)
{
    static const std::set<std::string> ops = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--"};
    return ops.count(t) > 0;
}

bool isIntegerTypeWord(const std::string& t)
{
    static const std::set<std::string> words = {"uintptr_t", "intptr_t", "size_t", "ptrdiff_t", "long", "unsigned",
                                                "uint64_t", "int64_t", "uint32_t", "int32_t", "int", "uint", "ulong"};
    return words.count(t) > 0;
}

class Scanner {
public:
    explicit Scanner(std::vector<Token> t) : m_t(std::move(t)) {}

    std::vector<ScanFinding> run()
    {
        findDeclarations();
        for (size_t i = 0; i < m_t.size(); ++i) {
            const Token& t = m_t[i];
            if (t.kind == Token::Ident && (t.text == "asm" || t.text == "__asm__" || t.text == "__asm")) {
                add(t, "inline-asm", "inline asm: the scan cannot see what it does; make sure it keeps no state across "
                                     "launches and reads no clock");
                for (size_t j = i + 1; j < m_t.size() && j < i + 64 && m_t[j].text != ";"; ++j)
                    if (m_t[j].kind == Token::String && (m_t[j].text.find("globaltimer") != std::string::npos
                                                         || m_t[j].text.find("%clock") != std::string::npos))
                        add(m_t[j], "clock-control", "reads a hardware timer in inline asm: results must not depend on time");
            }
            if (t.kind == Token::Ident && (t.text == "clock" || t.text == "clock64" || t.text == "__globaltimer")
                && next(i, "(") && !prevIs(i, ".") && !prevIs(i, "->"))
                add(t, "clock-control", t.text + "() reads the clock: a kernel whose work or results depend on time "
                                        "behaves differently under the benchmark than under verification");
            if (t.kind == Token::Ident && m_globals.count(t.text) && m_depth[i] > 0)
                checkGlobalUse(i);
            if (t.kind == Token::Ident && m_pointers.count(t.text) && m_depth[i] > 0)
                checkPointerUse(i);
        }
        std::sort(m_found.begin(), m_found.end(), [](const ScanFinding& a, const ScanFinding& b) {
            return a.line != b.line ? a.line < b.line : a.column < b.column;
        });
        return m_found;
    }

private:
    bool next(size_t i, const char* text) const { return i + 1 < m_t.size() && m_t[i + 1].text == text; }
    bool prevIs(size_t i, const char* text) const { return i > 0 && m_t[i - 1].text == text; }

    void add(const Token& t, const char* rule, std::string message)
    {
        for (const ScanFinding& f : m_found)
            if (f.line == t.line && f.rule == rule)
                return;   // one per line and rule
        m_found.push_back({t.line, t.column, rule, std::move(message)});
    }

    // File-scope __device__/__managed__ variables (not __constant__, not functions) and the
    // pointer parameters of __global__ and __device__ functions. Depth counts the braces of code,
    // not those of namespaces or extern "C" blocks, so a namespace hides nothing.
    void findDeclarations()
    {
        m_depth.assign(m_t.size(), 0);
        std::vector<bool> braces;   // true: a code brace
        int depth = 0;
        for (size_t i = 0; i < m_t.size(); ++i) {
            if (m_t[i].text == "{") {
                const bool ns = (i >= 1 && m_t[i - 1].text == "namespace")
                                || (i >= 2 && m_t[i - 2].text == "namespace" && m_t[i - 1].kind == Token::Ident)
                                || (i >= 2 && m_t[i - 2].text == "extern" && m_t[i - 1].kind == Token::String);
                braces.push_back(!ns);
                if (!ns)
                    ++depth;
            }
            m_depth[i] = depth;
            if (m_t[i].text == "}" && !braces.empty()) {
                if (braces.back())
                    --depth;
                braces.pop_back();
            }
        }
        for (size_t i = 0; i < m_t.size(); ++i) {
            if (m_depth[i] != 0 || m_t[i].kind != Token::Ident)
                continue;
            if (m_t[i].text != "__device__" && m_t[i].text != "__managed__" && m_t[i].text != "__global__")
                continue;
            bool constant = false, function = false;
            std::string last;
            size_t j = i + 1;
            for (; j < m_t.size() && m_t[j].text != ";" && m_t[j].text != "=" && m_t[j].text != "[" && m_t[j].text != "{"; ++j) {
                if (m_t[j].text == "__constant__" || m_t[j].text == "const" || m_t[j].text == "constexpr")
                    constant = true;
                if (m_t[j].text == "(") {
                    function = true;
                    break;
                }
                if (m_t[j].kind == Token::Ident)
                    last = m_t[j].text;
                if (m_t[j].text == "," && !constant && !last.empty() && m_t[i].text != "__global__")
                    m_globals.insert(last);   // __device__ int a, b;
            }
            if (function)
                collectPointerParameters(j);
            else if (!constant && !last.empty() && m_t[i].text != "__global__")
                m_globals.insert(last);
        }
    }

    // The parameters of the list opening at `open` ("("): names declared with a '*'.
    void collectPointerParameters(size_t open)
    {
        int paren = 0;
        bool pointer = false;
        std::string name;
        for (size_t j = open + 1; j < m_t.size(); ++j) {
            const std::string& x = m_t[j].text;
            if (x == "(" || x == "<" || x == "[")
                ++paren;
            else if ((x == ")" || x == ">" || x == "]") && paren > 0)
                --paren;
            else if ((x == "," || x == ")") && paren == 0) {
                if (pointer && !name.empty())
                    m_pointers.insert(name);
                pointer = false;
                name.clear();
                if (x == ")")
                    return;
            } else if (x == "*")
                pointer = true;
            else if (m_t[j].kind == Token::Ident && x != "__restrict__" && x != "const" && x != "restrict")
                name = x;
        }
    }

    void checkGlobalUse(size_t i)
    {
        const Token& t = m_t[i];
        // An atomic* call taking it (or its address): a counter when it adds or increments.
        for (size_t k = i; k > 0 && k + 8 > i; --k) {
            const Token& p = m_t[k - 1];
            if (p.text == ";" || p.text == "{" || p.text == "}")
                break;
            if (p.kind == Token::Ident && p.text.rfind("atomic", 0) == 0) {
                bool counter = p.text == "atomicAdd" || p.text == "atomicInc" || p.text == "atomicSub";
                add(t, counter ? "launch-counter" : "device-global-written",
                    std::string(counter ? "a counter in the __device__ variable '" : "an atomic write to the __device__ variable '")
                        + t.text + "' keeps state from one launch to the next; use a zeroed scratch buffer");
                return;
            }
        }
        size_t j = i + 1;
        if (j < m_t.size() && m_t[j].text == "[") {   // name[...] = ...
            int b = 0;
            for (; j < m_t.size(); ++j) {
                if (m_t[j].text == "[")
                    ++b;
                else if (m_t[j].text == "]" && --b == 0)
                    break;
            }
            ++j;
        } else if (j < m_t.size() && m_t[j].text == ".") {   // name.field = ...
            j += 2;
        }
        const bool written = (j < m_t.size() && isAssignment(m_t[j].text)) || prevIs(i, "++") || prevIs(i, "--");
        if (written)
            add(t, "device-global-written", "the kernel writes the __device__ variable '" + t.text
                                                + "', which outlives the launch: state carried from one call to the next");
    }

    void checkPointerUse(size_t i)
    {
        const Token& t = m_t[i];
        // (integer type) p   or   reinterpret_cast<integer type>(p), not followed by % or & (an alignment test).
        auto alignmentTest = [&](size_t after) {
            return after < m_t.size() && (m_t[after].text == "%" || m_t[after].text == "&");
        };
        if (i >= 2 && m_t[i - 1].text == ")" && isIntegerTypeWord(m_t[i - 2].text) && !alignmentTest(i + 1)) {
            add(t, "pointer-value", "the pointer '" + t.text + "' is cast to an integer: code that tests pointer values "
                                    "can recognise buffers or repeated calls (an alignment test is fine)");
            return;
        }
        if (i >= 2 && m_t[i - 1].text == "(" && m_t[i - 2].text == ">") {
            size_t k = i - 2;
            while (k > 0 && m_t[k].text != "<")
                --k;
            if (k >= 1 && m_t[k - 1].text == "reinterpret_cast" && k + 1 < i && isIntegerTypeWord(m_t[k + 1].text)) {
                size_t close = i + 1;
                if (close < m_t.size() && m_t[close].text == ")" && !alignmentTest(close + 1))
                    add(t, "pointer-value", "the pointer '" + t.text + "' is cast to an integer: code that tests pointer "
                                            "values can recognise buffers or repeated calls (an alignment test is fine)");
                return;
            }
        }
        // uintptr_t(p): a functional cast.
        if (i >= 2 && m_t[i - 1].text == "(" && isIntegerTypeWord(m_t[i - 2].text) && i + 1 < m_t.size()
            && m_t[i + 1].text == ")" && !alignmentTest(i + 2)) {
            add(t, "pointer-value", "the pointer '" + t.text + "' is cast to an integer: code that tests pointer values "
                                    "can recognise buffers or repeated calls (an alignment test is fine)");
            return;
        }
        static const std::set<std::string> compare = {"==", "!=", "<", ">", "<=", ">="};
        if (i + 2 < m_t.size() && compare.count(m_t[i + 1].text) && m_pointers.count(m_t[i + 2].text))
            add(t, "pointer-value", "the pointers '" + t.text + "' and '" + m_t[i + 2].text
                                    + "' are compared: results must not depend on where buffers live");
    }

    std::vector<Token> m_t;
    std::vector<int> m_depth;
    std::set<std::string> m_globals, m_pointers;
    std::vector<ScanFinding> m_found;
};

} // namespace

std::vector<ScanFinding> scanSource(std::string_view source)
{
    if (source.size() > kMaxScanBytes)
        return {{1, 1, "not-scanned", "the source is over " + std::to_string(kMaxScanBytes >> 20) + " MiB; it was not scanned"}};
    return Scanner(tokenize(source)).run();
}

std::string scanText(const std::vector<ScanFinding>& findings, const std::string& file)
{
    std::string out;
    for (const ScanFinding& f : findings)
        out += file + ":" + std::to_string(f.line) + ":" + std::to_string(f.column) + ": warning: [" + f.rule + "] "
               + f.message + "\n";
    return out;
}

} // namespace kf
