#pragma once
// Test hooks of the registry's writers. With KF_REGISTRY_TEST_HOOKS=1 and
// KF_REGISTRY_KILL_AT=<step> in the environment, the process kills itself (SIGKILL, no clean-up,
// as a power cut or `kill -9` would) when it reaches that step of a promote or remove:
// locked, staging, staged, renamed, indexed, unindexed. Tests use it to prove that a promoter
// killed anywhere leaves a valid registry. With KF_REGISTRY_FAIL_AT=<step>, the deletion at that
// step (prune: `check --prune`; remove: `registry remove`) fails as on a read-only file system,
// which a test running as root cannot otherwise arrange. Without KF_REGISTRY_TEST_HOOKS they do
// nothing.

#include <string_view>
#include <system_error>

namespace kf {

void registryHook(std::string_view step);
/// The error a deletion at `step` must report instead of deleting (test hooks only), else none.
std::error_code registryFault(std::string_view step);

} // namespace kf
