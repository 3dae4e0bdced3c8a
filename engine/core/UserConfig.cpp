#include "engine/core/UserConfig.h"

#include <cstdlib>

namespace fs = std::filesystem;

namespace kf {

fs::path userConfigFile(const char* overrideVariable, const char* name)
{
    if (const char* f = std::getenv(overrideVariable); f && *f)
        return f;
    if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x)
        return fs::path(x) / "KernelForge" / name;
    const char* home = std::getenv("HOME");
    return fs::path(home && *home ? home : ".") / ".config" / "KernelForge" / name;
}

} // namespace kf
