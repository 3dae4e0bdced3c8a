#pragma once
// Internal to engine/generate: the row template's pieces (docs/generate.md) — which row paths a
// task needs, generated_row (RowFunction: the passes over one row), and the split schedule for
// long rows (EmitRowSplit.cpp: two launches and a scratch buffer of per-segment statistics).

#include "engine/generate/Emit.h"
#include "engine/generate/RowPlan.h"

#include <string>
#include <vector>

namespace kf::gen::detail {

/// Which row paths the task's row lengths need, and their constants.
struct RowPaths {
    bool warp = false;          ///< some rows are short enough for a warp each
    bool block = false;         ///< some rows need a whole block
    std::string warpMax;        ///< kWarpRowMax, when both paths are compiled
    std::string lanes;          ///< kRowLanes, on the warp path: lanes per row (a warp holds 32 / lanes rows)
    std::string rowsPerBlock;   ///< kRowsPerBlock, on the warp path
    std::string split;          ///< kSplit, on the split path: the blocks (segments) of a row
    /// No per-column tensor: the vector path does rows of any length, each row's elements before
    /// its first 16-byte boundary and after its last whole chunk one at a time.
    bool anyLength = false;
};

/// Whether the split schedule can do `plan`: one pass of statistics that merge exactly from
/// per-segment records (not layer_norm's variance around the mean), then at most one writing pass.
bool splittable(const Plan& plan);
/// The split path's constants: kSplit (the KF_SPLIT knob).
RowPaths splitPaths(Context& c);
/// Floats of one segment's record of statistic `s`.
int recordFloats(const Stat& s);

/// generated_row, the device function that does one row: its passes, each a lambda over a chunk
/// called for the cached chunks and then for the rest, and the statistics finished after each.
/// On the split path it does one segment of the row, in one of two phases (see splitRecords).
class RowFunction {
public:
    RowFunction(Context& c, const Plan& plan, const std::vector<const Value*>& params, const PassLayout& layout,
                const RowPaths& paths)
        : c(c), tape(c.tape), plan(plan), params(params), layout(layout), paths(paths)
    {
    }

    std::string emit(const std::string& threads, const std::string& cacheChunks);

private:
    const Value& valueAt(int id) const { return tape.values[static_cast<size_t>(id)]; }
    int idOf(const Value* v) const { return static_cast<int>(v - tape.values.data()); }
    std::string vecType(const Value* v, const std::string& w = "W") const
    {
        return "kf::Vec<" + c.cudaType(c.task.inputs[static_cast<size_t>(v->input)].dtype) + ", " + w + ">";
    }
    bool split() const { return !paths.split.empty(); }

    void reductions();
    void head(const std::string& threads, const std::string& cacheChunks);
    void splitHead(const std::string& threads);
    void rowValues(int pass);
    void emitPass(int pass);
    void describe(int pass, const std::vector<const Stat*>& stats, const std::vector<const Value*>& writes);
    void declare(const Stat& s);
    /// passN (w = "W": a chunk) or passN_one (w = "1": one element), from element e of the row.
    void chunkLambda(int pass, const std::vector<const Stat*>& stats, const std::vector<const Value*>& inputs,
                     const std::vector<const Value*>& columns, const std::vector<const Value*>& writes,
                     const std::string& w);
    void accumulate(const Stat& s);
    void mergeSoftmaxChunk(const Step& st, const std::string& w);
    void chunkLoops(int pass, const std::vector<const Value*>& inputs);
    /// The row's length and chunks, and on the any-length path the elements before the first chunk.
    void rowChunks();
    /// Any-length path: the elements outside whole chunks, one at a time, by passN_one.
    void edgeElements(int pass, const std::vector<const Stat*>& stats, const std::vector<const Value*>& inputs,
                      const std::vector<const Value*>& columns, const std::vector<const Value*>& writes);
    /// Split path, phase 1: the segment's statistics reduced over the block, stored as its record.
    void splitRecords(const std::vector<const Stat*>& stats);
    /// Split path, phase 2: every segment's record merged into the row's first thread.
    void mergeRecords(const std::vector<const Stat*>& stats);
    void finish(const Stat& s);

    Context& c;
    const Tape& tape;
    const Plan& plan;
    const std::vector<const Value*>& params;
    const PassLayout& layout;
    const RowPaths& paths;
    /// On the warp path a row's lanes may hold no row (past the last): they compute the last row
    /// again, so every lane takes part in the shuffles, and store nothing.
    std::string storeGuard() const { return paths.warp ? "active" : ""; }
    /// Who stores a per-row output: the row's first thread; on the split path, of segment 0 (phase 2).
    std::string rowStoreGuard() const
    {
        return split() ? "tid == 0 && segment == 0" : paths.warp ? "tid == 0 && active" : "tid == 0";
    }
    /// Phase 1 defines only the per-row values its pass reads (the others would be unused).
    bool neededInPhase1(int value) const;
    int phase = 0;           ///< split path: the function being written (1: records, 2: the rest)
    Code h;
    std::string cacheName;   ///< the number of cached chunks, in the function
    const std::string cols = "static_cast<float>(cols)";
};

/// "const bool vector = ...;": the 16-byte path for the launch, when every tensor is aligned (and,
/// with per-column tensors, the row length a multiple of kVec).
std::string vectorTest(Context& c, const std::vector<const Value*>& params, const RowPaths& paths, const std::string& vecName);

/// `extern "C" __global__ void` with __launch_bounds__ (KF_BLOCK, and KF_MIN_BLOCKS when not 0),
/// the kernel's name and parameters, and the opening brace.
void kernelOpening(Code& k, Context& c, const std::string& threads, const std::string& name, const std::string& parameters);

/// The split path's two kernels: <kernel>_partial (phase 1) and <kernel> (phase 2).
std::string splitKernels(Context& c, const std::vector<const Value*>& params, const RowPaths& paths,
                         const std::string& threads, const std::string& vecName);
/// The split path's launch plan: two launches, a block per segment of each row, and the scratch
/// buffer of records.
void describeSplitLaunch(Emitted& e, Context& c, const std::vector<const Value*>& params, const Plan& plan);

} // namespace kf::gen::detail
