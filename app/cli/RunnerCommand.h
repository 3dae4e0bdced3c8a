#pragma once
// The flow `kforge verify`, `kforge bench` and `kforge profile` share: load the task, start the runner, compile
// each candidate for the GPU the runner found, send one request per candidate, print the
// reports (tables or --json), choose the exit code. The two commands differ only in their
// request fields and in how a report is printed.

#include "EndpointOption.h"
#include "engine/analysis/SourceScan.h"
#include "engine/protocol/RunReport.h"
#include "engine/runner/RunSettings.h"
#include "engine/task/Task.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace kf::cli {

using kf::RunKind;

struct RunArgs {
    RunKind kind = RunKind::Verify;
    std::string path;                       ///< task folder or task.json
    std::vector<std::string> taskPaths;     ///< every task argument (the first is `path`); several only with --pool
    std::vector<std::string> candidates;    ///< empty: all, in task order
    bool json = false;
    std::string reportFile;
    std::string shapes;                     ///< tests | benchmarks | all
    int launchTimeoutMs = 10000;
    std::string runnerPath;                 ///< empty: $KF_RUNNER, beside kforge, PATH
    EndpointArgs endpoint;                  ///< --runner-endpoint, --runners
    // verify
    std::string seed;                       ///< hex; empty: fresh secret seeds
    int trials = 3;
    std::string arch;                       ///< empty: the runner's GPU
    int repeat = 1;                         ///< >1: edit, recompile and re-verify with the warm runner, timing each
    int heldOut = 0;                        ///< held-out shapes derived from the task (verify)
    std::string sanitize;                   ///< verify: "all" or a comma-separated list of compute-sanitizer tools; empty: none
    /// verify: every tool when the runner's host has compute-sanitizer (promotion asks for it)
    bool sanitizeIfAvailable = false;
    int samples = 10;                       ///< mismatches listed per output (verify)
    std::string dumpDir;                    ///< save failing trials' tensors here (verify)
    std::int64_t dumpMaxMib = 2048;
    bool dumpAllFailing = false;
    std::string exportRepro;                ///< export the first failing case as a repro bundle here
    std::string repro;                      ///< re-run this repro bundle instead of the task's shapes
    std::string candidateSource;            ///< --repro: compile this file instead of the bundle's copy
    bool shrink = false;                    ///< search for the smallest failing shape
    std::string shape;                      ///< --shrink: start here ("N=4099,B=2"); empty: the first failing shape
    int shrinkBudget = 64;
    bool shrinkAny = false;
    // profile (also uses `shape`)
    bool noBaseline = false;
    // bench
    double timeCapMs = 2000;
    int minSamples = 10;
    int maxSamples = 500;
    double targetSpread = 0.01;
    /// eager: the runner alone; both: also torch.compile, reported as not measured when it cannot
    /// run; compile: as both, but a torch.compile baseline that cannot be measured fails the run.
    std::string baseline = "eager";
    std::vector<std::string> compileModes;  ///< empty: default and max-autotune-no-cudagraphs
};

/// The request settings the command line asks for.
RunSettings settingsFor(const RunArgs& args, const std::optional<std::uint64_t>& seed);

/// The task at `path` (a folder or task.json), or nullopt after printing why on stderr (the
/// caller exits with kExitUsage).
std::optional<kf::Task> loadTaskArgument(const std::string& path, const std::vector<std::string>& onlyCandidates = {});

/// `--shape TEXT` ("N=4099,B=2") bound to `task`'s symbols, or nullopt after printing why on
/// stderr (the caller exits with kExitUsage).
std::optional<kf::ShapeBinding> shapeArgument(const kf::Task& task, const std::string& text);

/// Runs the whole command; returns the process exit code (ExitCodes.h, or 130 on Ctrl-C).
/// With `collect`, the reports are appended there instead of being printed as a --json document
/// (tables are still printed unless args.json): `kforge promote` gathers its evidence this way.
int runOnRunner(const RunArgs& args, std::vector<protocol::RunReport>* collect = nullptr);

/// The static scan's findings of one source as the --json document lists them.
nlohmann::json scanFindingsJson(const std::vector<ScanFinding>& findings);

/// Prints `document` (with --json) and writes it to --report; returns `exitCode`, or the
/// environment exit code when --report cannot be written.
int emitRunDocument(const RunArgs& args, const nlohmann::json& document, int exitCode);

/// The options `kforge verify` and `kforge bench` share, after their own (--json, --report,
/// --launch-timeout-ms, the runner and its endpoint, --pool), and their callback: the first task
/// argument becomes `path`, then `run` gives the exit code.
void addTaskRunOptions(CLI::App* cmd, const std::shared_ptr<RunArgs>& args, int& exitCode,
                       std::function<int(const RunArgs&)> run);

/// `kforge verify|bench TASK TASK… --pool FILE`: every candidate of every task on the pool, the
/// reports in task order and candidate order (PoolTasks.cpp).
int runPoolOverTasks(const RunArgs& args);

/// Human-readable blocks, one per report (VerifyCommand.cpp, BenchCommand.cpp, ProfileCommand.cpp).
void printVerifyReport(std::ostream& out, const protocol::RunReport& report, bool withSet);
void printSanitizerSection(std::ostream& out, const protocol::SanitizerSection& section);
void printBenchReport(std::ostream& out, const protocol::RunReport& report, bool withSet);
void printProfileReport(std::ostream& out, const protocol::RunReport& report);

} // namespace kf::cli
