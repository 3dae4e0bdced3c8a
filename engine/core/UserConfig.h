#pragma once
// Where the user's configuration files are (runners.json, models.json).

#include <filesystem>

namespace kf {

/// $<overrideVariable> when it is set, else $XDG_CONFIG_HOME/KernelForge/<name>, else
/// ~/.config/KernelForge/<name> (./.config/... when there is no home either).
std::filesystem::path userConfigFile(const char* overrideVariable, const char* name);

} // namespace kf
