#include "engine/compile/IncludeScope.h"

#include "engine/core/Files.h"

#include <filesystem>
#include <set>

namespace fs = std::filesystem;

namespace kf {

namespace {

constexpr int kMaxDepth = 64;

bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

fs::path canonicalOrEmpty(const fs::path& p)
{
    std::error_code ec;
    fs::path c = fs::weakly_canonical(p, ec);
    return ec ? fs::path() : c;
}

bool isFile(const fs::path& p)
{
    std::error_code ec;
    return fs::is_regular_file(p, ec) || (fs::exists(p, ec) && !fs::is_directory(p, ec));
}

struct Scanner {
    const IncludeScope& scope;
    std::vector<fs::path> roots, systemDirs;
    std::set<fs::path> visited;
    std::vector<Diagnostic> problems;

    Diagnostic at(const std::string& file, const IncludeDirective& d, std::string message)
    {
        Diagnostic diag;
        diag.file = file;
        diag.line = d.line;
        diag.column = d.column;
        diag.severity = Diagnostic::Severity::Error;
        diag.message = std::move(message);
        return diag;
    }

    // Where the compiler would find `d` from a file in `fromDir`: the first that exists.
    fs::path resolve(const IncludeDirective& d, const fs::path& fromDir) const
    {
        const fs::path name(d.name);
        if (name.is_absolute())
            return isFile(name) ? name : fs::path();
        std::vector<fs::path> order;
        if (!d.angled) {
            order.push_back(fromDir);
            std::error_code ec;
            order.push_back(fs::current_path(ec)); // NVRTC looks in the working directory too
        }
        for (const std::string& i : scope.includeDirs)
            order.emplace_back(i);
        for (const std::string& s : scope.systemDirs)
            order.emplace_back(s);
        for (const fs::path& dir : order)
            if (!dir.empty() && isFile(dir / name))
                return dir / name;
        return {};
    }

    void scan(std::string_view text, const std::string& file, const fs::path& dir, int depth)
    {
        for (const IncludeDirective& d : includeDirectives(text)) {
            if (d.computed) {
                problems.push_back(at(file, d, "a computed #include (a macro) cannot be checked against the task's files; "
                                               "name the header in quotes or angle brackets"));
                continue;
            }
            const fs::path found = resolve(d, dir);
            const char open = d.angled ? '<' : '"', close = d.angled ? '>' : '"';
            if (found.empty()) {
                // NVRTC's own headers, the prelude, or missing (NVRTC says which). A name that
                // climbs out of its folder and is not found here might be found by NVRTC along a
                // path this check does not take: refuse it rather than guess.
                bool climbs = false;
                for (const auto& part : fs::path(d.name))
                    climbs = climbs || part == "..";
                if (climbs || fs::path(d.name).is_absolute())
                    problems.push_back(at(file, d, std::string("#include ") + open + d.name + close +
                                                       " names a file outside its folder that cannot be found from " +
                                                       dir.string() + "; a task compile reads only the task's own files"));
                continue;
            }
            const fs::path real = canonicalOrEmpty(found);
            bool inRoot = false, inSystem = false;
            for (const fs::path& r : roots)
                inRoot = inRoot || isInsideFolder(real, r);
            for (const fs::path& s : systemDirs)
                inSystem = inSystem || isInsideFolder(real, s);
            if (!inRoot && !inSystem) {
                problems.push_back(at(file, d, std::string("#include ") + open + d.name + close + " reads " + real.string() +
                                                   ", outside the task folder and the CUDA headers; a task compile reads "
                                                   "only the task's own files (copy the header into the task, e.g. into an "
                                                   "include_dirs folder)"));
                continue;
            }
            if (!inRoot || !visited.insert(real).second)
                continue;
            if (depth + 1 >= kMaxDepth) {
                problems.push_back(at(file, d, "headers nested more than " + std::to_string(kMaxDepth) +
                                                   " deep cannot be checked against the task's files; flatten the includes"));
                continue;
            }
            // A header that is a FIFO or a device would hang NVRTC or never end: it is refused
            // here, by the bounded reader, and so is one that cannot be read (its includes
            // could not be checked).
            auto bytes = readFileBytes(real);
            if (!bytes) {
                problems.push_back(at(file, d, std::string("#include ") + open + d.name + close + " cannot be checked: " +
                                                   bytes.error().why));
                continue;
            }
            // Nested quoted includes resolve from the folder the header was opened through (a
            // symbolic link's folder, not its target's), as the compiler resolves them.
            scan(bytes.value(), found.string(), found.parent_path(), depth + 1);
        }
    }
};

struct LogicalLine {
    int line = 0;          // the physical line it starts on
    std::string text;      // comments replaced by one space, splices joined, literals kept
};

// Phase 1 as far as directives need it: the two trigraphs ??= and ??/ (C++11/14), line breaks
// untouched.
std::string replaceTrigraphs(std::string_view in)
{
    std::string src;
    src.reserve(in.size());
    for (std::size_t k = 0; k < in.size(); ++k) {
        if (in[k] == '?' && k + 2 < in.size() && in[k + 1] == '?' && (in[k + 2] == '=' || in[k + 2] == '/')) {
            src += in[k + 2] == '=' ? '#' : '\\';
            k += 2;
        } else {
            src += in[k];
        }
    }
    return src;
}

// Phases 2-3 over the source after phase 1, one character or construct per step: the cursor, the
// physical line it is on, whether it is inside a comment, and the logical lines so far.
class LineSplitter {
public:
    explicit LineSplitter(std::string src) : src_(std::move(src)) { out_.back().line = 1; }

    std::vector<LogicalLine> run()
    {
        while (i_ < src_.size()) {
            if (state_ != State::BlockComment && splice())
                continue;
            if (state_ == State::LineComment)
                lineComment();
            else if (state_ == State::BlockComment)
                blockComment();
            else
                code();
        }
        return std::move(out_);
    }

private:
    enum class State { Code, LineComment, BlockComment };

    char at(std::size_t k) const { return i_ + k < src_.size() ? src_[i_ + k] : '\0'; }
    void advance()
    {
        line_ += src_[i_] == '\n';
        ++i_;
    }
    // Appends the character under the cursor to `t` and moves past it.
    void take(std::string& t)
    {
        t += src_[i_];
        advance();
    }
    void newLine()
    {
        out_.push_back({});
        out_.back().line = line_;
    }
    // "\\\n" or "\\\r\n": nothing, the line goes on.
    bool splice()
    {
        const std::size_t n = at(0) != '\\' ? 0 : at(1) == '\n' ? 2 : at(1) == '\r' && at(2) == '\n' ? 3 : 0;
        for (std::size_t k = 0; k < n; ++k)
            advance();
        return n > 0;
    }

    void lineComment()
    {
        const char c = at(0);
        advance();
        if (c == '\n') {
            state_ = State::Code;
            newLine();
        }
    }
    void blockComment()
    {
        if (at(0) == '*' && at(1) == '/') {
            advance();
            state_ = State::Code;
        }
        advance(); // newlines inside the comment do not end the logical line
    }

    void code()
    {
        const char c = at(0);
        if (c == '\n') {
            advance();
            newLine();
            return;
        }
        std::string& t = out_.back().text;
        if (c == '/' && (at(1) == '/' || at(1) == '*')) {
            state_ = at(1) == '/' ? State::LineComment : State::BlockComment;
            t += ' ';
            advance();
            advance();
        } else if (c == '\'' && isDigitSeparator(t)) {
            take(t);
        } else if (c == '"' || c == '\'') {
            literal(t);
        } else {
            take(t);
        }
    }

    // A quote after a letter or digit is a digit separator when the token before is a number:
    // scan back over the pp-number.
    static bool isDigitSeparator(const std::string& t)
    {
        if (t.empty() || !std::isalnum(static_cast<unsigned char>(t.back())))
            return false;
        std::size_t b = t.size();
        while (b > 0 && (isIdentChar(t[b - 1]) || t[b - 1] == '\'' || t[b - 1] == '.'))
            --b;
        return b < t.size() && std::isdigit(static_cast<unsigned char>(t[b]));
    }

    // A string or character literal, kept whole, the cursor on its opening quote.
    void literal(std::string& t)
    {
        // A raw string: R"delim( ... )delim", prefixes R, u8R, uR, UR, LR.
        std::size_t b = t.size();
        while (b > 0 && isIdentChar(t[b - 1]))
            --b;
        const std::string prefix = t.substr(b);
        const char c = at(0);
        const bool raw = c == '"' && (prefix == "R" || prefix == "u8R" || prefix == "uR" || prefix == "UR" || prefix == "LR");
        take(t);
        if (raw)
            rawBody(t);
        else
            quotedBody(t, c);
    }
    void rawBody(std::string& t)
    {
        std::string delim;
        while (i_ < src_.size() && src_[i_] != '(' && delim.size() <= 16 && src_[i_] != '\n') {
            delim += src_[i_];
            take(t);
        }
        const std::string close = ")" + delim + "\"";
        while (i_ < src_.size() && src_.compare(i_, close.size(), close) != 0) {
            t += src_[i_] == '\n' ? ' ' : src_[i_]; // a raw string's lines are not directives
            advance();
        }
        for (std::size_t k = 0; k < close.size() && i_ < src_.size(); ++k)
            take(t);
    }
    void quotedBody(std::string& t, char quote)
    {
        while (i_ < src_.size()) {
            if (splice())
                continue;
            const char d = at(0);
            if (d == '\n')
                break; // an unterminated literal ends with its line
            take(t);
            if (d == '\\' && i_ < src_.size() && src_[i_] != '\n')
                take(t);
            else if (d == quote)
                break;
        }
    }

    std::string src_;
    std::size_t i_ = 0;
    int line_ = 1;
    State state_ = State::Code;
    std::vector<LogicalLine> out_ = std::vector<LogicalLine>(1);
};

// Translation phases 1-3 as far as directives need them (the C++ standard, [lex.phases]): trigraphs
// ??= and ??/ (C++11/14), backslash-newline splices, comments as one space (a comment that spans
// lines joins them, so "#/*\n*/include" is one directive), and string, character and raw string
// literals kept whole, with digit separators (1'000) not mistaken for a character literal.
std::vector<LogicalLine> logicalLines(std::string_view in)
{
    return LineSplitter(replaceTrigraphs(in)).run();
}

} // namespace

std::vector<IncludeDirective> includeDirectives(std::string_view text)
{
    std::vector<IncludeDirective> out;
    for (const LogicalLine& l : logicalLines(text)) {
        const std::string& line = l.text;
        std::size_t i = line.find_first_not_of(" \t\r\f\v");
        if (i == std::string::npos)
            continue;
        // '#' or its digraph "%:".
        std::size_t after = std::string::npos;
        if (line[i] == '#')
            after = i + 1;
        else if (line.compare(i, 2, "%:") == 0)
            after = i + 2;
        if (after == std::string::npos)
            continue;
        IncludeDirective d;
        d.line = l.line;
        d.column = static_cast<int>(i) + 1;
        std::size_t w = line.find_first_not_of(" \t", after);
        std::size_t e = w;
        while (e != std::string::npos && e < line.size() && isIdentChar(line[e]))
            ++e;
        const std::string word = w == std::string::npos ? std::string() : line.substr(w, e - w);
        // Every directive that reads a file: include, include_next, import (an EDG extension) and
        // embed (C23, C++26).
        if (word != "include" && word != "include_next" && word != "import" && word != "embed")
            continue;
        const std::size_t n = line.find_first_not_of(" \t", e);
        const char first = n == std::string::npos ? '\0' : line[n];
        const char close = first == '"' ? '"' : first == '<' ? '>' : '\0';
        const std::size_t stop = close ? line.find(close, n + 1) : std::string::npos;
        if (close && stop != std::string::npos) {
            d.name = line.substr(n + 1, stop - n - 1);
            d.angled = close == '>';
        } else {
            d.computed = true;
        }
        out.push_back(std::move(d));
    }
    return out;
}

std::vector<Diagnostic> includeProblems(std::string_view source, const std::string& fileName, const IncludeScope& scope)
{
    Scanner s{scope, {}, {}, {}, {}};
    for (const std::string& r : scope.roots)
        if (fs::path c = canonicalOrEmpty(r); !c.empty())
            s.roots.push_back(c);
    for (const std::string& d : scope.systemDirs)
        if (fs::path c = canonicalOrEmpty(d); !c.empty())
            s.systemDirs.push_back(c);
    s.scan(source, fileName, fs::path(fileName).parent_path(), 0);
    return std::move(s.problems);
}

} // namespace kf
