#pragma once
// Skills: short playbooks pasted into an agent's task prompt (resources/skills/README.md has the
// file format, docs/agents.md the planner). Built-in skills are compiled in; --skills-dir folders
// add to them and replace them by name, later folders winning.

#include "engine/core/Result.h"

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kf::agent {

struct Skill {
    std::string name;
    std::string description;
    std::string body;                       ///< Markdown after the front matter, trimmed
    std::string origin;                     ///< "resources/skills/x/SKILL.md (built in)" or a path
    std::vector<std::string> tags, ops, dtypes, archs;   ///< "*" = any
    bool always = false;                    ///< chosen for every task
    int priority = 50;                      ///< ties: higher first
    std::map<std::string, std::string> metadata;   ///< every metadata key as written
    std::string overrides;                  ///< origin of the skill this one replaced, if any
};

/// The largest SKILL.md read.
inline constexpr std::size_t kMaxSkillBytes = 256 * 1024;

/// Parses one SKILL.md. `folderName`, when not empty, must equal the skill's name.
/// Errors name "origin:line:col" and the front matter key.
Result<Skill> parseSkill(std::string_view text, const std::string& origin, std::string_view folderName);

struct SkillLibrary {
    std::vector<Skill> skills;       ///< by name
    std::vector<Error> problems;     ///< skipped files and folders, with the reason

    const Skill* find(std::string_view name) const;
};

/// The built-in skills, then each folder of `extraDirs` in order: a folder that holds SKILL.md is
/// one skill, otherwise each of its sub-folders with a SKILL.md is. A skill replaces an earlier
/// one of the same name; when its metadata has none of the planner's keys (ops, dtypes, archs,
/// always, priority) it keeps the replaced skill's. A bad file is a problem and is skipped; a
/// missing folder is a problem too.
SkillLibrary loadSkills(const std::vector<std::filesystem::path>& extraDirs);

} // namespace kf::agent
