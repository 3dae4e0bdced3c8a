#pragma once
#include <CLI/CLI.hpp>

namespace kf::cli {

/// Registers `kforge tune` (a budgeted search over a candidate's "tune" space, docs/tune.md).
void addTuneCommand(CLI::App& app, int& exitCode);

} // namespace kf::cli
