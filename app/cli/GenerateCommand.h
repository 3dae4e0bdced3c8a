#pragma once
#include <CLI/CLI.hpp>

namespace kf::cli {

/// Registers `kforge generate` (a fused candidate from the task's reference, docs/generate.md).
void addGenerateCommand(CLI::App& app, int& exitCode);

} // namespace kf::cli
