#pragma once
// The run policy: what a user asked a verify, bench or profile run to do, and how that turns into
// the request the runner gets (engine/protocol/RunRequest.h). The workbench and `kforge` fill a
// RunSettings and hand it to RunSession, so both resolve held-out shapes, the profile's shape,
// tolerance overrides and the dump folder the same way.

#include "engine/compile/CompileTypes.h"
#include "engine/core/Result.h"
#include "engine/protocol/Messages.h"
#include "engine/protocol/Report.h"
#include "engine/protocol/RunReport.h"
#include "engine/protocol/RunRequest.h"
#include "engine/task/Task.h"
#include "engine/task/TaskHash.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kf {

using protocol::RunKind;

struct RunSettings {
    std::string shapes = "tests";           ///< tests | benchmarks | all
    int trials = 3;                         ///< verify: trials per shape (one seed each)
    std::optional<std::uint64_t> seed;      ///< fixed first seed (replay); empty: fresh secret seeds
    int heldOutCount = 0;                   ///< verify: derive this many held-out shapes (secret seed, or `seed`)
    std::vector<ShapeBinding> heldOut;      ///< verify: extra shapes run as set "held_out" (task/HeldOut.h)
    std::vector<ShapeBinding> onlyShapes;   ///< run these instead of `shapes` (a repro, a shrink probe)
    std::string setName = "custom";         ///< the set of onlyShapes: custom | repro | shrink
    int firstTrial = 0;                     ///< the number of the first trial (replays keep a trial's number)
    int samples = 10;                       ///< mismatches listed per output
    std::string dumpDir;                    ///< verify: save failing trials' tensors here; empty: don't
    std::int64_t dumpMaxBytes = protocol::DumpSettings{}.maxBytes;
    bool dumpAllFailing = false;            ///< every failing trial, not only each shape's first
    std::string inputsDir;                  ///< inputs from <dir>/<name>.npy (needs one onlyShapes entry, 1 trial)
    int launchTimeoutMs = 10000;            ///< the runner's per-launch watchdog
    int attempt = 1;                        ///< the how-manyth try of this item (a pool retries a lost endpoint's item); in the placement
    std::optional<double> rtol;             ///< tolerance override for every output (never evidence)
    std::optional<double> atol;
    protocol::BenchSettings bench;
    // profile: runs onlyShapes' one shape, else defaultProfileShape (set "benchmarks" or "tests")
    bool profileBaseline = true;            ///< profile the LibTorch baseline's kernels too
    /// bench: also time the reference under torch.compile on this machine afterwards
    /// (engine/pipeline/RunPipeline.h; kforge --baseline compile|both, the workbench's Settings).
    /// Never sent to the runner.
    bool compileBaseline = false;
    std::vector<std::string> compileModes;  ///< torch.compile modes; empty: default and max-autotune-no-cudagraphs
    /// Appended to the task's NVRTC options for this run (the workbench's Settings): part of the
    /// task hash, so such a report is exploration, not evidence. Synthesis never sets it.
    std::vector<std::string> extraNvrtcOptions;
    /// verify: also run these compute-sanitizer tools (empty: none) on sanitizeShapes, resolved
    /// from the task when empty (docs/verification.md, "compute-sanitizer").
    std::vector<std::string> sanitizeTools;
    std::vector<ShapeBinding> sanitizeShapes;
    /// verify: every tool when sanitizeTools is empty and the runner's hello lists compute-sanitizer
    /// (RunSession decides after the hello): what promotion's sanitizer gate asks for.
    bool sanitizeIfAvailable = false;
};

/// The shapes compute-sanitizer runs on: the smallest test shape (by elements), and the smallest
/// test shape in which some symbol is not a multiple of 32 (a partial tile), when that is another.
std::vector<ShapeBinding> sanitizeShapes(const Task& task);

/// The shape a profile runs when none is named: the benchmark shape with the most elements (a
/// steady state, not launch overhead), else the largest test shape.
std::optional<ShapeBinding> defaultProfileShape(const Task& task);

/// Applies the policy that depends on the task: the tolerance override (to `task`), held-out
/// shapes from `heldOutCount`, a profile's default shape. An Error when a profile has no shape.
Result<void> resolveSettings(RunKind kind, Task& task, RunSettings& settings);

/// The report's "candidate" block for a compiled candidate.
protocol::CandidateRef candidateRef(const Candidate& candidate, const CompileRequest& request, const CompileResult& result);

/// A complete verify, bench or profile request for a candidate that compiled to a cubin.
protocol::RunRequest buildRunRequest(RunKind kind, const TaskPayload& task, const Candidate& candidate,
                                     const CompileRequest& request, const CompileResult& result,
                                     const std::string& nvrtcVersion, const RunSettings& settings);

/// A report with verdict "error" and no shapes, for a candidate the runner never reported on
/// (it did not compile, or the runner crashed, hung or failed). Same header as the runner's.
protocol::RunReport errorReport(RunKind kind, const Task& task, const std::string& taskHash,
                           const protocol::CandidateRef& candidate, const protocol::Hello& hello, const Error& error,
                           const std::string& startedAt, double durationMs);

/// `count` seeds: consecutive from `fixed` (so a failure replays exactly), else secret and independent.
std::vector<std::uint64_t> freshSeeds(int count, const std::optional<std::uint64_t>& fixed);

} // namespace kf
