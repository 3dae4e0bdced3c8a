#pragma once
// `kforge tune` and the workbench's Run ▸ Tune (docs/tune.md): a budgeted search over a
// candidate's space, judged by the same runner, verify rules and bench as every other run.
//
//   1. compile   every point with NVRTC on all cores (the compile cache the runs then hit);
//                drop the points that do not compile, spill, or cannot launch at some shape
//   2. halving   verify each point before it is first timed (a failing point is never timed),
//                time the survivors with the runner's bench at a short time cap, keep the best
//                1 in `eta`, time those longer, until `finalists` are left or the budget is spent
//   3. re-measure the finalists from scratch, interleaved, `remeasureRounds` times; the winner
//                has the best median, so its figure is not a lucky draw
//
// What a run is (compile, policy, request, report) is RunPipeline's: the tuner only decides which
// plans to run. Qt-free; one owner, on the thread that owns the pipeline.

#include "engine/compile/CompileTypes.h"
#include "engine/core/Result.h"
#include "engine/pipeline/RunPipeline.h"
#include "engine/task/Task.h"
#include "engine/tune/TuneSpace.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kf::tune {

struct Settings {
    double budgetS = 120;                   ///< wall clock for the whole search, the re-measure included
    std::size_t maxPoints = 4096;           ///< an even sample of a larger space
    int finalists = 3;
    int remeasureRounds = 3;
    int eta = 3;                            ///< each halving round keeps the best 1 in eta
    int compileThreads = 0;                 ///< 0: every core
    bool allowSpills = false;               ///< keep points whose kernels spill registers
    std::vector<ShapeBinding> shapes;       ///< time on these; empty: the task's benchmark shapes
    RunSettings verify;                     ///< each point's verify (default: the test shapes, 3 trials)
    std::filesystem::path cacheDir;         ///< compile cache; empty: the user's default (the runs' too)
    /// The bench time cap per shape of each halving round (the last one repeats), then of the re-measure.
    std::vector<double> roundCapMs = {120, 400, 1000};
    double remeasureCapMs = 1000;
};

enum class Stage {
    NotReached,     ///< the budget ran out (or Cancel came) before it was tried
    CompileFailed,
    Pruned,         ///< spills, or a launch that cannot run at some shape
    VerifyFailed,   ///< never timed
    BenchFailed,    ///< the bench reported an error, or a time that cannot be trusted
    Timed,          ///< timed, left out by a halving round
    Finalist,
    Winner,
};
const char* stageName(Stage s);

struct PointResult {
    Point point;
    Stage stage = Stage::NotReached;
    std::string reason;                         ///< why it failed or was pruned
    bool compiled = false;
    int registers = 0;                          ///< most of any kernel, per thread
    int spillBytes = 0;
    std::optional<double> occupancy;            ///< lowest of the launches at the representative shape, 0..1
    std::optional<bool> verified;
    int rounds = 0;                             ///< halving rounds it was timed in
    std::vector<std::optional<double>> shapeMs; ///< per tuning shape, the latest median
    std::optional<double> geomeanMs;            ///< of shapeMs, when every shape has one
    std::optional<double> speedupEager;         ///< geomean of the runner's LibTorch median ÷ this
    std::optional<double> pctPeak;              ///< lowest % of HBM peak over the shapes
    std::vector<double> remeasureMs;            ///< finalists: each interleaved re-measure's geomean
    std::optional<double> finalMs;              ///< finalists: the median of remeasureMs

    /// The figure points are ranked by: finalMs, else geomeanMs.
    std::optional<double> rankMs() const { return finalMs ? finalMs : geomeanMs; }
    bool timed() const { return geomeanMs.has_value(); }
};

/// What the search cost: what the issue asks to be printed and kept in the report.
struct Cost {
    int points = 0, compiled = 0, compileFailed = 0, pruned = 0;
    int verified = 0, verifyFailed = 0, timed = 0, benchRuns = 0, remeasureRuns = 0;
    double compileS = 0, verifyS = 0, benchS = 0, wallS = 0;
    bool budgetSpent = false;
};

struct Outcome {
    std::string candidate;
    std::string arch;
    std::vector<ShapeBinding> shapes;           ///< the tuning shapes
    std::vector<PointResult> points;            ///< in the space's order (the candidate's own first)
    Space space;
    std::optional<std::size_t> winner;          ///< index into points
    std::vector<std::optional<double>> eagerMs; ///< per shape, the runner's LibTorch median (latest)
    std::vector<double> bytes;                  ///< per shape, the task's byte count (roofline)
    double peakGbs = 0;                         ///< the GPU's HBM peak as the runner reported it
    Cost cost;
    bool cancelled = false;

    const PointResult* best() const { return winner ? &points[*winner] : nullptr; }
    nlohmann::json toJson() const;
};

/// Runs one plan: RunPipeline::run for kforge and the workbench; a test fixture in the tests.
using RunFn = std::function<Result<RunOutcome>(const Task& task, const RunPlan& plan, const CancelToken* cancel)>;

struct Progress {
    std::string stage;                          ///< "compile", "verify", "time", "re-measure"
    int done = 0, total = 0;                    ///< of this stage
    double elapsedS = 0;
    const PointResult* point = nullptr;         ///< the point just finished, if any
};
using ProgressFn = std::function<void(const Progress&)>;

/// Searches `candidateFile`'s space of `task` for `arch`. An Error only when nothing could be
/// tried (no space, an unknown candidate, NVRTC missing); every other ending is an Outcome.
Result<Outcome> search(const Task& task, const std::string& candidateFile, const std::string& arch, const Settings& settings,
                       const RunFn& run, const ProgressFn& progress = {}, const CancelToken* cancel = nullptr);

/// The outcome before anything ran: the space enumerated, the tuning shapes chosen, every point
/// NotReached. An Error for an unknown candidate, a candidate without a space, no shapes.
Result<Outcome> prepare(const Task& task, const std::string& candidateFile, const std::string& arch, const Settings& settings);

/// Compiles every point of `out.points` (stage 1); exposed for the tests and the workbench's
/// static view. Fills registers, spills, occupancy and the CompileFailed / Pruned stages.
void compilePoints(const Task& task, const Candidate& candidate, const std::string& arch, const Settings& settings,
                   Outcome& out, const ProgressFn& progress, const CancelToken* cancel);

/// The written-back winner's description in task.json: where it came from and the figure it was
/// chosen on, "tuned from optimized.cu (KF_WARPS=4): 0.1234 ms geomean over 2 shape(s) on sm_90, <tool>".
std::string winnerDescription(const Outcome& outcome, const PointResult& winner, const std::string& tool);

/// The tuned candidate's file name for `file`: "<stem>_tuned.cu", or "_tuned2"... when taken.
std::string tunedFileName(const Task& task, const std::string& file);

/// Writes the winner as a new candidate of the task in `task.directory`: the same source as
/// `file`, its defines the point's, its description the point and the figure. task.json is
/// validated and replaced atomically (appendCandidate). Returns the new file's path.
Result<std::filesystem::path> writeBack(const Task& task, const std::string& file, const Point& point,
                                        const std::string& newFile, const std::string& description);
/// The same under the first free name, tunedFileName(task, file).
Result<std::filesystem::path> writeBack(const Task& task, const std::string& file, const Point& point,
                                        const std::string& description);

} // namespace kf::tune
