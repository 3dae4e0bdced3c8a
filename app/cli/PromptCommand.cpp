// `kforge prompt <task>` and `kforge skills`: hand a task to a coding agent (docs/agents.md).
#include "PromptCommand.h"

#include "ExitCodes.h"
#include "engine/agent/Prompt.h"
#include "engine/core/Files.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>
#include <memory>

namespace kf::cli {

namespace {

struct PromptArgs {
    std::string path, output, arch, skills = "auto", registry, name = "agent.cu";
    std::vector<std::string> skillDirs;
    bool json = false;
};

agent::PromptOptions optionsFrom(const PromptArgs& a, agent::SkillRequest request)
{
    agent::PromptOptions o;
    o.arch = a.arch;
    o.candidateName = a.name.size() > 3 && a.name.substr(a.name.size() - 3) == ".cu" ? a.name : a.name + ".cu";
    // Commands in the prompt name the task folder, also when task.json itself was given.
    std::filesystem::path path(a.path);
    o.taskPath = path.filename() == "task.json" ? (path.has_parent_path() ? path.parent_path().string() : ".") : a.path;
    o.registryDir = a.registry;
    o.skills = std::move(request);
    for (const std::string& d : a.skillDirs)
        o.skillDirs.emplace_back(d);
    return o;
}

void reportSkillProblems(const agent::SkillLibrary& lib)
{
    for (const Error& e : lib.problems)
        std::cerr << "kforge: warning: skipped a skill: " << e.message() << '\n';
}

int runPrompt(const PromptArgs& a)
{
    auto request = agent::parseSkillRequest(a.skills);
    if (!request) {
        std::cerr << "kforge: --skills: " << request.error().message() << '\n';
        return kExitUsage;
    }
    auto task = loadTask(a.path);
    if (!task)
        return fail(task.error(), kExitUsage);
    const agent::PromptOptions options = optionsFrom(a, request.value());
    auto facts = agent::gatherPromptFacts(*task, options);
    if (!facts)
        return fail(facts.error(), kExitUsage);
    reportSkillProblems(facts->library);
    auto prompt = agent::renderPrompt(*task, *facts, options);
    if (!prompt)
        return fail(prompt.error(), kExitUsage);
    const std::string text = a.json ? prompt->toJson().dump(2) + "\n" : prompt->markdown();
    std::string skills;
    for (const auto& c : prompt->skills)
        skills += (skills.empty() ? "" : ", ") + c.name;
    if (a.output.empty() || a.output == "-") {
        std::cout << text;
    } else {
        if (auto w = writeFileAtomic(a.output, text); !w)
            return fail(w.error(), kExitUsage);
        std::cerr << "kforge: wrote " << a.output << " (" << prompt->sections.size() << " sections, " << text.size()
                  << " bytes)\n";
    }
    std::cerr << "kforge: skills: " << (skills.empty() ? "none" : skills) << '\n';
    return kExitOk;
}

int runSkills(const PromptArgs& a)
{
    agent::PromptOptions options = optionsFrom(a, {});
    if (a.path.empty()) {
        agent::SkillLibrary lib = agent::loadSkills(options.skillDirs);
        reportSkillProblems(lib);
        if (a.json) {
            nlohmann::json out = nlohmann::json::array();
            for (const agent::Skill& s : lib.skills)
                out.push_back({{"name", s.name}, {"description", s.description}, {"origin", s.origin},
                               {"ops", s.ops}, {"dtypes", s.dtypes}, {"archs", s.archs}, {"tags", s.tags},
                               {"always", s.always}, {"priority", s.priority}, {"overrides", s.overrides}});
            std::cout << out.dump(2) << '\n';
            return kExitOk;
        }
        for (const agent::Skill& s : lib.skills) {
            std::string tags;
            for (const std::string& t : s.tags)
                tags += (tags.empty() ? "" : " ") + t;
            std::cout << s.name << (s.always ? "  (always)" : "") << (tags.empty() ? "" : "  [" + tags + "]") << "\n  "
                      << s.description << "\n  from " << s.origin
                      << (s.overrides.empty() ? "" : ", replacing " + s.overrides) << '\n';
        }
        return kExitOk;
    }
    auto request = agent::parseSkillRequest(a.skills);
    if (!request) {
        std::cerr << "kforge: --skills: " << request.error().message() << '\n';
        return kExitUsage;
    }
    options.skills = request.value();
    auto task = loadTask(a.path);
    if (!task)
        return fail(task.error(), kExitUsage);
    auto facts = agent::gatherPromptFacts(*task, options);
    if (!facts)
        return fail(facts.error(), kExitUsage);
    reportSkillProblems(facts->library);
    auto traits = agent::traitsOf(*task, facts->steps, facts->arch->arch);
    auto chosen = agent::selectSkills(facts->library, traits, options.skills);
    if (!chosen)
        return fail(chosen.error(), kExitUsage);
    if (a.json) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& c : *chosen)
            out.push_back({{"name", c.skill->name}, {"reason", c.reason}, {"score", c.score}});
        std::cout << nlohmann::json{{"task", task->name}, {"arch", facts->arch->arch}, {"skills", out}}.dump(2) << '\n';
        return kExitOk;
    }
    std::cout << "skills for " << task->name << " on " << facts->arch->arch << ":\n";
    for (const auto& c : *chosen)
        std::cout << "  " << c.skill->name << "  (" << c.reason << ")\n";
    return kExitOk;
}

} // namespace

void addPromptCommands(CLI::App& app, int& exitCode)
{
    auto args = std::make_shared<PromptArgs>();
    CLI::App* cmd = app.add_subcommand("prompt", "Write a strict Markdown task for a coding agent, with skills");
    cmd->add_option("task", args->path, "task folder or task.json")->required();
    cmd->add_option("-o,--output", args->output, "write the prompt to this file (default: standard output)");
    cmd->add_option("--arch", args->arch, "target architecture (default: the task's first)");
    cmd->add_option("--skills", args->skills, "auto (default), none, or skill names separated by commas");
    cmd->add_option("--skills-dir", args->skillDirs, "a folder of <name>/SKILL.md skills; repeat; later folders win by name");
    cmd->add_option("--registry", args->registry, "registry folder for the best kernel to beat (default: as promote finds it)");
    cmd->add_option("--name", args->name, "the file name the agent writes (default agent.cu)");
    cmd->add_flag("--json", args->json, "print the sections, the chosen skills and the Markdown as JSON");
    cmd->callback([args, &exitCode] { exitCode = runPrompt(*args); });

    auto sargs = std::make_shared<PromptArgs>();
    CLI::App* skills = app.add_subcommand("skills", "List the skills; with --task, the ones a prompt would bundle and why");
    skills->add_option("--task", sargs->path, "task folder or task.json: show the planner's choice for it");
    skills->add_option("--arch", sargs->arch, "target architecture (default: the task's first)");
    skills->add_option("--skills", sargs->skills, "auto (default), none, or names (with --task)");
    skills->add_option("--skills-dir", sargs->skillDirs, "a folder of <name>/SKILL.md skills; repeat; later folders win by name");
    skills->add_flag("--json", sargs->json, "print as JSON");
    skills->callback([sargs, &exitCode] { exitCode = runSkills(*sargs); });
}

} // namespace kf::cli
