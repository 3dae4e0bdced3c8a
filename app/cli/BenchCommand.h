#pragma once
#include <CLI/CLI.hpp>

namespace kf::cli {

/// Registers `kforge bench` on `app`; the callback stores the exit code in `exitCode`.
void addBenchCommand(CLI::App& app, int& exitCode);

} // namespace kf::cli
