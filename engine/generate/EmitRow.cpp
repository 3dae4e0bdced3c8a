// The row template (docs/generate.md): one row per warp when rows are short, one per block when
// they are long. The row's statistics are scheduled into passes over it — a statistic whose
// input needs another statistic comes one pass later (layer_norm's variance after its mean) —
// and an output is written in the first pass that has everything it needs. Inputs are kept in
// registers between passes for the first kCacheChunks chunks of every thread; longer rows read
// the rest again (from L2). Each pass hands every chunk to one lambda, whether cached or not.
#include "engine/generate/Emit.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <map>

namespace kf::gen::detail {

namespace {

enum class StatKind { Sum, SumSq, Centered, Max, Softmax };

struct Stat {
    int step = -1;
    StatKind kind = StatKind::Sum;
    int input = -1;     ///< value reduced
    int pass = 1;
};

struct Plan {
    std::vector<Stat> stats;
    std::vector<std::set<int>> needs;   ///< per value: the statistics its computation uses
    std::vector<int> ready;             ///< per value: the pass after which it can be computed
    int passes = 1;
};

Plan schedule(const Tape& tape)
{
    Plan p;
    p.needs.resize(tape.values.size());
    p.ready.assign(tape.values.size(), 0);
    auto passOf = [&](const std::set<int>& s) {
        int m = 0;
        for (int i : s)
            m = std::max(m, p.stats[static_cast<size_t>(i)].pass);
        return m;
    };
    for (size_t si = 0; si < tape.steps.size(); ++si) {
        const Step& s = tape.steps[si];
        if (!s.live)
            continue;
        std::set<int> needs;
        for (const Operand& o : s.args)
            if (o.value >= 0)
                needs.insert(p.needs[static_cast<size_t>(o.value)].begin(), p.needs[static_cast<size_t>(o.value)].end());
        if (s.isReduction()) {
            const int x = s.args[0].value;
            const int first = passOf(p.needs[static_cast<size_t>(x)]) + 1;
            auto add = [&](StatKind k, int pass) {
                p.stats.push_back({static_cast<int>(si), k, x, pass});
                needs.insert(static_cast<int>(p.stats.size() - 1));
            };
            if (s.op == "sum" || s.op == "mean")
                add(StatKind::Sum, first);
            else if (s.op == "amax")
                add(StatKind::Max, first);
            else if (s.op == "softmax" || s.op == "log_softmax")
                add(StatKind::Softmax, first);
            else if (s.op == "rms_norm")
                add(StatKind::SumSq, first);
            else { // layer_norm: the mean, then the variance around it
                add(StatKind::Sum, first);
                add(StatKind::Centered, first + 1);
            }
        }
        p.needs[static_cast<size_t>(s.result)] = needs;
        p.ready[static_cast<size_t>(s.result)] = passOf(needs);
    }
    for (const Stat& s : p.stats)
        p.passes = std::max(p.passes, s.pass);
    for (size_t v = 0; v < tape.values.size(); ++v)
        if (tape.values[v].output >= 0 && tape.values[v].level == Level::Element)
            p.passes = std::max(p.passes, p.ready[v] + 1);
    return p;
}

std::pair<long long, long long> extentRange(const Task& task, const std::string& dim)
{
    if (!dim.empty() && std::all_of(dim.begin(), dim.end(), [](char ch) { return ch >= '0' && ch <= '9'; }) &&
        dim.size() < 18) {
        const long long v = std::stoll(dim);
        return {v, v};
    }
    for (const auto& s : task.symbols)
        if (s.name == dim)
            return {s.min, s.max};
    return {1, LLONG_MAX};
}

/// The smallest and largest row length the task admits.
std::pair<long long, long long> rowRange(const Task& task, const Tape& tape)
{
    long long lo = 1, hi = 1;
    for (auto it = tape.full.end() - tape.rowDims; it != tape.full.end(); ++it) {
        auto [a, b] = extentRange(task, *it);
        lo = lo > LLONG_MAX / std::max(a, 1LL) ? LLONG_MAX : lo * a;
        hi = hi > LLONG_MAX / std::max(b, 1LL) ? LLONG_MAX : hi * b;
    }
    return {lo, hi};
}

} // namespace

Emitted emitRow(Context& c)
{
    const Tape& tape = c.tape;
    const Plan plan = schedule(tape);
    const auto params = parameters(tape);
    const std::string threads = c.constant("kBlockThreads", "int", std::to_string(c.options.rowBlockThreads),
                                           "threads per block: the launch plan's \"block\"");
    const std::string vecName = c.constant("kVec", "int", std::to_string(c.vec),
                                           "elements per 16-byte access of the widest stored type");
    const auto [shortest, longest] = rowRange(c.task, tape);
    const bool warpMode = shortest <= c.options.warpRowMax, blockMode = longest > c.options.warpRowMax;
    std::string warpMax, rowsPerBlock;
    if (warpMode && blockMode)
        warpMax = c.constant("kWarpRowMax", "int", std::to_string(c.options.warpRowMax),
                             "rows up to this length get a warp each, longer rows a block");
    if (warpMode)
        rowsPerBlock = c.constant("kRowsPerBlock", "int", threads + " / 32", "warp per row: rows per block");

    // Which values each pass computes per element, and which inputs it reads.
    auto valueAt = [&](int id) -> const Value& { return tape.values[static_cast<size_t>(id)]; };
    std::vector<std::set<int>> closure(static_cast<size_t>(plan.passes) + 1);
    std::function<void(int, std::set<int>&)> need = [&](int id, std::set<int>& into) {
        const Value& v = valueAt(id);
        if ((v.level != Level::Element && v.level != Level::Column) || !into.insert(id).second)
            return;
        if (v.step >= 0)
            for (const Operand& o : tape.steps[static_cast<size_t>(v.step)].args)
                if (o.value >= 0)
                    need(o.value, into);
    };
    std::vector<int> writePass(tape.values.size(), 0);
    for (const Stat& s : plan.stats)
        need(s.input, closure[static_cast<size_t>(s.pass)]);
    for (size_t v = 0; v < tape.values.size(); ++v)
        if (tape.values[v].output >= 0 && tape.values[v].level == Level::Element) {
            writePass[v] = plan.ready[v] + 1;
            need(static_cast<int>(v), closure[static_cast<size_t>(writePass[v])]);
        }
    std::vector<const Value*> cached;
    if (plan.passes > 1)
        for (const Value* v : params)
            if (v->input >= 0 && v->level == Level::Element)
                for (int p = 1; p <= plan.passes; ++p)
                    if (closure[static_cast<size_t>(p)].count(static_cast<int>(v - tape.values.data()))) {
                        cached.push_back(v);
                        break;
                    }
    int regsPerChunk = 0;
    for (const Value* v : cached)
        regsPerChunk += (c.vec * dtypeSize(c.task.inputs[static_cast<size_t>(v->input)].dtype) + 3) / 4;
    // Enough chunks to hold a whole row of the warp path, within the register budget: more would
    // cost occupancy (rows in flight) for rows that do not need them.
    const int wholeWarpRow = (c.options.warpRowMax + 32 * c.vec - 1) / (32 * c.vec);
    std::string cacheName;
    if (!cached.empty())
        cacheName = c.constant(
            "kCacheChunks", "int",
            std::to_string(std::clamp(std::min(wholeWarpRow, c.options.cacheRegisters / std::max(regsPerChunk, 1)), 1, 8)),
            "chunks per thread kept in registers between passes");
    bool needBase = false;
    for (const Value* v : params)
        needBase = needBase || v->level == Level::Element;
    bool usesSum = false, usesMax = false;
    for (const Stat& s : plan.stats)
        (s.kind == StatKind::Max || s.kind == StatKind::Softmax ? usesMax : usesSum) = true;
    for (const Stat& s : plan.stats)
        usesSum = usesSum || s.kind == StatKind::Softmax;

    Code h;
    if (usesSum) {
        h.line(0, "/// The sum of v over the row's threads: a warp (Block = false) or the whole block.");
        h.line(0, "template <bool Block, typename T>");
        h.line(0, "__device__ __forceinline__ T row_sum(T v)");
        h.line(0, "{");
        h.line(1, "if constexpr (Block)");
        h.line(2, "return kf::block_reduce_sum(v);");
        h.line(1, "else");
        h.line(2, "return kf::warp_reduce_sum(v);");
        h.line(0, "}");
        h.line(0);
    }
    if (usesMax) {
        h.line(0, "/// The maximum of v over the row's threads (fmaxf: NaN is tracked apart where it must propagate).");
        h.line(0, "template <bool Block, typename T>");
        h.line(0, "__device__ __forceinline__ T row_max(T v)");
        h.line(0, "{");
        h.line(1, "if constexpr (Block)");
        h.line(2, "return kf::block_reduce_max(v);");
        h.line(1, "else");
        h.line(2, "return kf::warp_reduce_max(v);");
        h.line(0, "}");
        h.line(0);
    }
    h.line(0, "/// One row: W elements per access (kVec on the vector path, 1 on the scalar one), processed by a");
    h.line(0, "/// warp (Block = false) or by the whole block.");
    h.line(0, "template <int W, bool Block>");
    h.line(0, "__device__ __forceinline__ void generated_row(" +
                  parameterList(c, params, "long long row, long long cols") + ")");
    h.line(0, "{");
    h.line(1, "constexpr int kThreads = Block ? " + threads + " : 32;");
    h.line(1, "const int tid = static_cast<int>(Block ? threadIdx.x : threadIdx.x % 32);");
    if (needBase)
        h.line(1, "const long long base = row * cols;");
    h.line(1, "const long long chunks = cols / W;");
    if (!cached.empty()) {
        const std::string scalarChunks = c.constant("kScalarCacheChunks", "int", "2",
                                                    "the scalar path keeps fewer: more costs it spills");
        h.line(1, "constexpr int kCached = W == 1 ? " + scalarChunks + " : " + cacheName + ";");
        cacheName = "kCached";
    }
    const std::string cols = "static_cast<float>(cols)";

    auto emitRowValues = [&](int pass) {
        for (const Value* v : params)
            if (pass == 0 && v->input >= 0 && (v->level == Level::Row || v->level == Level::Const))
                h.line(1, "const float " + c.token(*v) + " = kf::to_float(" + c.pointer(*v) +
                              (v->level == Level::Row ? "[row]);" : "[0]);"));
        for (const Step& s : tape.steps) {
            const Value& r = valueAt(s.result);
            if (!s.live || (r.level != Level::Row && r.level != Level::Const) ||
                plan.ready[static_cast<size_t>(s.result)] != pass)
                continue;
            if (s.isReduction())
                continue; // defined where its statistic is finished
            h.line(1, "// " + c.stepLabel(s));
            h.line(1, c.definition(r, c.expression(s)));
        }
        for (const Value* v : params)
            if (v->output >= 0 && v->level == Level::Row && plan.ready[static_cast<size_t>(v - tape.values.data())] == pass) {
                const std::string t = c.cudaType(c.task.outputs[static_cast<size_t>(v->output)].dtype);
                h.line(1, "if (tid == 0)");
                h.line(2, c.pointer(*v) + "[row] = kf::from_float<" + t + ">(" + c.token(*v) + ");");
            }
    };
    emitRowValues(0);
    if (!cached.empty()) {
        for (const Value* v : cached)
            h.line(1, "kf::Vec<" + c.cudaType(c.task.inputs[static_cast<size_t>(v->input)].dtype) + ", W> " +
                          c.pointer(*v) + "_cache[" + cacheName + "];");
    }

    for (int pass = 1; pass <= plan.passes; ++pass) {
        const std::set<int>& here = closure[static_cast<size_t>(pass)];
        std::vector<const Stat*> stats;
        for (const Stat& s : plan.stats)
            if (s.pass == pass)
                stats.push_back(&s);
        std::vector<const Value*> inputs, columns, writes;
        for (const Value* v : params) {
            const int id = static_cast<int>(v - tape.values.data());
            if (v->input >= 0 && here.count(id))
                (v->level == Level::Element ? inputs : columns).push_back(v);
            if (v->output >= 0 && v->level == Level::Element && writePass[static_cast<size_t>(id)] == pass)
                writes.push_back(v);
        }
        std::string what;
        for (const Stat* s : stats)
            what += (what.empty() ? "" : "; ") + std::string("statistics of step ") + std::to_string(s->step + 1) +
                    " (" + tape.steps[static_cast<size_t>(s->step)].op + ")";
        for (const Value* v : writes)
            what += (what.empty() ? "writes " : (what.find("writes") == std::string::npos ? "; writes " : ", ")) + v->name;
        h.line(0);
        h.line(1, "// Pass " + std::to_string(pass) + ": " + what + ".");
        for (const Stat* s : stats) {
            const Step& st = tape.steps[static_cast<size_t>(s->step)];
            switch (s->kind) {
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
        std::string lambdaParams = "long long c";
        for (const Value* v : inputs)
            lambdaParams += ", const kf::Vec<" + c.cudaType(c.task.inputs[static_cast<size_t>(v->input)].dtype) +
                            ", W>& " + c.pointer(*v) + "_v";
        const std::string fn = "pass" + std::to_string(pass);
        h.line(1, "auto " + fn + " = [&](" + lambdaParams + ") {");
        for (const Value* v : columns)
            h.line(2, "const kf::Vec<" + c.cudaType(c.task.inputs[static_cast<size_t>(v->input)].dtype) + ", W> " +
                          c.pointer(*v) + "_v = kf::load_vec<W>(" + c.pointer(*v) + " + c * W);");
        for (const Value* v : writes)
            h.line(2, "float " + c.pointer(*v) + "_out[W];");
        for (const Stat* s : stats)
            if (s->kind == StatKind::Softmax)
                h.line(2, "float " + c.rowName(tape.steps[static_cast<size_t>(s->step)], "in") + "[W];");
        h.line(0, "#pragma unroll");
        h.line(2, "for (int j = 0; j < W; ++j) {");
        for (const Value* v : params)
            if (v->input >= 0 && here.count(static_cast<int>(v - tape.values.data())))
                h.line(3, "const float " + c.token(*v) + " = kf::to_float(" + c.pointer(*v) + "_v[j]);");
        for (const Step& s : tape.steps)
            if (here.count(s.result)) {
                h.line(3, "// " + c.stepLabel(s));
                h.line(3, c.definition(valueAt(s.result), c.expression(s)));
            }
        for (const Stat* s : stats) {
            const Step& st = tape.steps[static_cast<size_t>(s->step)];
            const std::string x = c.token(valueAt(s->input));
            switch (s->kind) {
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
        for (const Value* v : writes)
            h.line(3, c.pointer(*v) + "_out[j] = " + c.token(*v) + ";");
        h.line(2, "}");
        for (const Stat* s : stats)
            if (s->kind == StatKind::Softmax) {
                const Step& st = tape.steps[static_cast<size_t>(s->step)];
                const std::string in = c.rowName(st, "in"), cmax = c.rowName(st, "cmax"), csum = c.rowName(st, "csum");
                h.line(2, "// This chunk's (max, sum of exp), merged into the thread's running pair.");
                h.line(2, "float " + cmax + " = " + in + "[0];");
                h.line(0, "#pragma unroll");
                h.line(2, "for (int j = 1; j < W; ++j)");
                h.line(3, cmax + " = fmaxf(" + cmax + ", " + in + "[j]);");
                h.line(2, "float " + csum + " = 0.0f;");
                h.line(0, "#pragma unroll");
                h.line(2, "for (int j = 0; j < W; ++j)");
                h.line(3, csum + " += expf(" + in + "[j] - " + cmax + ");");
                h.line(2, "kf::online_softmax_merge(" + c.rowName(st, "tmax") + ", " + c.rowName(st, "tsum") + ", " + cmax +
                              ", " + csum + ");");
            }
        for (const Value* v : writes)
            h.line(2, "kf::store_floats<W>(" + c.pointer(*v) + " + base + c * W, " + c.pointer(*v) + "_out);");
        h.line(1, "};");

        auto fresh = [&](const Value* v) { return "kf::load_vec<W>(" + c.pointer(*v) + " + base + c * W)"; };
        if (!cached.empty()) {
            std::string callArgs = "c";
            for (const Value* v : inputs)
                callArgs += ", " + c.pointer(*v) + "_cache[k]";
            h.line(0, "#pragma unroll");
            h.line(1, "for (int k = 0; k < " + cacheName + "; ++k) {");
            h.line(2, "const long long c = tid + static_cast<long long>(k) * kThreads;");
            h.line(2, "if (c < chunks) {");
            if (pass == 1)
                for (const Value* v : cached)
                    h.line(3, c.pointer(*v) + "_cache[k] = " + fresh(v) + ";");
            h.line(3, fn + "(" + callArgs + ");");
            h.line(2, "}");
            h.line(1, "}");
        }
        std::string freshArgs = "c";
        for (const Value* v : inputs)
            freshArgs += ", " + fresh(v);
        if (!cached.empty())
            h.line(1, "for (long long c = tid + static_cast<long long>(" + cacheName +
                          ") * kThreads; c < chunks; c += kThreads) // beyond the register cache");
        else
            h.line(1, "for (long long c = tid; c < chunks; c += kThreads)");
        h.line(2, fn + "(" + freshArgs + ");");

        // Finish this pass's statistics: every thread of the row gets them.
        for (const Stat* s : stats) {
            const Step& st = tape.steps[static_cast<size_t>(s->step)];
            const size_t stepIndex = static_cast<size_t>(s->step);
            auto eps = [&] {
                return c.constant("kStep" + std::to_string(stepIndex + 1) + "Eps", "float", floatLiteral(st.eps),
                                  "step " + std::to_string(stepIndex + 1) + ": " + st.op + " eps");
            };
            const Value& resultValue = valueAt(st.result);
            const std::string nan = (s->kind == StatKind::Max || s->kind == StatKind::Softmax)
                                        ? c.constant("kQuietNanBits", "unsigned", "0x7fc00000u",
                                                     "a NaN: a NaN in a row propagates, as in LibTorch")
                                        : std::string();
            switch (s->kind) {
            case StatKind::Sum:
                if (st.op == "layer_norm") {
                    h.line(1, "const float " + c.rowName(st, "mean") + " = row_sum<Block>(" + c.rowName(st, "acc") +
                                  ") / " + cols + ";");
                } else {
                    h.line(1, "// " + c.stepLabel(st));
                    h.line(1, c.definition(resultValue, "row_sum<Block>(" + c.rowName(st, "acc") + ")" +
                                                            (st.op == "mean" ? " / " + cols : std::string())));
                }
                break;
            case StatKind::SumSq:
            case StatKind::Centered:
                h.line(1, "const float " + c.rowName(st, "rstd") + " = rsqrtf(row_sum<Block>(" +
                              c.rowName(st, s->kind == StatKind::SumSq ? "sumsq" : "m2") + ") / " + cols + " + " + eps() +
                              ");");
                break;
            case StatKind::Max:
                h.line(1, "const float " + c.rowName(st, "max") + " = row_max<Block>(" + c.rowName(st, "tmax") + ");");
                h.line(1, "// " + c.stepLabel(st));
                h.line(1, c.definition(resultValue, "row_max<Block>(" + c.rowName(st, "tnan") + ") != 0 ? __uint_as_float(" +
                                                        nan + ") : " + c.rowName(st, "max")));
                break;
            case StatKind::Softmax:
                h.line(1, "const float " + c.rowName(st, "max") + " = row_max<Block>(" + c.rowName(st, "tmax") + ");");
                h.line(1, "const float " + c.rowName(st, "sum") + " = row_max<Block>(" + c.rowName(st, "tnan") +
                              ") != 0 ? __uint_as_float(" + nan + ") : row_sum<Block>(" + c.rowName(st, "tmax") +
                              " == kf::neg_inf() ? 0.0f : " + c.rowName(st, "tsum") + " * expf(" + c.rowName(st, "tmax") +
                              " - " + c.rowName(st, "max") + "));");
                if (st.op == "log_softmax")
                    h.line(1, "const float " + c.rowName(st, "logsum") + " = logf(" + c.rowName(st, "sum") + ");");
                break;
            }
        }
        emitRowValues(pass);
    }
    h.line(0, "}");

    // The kernel: picks the path (vector or scalar; warp or block) uniformly for the launch.
    std::vector<const Value*> vectorPointers;
    for (const Value* v : params)
        if (v->level == Level::Element || v->level == Level::Column)
            vectorPointers.push_back(v);
    std::string aligned;
    for (const Value* v : vectorPointers)
        aligned += (aligned.empty() ? "" : ", ") + c.pointer(*v);
    const std::string args = argumentList(c, params, "row, cols");
    Code k;
    std::string bounds = threads;
    if (c.options.minBlocksPerSm > 0)
        bounds += ", " + c.constant("kMinBlocksPerSm", "int", std::to_string(c.options.minBlocksPerSm),
                                    "blocks per SM the register budget must allow (bandwidth needs rows in flight)");
    k.line(0, "extern \"C\" __global__ void __launch_bounds__(" + bounds + ")");
    k.line(1, c.kernel + "(" + parameterList(c, params, "long long rows, long long cols") + ")");
    k.line(0, "{");
    k.line(1, "const bool vector = cols % " + vecName + " == 0" +
                  (aligned.empty() ? std::string() : " && kf::aligned16(" + aligned + ")") + ";");
    auto warpBody = [&](int indent) {
        k.line(indent, "const long long row = static_cast<long long>(blockIdx.x) * " + rowsPerBlock + " + threadIdx.x / 32;");
        k.line(indent, "if (row >= rows)");
        k.line(indent + 1, "return;");
        k.line(indent, "if (vector)");
        k.line(indent + 1, "generated_row<" + vecName + ", false>(" + args + ");");
        k.line(indent, "else");
        k.line(indent + 1, "generated_row<1, false>(" + args + ");");
    };
    auto blockBody = [&](int indent) {
        k.line(indent, "const long long row = blockIdx.x;");
        k.line(indent, "if (vector)");
        k.line(indent + 1, "generated_row<" + vecName + ", true>(" + args + ");");
        k.line(indent, "else");
        k.line(indent + 1, "generated_row<1, true>(" + args + ");");
    };
    if (warpMode && blockMode) {
        k.line(1, "if (cols <= " + warpMax + ") { // one row per warp");
        warpBody(2);
        k.line(1, "} else { // one row per block");
        blockBody(2);
        k.line(1, "}");
    } else if (warpMode) {
        k.line(1, "// One row per warp: the task's rows are at most " + std::to_string(c.options.warpRowMax) + " long.");
        warpBody(1);
    } else {
        k.line(1, "// One row per block: the task's rows are longer than " + std::to_string(c.options.warpRowMax) + ".");
        k.line(1, "(void)rows;");
        blockBody(1);
    }
    k.line(0, "}");

    Emitted e;
    e.helpers = h.text();
    e.kernel = k.text();
    const std::string rows = tape.rowCount(), len = tape.rowLength();
    const std::string rpb = std::to_string(c.options.rowBlockThreads / 32);
    const std::string paren = rows.find(' ') == std::string::npos ? rows : "(" + rows + ")";
    e.launch["kernel"] = c.kernel;
    if (warpMode && blockMode)
        e.launch["grid"] = "(" + len + " <= " + std::to_string(c.options.warpRowMax) + ") * ceil_div(" + rows + ", " +
                           rpb + ") + (" + len + " > " + std::to_string(c.options.warpRowMax) + ") * " + paren;
    else if (warpMode)
        e.launch["grid"] = "ceil_div(" + rows + ", " + rpb + ")";
    else
        e.launch["grid"] = rows;
    e.launch["block"] = c.options.rowBlockThreads;
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const Value* v : params)
        a.push_back(v->name);
    a.push_back({{"scalar", rows}, {"type", "int64"}});
    a.push_back({{"scalar", len}, {"type", "int64"}});
    e.launch["args"] = a;
    const std::string passes = std::to_string(plan.passes) + (plan.passes == 1 ? " pass" : " passes");
    e.mode = std::string(warpMode && blockMode ? "one row per warp up to " + std::to_string(c.options.warpRowMax) +
                                                     " elements, else one per block"
                         : warpMode ? "one row per warp"
                                    : "one row per block of " + std::to_string(c.options.rowBlockThreads) + " threads") +
             "; " + passes + " over each row" +
             (cached.empty() ? std::string() : ", inputs kept in registers between passes") +
             "; 16-byte accesses when the row length allows, scalar otherwise";
    return e;
}

} // namespace kf::gen::detail
