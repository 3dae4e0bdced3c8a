#pragma once
#include <CLI/CLI.hpp>

namespace kf::cli {

/// Registers `kforge promote` on `app`; the callback stores the exit code in `exitCode`.
void addPromoteCommand(CLI::App& app, int& exitCode);
/// Registers `kforge registry list | show | check | remove | deprecate | threshold`.
void addRegistryCommand(CLI::App& app, int& exitCode);

} // namespace kf::cli
