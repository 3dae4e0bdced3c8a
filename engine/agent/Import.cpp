// Running the importer helper (device/agent/python/kernelforge_import) and turning its proposal
// into a task folder.
#include "engine/agent/Import.h"

#include "engine/core/Files.h"
#include "engine/core/InstallLayout.h"
#include "engine/core/TempFolder.h"
#include "engine/core/JsonReader.h"
#include "engine/core/Process.h"

#include <unistd.h>

#include <cstdlib>
#include <system_error>

namespace kf::agent {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string lastLine(std::string t)
{
    while (!t.empty() && (t.back() == '\n' || t.back() == '\r'))
        t.pop_back();
    const auto nl = t.rfind('\n');
    return nl == std::string::npos ? t : t.substr(nl + 1);
}

// Runs `python -m kernelforge_import <args> --out <tmp>/out` and reads what it proposes.
Result<ImportResult> runHelper(std::vector<std::string> args, const fs::path& problem, const ImportOptions& o,
                               const TempFolder& tmp)
{
    if (tmp.path().empty())
        return Error{"import the problem", "cannot create a private temporary folder", "check $TMPDIR", {}, {}};
    const fs::path out = tmp.path() / "out";
    std::error_code ec;
    fs::create_directories(out, ec);
    const std::string python = importPython(o.python);
    std::vector<std::string> argv = {python, "-m", "kernelforge_import"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--out", out.string(), "--arch", o.arch});
    // PYTHONSAFEPATH and a private working folder: `python -m` must import our helper, not one
    // planted beside the problem. The problem's code itself does run: importing means running it.
    std::vector<std::string> env = {"PYTHONSAFEPATH=1", "PYTHONDONTWRITEBYTECODE=1"};
    std::string path;
#ifdef KF_IMPORT_PYTHONPATH
    if (const fs::path helper = installedPath(InstallDir::Data, "python/agent", KF_IMPORT_PYTHONPATH); fs::exists(helper, ec))
        path = helper.string();
#endif
    if (const char* old = std::getenv("PYTHONPATH"); old && *old)
        path += (path.empty() ? "" : ":") + std::string(old);
    if (!path.empty())
        env.push_back("PYTHONPATH=" + path);
    auto ran = runProcess(argv, o.timeoutMs, env, o.stop, tmp.path().string());
    if (!ran) {
        if (o.stop && o.stop())
            return Error{"import the problem", "cancelled", {}, problem.string(), {}};
        Error e = ran.error();
        e.what = "import the problem";
        if (e.why.find("did not finish") == std::string::npos) {
            e.why = "cannot start " + python + ": " + e.why;
            e.hint = "run packaging/setup.sh, or set KF_IMPORT_PYTHON to a Python with torch";
            e.kind = kImportNoTorch;
        }
        return e;
    }
    std::string line = lastLine(ran->err);
    if (line.rfind("kernelforge_import: ", 0) == 0)
        line = line.substr(20);
    if (ran->exitCode == 3 || (ran->exitCode == 1 && line.find("No module named 'kernelforge_import'") != std::string::npos))
        return Error{"import the problem", "import needs Python with torch: " + python + " says \"" + line + "\"",
                     "run packaging/setup.sh or set KF_IMPORT_PYTHON", {}, {}, kImportNoTorch};
    if (ran->exitCode == 2)
        return Error{"import the problem", line, {}, problem.string(), {}};
    if (ran->exitCode != 0)
        return Error{"import the problem",
                     "the importer failed (exit " + std::to_string(ran->exitCode) + "): " + line.substr(0, 400),
                     "this is the importer's fault; please report it with the problem", problem.string(), {}};
    // One read: the bytes checked are the bytes used (the reader's JSON sorts keys; the task keeps
    // the helper's order from the same bytes).
    const fs::path file = out / "proposal.json";
    std::error_code sizeEc;
    if (fs::file_size(file, sizeEc) > (64u << 20))
        return Error{"read the import proposal", "proposal.json is larger than 64 MiB", {}, file.string(), {}};
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
    r.testShapes = int(proposal->task["shapes"].value("tests", nlohmann::ordered_json::array()).size());
    r.benchmarkShapes = int(proposal->task["shapes"].value("benchmarks", nlohmann::ordered_json::array()).size());
    const fs::path target = !o.out.empty() ? o.out : (o.parent.empty() ? fs::current_path(ec) : o.parent) / r.name;
    auto written = writeImportedTask(*proposal, out, target);
    if (!written)
        return written.error();
    r.taskDir = *written;
    return r;
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

Result<ImportResult> importKernelBench(const fs::path& problem, const ImportOptions& o)
{
    std::error_code ec;
    if (!fs::is_regular_file(problem, ec))
        return Error{"import the problem", "no such file", "give a KernelBench-style problem file (.py)", problem.string(), {}};
    TempFolder tmp("kforge-import-");
    std::vector<std::string> args = {"kernelbench", fs::absolute(problem, ec).string()};
    if (!o.dtype.empty())
        args.insert(args.end(), {"--dtype", o.dtype});
    return runHelper(args, problem, o, tmp);
}

Result<ImportResult> importGpuMode(const fs::path& folder, const ImportOptions& o)
{
    std::error_code ec;
    const fs::path yml = folder / "task.yml";
    if (!fs::is_regular_file(yml, ec))
        return Error{"import the problem", "no task.yml in the folder", "give a GPU MODE problem folder (task.yml, reference.py)",
                     folder.string(), {}};
    if (fs::file_size(yml, ec) > 256 * 1024)
        return Error{"import the problem", "task.yml is larger than 256 KiB", {}, yml.string(), {}};
    auto text = readFileBytes(yml);
    if (!text)
        return text.error();
    auto spec = readGpuModeTaskYml(*text, yml.string());
    if (!spec)
        return spec.error();
    TempFolder tmp("kforge-import-");
    if (tmp.path().empty())
        return Error{"import the problem", "cannot create a private temporary folder", "check $TMPDIR", {}, {}};
    const fs::path specFile = tmp.path() / "spec.json";
    if (auto w = writeFileAtomic(specFile, spec->spec.dump(2)); !w)
        return w.error();
    auto r = runHelper({"gpumode", fs::absolute(folder, ec).string(), "--spec", specFile.string()}, yml, o, tmp);
    if (r)
        r->notes.insert(r->notes.begin(), spec->notes.begin(), spec->notes.end());
    return r;
}

} // namespace kf::agent
