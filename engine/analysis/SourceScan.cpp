#include "engine/analysis/SourceScan.h"

#include "engine/analysis/SourceTokens.h"

#include <algorithm>
#include <set>

namespace kf {
namespace {

using Token = ScanToken;

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

bool isKeyword(const std::string& t)
{
    static const std::set<std::string> words = {"return", "case", "else", "goto", "sizeof", "new", "delete", "throw",
                                                "typedef", "using", "operator", "co_return", "co_yield"};
    return words.count(t) > 0;
}

/// A function body: its token range and the names declared in it (parameters with a '*'
/// separately).
struct Scope {
    size_t begin = 0, end = 0;          ///< token indices of '{' and '}'
    std::set<std::string> pointers;     ///< pointer parameters
    std::set<std::string> locals;       ///< every parameter and local declaration
};

class Scanner {
public:
    explicit Scanner(std::vector<Token> t) : m_t(std::move(t)) {}

    std::vector<ScanFinding> run()
    {
        findDeclarations();
        for (size_t i = 0; i < m_t.size(); ++i) {
            const Token& t = m_t[i];
            if (t.kind != Token::Ident)
                continue;
            if (t.text == "asm" || t.text == "__asm__" || t.text == "__asm") {
                add(t, "inline-asm", "inline asm: the scan cannot see what it does; make sure it keeps no state across "
                                     "launches and reads no clock");
                for (size_t j = i + 1; j < m_t.size() && j < i + 64 && m_t[j].text != ";"; ++j)
                    if (m_t[j].kind == Token::String && (m_t[j].text.find("globaltimer") != std::string::npos
                                                         || m_t[j].text.find("%clock") != std::string::npos))
                        add(m_t[j], "clock-control", "reads a hardware timer in inline asm: results must not depend on time");
            }
            if ((t.text == "clock" || t.text == "clock64" || t.text == "__globaltimer") && next(i, "(") && !prevIs(i, ".")
                && !prevIs(i, "->"))
                add(t, "clock-control", t.text + "() reads the clock: a kernel whose work or results depend on time "
                                        "behaves differently under the benchmark than under verification");
            const Scope* scope = scopeOf(i);
            if (m_globals.count(t.text) && (m_depth[i] > 0 || t.macro) && !(scope && scope->locals.count(t.text))
                && !prevIs(i, ".") && !prevIs(i, "->"))
                checkGlobalUse(i);
            if (scope && scope->pointers.count(t.text))
                checkPointerUse(i, *scope);
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

    const Scope* scopeOf(size_t i) const
    {
        for (const Scope& s : m_scopes)
            if (i > s.begin && i < s.end)
                return &s;
        return nullptr;
    }

    // Brace depth of code (not of namespaces, extern "C" blocks or macros) per token; file-scope
    // __device__/__managed__ variables (not __constant__, not functions); each __global__ and
    // __device__ function's body with its parameters and locals.
    void findDeclarations()
    {
        m_depth.assign(m_t.size(), 0);
        std::vector<bool> braces;   // true: a code brace
        int depth = 0;
        for (size_t i = 0; i < m_t.size(); ++i) {
            if (m_t[i].macro) {
                m_depth[i] = 1;
                continue;
            }
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
            if (m_depth[i] != 0 || m_t[i].kind != Token::Ident || m_t[i].macro)
                continue;
            const bool kernel = m_t[i].text == "__global__";
            if (!kernel && m_t[i].text != "__device__" && m_t[i].text != "__managed__")
                continue;
            bool constant = false, function = false;
            int angle = 0;
            std::string last;
            size_t j = i + 1;
            for (; j < m_t.size() && m_t[j].text != ";" && m_t[j].text != "=" && m_t[j].text != "[" && m_t[j].text != "{"; ++j) {
                const std::string& x = m_t[j].text;
                if (x == "<")
                    ++angle;
                else if (x == ">" && angle > 0)
                    --angle;
                else if (x == ">>" && angle > 0)
                    angle = std::max(0, angle - 2);
                if (angle > 0)
                    continue;   // template arguments: Pair<int, float> names nothing
                if (x == "__constant__" || x == "const" || x == "constexpr")
                    constant = true;
                if (x == "(") {
                    function = true;
                    break;
                }
                if (m_t[j].kind == Token::Ident)
                    last = x;
                if (x == "," && !constant && !last.empty() && !kernel)
                    m_globals.insert(last);   // __device__ int a, b;
            }
            if (function)
                addFunction(j);
            else if (!constant && !last.empty() && !kernel)
                m_globals.insert(last);
        }
    }

    // The function whose parameter list opens at `open`: its parameters, then its body (if it has
    // one before a ';') with the names declared inside.
    void addFunction(size_t open)
    {
        Scope scope;
        int paren = 0;
        bool pointer = false;
        std::string name;
        size_t j = open + 1;
        for (; j < m_t.size(); ++j) {
            const std::string& x = m_t[j].text;
            if (x == "(" || x == "<" || x == "[")
                ++paren;
            else if ((x == ")" || x == ">" || x == "]") && paren > 0)
                --paren;
            else if ((x == "," || x == ")") && paren == 0) {
                if (!name.empty()) {
                    scope.locals.insert(name);
                    if (pointer)
                        scope.pointers.insert(name);
                }
                pointer = false;
                name.clear();
                if (x == ")")
                    break;
            } else if (x == "*")
                pointer = true;
            else if (m_t[j].kind == Token::Ident && x != "__restrict__" && x != "const" && x != "restrict")
                name = x;
        }
        while (j < m_t.size() && m_t[j].text != "{" && m_t[j].text != ";")
            ++j;
        if (j >= m_t.size() || m_t[j].text != "{")
            return;
        scope.begin = j;
        int depth = 0;
        for (; j < m_t.size(); ++j) {
            if (m_t[j].macro)
                continue;
            if (m_t[j].text == "{")
                ++depth;
            else if (m_t[j].text == "}" && --depth == 0)
                break;
            // A declaration: a type word (or '*', '&') before the name, and '=', ';', ',' or '[' after.
            else if (m_t[j].kind == Token::Ident && j + 1 < m_t.size() && j > 0) {
                const Token& before = m_t[j - 1];
                const std::string& after = m_t[j + 1].text;
                auto typeWord = [&](const Token& w) { return w.kind == Token::Ident && !isKeyword(w.text); };
                // "float x", "float* x", "int& x", "Pair<int> x"; not "&x" in a call or "a * x".
                const bool typeBefore = typeWord(before) || before.text == ">"
                                        || ((before.text == "*" || before.text == "&") && j >= 2 && typeWord(m_t[j - 2])
                                            && (j < 3 || m_t[j - 3].text != "=") );
                if (typeBefore && (after == "=" || after == ";" || after == "," || after == "["))
                    scope.locals.insert(m_t[j].text);
            }
        }
        scope.end = j;
        m_scopes.push_back(std::move(scope));
    }

    void checkGlobalUse(size_t i)
    {
        const Token& t = m_t[i];
        // Inside the first argument of an atomic*(...) call, casts and '&' included: a counter
        // when it adds, increments or subtracts, else a write.
        int balance = 0;
        for (size_t k = i; k > 0 && k + 64 > i; --k) {
            const Token& p = m_t[k - 1];
            if (p.text == ";" || p.text == "{" || p.text == "}")
                break;
            if (p.text == ")")
                ++balance;
            else if (p.text == "(" && balance > 0)
                --balance;
            else if (p.text == "," && balance == 0)
                break;   // a later argument: read, not written
            else if (p.text == "(" && balance == 0 && k >= 2 && m_t[k - 2].kind == Token::Ident
                     && m_t[k - 2].text.rfind("atomic", 0) == 0) {
                const std::string& fn = m_t[k - 2].text;
                const bool counter = fn == "atomicAdd" || fn == "atomicInc" || fn == "atomicSub";
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

    void checkPointerUse(size_t i, const Scope& scope)
    {
        const Token& t = m_t[i];
        auto alignmentTest = [&](size_t after) {
            return after < m_t.size() && (m_t[after].text == "%" || m_t[after].text == "&");
        };
        auto flagCast = [&] {
            add(t, "pointer-value", "the pointer '" + t.text + "' is cast to an integer: code that tests pointer values "
                                    "can recognise buffers or repeated calls (an alignment test is fine)");
        };
        // (integer type) p   and   (integer type)(p)
        if (i >= 2 && m_t[i - 1].text == ")" && isIntegerTypeWord(m_t[i - 2].text) && !alignmentTest(i + 1))
            return flagCast();
        if (i >= 3 && m_t[i - 1].text == "(" && m_t[i - 2].text == ")" && isIntegerTypeWord(m_t[i - 3].text)
            && next(i, ")") && !alignmentTest(i + 2))
            return flagCast();
        // reinterpret_cast<... integer type ...>(p)
        if (i >= 2 && m_t[i - 1].text == "(" && m_t[i - 2].text == ">") {
            size_t k = i - 2;
            bool integer = false;
            while (k > 0 && m_t[k].text != "<") {
                integer = integer || isIntegerTypeWord(m_t[k].text);
                --k;
            }
            if (k >= 1 && m_t[k - 1].text == "reinterpret_cast" && integer && next(i, ")") && !alignmentTest(i + 2))
                return flagCast();
        }
        // uintptr_t(p)
        if (i >= 2 && m_t[i - 1].text == "(" && isIntegerTypeWord(m_t[i - 2].text) && next(i, ")") && !alignmentTest(i + 2))
            return flagCast();
        static const std::set<std::string> compare = {"==", "!=", "<", ">", "<=", ">="};
        if (i + 2 < m_t.size() && compare.count(m_t[i + 1].text) && scope.pointers.count(m_t[i + 2].text))
            add(t, "pointer-value", "the pointers '" + t.text + "' and '" + m_t[i + 2].text
                                    + "' are compared: results must not depend on where buffers live");
    }

    std::vector<Token> m_t;
    std::vector<int> m_depth;
    std::set<std::string> m_globals;
    std::vector<Scope> m_scopes;
    std::vector<ScanFinding> m_found;
};

} // namespace

std::vector<ScanFinding> scanSource(std::string_view source)
{
    if (source.size() > kMaxScanBytes)
        return {{1, 1, "not-scanned", "the source is over " + std::to_string(kMaxScanBytes >> 20) + " MiB; it was not scanned"}};
    return Scanner(scanTokens(source)).run();
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
