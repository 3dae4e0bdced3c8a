// kforge: the KernelForge engine headless. Exit codes and --json output are a stable contract.
#include "BenchCommand.h"
#include "CandidateCommand.h"
#include "CastCommand.h"
#include "CompileCommand.h"
#include "ExitCodes.h"
#include "GenerateCommand.h"
#include "ImportCommand.h"
#include "ProfileCommand.h"
#include "PromoteCommand.h"
#include "PromptCommand.h"
#include "SynthCommand.h"
#include "TuneCommand.h"
#include "RunnersCommand.h"
#include "VerifyCommand.h"
#include "engine/core/Architectures.h"
#include "engine/compile/Compiler.h"
#include "engine/task/OpCatalog.h"
#include "engine/task/Task.h"

#include <CLI/CLI.hpp>

#include <iostream>

#ifndef KF_VERSION
#define KF_VERSION "dev"
#endif

using namespace kf;

int main(int argc, char** argv)
{
    CLI::App app{"kforge " KF_VERSION " — compile, verify, benchmark and promote CUDA kernels against LibTorch"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("kforge ") + KF_VERSION);
    int exitCode = cli::kExitOk;

    cli::addCompileCommand(app, exitCode);
    cli::addVerifyCommand(app, exitCode);
    cli::addBenchCommand(app, exitCode);
    cli::addProfileCommand(app, exitCode);
    cli::addPromoteCommand(app, exitCode);
    cli::addRegistryCommand(app, exitCode);
    cli::addCastCommand(app, exitCode);
    cli::addGenerateCommand(app, exitCode);
    cli::addTuneCommand(app, exitCode);
    cli::addPromptCommands(app, exitCode);
    cli::addCandidateCommand(app, exitCode);
    cli::addImportCommand(app, exitCode);
    cli::addSynthCommand(app, exitCode);
    cli::addRunnersCommand(app, exitCode);

    std::string taskPath;
    CLI::App* validate = app.add_subcommand("validate", "Check a task.json against schema v1 and print a summary");
    validate->add_option("path", taskPath, "task folder or task.json")->required();
    validate->callback([&] {
        auto t = loadTask(taskPath);
        if (!t) {
            std::cerr << "kforge: " << t.error().message() << '\n';
            exitCode = cli::kExitUsage;
            return;
        }
        std::cout << t->name << ": valid (" << t->inputs.size() << " inputs, " << t->outputs.size() << " outputs, "
                  << t->testShapes.size() << " test shapes, " << t->benchmarkShapes.size() << " benchmark shapes, "
                  << t->candidates.size() << " candidates)\n";
    });

    app.add_subcommand("ops", "List the LibTorch reference catalog ops and their attributes")->callback([] {
        for (const auto& op : opCatalog()) {
            std::cout << op.name << "  (" << op.minInputs;
            if (op.maxInputs != op.minInputs)
                std::cout << "-" << op.maxInputs;
            std::cout << " input" << (op.maxInputs == 1 ? "" : "s") << ")";
            for (const auto& at : op.attrs)
                std::cout << "  " << at.name << ":" << at.type << (at.required ? "!" : "");
            std::cout << "\n    " << op.summary << '\n';
        }
    });

    app.add_subcommand("archs", "List the architectures the occupancy calculator knows")->callback([] {
        for (const auto& a : knownArchitectures())
            std::cout << a.arch << "  " << a.exampleGpu << ": " << a.smCount << " SMs, " << a.maxThreadsPerSm
                      << " threads/SM, " << a.regsPerSm << " regs/SM, " << a.sharedPerSm / 1024 << " KiB smem/SM, "
                      << a.l2Bytes / (1024 * 1024) << " MiB L2\n";
    });

    app.add_subcommand("env", "Show which NVRTC, toolkit headers and disassembler this machine provides")->callback([&] {
        auto v = nvrtcVersion();
        std::cout << "NVRTC: " << (v ? v.value() : v.error().message()) << '\n';
        std::cout << "CUDA headers: " << (toolkitIncludeDir().empty() ? "not found (set KF_CUDA_INCLUDE)" : toolkitIncludeDir()) << '\n';
        if (!v)
            exitCode = cli::kExitEnvironment;
    });

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);
        return rc == 0 ? 0 : cli::kExitUsage;
    }
    return exitCode;
}
