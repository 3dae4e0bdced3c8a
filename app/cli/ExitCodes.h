#pragma once
// `kforge` exit codes: a stable contract for scripts and CI pipelines (docs/cli.md), and how a
// command ends on an Error.

namespace kf {
struct Error;
}

namespace kf::cli {
inline constexpr int kExitOk = 0;          ///< success (compiled cleanly / verdict pass)
inline constexpr int kExitFailed = 1;      ///< the kernel failed: compile errors, wrong results, a bench error
inline constexpr int kExitUsage = 2;       ///< bad command line or bad input file (task.json, missing file)
inline constexpr int kExitEnvironment = 3; ///< the machine cannot do it: no NVRTC, no GPU, tool missing

/// Prints "kforge: " and the error's sentence on stderr, and returns `exitCode`.
int fail(const Error& error, int exitCode);
} // namespace kf::cli
