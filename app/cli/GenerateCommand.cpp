// `kforge generate <task>`: a fused starting candidate from the task's reference, checked with
// NVRTC before anything is written (docs/generate.md, docs/cli.md).
#include "GenerateCommand.h"

#include "ExitCodes.h"
#include "engine/cast/ReferenceSteps.h"
#include "engine/compile/Compiler.h"
#include "engine/compile/CompileCache.h"
#include "engine/generate/Generate.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace kf::cli {

namespace {

struct GenerateArgs {
    std::string path;
    std::string name = "generated.cu";
    std::string arch;
    bool dryRun = false;
    bool json = false;
    gen::GenerateOptions options;
};

// The compile check of the generated source: the "compile" block of --json, its line for people,
// and the exit code (failed when it does not compile cleanly: that is the generator's bug).
struct CompileCheck {
    nlohmann::json json;
    std::string line;
    int code = kExitOk;
};

CompileCheck checkCompiles(const Task& task, const gen::Generated& generated, const std::string& arch)
{
    CompileCheck c;
    c.json = {{"arch", arch}};
    if (auto v = nvrtcVersion(); !v) {
        c.json["status"] = "not compiled";
        c.json["why"] = v.error().why;
        c.line = "not compiled: " + v.error().why;
        return c;
    }
    // The user's compile cache: generating the same task again checks it at once.
    const CompileCache userCache(CompileCache::defaultDirectory());
    auto r = gen::compileGenerated(task, generated, arch, &userCache);
    if (!r) {
        c.json["status"] = "not compiled";
        c.json["why"] = r.error().message();
        c.line = "not compiled: " + r.error().message();
        return c;
    }
    c.json["status"] = r->success && r->warningCount() == 0 ? "clean" : "failed";
    c.json["errors"] = r->errorCount();
    c.json["warnings"] = r->warningCount();
    int regs = -1, spills = 0;
    for (const auto& k : r->kernels) {
        regs = std::max(regs, k.registers);
        spills = std::max(spills, std::max(k.spillStoreBytes, 0));
    }
    c.json["registers"] = regs;
    c.json["spill_bytes"] = spills;
    c.line = "compiled for " + arch + ": " + std::to_string(r->errorCount()) + " errors, " + std::to_string(r->warningCount()) +
             " warnings, " + std::to_string(regs) + " registers, " + std::to_string(spills) + " bytes spilled";
    if (!r->success || r->warningCount() > 0) {
        std::cerr << "kforge: the generated source does not compile cleanly for " << arch
                  << " — a generator bug; please report it with the task:\n" << r->log << '\n';
        c.code = kExitFailed;
    }
    return c;
}

// --json: the result as one document, after writing the candidate unless --dry-run or it failed.
int emitJson(const GenerateArgs& a, const Task& task, const gen::Generated& generated, const CompileCheck& check)
{
    const bool write = !a.dryRun && check.code == kExitOk;
    nlohmann::json out = {{"task", task.name},
                          {"summary", generated.summary},
                          {"candidate", nlohmann::json::parse(generated.candidate.dump())},
                          {"compile", check.json},
                          {"written", write}};
    if (a.dryRun)
        out["source"] = generated.source;
    if (write) {
        auto w = gen::addGeneratedCandidate(task.directory, generated);
        if (!w)
            return fail(w.error(), kExitUsage);
        out["file"] = w->string();
    }
    std::cout << out.dump(2) << '\n';
    return check.code;
}

int run(const GenerateArgs& a)
{
    auto task = loadTask(a.path);
    if (!task)
        return fail(task.error(), kExitUsage);
    auto steps = cast::referenceSteps(*task);
    if (!steps)
        return fail(steps.error(), kExitUsage);
    gen::GenerateOptions options = a.options;
    options.fileName = a.name.size() > 3 && a.name.substr(a.name.size() - 3) == ".cu" ? a.name : a.name + ".cu";
    auto generated = gen::generateCandidate(*task, *steps, options);
    if (!generated)
        return fail(generated.error(), kExitUsage);
    if (!a.dryRun && task->findCandidate(options.fileName)) {
        std::cerr << "kforge: " << (task->directory / "task.json").string() << ": a candidate " << options.fileName
                  << " already exists (choose another name with --name)\n";
        return kExitUsage;
    }

    const std::string arch = !a.arch.empty()                ? a.arch
                             : task->architectures.empty() ? std::string("sm_90")
                                                           : task->architectures.front();
    const CompileCheck check = checkCompiles(*task, *generated, arch);
    if (a.json)
        return emitJson(a, *task, *generated, check);
    if (a.dryRun) {
        std::cout << generated->source;
        // The split path for long rows has two launches and a scratch buffer: show them all.
        const auto& launches = generated->candidate["launches"];
        std::cerr << "kforge: " << generated->summary << "\nkforge: " << check.line << "\nkforge: launch plan: "
                  << (launches.size() == 1 ? launches[0].dump() : launches.dump())
                  << (generated->candidate.contains("scratch") ? ", scratch: " + generated->candidate["scratch"].dump() : std::string())
                  << "\nkforge: dry run, nothing written\n";
        return check.code;
    }
    if (check.code != kExitOk)
        return check.code;
    auto w = gen::addGeneratedCandidate(task->directory, *generated);
    if (!w)
        return fail(w.error(), kExitUsage);
    std::cout << "wrote " << w->string() << " and added it to task.json\n  " << generated->summary << "\n  "
              << check.line << "\n  next: kforge verify " << a.path << " --candidate " << options.fileName << '\n';
    return kExitOk;
}

} // namespace

void addGenerateCommand(CLI::App& app, int& exitCode)
{
    auto args = std::make_shared<GenerateArgs>();
    CLI::App* cmd = app.add_subcommand("generate", "Generate a fused candidate (source and launch plan) from the task's reference");
    cmd->add_option("task", args->path, "task folder or task.json")->required();
    cmd->add_option("--name", args->name, "file name of the new candidate (default generated.cu)");
    cmd->add_option("--arch", args->arch, "architecture for the compile check (default: the task's first)");
    cmd->add_flag("--dry-run", args->dryRun, "print the source and the plan; write nothing");
    cmd->add_flag("--json", args->json, "print the result as JSON");
    // Tuning knobs for measurements (docs/generate.md); the defaults come from the H100 sweep.
    cmd->add_option("--warp-row-max", args->options.warpRowMax, "")->group("")->check(CLI::Range(32, 1 << 20));
    cmd->add_option("--cache-registers", args->options.cacheRegisters, "")->group("")->check(CLI::Range(4, 192));
    cmd->add_option("--block-threads", args->options.blockThreads, "")->group("")->check(CLI::IsMember({128, 256, 512, 1024}));
    cmd->add_option("--row-block-threads", args->options.rowBlockThreads, "")->group("")->check(CLI::IsMember({64, 128, 256, 512, 1024}));
    cmd->add_option("--min-blocks-per-sm", args->options.minBlocksPerSm, "")->group("")->check(CLI::Range(0, 32));
    cmd->callback([args, &exitCode] { exitCode = run(*args); });
}

} // namespace kf::cli
