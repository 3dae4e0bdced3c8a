#pragma once
#include <CLI/CLI.hpp>

namespace kf::cli {

/// Registers `kforge candidate add` (take back a kernel an agent wrote; docs/agents.md).
void addCandidateCommand(CLI::App& app, int& exitCode);

} // namespace kf::cli
