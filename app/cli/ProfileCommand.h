#pragma once
#include <CLI/CLI.hpp>

namespace kf::cli {

/// Registers `kforge profile` on `app`; the callback stores the exit code in `exitCode`.
void addProfileCommand(CLI::App& app, int& exitCode);

} // namespace kf::cli
