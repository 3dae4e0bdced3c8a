// Running the importer helper (device/agent/python/kernelforge_import) and turning its proposal
// into a task folder.
#include "engine/agent/Import.h"

#include "engine/core/Files.h"
#include "engine/core/InstallLayout.h"
#include "engine/core/TempFolder.h"
#include "engine/core/JsonReader.h"
#include "engine/core/Process.h"
#include "engine/core/Sandbox.h"
#include "engine/protocol/Signature.h"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <system_error>

namespace kf::agent {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// What the helper said on stderr (device/agent/python/kernelforge_import/__main__.py): its
// last line, and the last phase it announced (_phase.py) with whose code that phase runs.
struct HelperSaid {
    std::string last;        ///< without the "kernelforge_import: " prefix
    std::string phase;       ///< "calling get_inputs()"
    bool problemPhase = false;
    bool internalError = false;
};

HelperSaid readHelperStderr(const std::string& err)
{
    HelperSaid said;
    std::size_t start = 0;
    while (start < err.size()) {
        std::size_t end = err.find('\n', start);
        if (end == std::string::npos)
            end = err.size();
        std::string line = err.substr(start, end - start);
        start = end + 1;
        while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
            line.pop_back();
        if (line.empty())
            continue;
        const bool ours = line.rfind("kernelforge_import: ", 0) == 0;
        if (ours)
            line = line.substr(20);
        if (ours && line.rfind("phase: ", 0) == 0) {
            const std::string rest = line.substr(7);
            said.problemPhase = rest.rfind("problem: ", 0) == 0;
            said.phase = rest.substr(rest.find(": ") == std::string::npos ? 0 : rest.find(": ") + 2);
            continue;
        }
        said.last = line;
        said.internalError = ours && line.rfind("internal error: ", 0) == 0;
    }
    return said;
}

// An ending that is not one of the helper's own (0, 2, 3, or 1 with "internal error"): a signal,
// or a status the problem's code chose (os._exit). Whose fault it is follows the last phase.
Error helperEnded(const ConfinedOutput& ran, const HelperSaid& said, const fs::path& problem)
{
    std::string how = ran.signal ? signalName(ran.signal) : "exit " + std::to_string(ran.exitCode);
    if (ran.signal == SIGKILL || ran.signal == SIGXCPU)
        how += ran.signal == SIGXCPU ? ": it used more than " + std::to_string(ran.cpuSeconds) + " s of CPU time"
                                     : ": the system ran out of memory, or it went past " + std::to_string(ran.cpuSeconds) +
                                           " s of CPU time";
    if (!said.problemPhase) {
        const std::string when = said.phase.empty() ? "before it ran the problem's code" : "while " + said.phase;
        return Error::inFile(problem.string(), {}, "import the problem", "the importer failed (" + how + ") " + when + (said.last.empty() ? "" : ": " + said.last.substr(0, 400)), "this is the importer's fault; please report it with the problem");
    }
    const std::string verb = ran.signal ? "crashed (" + how + ")" : "ended the importer (" + how + ")";
    return Error::inFile(problem.string(), {}, "import the problem", "the problem's code " + verb + " while " + said.phase, "this is the problem's fault, not KernelForge's: fix the problem or ask its author");
}

// The task folder is checked before the problem's code runs, with the rule writeImportedTask
// applies: it must not exist or be an empty folder, and the folder it goes into must be writable.
Result<void> checkTarget(const ImportOptions& o)
{
    std::error_code ec;
    fs::path target = o.out.empty() ? (o.parent.empty() ? fs::current_path(ec) : fs::absolute(o.parent, ec))
                                    : fs::absolute(o.out, ec).lexically_normal();
    if (!o.out.empty()) {
        if (target.filename().empty())
            target = target.parent_path();
        if (fs::exists(target, ec) && !(fs::is_directory(target, ec) && fs::is_empty(target, ec)))
            return Error::inFile(target.string(), {}, "import the problem", target.string() + " already exists and is not empty", "choose another folder with -o");
        target = target.parent_path();
    }
    fs::path existing = target;
    while (!existing.empty() && !fs::exists(existing, ec) && existing != existing.parent_path())
        existing = existing.parent_path();
    if (!fs::is_directory(existing, ec))
        return Error::inFile(existing.string(), {}, "import the problem", existing.string() + " is not a folder, so the task folder cannot be made in it", "choose another folder with -o");
    if (::access(existing.c_str(), W_OK | X_OK) != 0)
        return Error::inFile(existing.string(), {}, "import the problem", "cannot write in " + existing.string(), "check its permissions, or choose another folder with -o");
    return {};
}

// How the helper runs (engine/core/Sandbox.h): the problem's code must not read the user's
// signing key. PYTHONSAFEPATH and a private working folder: `python -m` must import our helper,
// not one planted beside the problem; the problem's code itself does run: importing means running it.
ConfinedOptions helperConfinement(const ImportOptions& o, const fs::path& workDir, const std::vector<fs::path>& sources)
{
    ConfinedOptions c;
    c.workDir = workDir;
    c.readable = sources;
    c.sandbox = o.sandbox;
    c.timeoutMs = o.timeoutMs;
    c.stop = o.stop;
    c.hidden = {protocol::signingKeyPath()};
    c.env = {"PYTHONSAFEPATH=1", "PYTHONDONTWRITEBYTECODE=1"};
    std::string path;
    std::error_code ec;
#ifdef KF_IMPORT_PYTHONPATH
    if (const fs::path helper = installedPath(InstallDir::Data, "python/agent", KF_IMPORT_PYTHONPATH); fs::exists(helper, ec))
        path = helper.string();
#endif
    if (const char* old = std::getenv("PYTHONPATH"); old && *old)
        path += (path.empty() ? "" : ":") + std::string(old);
    if (!path.empty()) {
        c.env.push_back("PYTHONPATH=" + path);
        for (std::string_view rest = path; !rest.empty();) {
            const auto colon = rest.find(':');
            c.readable.emplace_back(std::string(rest.substr(0, colon)));
            rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
        }
    }
    return c;
}

// The helper's ending as a sentence, or nothing when it wrote its proposal (exit 0).
Result<void> helperOutcome(const Result<ConfinedOutput>& ran, const std::string& python, const fs::path& problem,
                           const ImportOptions& o)
{
    if (!ran) {
        if (o.stop && o.stop())
            return Error::inFile(problem.string(), {}, "import the problem", "cancelled");
        Error e = ran.error();
        e.what = "import the problem";
        if (e.why.find("did not finish") != std::string::npos) {
            e.hint = "give it more time with --timeout SECONDS, or look at what the problem does at import";
        } else if (e.why.find("sandbox") == std::string::npos) {
            e.why = "cannot start " + python + ": " + e.why;
            e.hint = "run packaging/setup.sh, or set KF_IMPORT_PYTHON to a Python with torch";
            e.kind = kImportNoTorch;
        }
        return e;
    }
    const HelperSaid said = readHelperStderr(ran->err);
    const std::string& line = said.last;
    if (ran->exitCode == 3 || (ran->exitCode == 1 && line.find("No module named 'kernelforge_import'") != std::string::npos))
        return Error::failed("import the problem", "import needs Python with torch: " + python + " says \"" + line + "\"", "run packaging/setup.sh or set KF_IMPORT_PYTHON").withKind(kImportNoTorch);
    if (ran->exitCode == 2)
        return Error::inFile(problem.string(), {}, "import the problem", line);
    if (ran->exitCode == 1 && (said.internalError || said.phase.empty()))
        return Error::inFile(problem.string(), {}, "import the problem", "the importer failed (exit 1): " + (said.internalError ? line.substr(16) : line).substr(0, 400), "this is the importer's fault; please report it with the problem");
    if (ran->exitCode != 0)
        return helperEnded(*ran, said, problem);
    return {};
}

// The proposal the helper wrote into `out`, read strictly, as a task folder.
Result<ImportResult> writeProposal(const fs::path& out, const ImportOptions& o, bool sandboxed)
{
    // One read: the bytes checked are the bytes used (the reader's JSON sorts keys; the task keeps
    // the helper's order from the same bytes).
    const fs::path file = out / "proposal.json";
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    if (ec)
        return Error::inFile(file.string(), {}, "read the import proposal", "the importer ended without writing proposal.json (" + ec.message() + ")", "this is the importer's fault; please report it with the problem");
    if (size > (64u << 20))
        return Error::inFile(file.string(), {}, "read the import proposal", "proposal.json is larger than 64 MiB");
    auto bytes = readFileBytes(file);
    if (!bytes)
        return bytes.error();
    auto j = json::parseText(*bytes, file.string());
    if (!j)
        return j.error();
    auto proposal = readImportProposal(*j, file.string(), out);
    if (!proposal)
        return proposal.error();
    const auto ordered = nlohmann::ordered_json::parse(*bytes, nullptr, false);
    if (ordered.is_object() && ordered.contains("task") && ordered["task"].is_object()) {
        proposal->task = ordered["task"];
        proposal->task["candidates"] = nlohmann::ordered_json::array();
    }
    ImportResult r;
    r.name = proposal->task.value("name", std::string());
    r.notes = proposal->notes;
    if (!sandboxed)
        r.notes.insert(r.notes.begin(), importSandboxNote(o));
    r.testShapes = int(proposal->task["shapes"].value("tests", nlohmann::ordered_json::array()).size());
    r.benchmarkShapes = int(proposal->task["shapes"].value("benchmarks", nlohmann::ordered_json::array()).size());
    const fs::path target = !o.out.empty() ? o.out : (o.parent.empty() ? fs::current_path(ec) : o.parent) / r.name;
    auto written = writeImportedTask(*proposal, out, target);
    if (!written)
        return written.error();
    r.taskDir = *written;
    return r;
}

// Runs `python -m kernelforge_import <args> --out <tmp>/out` confined and reads what it proposes.
Result<ImportResult> runHelper(std::vector<std::string> args, const fs::path& problem, const std::vector<fs::path>& sources,
                               const ImportOptions& o, const TempFolder& tmp)
{
    if (tmp.path().empty())
        return Error::failed("import the problem", "cannot create a private temporary folder", "check $TMPDIR");
    if (auto target = checkTarget(o); !target)
        return target.error();
    const fs::path out = tmp.path() / "out";
    std::error_code ec;
    fs::create_directories(out, ec);
    const std::string python = importPython(o.python);
    std::vector<std::string> argv = {python, "-m", "kernelforge_import"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--out", out.string(), "--arch", o.arch});
    const auto ran = runConfined(argv, helperConfinement(o, tmp.path(), sources));
    if (auto outcome = helperOutcome(ran, python, problem, o); !outcome)
        return outcome.error();
    return writeProposal(out, o, ran->sandboxed);
}

} // namespace

std::string importPython(const std::string& given)
{
    if (!given.empty())
        return given;
    if (const char* v = std::getenv("KF_IMPORT_PYTHON"); v && *v)
        return v;
#ifdef KF_DEFAULT_TORCH_PYTHON
    std::error_code ec;
    if (*KF_DEFAULT_TORCH_PYTHON && fs::exists(KF_DEFAULT_TORCH_PYTHON, ec))
        return KF_DEFAULT_TORCH_PYTHON;
#endif
    return "python3";
}

std::string importSandboxNote(const ImportOptions& o)
{
    const SandboxSupport& s = sandboxSupport();
    if (o.sandbox && s.available)
        return {};
    return "no sandbox: " + (o.sandbox ? s.why : std::string("it was turned off")) +
           "; the problem's code runs with a private home and a scrubbed environment, but can read your files";
}

Result<ImportResult> importKernelBench(const fs::path& problem, const ImportOptions& o)
{
    std::error_code ec;
    if (!fs::is_regular_file(problem, ec))
        return Error::inFile(problem.string(), {}, "import the problem", "no such file", "give a KernelBench-style problem file (.py)");
    TempFolder tmp("kforge-import-");
    std::vector<std::string> args = {"kernelbench", fs::absolute(problem, ec).string()};
    if (!o.dtype.empty())
        args.insert(args.end(), {"--dtype", o.dtype});
    return runHelper(args, problem, {fs::absolute(problem, ec)}, o, tmp);
}

Result<ImportResult> importGpuMode(const fs::path& folder, const ImportOptions& o)
{
    std::error_code ec;
    const fs::path yml = folder / "task.yml";
    if (!fs::is_regular_file(yml, ec))
        return Error::inFile(folder.string(), {}, "import the problem", "no task.yml in the folder", "give a GPU MODE problem folder (task.yml, reference.py)");
    if (fs::file_size(yml, ec) > 256 * 1024)
        return Error::inFile(yml.string(), {}, "import the problem", "task.yml is larger than 256 KiB");
    auto text = readFileBytes(yml);
    if (!text)
        return text.error();
    auto spec = readGpuModeTaskYml(*text, yml.string());
    if (!spec)
        return spec.error();
    TempFolder tmp("kforge-import-");
    if (tmp.path().empty())
        return Error::failed("import the problem", "cannot create a private temporary folder", "check $TMPDIR");
    const fs::path specFile = tmp.path() / "spec.json";
    if (auto w = writeFileAtomic(specFile, spec->spec.dump(2)); !w)
        return w.error();
    auto r = runHelper({"gpumode", fs::absolute(folder, ec).string(), "--spec", specFile.string()}, yml,
                       {fs::absolute(folder, ec)}, o, tmp);
    if (r)
        r->notes.insert(r->notes.begin(), spec->notes.begin(), spec->notes.end());
    return r;
}

} // namespace kf::agent
