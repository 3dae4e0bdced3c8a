#pragma once
// Test hooks of the registry's writers. With KF_REGISTRY_TEST_HOOKS=1 and
// KF_REGISTRY_KILL_AT=<step> in the environment, the process kills itself (SIGKILL, no clean-up,
// as a power cut or `kill -9` would) when it reaches that step of a promote or remove:
// locked, staging, staged, renamed, indexed, unindexed. Tests use it to prove that a promoter
// killed anywhere leaves a valid registry. Without KF_REGISTRY_TEST_HOOKS it does nothing.

#include <string_view>

namespace kf {

void registryHook(std::string_view step);

} // namespace kf
