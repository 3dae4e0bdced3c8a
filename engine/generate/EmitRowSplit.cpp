// The row template's split path (docs/generate.md, "Long rows"): rows too long for one block's
// register cache are cut into KF_SPLIT segments, a block each, in two launches. Phase 1
// (<kernel>_partial) runs pass 1 over its segment and stores the segment's statistics as one
// record of a scratch buffer; phase 2 (<kernel>) merges the row's records in segment order and
// runs the writing pass over its segment. The row streams twice, and a row of 256k elements is
// spread over KF_SPLIT blocks instead of one. This is the portable form of a cluster split with
// distributed shared memory: it needs no launch attributes.
#include "engine/generate/EmitRow.h"

#include <algorithm>

namespace kf::gen::detail {

RowPaths splitPaths(Context& c)
{
    RowPaths p;
    p.block = true;
    const std::string knob = c.knob("KF_SPLIT", c.options.splitSegments, {1, 2, 4, 8, 16},
                                    "split path: blocks (segments) per row, in each of the two launches");
    p.split = c.constant("kSplit", "int", knob, "split path: segments per row, a block each");
    return p;
}

bool splittable(const Plan& plan)
{
    if (plan.stats.empty() || plan.passes != 2)
        return false;
    return std::all_of(plan.stats.begin(), plan.stats.end(),
                       [](const Stat& s) { return s.pass == 1 && s.kind != StatKind::Centered; });
}

int recordFloats(const Stat& s)
{
    switch (s.kind) {
    case StatKind::Max: return 2;      // max, NaN seen
    case StatKind::Softmax: return 3;  // max, sum of exp, NaN seen
    default: return 1;                 // the sum
    }
}

bool RowFunction::neededInPhase1(int value) const
{
    // The operands of what pass 1 computes and reduces, and of the per-row steps they read.
    std::set<int> need;
    const std::set<int>& here = layout.closure[1];
    for (const Step& s : tape.steps)
        if (here.count(s.result))
            for (const Operand& o : s.args)
                if (o.value >= 0)
                    need.insert(o.value);
    for (size_t i = tape.steps.size(); i-- > 0;)
        if (need.count(tape.steps[i].result))
            for (const Operand& o : tape.steps[i].args)
                if (o.value >= 0)
                    need.insert(o.value);
    return need.count(value) > 0;
}

void RowFunction::splitHead(const std::string& threads)
{
    h.line(0, phase == 1 ? "/// Phase 1: pass 1 over one segment of a row, by the whole block; the segment's statistics"
                         : "/// Phase 2: the row's statistics from every segment's record, then the writing pass over one");
    h.line(0, phase == 1 ? "/// go to its record. W elements per access (kVec on the vector path, 1 on the scalar one)."
                         : "/// segment of the row, by the whole block. W elements per access, as in phase 1.");
    h.line(0, "template <int W, bool Block>");
    h.line(0, "__device__ __forceinline__ void " + std::string(phase == 1 ? "generated_row_partial(" : "generated_row(") +
                  parameterList(c, params, "float* __restrict__ partial, long long row, long long cols, long long segment") + ")");
    h.line(0, "{");
    h.line(1, "constexpr int kThreads = " + threads + ";");
    h.line(1, "const int tid = static_cast<int>(threadIdx.x);");
    h.line(1, "const long long base = row * cols;");
    rowChunks();
    h.line(1, "// The segment: chunks [begin, end) of the row, whole 16-byte accesses on the vector path.");
    h.line(1, "const kf::ChunkRange segment_chunks = kf::row_segment(chunks, " + paths.split + ", segment);");
    h.line(1, "const long long begin = segment_chunks.begin, end = segment_chunks.end;");
}

void RowFunction::splitRecords(const std::vector<const Stat*>& stats)
{
    h.line(1, "// The segment's statistics, reduced over the block, stored as its record.");
    std::vector<std::string> fields;
    for (const Stat* s : stats) {
        const Step& st = tape.steps[static_cast<size_t>(s->step)];
        auto rn = [&](const char* what) { return c.rowName(st, what); };
        switch (s->kind) {
        case StatKind::Sum:
        case StatKind::SumSq: {
            const std::string acc = rn(s->kind == StatKind::Sum ? "acc" : "sumsq");
            h.line(1, "const float " + rn("part") + " = row_sum<Block>(" + acc + ");");
            fields.push_back(rn("part"));
            break;
        }
        case StatKind::Max:
            h.line(1, "const float " + rn("pmax") + " = row_max<Block>(" + rn("tmax") + ");");
            h.line(1, "const int " + rn("pnan") + " = row_max<Block>(" + rn("tnan") + ");");
            fields.push_back(rn("pmax"));
            fields.push_back("static_cast<float>(" + rn("pnan") + ")");
            break;
        case StatKind::Softmax:
            h.line(1, "const float " + rn("pmax") + " = row_max<Block>(" + rn("tmax") + ");");
            h.line(1, "const float " + rn("psum") + " = row_sum<Block>(" + rn("tmax") + " == kf::neg_inf() ? 0.0f : " +
                          rn("tsum") + " * expf(" + rn("tmax") + " - " + rn("pmax") + "));");
            h.line(1, "const int " + rn("pnan") + " = row_max<Block>(" + rn("tnan") + ");");
            fields.push_back(rn("pmax"));
            fields.push_back(rn("psum"));
            fields.push_back("static_cast<float>(" + rn("pnan") + ")");
            break;
        case StatKind::Centered: break; // not splittable
        }
    }
    h.line(1, "if (tid == 0) {");
    h.line(2, "float* const record = partial + (row * " + paths.split + " + segment) * kRecordFloats;");
    for (size_t i = 0; i < fields.size(); ++i)
        h.line(2, "record[" + std::to_string(i) + "] = " + fields[i] + ";");
    h.line(1, "}");
}

void RowFunction::mergeRecords(const std::vector<const Stat*>& stats)
{
    h.line(1, "// Every segment's record, merged in segment order by the first thread; the block reductions");
    h.line(1, "// below hand the row's statistics to every thread (the others add their identities).");
    h.line(1, "if (tid == 0) {");
    h.line(2, "for (int k = 0; k < " + paths.split + "; ++k) {");
    h.line(3, "const float* const record = partial + (row * " + paths.split + " + k) * kRecordFloats;");
    int at = 0;
    for (const Stat* s : stats) {
        const Step& st = tape.steps[static_cast<size_t>(s->step)];
        auto rn = [&](const char* what) { return c.rowName(st, what); };
        auto field = [&](int i) { return "record[" + std::to_string(at + i) + "]"; };
        switch (s->kind) {
        case StatKind::Sum: h.line(3, rn("acc") + " += " + field(0) + ";"); break;
        case StatKind::SumSq: h.line(3, rn("sumsq") + " += " + field(0) + ";"); break;
        case StatKind::Max:
            h.line(3, rn("tmax") + " = fmaxf(" + rn("tmax") + ", " + field(0) + ");");
            h.line(3, rn("tnan") + " |= " + field(1) + " != 0.0f;");
            break;
        case StatKind::Softmax:
            h.line(3, "kf::online_softmax_merge(" + rn("tmax") + ", " + rn("tsum") + ", " + field(0) + ", " + field(1) + ");");
            h.line(3, rn("tnan") + " |= " + field(2) + " != 0.0f;");
            break;
        case StatKind::Centered: break; // not splittable
        }
        at += recordFloats(*s);
    }
    h.line(2, "}");
    h.line(1, "}");
}

std::string splitKernels(Context& c, const std::vector<const Value*>& params, const RowPaths& paths,
                         const std::string& threads, const std::string& vecName)
{
    const std::string args = argumentList(c, params, "partial, row, cols, segment");
    Code k;
    for (int phase = 1; phase <= 2; ++phase) {
        const std::string fn = phase == 1 ? "generated_row_partial" : "generated_row";
        if (phase == 2)
            k.line(0);
        kernelOpening(k, c, threads, phase == 1 ? c.kernel + "_partial" : c.kernel,
                      parameterList(c, params, "float* __restrict__ partial, long long rows, long long cols"));
        k.line(1, phase == 1 ? "// Phase 1: a block per segment of a row (blockIdx.x = row * kSplit + segment)."
                             : "// Phase 2: the same blocks, after phase 1 has written every record.");
        k.line(1, vectorTest(c, params, paths, vecName));
        k.line(1, "const long long row = blockIdx.x / " + paths.split + ", segment = blockIdx.x % " + paths.split + ";");
        k.line(1, "if (row >= rows)");
        k.line(2, "return;");
        k.line(1, "if (vector)");
        k.line(2, fn + "<" + vecName + ", true>(" + args + ");");
        k.line(1, "else");
        k.line(2, fn + "<1, true>(" + args + ");");
        k.line(0, "}");
    }
    return k.text();
}

void describeSplitLaunch(Emitted& e, Context& c, const std::vector<const Value*>& params, const Plan& plan)
{
    const Tape& tape = c.tape;
    const std::string rows = tape.rowCount(), len = tape.rowLength();
    int floats = 0;
    for (const Stat& s : plan.stats)
        floats += recordFloats(s);
    c.constant("kRecordFloats", "int", std::to_string(floats), "floats of one segment's record of statistics");
    // The scratch buffer's name in task.json: not a tensor's.
    std::string scratch = "row_records";
    while (c.task.findTensor(scratch))
        scratch += "_t";
    e.scratch = nlohmann::ordered_json::array(
        {{{"name", scratch}, {"dtype", "fp32"}, {"count", rows + " * KF_SPLIT * " + std::to_string(floats)}, {"zero", false}}});
    nlohmann::ordered_json args = tensorArguments(params);
    args.push_back(scratch);
    args.push_back({{"scalar", rows}, {"type", "int64"}});
    args.push_back({{"scalar", len}, {"type", "int64"}});
    const std::string grid = (rows.find(' ') == std::string::npos ? rows : "(" + rows + ")") + " * KF_SPLIT";
    for (const std::string& kernel : {c.kernel + "_partial", c.kernel}) {
        nlohmann::ordered_json launch;
        launch["kernel"] = kernel;
        launch["grid"] = grid;
        launch["block"] = "KF_BLOCK";
        launch["args"] = args;
        e.launches.push_back(launch);
    }
    e.mode = "rows split into " + std::to_string(c.options.splitSegments) + " segments of a block of " +
             std::to_string(c.options.rowBlockThreads) + " threads each, in two launches: per-segment statistics into a "
             "scratch buffer, then each segment merges its row's and writes; the row streams twice";
}

} // namespace kf::gen::detail
