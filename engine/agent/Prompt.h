#pragma once
// The strict task an agent receives (`kforge prompt`, Edit ▸ Copy Agent Prompt): twelve
// Markdown sections filled from the task, the target GPU, the registry and the chosen skills
// (docs/agents.md lists each section and where its facts come from). The fixed prose lives in
// resources/agent/*.md; the code adds the facts.
//
// gatherPromptFacts does every read (task files, registry, NVRTC, skills); renderPrompt is pure,
// so the same facts always give the same bytes.

#include "engine/agent/SkillPlanner.h"
#include "engine/agent/Skills.h"
#include "engine/core/Architectures.h"
#include "engine/registry/Registry.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kf::agent {

struct PromptOptions {
    std::string arch;                          ///< empty: the task's first architecture
    std::string candidateName = "agent.cu";    ///< the file the agent writes
    std::string taskPath;                      ///< how commands in the prompt name the task; empty: its folder
    std::string registryDir;                   ///< empty: Registry::resolveDirectory's choice
    SkillRequest skills;
    std::vector<std::filesystem::path> skillDirs;
};

struct PromptFacts {
    const ArchInfo* arch = nullptr;
    std::string nvrtc;                         ///< "13.0", or why it is unknown
    std::vector<OpStep> steps;                 ///< the reference as steps, when it reads as such
    std::string stepsProblem;                  ///< why not (a TorchScript construct, say)
    std::string scriptEntry, scriptCode;       ///< TorchScript reference: its code
    std::vector<std::pair<std::string, std::string>> imported;   ///< <task>/imported/ .py .yml .md .txt: name, text
    std::optional<RegistryIndex> registry;
    std::string registryDir, registryProblem;
    std::optional<RegistryEntry> best;         ///< the best active entry of this task and arch
    std::string preludeApi;                    ///< the header comment of kf/prelude.cuh
    SkillLibrary library;
};

struct PromptSection {
    std::string key, title, body;
};

/// A skill the prompt bundles (its text is in the "skills" section).
struct PromptSkill {
    std::string name, reason, origin;
};

/// Self-contained: nothing in it points into the facts.
struct Prompt {
    std::string task, arch;
    std::vector<PromptSection> sections;
    std::vector<PromptSkill> skills;
    std::string markdown() const;
    nlohmann::json toJson() const;
};

/// A "## key" section of the fixed prose (resources/agent/*.md) with {task}, {name} and {stem}
/// replaced; empty when there is none.
std::string agentProse(const std::string& key, const std::string& taskPath = {}, const std::string& name = {});

/// docs/task-schema.md as built in: the task format the loader enforces, for a model to read.
std::string taskSchemaText();

/// The section keys in prompt order.
const std::vector<std::string>& promptSectionKeys();

/// Reads what the prompt needs. Errors: an unknown architecture; everything else that cannot be
/// read becomes a sentence inside the prompt (no registry yet, NVRTC missing).
Result<PromptFacts> gatherPromptFacts(const Task& task, const PromptOptions& options);

/// Renders the prompt. Errors: a skill named in options.skills that the library lacks.
Result<Prompt> renderPrompt(const Task& task, const PromptFacts& facts, const PromptOptions& options);

/// The best active registry entry of `task` on `arch` (highest geometric-mean speedup).
std::optional<RegistryEntry> bestActiveEntry(const RegistryIndex& index, const std::string& taskName,
                                             const std::string& arch);

} // namespace kf::agent
