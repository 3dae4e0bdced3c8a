// `kforge import kernelbench <problem.py>` and `kforge import gpumode <folder>`: a community
// problem as a task folder with a traced TorchScript reference and no candidate yet
// (docs/agents.md, "Importing problems"; docs/cli.md).
#include "ImportCommand.h"

#include "ExitCodes.h"
#include "Interrupt.h"
#include "engine/agent/Import.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace kf::cli {

namespace {

struct ImportArgs {
    std::string format, source, out, dtype, python, arch = "sm_90";
    int timeoutSeconds = 600;
    bool json = false;
};

int runImport(const ImportArgs& a)
{
    agent::ImportOptions o;
    o.out = a.out;
    o.dtype = a.dtype;
    o.python = a.python;
    o.arch = a.arch;
    o.timeoutMs = a.timeoutSeconds * 1000;
    // Ctrl-C or SIGTERM stops the importer's process group (it runs the problem's code) and lets
    // the private temporary folder go, instead of leaving the helper running on its own.
    InterruptGuard guard;
    o.stop = [] { return InterruptGuard::interrupted(); };
    // Said once, before the problem's code runs: where there is no sandbox it can read the user's files.
    const std::string unconfined = agent::importSandboxNote(o);
    if (!unconfined.empty())
        std::cerr << "kforge: " << unconfined << '\n';
    if (!a.json)
        std::cerr << "kforge: importing " << a.source << " with " << agent::importPython(a.python)
                  << " (this runs the problem's Python code)\n";
    auto r = a.format == "kernelbench" ? agent::importKernelBench(a.source, o) : agent::importGpuMode(a.source, o);
    if (!r && InterruptGuard::interrupted()) {
        std::cerr << "kforge: cancelled\n";
        return 130;
    }
    if (!r) {
        if (a.json)
            std::cout << nlohmann::json{{"imported", false}, {"error", r.error().message()}}.dump(2) << '\n';
        std::cerr << "kforge: " << r.error().message() << '\n';
        return r.error().kind == agent::kImportNoTorch ? kExitEnvironment : kExitUsage;
    }
    if (a.json) {
        std::cout << nlohmann::json{{"imported", true},          {"task", r->name},
                                    {"folder", r->taskDir.string()}, {"test_shapes", r->testShapes},
                                    {"benchmark_shapes", r->benchmarkShapes}, {"sandboxed", unconfined.empty()},
                                    {"notes", r->notes}}
                         .dump(2)
                  << '\n';
        return kExitOk;
    }
    std::cout << "imported " << r->name << " into " << r->taskDir.string() << "\n  " << r->testShapes << " test shape(s), "
              << r->benchmarkShapes << " benchmark shape(s); the reference is " << (r->taskDir / "reference.pt").string()
              << '\n';
    for (const std::string& n : r->notes)
        if (n != unconfined)   // already said above
            std::cout << "  note: " << n << '\n';
    std::cout << "  next: kforge prompt " << r->taskDir.string() << " -o prompt.md   (or kforge generate, or write a kernel "
              << "and kforge candidate add)\n";
    return kExitOk;
}

} // namespace

void addImportCommand(CLI::App& app, int& exitCode)
{
    CLI::App* group = app.add_subcommand("import", "Turn a KernelBench or GPU MODE problem into a task (runs its Python)");
    group->require_subcommand(1);
    for (const char* format : {"kernelbench", "gpumode"}) {
        auto args = std::make_shared<ImportArgs>();
        args->format = format;
        const bool kb = std::string(format) == "kernelbench";
        CLI::App* cmd = group->add_subcommand(format, kb ? "A problem file with Model, get_inputs() and get_init_inputs()"
                                                         : "A problem folder with task.yml and reference.py");
        cmd->add_option(kb ? "problem" : "folder", args->source, kb ? "the problem's .py file" : "the problem's folder")->required();
        cmd->add_option("-o,--output", args->out, "the task folder to create (default: ./<task name>)");
        if (kb)
            cmd->add_option("--dtype", args->dtype, "cast the model and its float inputs: fp32, fp16 or bf16")
                ->check(CLI::IsMember({"fp32", "fp16", "bf16"}));
        cmd->add_option("--python", args->python, "a Python with torch (default: $KF_IMPORT_PYTHON, the build's, python3)");
        cmd->add_option("--arch", args->arch, "the task's architecture (default sm_90)");
        cmd->add_option("--timeout", args->timeoutSeconds, "stop the problem's code after this many seconds (default 600)")
            ->check(CLI::Range(1, 86400));
        cmd->add_flag("--json", args->json, "print the result as JSON");
        cmd->callback([args, &exitCode] { exitCode = runImport(*args); });
    }
}

} // namespace kf::cli
