#pragma once
// Which skills go into a task's prompt. Deterministic: the same task, architecture and library
// give the same choice, in the same order (docs/agents.md, "How skills are chosen").

#include "engine/agent/Skills.h"
#include "engine/task/Task.h"

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kf::agent {

/// What the planner matches skills against.
struct TaskTraits {
    std::set<std::string> ops;      ///< reference op names ("rms_norm"), "matmul" for bmm too
    std::set<std::string> dtypes;   ///< of every input and output ("fp16")
    std::string arch;               ///< "sm_90"
};

/// The traits of `task` whose reference computes `steps` (empty when the reference could not be
/// read as steps: then only dtypes and the architecture count).
TaskTraits traitsOf(const Task& task, const std::vector<OpStep>& steps, const std::string& arch);

struct SkillRequest {
    enum class Mode { Auto, Named, None };
    Mode mode = Mode::Auto;
    std::vector<std::string> names;   ///< Named: exactly these, in this order
};

/// "auto", "none", or a comma-separated list of names.
Result<SkillRequest> parseSkillRequest(std::string_view text);

struct SkillChoice {
    const Skill* skill = nullptr;
    std::string reason;   ///< "always", "op softmax, arch sm_90", "asked for", "general"
    int score = 0;
};

/// How many matched (not `always`) skills Auto adds at most.
inline constexpr int kMatchedSkills = 3;

/// Auto: every `always` skill, then up to kMatchedSkills by score (+3 per task op the skill
/// lists, +2 for a listed dtype, +2 for the architecture; "*" scores nothing), ties by priority
/// then name; when nothing scores, the general skills (ops "*") by priority. Named: those skills
/// (an unknown name is an error that lists the known ones). None: nothing.
Result<std::vector<SkillChoice>> selectSkills(const SkillLibrary& library, const TaskTraits& traits,
                                              const SkillRequest& request);

} // namespace kf::agent
