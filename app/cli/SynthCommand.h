#pragma once
#include <CLI/CLI.hpp>

namespace kf::cli {

/// Registers `kforge synth` on `app`; the callback stores the exit code in `exitCode`.
void addSynthCommand(CLI::App& app, int& exitCode);

} // namespace kf::cli
