// `kforge candidate add <task> <file.cu> [--plan plan.json]`: check a kernel and its launch plan
// against the task, compile it, scan it, and list it in task.json (docs/agents.md, docs/cli.md).
#include "CandidateCommand.h"

#include "ExitCodes.h"
#include "engine/agent/CandidateAdd.h"
#include "engine/compile/Diagnostic.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace kf::cli {

namespace {

struct CandidateArgs {
    std::string task, source, plan, name, description;
    bool noCompile = false;
    bool json = false;
};

nlohmann::json findingsJson(const std::vector<ScanFinding>& findings)
{
    nlohmann::json out = nlohmann::json::array();
    for (const ScanFinding& f : findings)
        out.push_back({{"line", f.line}, {"column", f.column}, {"rule", f.rule}, {"message", f.message}});
    return out;
}

int runAdd(const CandidateArgs& a)
{
    agent::AddCandidateRequest r;
    r.taskDir = a.task;
    if (r.taskDir.filename() == "task.json")
        r.taskDir = r.taskDir.parent_path();
    if (r.taskDir.empty())
        r.taskDir = ".";
    r.source = a.source;
    r.planFile = a.plan;
    r.name = a.name;
    r.description = a.description;
    r.compile = !a.noCompile;
    auto added = agent::addCandidate(r);
    if (!added) {
        if (a.json)
            std::cout << nlohmann::json{{"added", false}, {"error", added.error().message()},
                                        {"file", added.error().file}, {"pointer", added.error().pointer}}.dump(2) << '\n';
        std::cerr << "kforge: " << added.error().message() << '\n';
        return kExitUsage;
    }
    const agent::AddedCandidate& c = *added;
    if (a.json) {
        nlohmann::json diags = nlohmann::json::array();
        for (const Diagnostic& d : c.diagnostics)
            diags.push_back(toJson(d));
        std::cout << nlohmann::json{{"added", c.added}, {"name", c.name}, {"file", c.file.string()},
                                    {"candidate", nlohmann::json::parse(c.entry.dump())}, {"compiled_for", c.compiledFor},
                                    {"diagnostics", diags}, {"static_scan", findingsJson(c.findings)}, {"notes", c.notes}}
                         .dump(2)
                  << '\n';
        return c.added ? kExitOk : kExitFailed;
    }
    for (const Diagnostic& d : c.diagnostics)
        std::cerr << formatDiagnostic(d) << '\n';
    if (!c.added) {
        std::cerr << "kforge: " << a.source << " does not compile; nothing was added\n";
        return kExitFailed;
    }
    std::cout << "added " << c.name << " to " << (r.taskDir / "task.json").string() << '\n';
    if (!c.compiledFor.empty()) {
        std::string archs;
        for (const std::string& s : c.compiledFor)
            archs += (archs.empty() ? "" : ", ") + s;
        std::cout << "  compiled for " << archs << '\n';
    }
    for (const std::string& n : c.notes)
        std::cout << "  note: " << n << '\n';
    std::cout << scanText(c.findings, a.source);
    if (!c.findings.empty())
        std::cout << "  " << c.findings.size() << " static-scan warning(s) above: not a verdict; verify decides\n";
    std::cout << "  next: kforge verify " << a.task << " --candidate " << c.name << '\n';
    return kExitOk;
}

} // namespace

void addCandidateCommand(CLI::App& app, int& exitCode)
{
    CLI::App* group = app.add_subcommand("candidate", "Manage a task's candidates");
    group->require_subcommand(1);
    auto args = std::make_shared<CandidateArgs>();
    CLI::App* add = group->add_subcommand("add", "Check a kernel and its launch plan against the task, compile and list it");
    add->add_option("task", args->task, "task folder or task.json")->required();
    add->add_option("source", args->source, "the .cu file (anywhere; copied into the task folder)")->required();
    add->add_option("--plan", args->plan, "the launch plan as JSON (default: a ```json fence in the file's first comment)");
    add->add_option("--name", args->name, "file name in the task folder (default: the source's)");
    add->add_option("--description", args->description, "one line on the method (default: the plan's)");
    add->add_flag("--no-compile", args->noCompile, "add without compiling with NVRTC first");
    add->add_flag("--json", args->json, "print the result as JSON");
    add->callback([args, &exitCode] { exitCode = runAdd(*args); });
}

} // namespace kf::cli
