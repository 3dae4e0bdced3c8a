#pragma once
// Where this clone and its build keep what the tests read and start: the source tree, the test
// data, kforge and the runner, the .cast fixtures, the Python that imports torch. The values are
// compiled once per build into a generated file (tests/CMakeLists.txt, kf_testpaths), not into
// each test: a path of the clone on a test's compile line would make that test a compiler-cache
// miss in every other clone. Each is a null-terminated string; join paths with std::string,
// std::filesystem::path or QString (KF_SOURCE_DIR is not a literal: `KF_SOURCE_DIR "/x"` does not
// compile).

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
