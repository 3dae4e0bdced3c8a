#pragma once
#include <CLI/CLI.hpp>

namespace kf::cli {

/// Registers `kforge prompt` (a strict task for a coding agent) and `kforge skills` (the skill
/// library and, for a task, the planner's choice); docs/agents.md.
void addPromptCommands(CLI::App& app, int& exitCode);

} // namespace kf::cli
