#pragma once
#include <CLI/CLI.hpp>

namespace kf::cli {

/// Registers `kforge cast export | inspect | check | run` on `app`.
void addCastCommand(CLI::App& app, int& exitCode);

} // namespace kf::cli
