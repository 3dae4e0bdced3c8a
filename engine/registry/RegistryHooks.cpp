#include "engine/registry/RegistryHooks.h"

#include <csignal>
#include <cstdlib>

namespace kf {

namespace {

bool hooksEnabled()
{
    static const bool enabled = [] {
        const char* v = std::getenv("KF_REGISTRY_TEST_HOOKS");
        return v && std::string_view(v) == "1";
    }();
    return enabled;
}

} // namespace

void registryHook(std::string_view step)
{
    if (!hooksEnabled())
        return;
    const char* at = std::getenv("KF_REGISTRY_KILL_AT");
    if (at && step == at)
        std::raise(SIGKILL);
}

std::error_code registryFault(std::string_view step)
{
    const char* at = hooksEnabled() ? std::getenv("KF_REGISTRY_FAIL_AT") : nullptr;
    return at && step == at ? std::make_error_code(std::errc::read_only_file_system) : std::error_code();
}

} // namespace kf
