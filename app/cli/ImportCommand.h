#pragma once
#include <CLI/CLI.hpp>

namespace kf::cli {

/// Registers `kforge import kernelbench|gpumode` (a community problem as a task; docs/agents.md).
void addImportCommand(CLI::App& app, int& exitCode);

} // namespace kf::cli
