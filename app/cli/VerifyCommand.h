#pragma once
#include <CLI/CLI.hpp>

namespace kf::cli {

/// Registers `kforge verify` on `app`; the callback stores the exit code in `exitCode`.
void addVerifyCommand(CLI::App& app, int& exitCode);

} // namespace kf::cli
