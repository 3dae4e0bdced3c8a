#include "engine/compile/Compiler.h"

#include "engine/compile/IncludeScope.h"
#include "engine/compile/NvrtcLibrary.h"
#include "engine/compile/SourceEncoding.h"
#include "engine/core/Architectures.h"
#include "engine/core/Files.h"
#include "engine/core/Process.h"
#include "resources/prelude.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <unistd.h>

#ifndef KF_CUDA_TOOLKIT_ROOT
#define KF_CUDA_TOOLKIT_ROOT "/usr/local/cuda"
#endif

namespace fs = std::filesystem;

namespace kf {

namespace {

/// A launch plan's kernel name as NVRTC must see it: name expressions are not preprocessed, so a
/// define the plan names ("softmax_rows<BLOCK>", tuned by docs/tune.md) is replaced by its value.
/// The lowered name is still filed under the plan's own text, which is what the runner looks up.
std::string expandDefines(const std::string& expr, const std::vector<std::pair<std::string, std::string>>& defines)
{
    auto isWord = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    std::string out;
    for (size_t i = 0; i < expr.size();) {
        if (!isWord(expr[i]) || (i > 0 && isWord(expr[i - 1]))) {
            out += expr[i++];
            continue;
        }
        size_t j = i;
        while (j < expr.size() && isWord(expr[j]))
            ++j;
        const std::string word = expr.substr(i, j - i);
        auto it = std::find_if(defines.begin(), defines.end(), [&](const auto& d) { return d.first == word; });
        out += it != defines.end() && !std::isdigit(static_cast<unsigned char>(word[0])) ? it->second : word;
        i = j;
    }
    return out;
}

// Names the failing NVRTC call, as MLX's CHECK_NVRTC_ERROR does; the error reaches the caller.
#define KF_NVRTC_CHECK(lib, call)                                                                       \
    do {                                                                                                 \
        nvrtcResult kf_rc_ = (lib).call;                                                                 \
        if (kf_rc_ != NVRTC_SUCCESS)                                                                     \
            return Error::failed("NVRTC call " #call, std::string((lib).getErrorString(kf_rc_)) + " (at " __FILE__ \
                                                  ":" + std::to_string(__LINE__) + ")");     \
    } while (0)

struct ProgramDeleter {
    const NvrtcLibrary* lib;
    void operator()(nvrtcProgram p) const
    {
        if (p)
            lib->destroyProgram(&p);
    }
};
using ProgramHandle = std::unique_ptr<_nvrtcProgram, ProgramDeleter>;

int flowCallback(void* payload, void*)
{
    return static_cast<const CancelToken*>(payload)->cancelled() ? 1 : 0;
}

std::string findToolkitInclude()
{
    std::vector<fs::path> roots;
    if (const char* v = std::getenv("KF_CUDA_INCLUDE"); v && *v)
        return v;
    for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
        if (const char* v = std::getenv(env); v && *v)
            roots.emplace_back(v);
    const auto& lib = NvrtcLibrary::get();
    if (lib.ok()) {
        // <root>/lib64/libnvrtc.so or <root>/targets/<arch>/lib/libnvrtc.so
        fs::path p = fs::path(lib.value()->path).parent_path();
        roots.push_back(p.parent_path());
        roots.push_back(p.parent_path().parent_path().parent_path());
    }
    roots.emplace_back(KF_CUDA_TOOLKIT_ROOT);
    roots.emplace_back("/usr/local/cuda");
    std::error_code ec;
    for (const auto& r : roots)
        if (fs::exists(r / "include" / "cuda_fp16.h", ec))
            return (r / "include").string();
    return {};
}

bool isVirtualArch(const std::string& arch) { return arch.rfind("compute_", 0) == 0; }

std::string disassemble(const std::string& cubin, std::string& whyNot)
{
    std::string nvdisasm = findTool("nvdisasm", "KF_NVDISASM");
    std::string cuobjdump = nvdisasm.empty() ? findTool("cuobjdump", "KF_CUOBJDUMP") : std::string();
    if (nvdisasm.empty() && cuobjdump.empty()) {
        whyNot = "SASS unavailable: neither nvdisasm nor cuobjdump was found (install the CUDA toolkit's "
                 "binary utilities or the nvidia-cuda-nvdisasm wheel, or set KF_NVDISASM)";
        return {};
    }
    char tmpl[] = "/tmp/kforge-cubin-XXXXXX";
    int fd = ::mkstemp(tmpl);
    if (fd < 0) {
        whyNot = "SASS unavailable: cannot create a temporary file";
        return {};
    }
    ::close(fd);
    std::string path = tmpl;
    std::string sass;
    if (writeFileAtomic(path, cubin)) {
        // -gi: line info with its inlined-at chain, so prelude code maps to the user's call line.
        std::vector<std::string> argv = nvdisasm.empty() ? std::vector<std::string>{cuobjdump, "-sass", path}
                                                         : std::vector<std::string>{nvdisasm, "-c", "-gi", path};
        auto r = runProcess(argv, 60000);
        if (!r)
            whyNot = "SASS unavailable: " + r.error().why;
        else if (r->exitCode != 0)
            whyNot = "SASS unavailable: " + argv[0] + " failed: " + r->err;
        else
            sass = std::move(r->out);
    } else {
        whyNot = "SASS unavailable: cannot write a temporary file";
    }
    ::unlink(path.c_str());
    return sass;
}

// `.loc <file> <line> <column>` before PTX line N names the source position it came from; files
// are named by `.file <n> "<path>"`. Diagnostics with a ptxLine in `fileName` get that position.
void mapPtxLinesToSource(std::vector<Diagnostic>& diagnostics, const std::string& ptx, const CompileRequest& req)
{
    const std::string& fileName = req.fileName;
    std::vector<std::string_view> lines;
    for (std::size_t pos = 0; pos < ptx.size();) {
        const std::size_t end = std::min(ptx.find('\n', pos), ptx.size());
        lines.emplace_back(ptx.data() + pos, end - pos);
        pos = end + 1;
    }
    std::map<int, std::string> files;
    for (std::string_view l : lines) {
        const std::size_t f = l.find(".file");
        if (f == std::string_view::npos || l.find_first_not_of(" \t") != f)
            continue;
        int index = 0;
        char path[4096] = {};
        if (std::sscanf(std::string(l.substr(f)).c_str(), ".file %d \"%4095[^\"]\"", &index, path) == 2)
            files[index] = path;
    }
    const std::string base = fs::path(fileName).filename().string();
    for (Diagnostic& d : diagnostics) {
        if (d.ptxLine <= 0 || d.ptxLine > static_cast<int>(lines.size()))
            continue;
        for (int i = d.ptxLine - 1; i >= 0; --i) {
            const std::string_view l = lines[static_cast<std::size_t>(i)];
            const std::size_t at = l.find(".loc");
            if (at == std::string_view::npos || l.find_first_not_of(" \t") != at)
                continue;
            int file = 0, line = 0, column = 0;
            if (std::sscanf(std::string(l.substr(at)).c_str(), ".loc %d %d %d", &file, &line, &column) >= 2 && line > 0 &&
                files.count(file) && fs::path(files[file]).filename().string() == base) {
                d.file = fileName;
                d.line = line;
                d.column = column;
                // Echo the source line, as NVRTC does for its own errors.
                std::size_t start = 0;
                for (int k = 1; k < line && start != std::string::npos; ++k) {
                    const std::size_t newline = req.source.find('\n', start);
                    start = newline == std::string::npos ? newline : newline + 1;
                }
                if (start != std::string::npos)
                    d.sourceLine = req.source.substr(start, req.source.find('\n', start) - start);
            }
            break;
        }
    }
}

void nameExpressionsToPlan(CompileResult& result, const CompileRequest& request)
{
    // NVRTC reports a name expression the source does not define in its own pseudo-file
    // ("__nv_name_map:2:25", twice). The user wrote that name in the launch plan: say so there.
    std::vector<Diagnostic> kept;
    std::set<std::string> named;
    for (Diagnostic& d : result.diagnostics) {
        if (d.file != "__nv_name_map") {
            kept.push_back(std::move(d));
            continue;
        }
        std::string expr = d.sourceLine;
        if (const auto at = expr.find("nv_mangled_name"); at != std::string::npos)
            expr = expr.substr(at + std::strlen("nv_mangled_name"));
        expr.erase(0, expr.find_first_not_of(" \t"));
        expr.erase(expr.find_last_not_of(" \t\r") + 1);
        if (!named.insert(expr).second)
            continue;
        Diagnostic plan;
        plan.file = request.fileName;
        plan.severity = Diagnostic::Severity::Error;
        const auto origin = request.nameExpressionOrigins.find(expr);
        plan.message = "the launch plan names kernel \"" + expr + "\", which this file does not define" +
                       (expr.find('<') != std::string::npos ? " with these template arguments" : "") +
                       (origin != request.nameExpressionOrigins.end() ? " (" + origin->second + ")" : "") +
                       "; define it here, or change the launch's \"kernel\" (NVRTC: " + d.message + ")";
        kept.push_back(std::move(plan));
    }
    result.diagnostics = std::move(kept);
}

/// The options NVRTC is given: the request's, without ptxas's for a virtual architecture (ptxas
/// does not run and would reject them), plus the toolkit's include folders.
std::vector<std::string> nvrtcCommandLine(const CompileRequest& req)
{
    std::vector<std::string> args = req.options.nvrtcArguments();
    if (isVirtualArch(req.options.arch)) {
        std::vector<std::string> kept;
        for (size_t i = 0; i < args.size(); ++i) {
            if (args[i] == "-Xptxas") {
                ++i;
                continue;
            }
            if (args[i].rfind("--ptxas-options", 0) == 0 || args[i].rfind("-maxrregcount", 0) == 0)
                continue;
            kept.push_back(args[i]);
        }
        args = std::move(kept);
    }
    const std::string toolkitInclude = toolkitIncludeDir();
    if (!toolkitInclude.empty()) {
        args.push_back("-I" + toolkitInclude);
        std::error_code ec;
        if (fs::is_directory(fs::path(toolkitInclude) / "cccl", ec)) // CUDA 13 moved libcu++ here
            args.push_back("-I" + (fs::path(toolkitInclude) / "cccl").string());
    }
    return args;
}

/// A successful build's PTX, cubin and lowered names, into `res`.
Result<void> readBuild(const NvrtcLibrary& lib, nvrtcProgram prog, const CompileRequest& req, CompileResult& res)
{
    size_t ptxSize = 0;
    KF_NVRTC_CHECK(lib, getPTXSize(prog, &ptxSize));
    res.ptx.resize(ptxSize);
    KF_NVRTC_CHECK(lib, getPTX(prog, res.ptx.data()));
    while (!res.ptx.empty() && res.ptx.back() == '\0')
        res.ptx.pop_back();
    if (!isVirtualArch(req.options.arch)) {
        size_t cubinSize = 0;
        KF_NVRTC_CHECK(lib, getCUBINSize(prog, &cubinSize));
        res.cubin.resize(cubinSize);
        KF_NVRTC_CHECK(lib, getCUBIN(prog, res.cubin.data()));
    }
    for (const auto& ne : req.nameExpressions) {
        const char* lowered = nullptr;
        KF_NVRTC_CHECK(lib, getLoweredName(prog, expandDefines(ne, req.options.defines).c_str(), &lowered));
        // NVRTC hands back null for an expression it did not instantiate (seen with a source it
        // misread); an empty name then fails later with the kernel named, never here.
        res.loweredNames[ne] = lowered ? lowered : "";
    }
    return {};
}

/// The cubin's kernels and their resources (registers, spills, launch bounds), and the SASS when asked.
Result<void> analyseCubin(const CompileRequest& req, CompileResult& res)
{
    if (!res.cubin.empty()) {
        auto kernels = readCubinResources(res.cubin);
        if (!kernels)
            return Error::failed("analyse the cubin of " + req.fileName, kernels.error().why);
        res.kernels = std::move(kernels.value());
        applyPtxasReport(res.log, res.kernels);
        applyPtxDirectives(res.ptx, res.kernels); // min blocks per SM exists only in the PTX
        if (req.wantSass)
            res.sass = disassemble(res.cubin, res.sassUnavailableReason);
        else
            res.sassUnavailableReason = "SASS not requested";
    } else {
        res.sassUnavailableReason = "SASS unavailable: " + req.options.arch + " is a virtual architecture (PTX only)";
    }
    return {};
}

Result<CompileResult> compileWithNvrtc(const NvrtcLibrary& lib, const CompileRequest& req, const CancelToken* cancel)
{
    CompileResult res;
    res.arch = req.options.arch;
    res.nvrtcVersion = lib.versionString;

    std::vector<const char*> headerSources, headerNames;
    for (const auto& f : prelude::files()) {
        headerSources.push_back(f.contents.data());
        headerNames.push_back(f.name.data());
    }
    nvrtcProgram raw = nullptr;
    KF_NVRTC_CHECK(lib, createProgram(&raw, req.source.c_str(), req.fileName.c_str(), static_cast<int>(headerSources.size()),
                                      headerSources.data(), headerNames.data()));
    ProgramHandle prog(raw, ProgramDeleter{&lib});
    for (const auto& ne : req.nameExpressions)
        KF_NVRTC_CHECK(lib, addNameExpression(prog.get(), expandDefines(ne, req.options.defines).c_str()));
    if (cancel && lib.setFlowCallback)
        KF_NVRTC_CHECK(lib, setFlowCallback(prog.get(), &flowCallback, const_cast<CancelToken*>(cancel)));

    const std::vector<std::string> args = nvrtcCommandLine(req);
    std::vector<const char*> argv;
    for (const auto& a : args)
        argv.push_back(a.c_str());

    nvrtcResult rc = lib.compileProgram(prog.get(), static_cast<int>(argv.size()), argv.data());
    if (rc == NVRTC_ERROR_CANCELLED || (cancel && cancel->cancelled()))
        return Error::failed("compile " + req.fileName, "the build was cancelled");
    size_t logSize = 0;
    KF_NVRTC_CHECK(lib, getProgramLogSize(prog.get(), &logSize));
    res.log.resize(logSize);
    if (logSize)
        KF_NVRTC_CHECK(lib, getProgramLog(prog.get(), res.log.data()));
    while (!res.log.empty() && res.log.back() == '\0')
        res.log.pop_back();
    res.diagnostics = rc == NVRTC_ERROR_COMPILATION ? failedBuildDiagnostics(res.log, req.fileName, lib.getErrorString(rc))
                                                    : parseNvrtcLog(res.log);
    if (rc == NVRTC_ERROR_INVALID_OPTION)
        return Error::failed("compile " + req.fileName, "NVRTC rejected the options: " + res.log, "check the extra options and defines");
    if (rc != NVRTC_SUCCESS && rc != NVRTC_ERROR_COMPILATION)
        return Error::failed("compile " + req.fileName, std::string("NVRTC failed: ") + lib.getErrorString(rc) + "\n" + res.log);
    res.success = rc == NVRTC_SUCCESS && res.errorCount() == 0;
    if (rc != NVRTC_SUCCESS) {
        res.success = false;
        // ptxas rejected the PTX NVRTC made (bad inline asm): the PTX, if NVRTC kept it, says
        // through its .loc lines which source line produced the failing PTX line.
        if (std::any_of(res.diagnostics.begin(), res.diagnostics.end(), [](const Diagnostic& d) { return d.ptxLine > 0; })) {
            size_t size = 0;
            std::string ptx;
            if (lib.getPTXSize(prog.get(), &size) == NVRTC_SUCCESS && size > 1) {
                ptx.resize(size);
                if (lib.getPTX(prog.get(), ptx.data()) == NVRTC_SUCCESS)
                    mapPtxLinesToSource(res.diagnostics, ptx, req);
            }
        }
        return res;
    }

    if (auto out = readBuild(lib, prog.get(), req, res); !out)
        return out.error();
    if (auto a = analyseCubin(req, res); !a)
        return a.error();
    return res;
}

} // namespace

std::string toolkitIncludeDir()
{
    static const std::string dir = findToolkitInclude();
    return dir;
}

Result<std::string> nvrtcVersion()
{
    const auto& lib = NvrtcLibrary::get();
    if (!lib)
        return lib.error();
    return lib.value()->versionString;
}

std::optional<Diagnostic> sourceProblem(std::string_view source, const std::string& fileName)
{
    auto at = [&](std::size_t offset, std::string message) {
        Diagnostic d;
        d.file = fileName;
        d.severity = Diagnostic::Severity::Error;
        d.line = 1 + static_cast<int>(std::count(source.begin(), source.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
        const std::size_t lineStart = source.rfind('\n', offset == 0 ? 0 : offset - 1);
        d.column = static_cast<int>(offset - (lineStart == std::string_view::npos || offset == 0 ? 0 : lineStart + 1)) + 1;
        d.message = std::move(message);
        return d;
    };
    if (source.size() > kMaxSourceBytes)
        return at(0, "the source is " + std::to_string(source.size() >> 20) + " MiB; a kernel source may have at most " +
                         std::to_string(kMaxSourceBytes >> 20) + " MiB");
    // The workbench's editor asks the same question when it opens a file (SourceEncoding.h), so
    // the editor's banner, its run gate and `kforge compile` name the same fault. Bytes that are
    // merely not UTF-8 (Latin-1 in a comment) NVRTC reads as they are: sourceWarning says so.
    if (const EncodingCheck encoding = checkSourceEncoding(source);
        !encoding.isUtf8() && encoding.encoding != SourceEncoding::InvalidUtf8)
        return at(encoding.offset, "the file " + encodingProblem(encoding) +
                                       (encoding.encoding == SourceEncoding::NulByte ? "; NVRTC would stop reading there"
                                                                                     : "; save it as UTF-8, the only encoding NVRTC reads"));
    std::size_t run = 0;
    for (std::size_t i = 0; i < source.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(source[i]);
        run = std::isalnum(c) || c == '_' ? run + 1 : 0;
        if (run > kMaxIdentifierLength)
            return at(i + 1 - run, "an identifier longer than " + std::to_string(kMaxIdentifierLength) +
                                       " characters; NVRTC cannot compile names that long");
    }
    return std::nullopt;
}

std::optional<Diagnostic> sourceWarning(std::string_view source, const std::string& fileName)
{
    const EncodingCheck encoding = checkSourceEncoding(source);
    if (encoding.encoding != SourceEncoding::InvalidUtf8)
        return std::nullopt;
    Diagnostic d;
    d.file = fileName;
    d.severity = Diagnostic::Severity::Warning;
    d.line = encoding.line;
    d.column = encoding.column;
    d.message = "the file " + encodingProblem(encoding) +
                "; NVRTC reads those bytes as they are, but save it as UTF-8 before editing it anywhere";
    return d;
}

Result<CompileResult> compile(const CompileRequest& request, const CompileCache* cache, const CancelToken* cancel)
{
    const auto start = std::chrono::steady_clock::now();
    auto elapsedMs = [&] {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    };
    const auto& lib = NvrtcLibrary::get();
    if (!lib)
        return lib.error();
    const std::string& arch = request.options.arch;
    const std::string realArch = isVirtualArch(arch) ? "sm_" + arch.substr(8) : arch;
    if ((arch.rfind("sm_", 0) != 0 && !isVirtualArch(arch)) || !findArchitecture(realArch)) {
        std::string names;
        for (const auto& a : knownArchitectures())
            names += (names.empty() ? "" : ", ") + a.arch;
        return Error::failed("compile " + request.fileName, "unknown architecture \"" + arch + "\"", "use one of " + names + " (or compute_XX for PTX only)");
    }
    if (cancel && cancel->cancelled())
        return Error::failed("compile " + request.fileName, "the build was cancelled");
    // What NVRTC must never see: it reads a NUL as the end of the source (while our hash covers
    // all of it), misreads UTF-16, and corrupts its heap on identifiers of 128 KiB. The workbench
    // compiles in-process on every pause in typing, so these are diagnostics, decided here.
    if (auto problem = sourceProblem(request.source, request.fileName)) {
        CompileResult refused;
        refused.success = false;
        refused.diagnostics.push_back(*problem);
        refused.compileMs = elapsedMs();
        return refused;
    }
    // A task compile reads only the task's files: checked before NVRTC opens any header, and
    // before the cache (a header outside the task would not be in its key either).
    if (!request.confineIncludesTo.empty()) {
        IncludeScope scope;
        scope.roots = request.confineIncludesTo;
        scope.includeDirs = request.options.includeDirs;
        if (const std::string toolkit = toolkitIncludeDir(); !toolkit.empty())
            scope.systemDirs = {toolkit, (fs::path(toolkit) / "cccl").string()};
        if (auto problems = includeProblems(request.source, request.fileName, scope); !problems.empty()) {
            CompileResult refused;
            refused.success = false;
            refused.diagnostics = std::move(problems);
            refused.compileMs = elapsedMs();
            return refused;
        }
    }

    std::string key;
    if (cache) {
        key = CompileCache::key(request, lib.value()->versionString);
        if (auto hit = cache->load(key)) {
            hit->fromCache = true;
            hit->cacheKey = key;
            hit->compileMs = elapsedMs();
            if (auto warning = sourceWarning(request.source, request.fileName))
                hit->diagnostics.insert(hit->diagnostics.begin(), std::move(*warning));
            return std::move(*hit);
        }
    }
    auto res = compileWithNvrtc(*lib.value(), request, cancel);
    if (!res)
        return res;
    nameExpressionsToPlan(res.value(), request);
    res->cacheKey = key;
    if (cache) // a failed store only costs a rebuild next time, never the result in hand
        (void)cache->store(key, res.value());
    if (auto warning = sourceWarning(request.source, request.fileName))
        res->diagnostics.insert(res->diagnostics.begin(), std::move(*warning));
    res->compileMs = elapsedMs();
    return res;
}

} // namespace kf
