#include "engine/registry/RegistryHooks.h"

#include <csignal>
#include <cstdlib>

namespace kf {

void registryHook(std::string_view step)
{
    static const bool enabled = [] {
        const char* v = std::getenv("KF_REGISTRY_TEST_HOOKS");
        return v && std::string_view(v) == "1";
    }();
    if (!enabled)
        return;
    const char* at = std::getenv("KF_REGISTRY_KILL_AT");
    if (at && step == at)
        std::raise(SIGKILL);
}

} // namespace kf
