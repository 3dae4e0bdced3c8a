#include "engine/compile/IncludeScope.h"

#include "engine/core/Files.h"

#include <filesystem>
#include <set>

namespace fs = std::filesystem;

namespace kf {

namespace {

constexpr int kMaxDepth = 64;

bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `path` (canonical) lies in `dir` (canonical) or below it.
bool within(const fs::path& path, const fs::path& dir)
{
    if (dir.empty())
        return false;
    const fs::path rel = path.lexically_relative(dir);
    return !rel.empty() && *rel.begin() != "..";
}

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
            if (found.empty())
                continue; // NVRTC's own headers, the prelude, or missing: NVRTC says which
            const fs::path real = canonicalOrEmpty(found);
            bool inRoot = false, inSystem = false;
            for (const fs::path& r : roots)
                inRoot = inRoot || within(real, r);
            for (const fs::path& s : systemDirs)
                inSystem = inSystem || within(real, s);
            const char open = d.angled ? '<' : '"', close = d.angled ? '>' : '"';
            if (!inRoot && !inSystem) {
                problems.push_back(at(file, d, std::string("#include ") + open + d.name + close + " reads " + real.string() +
                                                   ", outside the task folder and the CUDA headers; a task compile reads "
                                                   "only the task's own files (copy the header into the task, e.g. into an "
                                                   "include_dirs folder)"));
                continue;
            }
            if (!inRoot || depth >= kMaxDepth || !visited.insert(real).second)
                continue;
            auto bytes = readFileBytes(real);
            if (bytes)
                scan(bytes.value(), real.string(), real.parent_path(), depth + 1);
        }
    }
};

} // namespace

std::vector<IncludeDirective> includeDirectives(std::string_view text)
{
    std::vector<IncludeDirective> out;
    bool inBlock = false;
    int lineNo = 0;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string_view::npos)
            end = text.size();
        const std::string_view raw = text.substr(pos, end - pos);
        ++lineNo;
        // The line with its comments blanked (strings kept), so `/* x */ #include` still counts
        // and `// #include` does not.
        std::string line(raw);
        for (std::size_t i = 0; i < line.size(); ++i) {
            if (inBlock) {
                if (line.compare(i, 2, "*/") == 0) {
                    line[i] = line[i + 1] = ' ';
                    ++i;
                    inBlock = false;
                } else {
                    line[i] = ' ';
                }
                continue;
            }
            if (line[i] == '"' || line[i] == '\'') {
                const char q = line[i];
                for (++i; i < line.size() && line[i] != q; ++i)
                    if (line[i] == '\\')
                        ++i;
                continue;
            }
            if (line.compare(i, 2, "//") == 0) {
                line.resize(i);
                break;
            }
            if (line.compare(i, 2, "/*") == 0) {
                line[i] = line[i + 1] = ' ';
                ++i;
                inBlock = true;
            }
        }
        std::size_t i = line.find_first_not_of(" \t\r\f\v");
        if (i != std::string::npos && line[i] == '#') {
            IncludeDirective d;
            d.line = lineNo;
            d.column = static_cast<int>(i) + 1;
            i = line.find_first_not_of(" \t", i + 1);
            std::size_t w = i;
            while (w != std::string::npos && w < line.size() && isIdentChar(line[w]))
                ++w;
            const std::string word = i == std::string::npos ? std::string() : line.substr(i, w - i);
            if (word == "include" || word == "include_next") {
                std::size_t n = line.find_first_not_of(" \t", w);
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
        }
        pos = end + 1;
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
