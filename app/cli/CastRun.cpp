// `kforge cast run`: a package's model (through the Python or the C++ runtime, optionally recorded
// as model-level evidence) or its ops (through kforge-cast). docs/cast.md.
#include "CastArgs.h"

#include "ExitCodes.h"
#include "engine/cast/CastExport.h"
#include "engine/cast/CastModel.h"
#include "engine/cast/CastPackage.h"
#include "engine/cast/ModelRuns.h"
#include "engine/core/Files.h"
#include "engine/core/InstallLayout.h"
#include "engine/registry/Registry.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kf::cli::castcli {

namespace {

/// kforge-cast: $KF_CAST_TOOL, else an installed one (<prefix>/libexec/kernelforge), else beside
/// kforge, else "" (then PATH).
fs::path castTool()
{
    if (const char* env = std::getenv("KF_CAST_TOOL"); env && *env)
        return env;
    const fs::path self = executableDir();
    if (fs::path installed = installedPath(InstallDir::Libexec, "kforge-cast", "", self); !installed.empty())
        return installed;
    std::error_code ec;
    if (!self.empty() && fs::exists(self / "kforge-cast", ec))
        return self / "kforge-cast";
    return {};
}

/// `argv` as exec wants it: pointers into the strings, then a null. The strings must outlive it.
std::vector<char*> execArgv(std::vector<std::string>& argv)
{
    std::vector<char*> out;
    for (auto& s : argv)
        out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

/// The program that runs a model: a TorchScript model runs in the C++ runtime, as a LibTorch
/// program would; a torch.export program needs Python ($KF_CAST_PYTHON, else python3, with
/// kernelforge_cast importable).
std::string modelRuntime(bool script)
{
    if (script) {
        const fs::path tool = castTool();
        return tool.empty() ? std::string("kforge-cast") : tool.string();
    }
    const char* env = std::getenv("KF_CAST_PYTHON");
    return std::string(env && *env ? env : "python3");
}

std::vector<std::string> modelArgv(const CastArgs& a, bool script, const std::string& program, const std::string& evidence)
{
    std::vector<std::string> argv = {program, "-m", "kernelforge_cast", "run", a.file, "--runs", std::to_string(a.runs),
                                     "--warmup", std::to_string(a.warmup)};
    if (script)
        argv = {program, "model", a.file, "--runs", std::to_string(a.runs), "--warmup", std::to_string(a.warmup)};
    if (!a.model.empty())
        argv.insert(argv.end(), {"--model", a.model});
    if (!a.device.empty())
        argv.insert(argv.end(), {"--device", a.device});
    for (auto [flag, on] : {std::pair{"--no-kernels", a.noKernels}, {"--check", a.check},
                            {"--allow-fallback", a.allowFallback}, {"--json", a.json}})
        if (on)
            argv.push_back(flag);
    if (!evidence.empty())
        argv.insert(argv.end(), {"--evidence", evidence});
    return argv;
}

/// Runs the model's runtime and waits for it. Returns its exit code.
int spawnModelRun(const CastArgs& a, bool script, std::vector<std::string> argv)
{
    const std::string& program = argv.front();
    std::vector<char*> cargv = execArgv(argv);
    std::cout.flush();
#ifdef KF_CAST_PYTHONPATH
    // The runtime of this KernelForge (installed, or the build tree's); one installed with pip is
    // found by Python when neither exists.
    if (const fs::path runtime = installedPath(InstallDir::Data, "python/cast", KF_CAST_PYTHONPATH); fs::exists(runtime)) {
        const char* old = std::getenv("PYTHONPATH");
        const std::string path = runtime.string() + (old && *old ? ":" + std::string(old) : "");
        ::setenv("PYTHONPATH", path.c_str(), 1);
    }
#endif
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::execvp(program.c_str(), cargv.data());
        if (script)
            std::fprintf(stderr, "kforge: cannot start %s: the C++ runtime (kforge-cast, with LibTorch) runs a TorchScript "
                                 "model; build the kforge-cast target or point $KF_CAST_TOOL at it\n", program.c_str());
        else
            std::fprintf(stderr, "kforge: cannot start %s: the Python runtime (kernelforge_cast, with PyTorch) runs a "
                                 "package's model; set $KF_CAST_PYTHON to a Python that has both\n", program.c_str());
        ::_exit(kExitEnvironment);
    }
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) < 0)
        return reportError(Error::failed("run the model", "cannot start a process"), a.json, "run", kExitEnvironment);
    return WIFEXITED(status) ? WEXITSTATUS(status) : kExitEnvironment;
}

/// --record: the run's evidence (the runtime wrote it to `evidence`, read as `bytes`) stored in the
/// package, and beside each registry version whose kernel ran, so the registry browser shows it
/// with the version's own evidence (when this machine has that registry).
int recordRun(const CastArgs& a, const cast::Package& pkg, const std::string& modelName, const std::string& evidence,
              const Result<std::string>& bytes)
{
    if (!bytes)
        return reportError(bytes.error(), false, "run", kExitFailed);
    const json run = json::parse(bytes.value(), nullptr, false);
    if (run.is_discarded())
        return reportError(Error::inFile(evidence, {}, "record the model run", "the runtime's evidence is not JSON"), false, "run",
                           kExitFailed);
    auto stored = cast::recordModelRun(a.file, modelName, run);
    if (!stored)
        return reportError(stored.error(), false, "run", kExitFailed);
    std::cerr << "kforge: recorded this run in " << a.file << " as " << stored.value() << " (model-level evidence)\n";
    auto dir = Registry::resolveDirectory(a.registry, fs::current_path());
    if (!dir) {
        std::cerr << "kforge: no registry here (" << dir.error().why << "): the run is in the package only\n";
        return kExitOk;
    }
    auto copies = cast::recordModelRunInRegistry(Registry(dir.value()), pkg, run);
    if (!copies)
        return reportError(copies.error(), false, "run", kExitFailed);
    for (const auto& c : copies.value())
        std::cerr << "kforge: " << c.id << ": "
                  << (c.file.empty() ? c.why + "; the run is in the package only" : "model run stored beside its evidence (" + c.file + ")")
                  << '\n';
    return kExitOk;
}

/// `kforge cast run` of a package's model. With --record, its evidence is then stored in the
/// package.
int runModelCommand(const CastArgs& a, const cast::Package& pkg)
{
    const std::string modelName = a.model.empty() ? pkg.models.front().name : a.model;
    const bool script = std::any_of(pkg.models.begin(), pkg.models.end(), [&](const cast::PackageModel& m) {
        return m.name == modelName && m.format == cast::kModelTorchScript;
    });
    std::string evidence, evidenceDir;
    if (a.record) {
        // A private folder: a predictable name in /tmp could be a link planted by someone else.
        std::string tmpl = (fs::temp_directory_path() / "kforge-model-run-XXXXXX").string();
        if (!::mkdtemp(tmpl.data()))
            return reportError(Error::failed("run the model", "cannot make a temporary folder for the run's evidence"),
                               a.json, "run", kExitEnvironment);
        evidenceDir = tmpl;
        evidence = evidenceDir + "/run.json";
    }
    const int code = spawnModelRun(a, script, modelArgv(a, script, modelRuntime(script), evidence));
    auto bytes = evidence.empty() ? Result<std::string>(std::string()) : readFileBytes(evidence);
    if (!evidenceDir.empty()) {
        std::error_code ec;
        fs::remove_all(evidenceDir, ec);
    }
    if (code != 0 || evidence.empty())
        return code;
    return recordRun(a, pkg, modelName, evidence, bytes);
}

} // namespace

/// `kforge cast run`: kforge does not link LibTorch, so the work is kforge-cast's ($KF_CAST_TOOL,
/// beside kforge, PATH), which replaces this process with the same arguments. A package that
/// carries a model runs the model (unless --op names an op).
int runCommand(const CastArgs& a)
{
    {
        auto pkg = cast::openPackage(a.file);
        if (!pkg)
            return reportError(pkg.error(), a.json, "run", openFailureCode(pkg.error()));
        if (!pkg->models.empty() && a.op.empty()) {
            if (!a.model.empty() && std::none_of(pkg->models.begin(), pkg->models.end(),
                                                 [&](const cast::PackageModel& m) { return m.name == a.model; }))
                return reportError(Error::inFile(a.file, {}, "run the model", "the package has no model \"" + a.model + "\"", "`kforge cast inspect` lists its models"), a.json, "run", kExitUsage);
            return runModelCommand(a, pkg.value());
        }
        if (!a.model.empty() || a.record || a.check || a.allowFallback)
            return reportError(Error::inFile(a.file, {}, "run the package", "--model, --record, --check and --allow-fallback are for a package's model, "
                                     "and this run is of its ops", "drop them, or export a model into the package (--model)"), a.json, "run", kExitUsage);
    }
    const fs::path tool = castTool();
    std::vector<std::string> argv = {tool.empty() ? "kforge-cast" : tool.string(), "run", a.file, "--runs", std::to_string(a.runs)};
    if (!a.device.empty())
        argv.insert(argv.end(), {"--device", a.device});
    if (a.noKernels)
        argv.push_back("--no-kernels");
    if (!a.op.empty())
        argv.insert(argv.end(), {"--op", a.op});
    if (a.json)
        argv.push_back("--json");
    std::vector<char*> cargv = execArgv(argv);
    std::cout.flush();
    if (tool.empty())
        ::execvp("kforge-cast", cargv.data());
    else
        ::execv(tool.c_str(), cargv.data());
    std::cerr << "kforge: cannot start kforge-cast (" << (tool.empty() ? std::string("not beside kforge nor on PATH") : tool.string())
              << "): it is the LibTorch half of `kforge cast run`; build the kforge-cast target (it needs LibTorch) "
                 "or point $KF_CAST_TOOL at it\n";
    return kExitEnvironment;
}

} // namespace kf::cli::castcli
