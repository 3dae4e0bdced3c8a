#pragma once
// Where this clone and its build keep what the tests read and start: the source tree, the test
// data, kforge and the runner, the .cast fixtures, the Python that imports torch. The values are
// compiled once per build into a generated file (tests/CMakeLists.txt, kf_testpaths), not into
// each test: a path of the clone on a test's compile line would make that test a compiler-cache
// miss in every other clone. Each is a null-terminated string; join paths with std::string,
// std::filesystem::path or QString (KF_SOURCE_DIR is not a literal: `KF_SOURCE_DIR "/x"` does not
// compile).

#include <filesystem>
#include <system_error>

namespace kf::testpaths {
extern const char kSourceDir[];       // the repository root
extern const char kTestDataDir[];     // tests/data
extern const char kKforgeBin[];       // the kforge executable
extern const char kRunnerBin[];       // the kforge-runner executable
extern const char kCastFixtureDir[];  // the .cast fixtures tst_cast and cast_models write
extern const char kTorchPython[];     // a Python that imports this tree's torch; empty if none
extern const char kTestCacheDir[];    // caches the tests keep outside the clone (~/.cache/kernelforge/tests)
}  // namespace kf::testpaths

#define KF_SOURCE_DIR (::kf::testpaths::kSourceDir)
#define KF_TEST_DATA_DIR (::kf::testpaths::kTestDataDir)
#define KF_KFORGE_BIN (::kf::testpaths::kKforgeBin)
#define KF_RUNNER_BIN (::kf::testpaths::kRunnerBin)
#define KF_CAST_FIXTURE_DIR (::kf::testpaths::kCastFixtureDir)
#define KF_TORCH_PYTHON (::kf::testpaths::kTorchPython)
#define KF_TEST_CACHE_DIR (::kf::testpaths::kTestCacheDir)

namespace kf::testpaths {
/// `path` relative to the working directory (the test's build folder). A compile cache key holds
/// the source file's path, so a task loaded through this path compiles to the same key in every
/// clone whose build folder sits at the same place in it (build/dev): a second clone reads back
/// what the first compiled (docs/test-loop.md). Falls back to `path` itself.
inline std::filesystem::path cloneRelative(const std::filesystem::path& path)
{
    std::error_code ec;
    std::filesystem::path r = std::filesystem::relative(path, ec);
    return ec || r.empty() ? path : r;
}
}  // namespace kf::testpaths
