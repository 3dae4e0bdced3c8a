#pragma once
// The flow `kforge verify` and `kforge bench` share: load the task, start the runner, compile
// each candidate for the GPU the runner found, send one request per candidate, print the
// reports (tables or --json), choose the exit code. The two commands differ only in their
// request fields and in how a report is printed.

#include "engine/runner/RunRequest.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace kf::cli {

using kf::RunKind;

struct RunArgs {
    RunKind kind = RunKind::Verify;
    std::string path;                       ///< task folder or task.json
    std::vector<std::string> candidates;    ///< empty: all, in task order
    bool json = false;
    std::string reportFile;
    std::string shapes;                     ///< tests | benchmarks | all
    int launchTimeoutMs = 10000;
    std::string runnerPath;                 ///< empty: $KF_RUNNER, beside kforge, PATH
    // verify
    std::string seed;                       ///< hex; empty: fresh secret seeds
    int trials = 3;
    std::string arch;                       ///< empty: the runner's GPU
    int repeat = 1;                         ///< >1: edit, recompile and re-verify with the warm runner, timing each
    int heldOut = 0;                        ///< held-out shapes derived from the task (verify)
    // bench
    double timeCapMs = 2000;
    int minSamples = 10;
    int maxSamples = 500;
    double targetSpread = 0.01;
};

/// The task at `path` (a folder or task.json), or nullopt after printing why on stderr (the
/// caller exits with kExitUsage).
std::optional<kf::Task> loadTaskArgument(const std::string& path);

/// Runs the whole command; returns the process exit code (ExitCodes.h, or 130 on Ctrl-C).
/// With `collect`, the reports are appended there instead of being printed as a --json document
/// (tables are still printed unless args.json): `kforge promote` gathers its evidence this way.
int runOnRunner(const RunArgs& args, nlohmann::json* collect = nullptr);

/// Human-readable blocks, one per report (VerifyCommand.cpp, BenchCommand.cpp).
void printVerifyReport(std::ostream& out, const nlohmann::json& report, bool withSet);
void printBenchReport(std::ostream& out, const nlohmann::json& report, bool withSet);

} // namespace kf::cli
