// The row template (docs/generate.md): rows per warp when rows are short, one per block when
// they are long, and very long rows split over several blocks (EmitRowSplit.cpp). The passes over
// the row are scheduled in engine/generate/RowPlan.cpp; this file writes them. Inputs are kept in
// registers between passes for the first kCacheChunks chunks of every thread; longer rows read the
// rest again (from L2). Each pass hands every chunk to one lambda, whether cached or not, and the
// elements outside whole chunks to its one-element copy.
#include "engine/generate/EmitRow.h"

#include <algorithm>

namespace kf::gen::detail {

namespace {

RowPaths choosePaths(Context& c, const std::string& threads)
{
    RowPaths p;
    const auto [shortest, longest] = rowRange(c.task, c.tape);
    p.warp = shortest <= c.options.warpRowMax;
    p.block = longest > c.options.warpRowMax;
    if (p.warp && p.block)
        p.warpMax = c.constant("kWarpRowMax", "int", std::to_string(c.options.warpRowMax),
                               "rows up to this length get a warp each, longer rows a block");
    if (p.warp) {
        // Short rows leave most of a warp idle: several rows per warp, each a group of lanes.
        const std::string lanesKnob = c.knob("KF_ROW_LANES", 32, {8, 16, 32}, "warp path: lanes per row (32 / lanes rows per warp)");
        p.lanes = c.constant("kRowLanes", "int", lanesKnob, "warp path: the lanes of a row, a power of two up to 32");
        p.rowsPerBlock = c.constant("kRowsPerBlock", "int", threads + " / " + p.lanes, "warp path: rows per block");
    }
    return p;
}

/// The register cache's length in chunks: enough to hold a whole row of the warp path, within the
/// register budget; more would cost occupancy (rows in flight) for rows that do not need them.
std::string cacheChunks(Context& c, const std::vector<const Value*>& cached)
{
    if (cached.empty())
        return {};
    int regsPerChunk = 0;
    for (const Value* v : cached)
        regsPerChunk += (c.vec * dtypeSize(c.task.inputs[static_cast<size_t>(v->input)].dtype) + 3) / 4;
    const int wholeWarpRow = (c.options.warpRowMax + 32 * c.vec - 1) / (32 * c.vec);
    const int chosen = std::clamp(std::min(wholeWarpRow, c.options.cacheRegisters / std::max(regsPerChunk, 1)), 1, 8);
    // Half and twice the default: fewer registers (more rows in flight) or fewer re-reads from L2.
    const std::string knob = c.knob("KF_CACHE_CHUNKS", chosen, {std::max(1, chosen / 2), std::min(8, chosen * 2)},
                                    "vector chunks per thread and input kept in registers between passes");
    return c.constant("kCacheChunks", "int", knob, "chunks per thread kept in registers between passes");
}

/// row_sum or row_max: a reduction over the row's threads, a warp's or the whole block's.
void rowReduction(Code& h, const std::string& what, const std::string& doc, const std::string& lanes)
{
    h.line(0, "/// " + doc);
    h.line(0, "template <bool Block, typename T>");
    h.line(0, "__device__ __forceinline__ T row_" + what + "(T v)");
    h.line(0, "{");
    h.line(1, "if constexpr (Block)");
    h.line(2, "return kf::block_reduce_" + what + "(v);");
    h.line(1, "else");
    h.line(2, "return kf::warp_reduce_" + what + (lanes.empty() ? "" : "<" + lanes + ">") + "(v);");
    h.line(0, "}");
    h.line(0);
}

} // namespace

std::string RowFunction::emit(const std::string& threads, const std::string& cacheChunks)
{
    reductions();
    if (split()) { // generated_row_partial: pass 1 over a segment, into its record
        phase = 1;
        splitHead(threads);
        rowValues(0);
        emitPass(1);
        h.line(0, "}");
        h.line(0);
        phase = 2;
    }
    split() ? splitHead(threads) : head(threads, cacheChunks);
    rowValues(0);
    for (const Value* v : layout.cached)
        h.line(1, vecType(v) + " " + c.pointer(*v) + "_cache[" + cacheName + "];");
    for (int p = 1; p <= plan.passes; ++p)
        emitPass(p);
    h.line(0, "}");
    return h.text();
}

void RowFunction::reductions()
{
    bool usesSum = false, usesMax = false;
    for (const Stat& s : plan.stats) {
        (s.kind == StatKind::Max || s.kind == StatKind::Softmax ? usesMax : usesSum) = true;
        usesSum = usesSum || s.kind == StatKind::Softmax;
    }
    if (usesSum)
        rowReduction(h, "sum", "The sum of v over the row's threads: its lanes (Block = false) or the whole block.", paths.lanes);
    if (usesMax)
        rowReduction(h, "max",
                     "The maximum of v over the row's threads (fmaxf: NaN is tracked apart where it must propagate).",
                     paths.lanes);
}

void RowFunction::head(const std::string& threads, const std::string& cacheChunks)
{
    bool needBase = false;
    for (const Value* v : params)
        needBase = needBase || v->level == Level::Element;
    h.line(0, "/// One row: W elements per access (kVec on the vector path, 1 on the scalar one), processed by");
    h.line(0, paths.warp ? "/// kRowLanes lanes of a warp (Block = false) or by the whole block. Stores only when active."
                         : "/// the whole block.");
    h.line(0, "template <int W, bool Block>");
    h.line(0, "__device__ __forceinline__ void generated_row(" +
                  parameterList(c, params, paths.warp ? "long long row, long long cols, bool active" : "long long row, long long cols") + ")");
    h.line(0, "{");
    const std::string lanes = paths.warp ? paths.lanes : "32";
    h.line(1, "constexpr int kThreads = Block ? " + threads + " : " + lanes + ";");
    h.line(1, "const int tid = static_cast<int>(Block ? threadIdx.x : threadIdx.x % " + lanes + ");");
    if (needBase)
        h.line(1, "const long long base = row * cols;");
    rowChunks();
    if (!layout.cached.empty()) {
        const std::string scalarChunks = c.constant("kScalarCacheChunks", "int", "2",
                                                    "the scalar path keeps fewer: more costs it spills");
        h.line(1, "constexpr int kCached = W == 1 ? " + scalarChunks + " : " + cacheChunks + ";");
        cacheName = "kCached";
    }
}

/// The per-row and launch-wide values that become computable after `pass` (0: before the first),
/// and the per-row outputs among them.
void RowFunction::rowValues(int pass)
{
    for (const Value* v : params)
        if (pass == 0 && v->input >= 0 && (v->level == Level::Row || v->level == Level::Const) &&
            (phase != 1 || neededInPhase1(idOf(v))))
            h.line(1, "const float " + c.token(*v) + " = kf::to_float(" + c.pointer(*v) +
                          (v->level == Level::Row ? "[row]);" : "[0]);"));
    for (const Step& s : tape.steps) {
        const Value& r = valueAt(s.result);
        if (!s.live || (r.level != Level::Row && r.level != Level::Const) ||
            plan.ready[static_cast<size_t>(s.result)] != pass)
            continue;
        if (s.isReduction() || (phase == 1 && !neededInPhase1(s.result)))
            continue; // defined where its statistic is finished, or not read by phase 1
        h.line(1, "// " + c.stepLabel(s));
        h.line(1, c.definition(r, c.expression(s)));
    }
    for (const Value* v : params)
        if (v->output >= 0 && v->level == Level::Row && plan.ready[static_cast<size_t>(idOf(v))] == pass && phase != 1) {
            const std::string t = c.cudaType(c.task.outputs[static_cast<size_t>(v->output)].dtype);
            h.line(1, "if (" + rowStoreGuard() + ")");
            h.line(2, c.pointer(*v) + "[row] = kf::from_float<" + t + ">(" + c.token(*v) + ");");
        }
}

void RowFunction::emitPass(int pass)
{
    const std::set<int>& here = layout.closure[static_cast<size_t>(pass)];
    std::vector<const Stat*> stats;
    for (const Stat& s : plan.stats)
        if (s.pass == pass)
            stats.push_back(&s);
    std::vector<const Value*> inputs, columns, writes;
    for (const Value* v : params) {
        const int id = idOf(v);
        if (v->input >= 0 && here.count(id))
            (v->level == Level::Element ? inputs : columns).push_back(v);
        if (v->output >= 0 && v->level == Level::Element && layout.writePass[static_cast<size_t>(id)] == pass)
            writes.push_back(v);
    }
    describe(pass, stats, writes);
    for (const Stat* s : stats)
        declare(*s);
    if (phase == 2 && pass == 1) { // pass 1 ran in phase 1: the records hold its statistics
        mergeRecords(stats);
    } else {
        chunkLambda(pass, stats, inputs, columns, writes, "W");
        chunkLoops(pass, inputs);
        if (paths.anyLength)
            edgeElements(pass, stats, inputs, columns, writes);
    }
    if (phase == 1) {
        splitRecords(stats);
        return;
    }
    // Finish this pass's statistics: every thread of the row gets them.
    for (const Stat* s : stats)
        finish(*s);
    rowValues(pass);
}

void RowFunction::describe(int pass, const std::vector<const Stat*>& stats, const std::vector<const Value*>& writes)
{
    std::string what;
    for (const Stat* s : stats)
        what += (what.empty() ? "" : "; ") + std::string("statistics of step ") + std::to_string(s->step + 1) + " (" +
                tape.steps[static_cast<size_t>(s->step)].op + ")";
    for (const Value* v : writes)
        what += (what.empty() ? "writes " : (what.find("writes") == std::string::npos ? "; writes " : ", ")) + v->name;
    h.line(0);
    h.line(1, "// Pass " + std::to_string(pass) + (phase == 2 && pass == 1 ? " (done by generated_row_partial)" : "") + ": " +
                  what + ".");
}

/// The thread's running accumulators of one statistic.
void RowFunction::declare(const Stat& s)
{
    const Step& st = tape.steps[static_cast<size_t>(s.step)];
    switch (s.kind) {
    case StatKind::Sum: h.line(1, "float " + c.rowName(st, "acc") + " = 0.0f;"); break;
    case StatKind::SumSq: h.line(1, "float " + c.rowName(st, "sumsq") + " = 0.0f;"); break;
    case StatKind::Centered: h.line(1, "float " + c.rowName(st, "m2") + " = 0.0f;"); break;
    case StatKind::Max:
        h.line(1, "float " + c.rowName(st, "tmax") + " = kf::neg_inf();");
        h.line(1, "int " + c.rowName(st, "tnan") + " = 0;");
        break;
    case StatKind::Softmax:
        h.line(1, "float " + c.rowName(st, "tmax") + " = kf::neg_inf(), " + c.rowName(st, "tsum") + " = 0.0f;");
        h.line(1, "int " + c.rowName(st, "tnan") + " = 0;  // fmaxf drops NaN; a NaN in the row makes it all NaN");
        break;
    }
}

/// passN: one chunk of W elements — its values, its share of the statistics, its stores.
void RowFunction::chunkLambda(int pass, const std::vector<const Stat*>& stats, const std::vector<const Value*>& inputs,
                              const std::vector<const Value*>& columns, const std::vector<const Value*>& writes,
                              const std::string& w)
{
    const std::set<int>& here = layout.closure[static_cast<size_t>(pass)];
    std::string lambdaParams = "long long e";
    for (const Value* v : inputs)
        lambdaParams += ", const " + vecType(v, w) + "& " + c.pointer(*v) + "_v";
    h.line(1, "auto pass" + std::to_string(pass) + (w == "1" ? "_one" : "") + " = [&](" + lambdaParams + ") {");
    for (const Value* v : columns)
        h.line(2, "const " + vecType(v, w) + " " + c.pointer(*v) + "_v = kf::load_vec<" + w + ">(" + c.pointer(*v) + " + e);");
    for (const Value* v : writes)
        h.line(2, "float " + c.pointer(*v) + "_out[" + w + "];");
    for (const Stat* s : stats)
        if (s->kind == StatKind::Softmax)
            h.line(2, "float " + c.rowName(tape.steps[static_cast<size_t>(s->step)], "in") + "[" + w + "];");
    h.line(0, "#pragma unroll");
    h.line(2, "for (int j = 0; j < " + w + "; ++j) {");
    for (const Value* v : params)
        if (v->input >= 0 && here.count(idOf(v)))
            h.line(3, "const float " + c.token(*v) + " = kf::to_float(" + c.pointer(*v) + "_v[j]);");
    for (const Step& s : tape.steps)
        if (here.count(s.result)) {
            h.line(3, "// " + c.stepLabel(s));
            h.line(3, c.definition(valueAt(s.result), c.expression(s)));
        }
    for (const Stat* s : stats)
        accumulate(*s);
    for (const Value* v : writes)
        h.line(3, c.pointer(*v) + "_out[j] = " + c.token(*v) + ";");
    h.line(2, "}");
    for (const Stat* s : stats)
        if (s->kind == StatKind::Softmax)
            mergeSoftmaxChunk(tape.steps[static_cast<size_t>(s->step)], w);
    const bool guarded = !writes.empty() && !storeGuard().empty();
    if (guarded)
        h.line(2, "if (" + storeGuard() + ") {");
    for (const Value* v : writes)
        h.line(guarded ? 3 : 2, "kf::store_floats<" + w + ">(" + c.pointer(*v) + " + base + e, " + c.pointer(*v) + "_out);");
    if (guarded)
        h.line(2, "}");
    h.line(1, "};");
}

/// One element's contribution to a statistic, inside the chunk's element loop.
void RowFunction::accumulate(const Stat& s)
{
    const Step& st = tape.steps[static_cast<size_t>(s.step)];
    const std::string x = c.token(valueAt(s.input));
    switch (s.kind) {
    case StatKind::Sum: h.line(3, c.rowName(st, "acc") + " += " + x + ";"); break;
    case StatKind::SumSq: h.line(3, c.rowName(st, "sumsq") + " += " + x + " * " + x + ";"); break;
    case StatKind::Centered:
        h.line(3, "const float " + c.rowName(st, "d") + " = " + x + " - " + c.rowName(st, "mean") + ";");
        h.line(3, c.rowName(st, "m2") + " += " + c.rowName(st, "d") + " * " + c.rowName(st, "d") + ";");
        break;
    case StatKind::Max:
        h.line(3, c.rowName(st, "tmax") + " = fmaxf(" + c.rowName(st, "tmax") + ", " + x + ");");
        h.line(3, c.rowName(st, "tnan") + " |= " + x + " != " + x + ";");
        break;
    case StatKind::Softmax:
        h.line(3, c.rowName(st, "in") + "[j] = " + x + ";");
        h.line(3, c.rowName(st, "tnan") + " |= " + x + " != " + x + ";");
        break;
    }
}

void RowFunction::mergeSoftmaxChunk(const Step& st, const std::string& w)
{
    const std::string in = c.rowName(st, "in"), cmax = c.rowName(st, "cmax"), csum = c.rowName(st, "csum");
    h.line(2, "// This chunk's (max, sum of exp), merged into the thread's running pair.");
    h.line(2, "float " + cmax + " = " + in + "[0];");
    h.line(0, "#pragma unroll");
    h.line(2, "for (int j = 1; j < " + w + "; ++j)");
    h.line(3, cmax + " = fmaxf(" + cmax + ", " + in + "[j]);");
    h.line(2, "float " + csum + " = 0.0f;");
    h.line(0, "#pragma unroll");
    h.line(2, "for (int j = 0; j < " + w + "; ++j)");
    h.line(3, csum + " += expf(" + in + "[j] - " + cmax + ");");
    h.line(2, "kf::online_softmax_merge(" + c.rowName(st, "tmax") + ", " + c.rowName(st, "tsum") + ", " + cmax + ", " +
                  csum + ");");
}

void RowFunction::rowChunks()
{
    if (!paths.anyLength) {
        h.line(1, "const long long chunks = cols / W;");
        return;
    }
    h.line(1, "// A row may start off a 16-byte boundary: its elements before the first boundary (head) and");
    h.line(1, "// after the last whole chunk go one at a time, the chunks between them 16 bytes at a time.");
    h.line(1, "const long long head = W == 1 ? 0 : ((W - base % W) % W < cols ? (W - base % W) % W : cols);");
    h.line(1, "const long long chunks = (cols - head) / W;");
}

void RowFunction::edgeElements(int pass, const std::vector<const Stat*>& stats, const std::vector<const Value*>& inputs,
                               const std::vector<const Value*>& columns, const std::vector<const Value*>& writes)
{
    h.line(1, "if constexpr (W > 1) { // the elements outside whole chunks, one at a time");
    // The W = 1 lambda, one level deeper.
    Code outer = std::move(h);
    h = Code();
    chunkLambda(pass, stats, inputs, columns, writes, "1");
    const std::string lambda = h.text();
    h = std::move(outer);
    for (size_t at = 0; at < lambda.size();) {
        const size_t end = lambda.find('\n', at);
        const std::string line = lambda.substr(at, end - at);
        h.line(0, line.empty() || line[0] == '#' ? line : "    " + line);
        at = end + 1;
    }
    std::string args = "e";
    for (const Value* v : inputs)
        args += ", kf::load_vec<1>(" + c.pointer(*v) + " + base + e)";
    const int indent = split() ? 3 : 2;
    if (split())
        h.line(2, "if (segment == 0) // they belong to the row's first segment");
    h.line(indent, "for (long long i = tid; i < cols - chunks * W; i += kThreads) {");
    h.line(indent + 1, "const long long e = i < head ? i : i + chunks * W;");
    h.line(indent + 1, "pass" + std::to_string(pass) + "_one(" + args + ");");
    h.line(indent, "}");
    h.line(1, "}");
}

/// The calls of passN: the register-cached chunks first (filled in pass 1), then the rest.
void RowFunction::chunkLoops(int pass, const std::vector<const Value*>& inputs)
{
    const std::string fn = "pass" + std::to_string(pass);
    const std::string at = paths.anyLength ? "head + c * W" : "c * W";   // the chunk's first element in the row
    auto fresh = [&](const Value* v) { return "kf::load_vec<W>(" + c.pointer(*v) + " + base + " + at + ")"; };
    const bool cached = !layout.cached.empty();
    if (cached) {
        std::string callArgs = at;
        for (const Value* v : inputs)
            callArgs += ", " + c.pointer(*v) + "_cache[k]";
        h.line(0, "#pragma unroll");
        h.line(1, "for (int k = 0; k < " + cacheName + "; ++k) {");
        h.line(2, "const long long c = tid + static_cast<long long>(k) * kThreads;");
        h.line(2, "if (c < chunks) {");
        if (pass == 1)
            for (const Value* v : layout.cached)
                h.line(3, c.pointer(*v) + "_cache[k] = " + fresh(v) + ";");
        h.line(3, fn + "(" + callArgs + ");");
        h.line(2, "}");
        h.line(1, "}");
    }
    std::string freshArgs = at;
    for (const Value* v : inputs)
        freshArgs += ", " + fresh(v);
    if (cached)
        h.line(1, "for (long long c = tid + static_cast<long long>(" + cacheName +
                      ") * kThreads; c < chunks; c += kThreads) // beyond the register cache");
    else if (split())
        h.line(1, "for (long long c = begin + tid; c < end; c += kThreads)");
    else
        h.line(1, "for (long long c = tid; c < chunks; c += kThreads)");
    h.line(2, fn + "(" + freshArgs + ");");
}

/// A statistic reduced over the row's threads, and the row value it defines.
void RowFunction::finish(const Stat& s)
{
    const Step& st = tape.steps[static_cast<size_t>(s.step)];
    const size_t stepIndex = static_cast<size_t>(s.step);
    auto eps = [&] {
        return c.constant("kStep" + std::to_string(stepIndex + 1) + "Eps", "float", floatLiteral(st.eps),
                          "step " + std::to_string(stepIndex + 1) + ": " + st.op + " eps");
    };
    const Value& resultValue = valueAt(st.result);
    const std::string nan = (s.kind == StatKind::Max || s.kind == StatKind::Softmax)
                                ? c.constant("kQuietNanBits", "unsigned", "0x7fc00000u",
                                             "a NaN: a NaN in a row propagates, as in LibTorch")
                                : std::string();
    auto rn = [&](const char* what) { return c.rowName(st, what); };
    switch (s.kind) {
    case StatKind::Sum:
        if (st.op == "layer_norm") {
            h.line(1, "const float " + rn("mean") + " = row_sum<Block>(" + rn("acc") + ") / " + cols + ";");
        } else {
            h.line(1, "// " + c.stepLabel(st));
            h.line(1, c.definition(resultValue, "row_sum<Block>(" + rn("acc") + ")" +
                                                    (st.op == "mean" ? " / " + cols : std::string())));
        }
        break;
    case StatKind::SumSq:
    case StatKind::Centered:
        h.line(1, "const float " + rn("rstd") + " = rsqrtf(row_sum<Block>(" +
                      rn(s.kind == StatKind::SumSq ? "sumsq" : "m2") + ") / " + cols + " + " + eps() + ");");
        break;
    case StatKind::Max:
        h.line(1, "const float " + rn("max") + " = row_max<Block>(" + rn("tmax") + ");");
        h.line(1, "// " + c.stepLabel(st));
        h.line(1, c.definition(resultValue,
                               "row_max<Block>(" + rn("tnan") + ") != 0 ? __uint_as_float(" + nan + ") : " + rn("max")));
        break;
    case StatKind::Softmax:
        h.line(1, "const float " + rn("max") + " = row_max<Block>(" + rn("tmax") + ");");
        h.line(1, "const float " + rn("sum") + " = row_max<Block>(" + rn("tnan") + ") != 0 ? __uint_as_float(" + nan +
                      ") : row_sum<Block>(" + rn("tmax") + " == kf::neg_inf() ? 0.0f : " + rn("tsum") + " * expf(" +
                      rn("tmax") + " - " + rn("max") + "));");
        if (st.op == "log_softmax")
            h.line(1, "const float " + rn("logsum") + " = logf(" + rn("sum") + ");");
        break;
    }
}

std::string vectorTest(Context& c, const std::vector<const Value*>& params, const RowPaths& paths, const std::string& vecName)
{
    const std::string aligned = alignedPointers(c, params);
    if (paths.anyLength)
        return "const bool vector = kf::aligned16(" + aligned + ");";
    return "const bool vector = cols % " + vecName + " == 0" +
           (aligned.empty() ? std::string() : " && kf::aligned16(" + aligned + ")") + ";";
}

void kernelOpening(Code& k, Context& c, const std::string& threads, const std::string& name, const std::string& parameters)
{
    const std::string minBlocks = c.knob("KF_MIN_BLOCKS", c.options.minBlocksPerSm, {0, 2, 4},
                                         "__launch_bounds__: blocks per SM the register budget must allow (0: none)");
    // An SM holds 2048 threads: a larger bound cannot be met.
    c.where("KF_BLOCK * " + minBlocks + " <= 2048");
    k.line(0, "extern \"C\" __global__ void");
    k.line(0, "#if " + minBlocks + " > 0");
    k.line(1, "__launch_bounds__(" + threads + ", " + minBlocks + ") // bandwidth needs rows in flight");
    k.line(0, "#else");
    k.line(1, "__launch_bounds__(" + threads + ")");
    k.line(0, "#endif");
    k.line(1, name + "(" + parameters + ")");
    k.line(0, "{");
}

namespace {

/// The kernel: picks the path (vector or scalar; warp or block) uniformly for the launch. Blocks
/// loop over their rows with the grid's stride, so a grid capped at KF_PERSIST_BLOCKS (persistent
/// blocks) covers every row; uncapped, each block does one turn.
std::string rowKernel(Context& c, const std::vector<const Value*>& params, const RowPaths& paths,
                      const std::string& threads, const std::string& vecName)
{
    Code k;
    kernelOpening(k, c, threads, c.kernel, parameterList(c, params, "long long rows, long long cols"));
    k.line(1, vectorTest(c, params, paths, vecName));
    auto call = [&](int indent, const char* block, const std::string& tail) {
        const std::string args = argumentList(c, params, tail);
        k.line(indent, "if (vector)");
        k.line(indent + 1, "generated_row<" + vecName + ", " + block + ">(" + args + ");");
        k.line(indent, "else");
        k.line(indent + 1, "generated_row<1, " + std::string(block) + ">(" + args + ");");
    };
    auto warpBody = [&](int indent) {
        k.line(indent, "// A warp's lanes loop alike (the shuffles need all 32): from the warp's first row.");
        k.line(indent, "for (long long first = static_cast<long long>(blockIdx.x) * " + paths.rowsPerBlock +
                           " + threadIdx.x / 32 * (32 / " + paths.lanes + "); first < rows;");
        k.line(indent + 1, "first += static_cast<long long>(gridDim.x) * " + paths.rowsPerBlock + ") {");
        k.line(indent + 1, "const long long row = first + threadIdx.x % 32 / " + paths.lanes + ";");
        call(indent + 1, "false", "row < rows ? row : rows - 1, cols, row < rows");
        k.line(indent, "}");
    };
    auto blockBody = [&](int indent) {
        k.line(indent, "for (long long row = blockIdx.x; row < rows; row += gridDim.x) {");
        call(indent + 1, "true", paths.warp ? "row, cols, true" : "row, cols");
        k.line(indent, "}");
    };
    if (paths.warp && paths.block) {
        k.line(1, "if (cols <= " + paths.warpMax + ") { // rows per warp");
        warpBody(2);
        k.line(1, "} else { // one row per block");
        blockBody(2);
        k.line(1, "}");
    } else if (paths.warp) {
        k.line(1, "// Rows per warp: the task's rows are at most " + std::to_string(c.options.warpRowMax) + " long.");
        warpBody(1);
    } else {
        k.line(1, "// One row per block: the task's rows are longer than " + std::to_string(c.options.warpRowMax) + ".");
        blockBody(1);
    }
    k.line(0, "}");
    return k.text();
}

/// The launch plan's entry (grid, block, arguments) and the mode in words.
void describeLaunch(Emitted& e, Context& c, const std::vector<const Value*>& params, const RowPaths& paths,
                    int passes, bool cached)
{
    const Tape& tape = c.tape;
    const std::string rows = tape.rowCount(), len = tape.rowLength();
    const std::string paren = rows.find(' ') == std::string::npos ? rows : "(" + rows + ")";
    const std::string warpMax = std::to_string(c.options.warpRowMax);
    const std::string warpGrid = paths.warp ? "ceil_div(" + rows + ", KF_BLOCK / KF_ROW_LANES)" : std::string();
    std::string grid = paths.warp && paths.block
                           ? "(" + len + " <= " + warpMax + ") * " + warpGrid + " + (" + len + " > " + warpMax + ") * " + paren
                       : paths.warp ? warpGrid
                                    : rows;
    const std::string persist = c.knob("KF_PERSIST_BLOCKS", 0, {0, 264, 1056},
                                       "0: a block per row or group of rows; else at most this many blocks, looping over rows");
    const std::string full = grid.find(' ') == std::string::npos ? grid : "(" + grid + ")";
    nlohmann::ordered_json launch;
    launch["kernel"] = c.kernel;
    launch["grid"] = "(" + persist + " == 0) * " + full + " + (" + persist + " > 0) * min(" + grid + ", " + persist + ")";
    launch["block"] = "KF_BLOCK";
    nlohmann::ordered_json a = tensorArguments(params);
    a.push_back({{"scalar", rows}, {"type", "int64"}});
    a.push_back({{"scalar", len}, {"type", "int64"}});
    launch["args"] = a;
    e.launches.push_back(launch);
    const std::string passText = std::to_string(passes) + (passes == 1 ? " pass" : " passes");
    e.mode = std::string(paths.warp && paths.block ? "one row per warp up to " + warpMax + " elements, else one per block"
                         : paths.warp             ? "one row per warp"
                                      : "one row per block of " + std::to_string(c.options.rowBlockThreads) + " threads") +
             "; " + passText + " over each row" +
             (cached ? ", inputs kept in registers between passes" : std::string());
}

} // namespace

Emitted emitRow(Context& c)
{
    const Plan plan = schedule(c.tape);
    const auto params = parameters(c.tape);
    const std::string blockKnob = c.knob("KF_BLOCK", c.options.rowBlockThreads, {128, 256, 512, 1024},
                                         "threads per block: the launch plan's \"block\"");
    const std::string threads = c.constant("kBlockThreads", "int", blockKnob, "threads per block: the launch plan's \"block\"");
    const std::string vecName = c.constant("kVec", "int", std::to_string(c.vec),
                                           "elements per 16-byte access of the widest stored type");
    // Rows too long for a block's register cache, and a schedule whose statistics merge from
    // per-segment records: the split path (EmitRowSplit.cpp), which keeps no register cache.
    const bool split = rowRange(c.task, c.tape).first >= c.options.splitRowMin && splittable(plan);
    RowPaths paths = split ? splitPaths(c) : choosePaths(c, threads);
    // Without per-column tensors a row's chunks need not start at a multiple of kVec.
    paths.anyLength = std::none_of(params.begin(), params.end(), [](const Value* v) { return v->level == Level::Column; }) &&
                      std::any_of(params.begin(), params.end(), [](const Value* v) { return v->level == Level::Element; });
    PassLayout layout = layoutPasses(c.tape, plan, params);
    if (split)
        layout.cached.clear();
    const std::string chunks = cacheChunks(c, layout.cached);

    Emitted e;
    e.helpers = RowFunction(c, plan, params, layout, paths).emit(threads, chunks);
    if (split) {
        e.kernel = splitKernels(c, params, paths, threads, vecName);
        describeSplitLaunch(e, c, params, plan);
    } else {
        e.kernel = rowKernel(c, params, paths, threads, vecName);
        describeLaunch(e, c, params, paths, plan.passes, !layout.cached.empty());
    }
    e.mode += paths.anyLength ? "; 16-byte accesses for rows of any length, the elements outside whole chunks one at a time"
                              : "; 16-byte accesses when the row length allows, scalar otherwise";
    return e;
}

} // namespace kf::gen::detail
