#pragma once
// The agent prompt's fixed prose and the built-in skills, generated at build time from
// resources/agent/*.md and resources/skills/<name>/SKILL.md.
#include "resources/Embedded.h"

#include <span>

namespace kf::agentres {
/// Every file with its path under resources/: "agent/rules.md", "skills/online-softmax/SKILL.md".
std::span<const kf::EmbeddedFile> files();
} // namespace kf::agentres
