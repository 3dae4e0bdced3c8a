// The elementwise template (docs/generate.md): every thread handles kChunksPerThread chunks of
// kVec consecutive elements with 16-byte accesses, the block's chunks side by side so a warp's
// accesses are coalesced; a scalar path for misaligned pointers or a broadcast period that is
// not a multiple of kVec; the elements after the last whole vector go to the last block.
#include "engine/generate/Emit.h"

namespace kf::gen::detail {

namespace {

/// generated_chunk: W consecutive elements — the loads, the per-row steps, the element loop, the stores.
std::string chunkFunction(Context& c, const std::vector<const Value*>& params, bool broadcast)
{
    const Tape& tape = c.tape;
    const std::string tailParams = broadcast ? "long long i, long long cols" : "long long i";
    Code h;
    h.line(0, "/// W consecutive elements from element i: W = kVec on the vector path, 1 on the scalar one.");
    h.line(0, "template <int W>");
    h.line(0, "__device__ __forceinline__ void generated_chunk(" + parameterList(c, params, tailParams) + ")");
    h.line(0, "{");
    // Loads first, so they are all in flight before any arithmetic waits on them.
    for (const Value* v : params) {
        if (v->input < 0)
            continue;
        const std::string p = c.pointer(*v), t = c.cudaType(c.task.inputs[static_cast<size_t>(v->input)].dtype);
        switch (v->level) {
        case Level::Const: h.line(1, "const float " + c.token(*v) + " = kf::to_float(" + p + "[0]);"); break;
        case Level::Row: h.line(1, "const float " + c.token(*v) + " = kf::to_float(" + p + "[i / cols]);"); break;
        case Level::Column:
            h.line(1, "const kf::Vec<" + t + ", W> " + p + "_v = kf::load_vec<W>(" + p + " + i % cols);");
            break;
        case Level::Element: h.line(1, "const kf::Vec<" + t + ", W> " + p + "_v = kf::load_vec<W>(" + p + " + i);"); break;
        }
    }
    // Steps on per-row or launch-wide values: once per chunk, outside the element loop.
    for (size_t i = 0; i < tape.steps.size(); ++i) {
        const Step& s = tape.steps[i];
        const Value& r = tape.values[static_cast<size_t>(s.result)];
        if (!s.live || (r.level != Level::Row && r.level != Level::Const))
            continue;
        h.line(1, "// " + c.stepLabel(s));
        h.line(1, c.definition(r, c.expression(s)));
    }
    for (const Value* v : params)
        if (v->output >= 0)
            h.line(1, "float " + c.pointer(*v) + "_out[W];");
    h.line(0, "#pragma unroll");
    h.line(1, "for (int j = 0; j < W; ++j) {");
    for (const Value* v : params)
        if (v->input >= 0 && (v->level == Level::Element || v->level == Level::Column))
            h.line(2, "const float " + c.token(*v) + " = kf::to_float(" + c.pointer(*v) + "_v[j]);");
    for (size_t i = 0; i < tape.steps.size(); ++i) {
        const Step& s = tape.steps[i];
        const Value& r = tape.values[static_cast<size_t>(s.result)];
        if (!s.live || r.level == Level::Row || r.level == Level::Const)
            continue;
        h.line(2, "// " + c.stepLabel(s));
        h.line(2, c.definition(r, c.expression(s)));
    }
    for (const Value* v : params)
        if (v->output >= 0)
            h.line(2, c.pointer(*v) + "_out[j] = " + c.token(*v) + ";");
    h.line(1, "}");
    for (const Value* v : params)
        if (v->output >= 0)
            h.line(1, "kf::store_floats<W>(" + c.pointer(*v) + " + i, " + c.pointer(*v) + "_out);");
    h.line(0, "}");
    return h.text();
}

/// The kernel: every thread's chunks on the vector path, the elements after the last whole
/// vector, and the scalar path for misaligned tensors.
std::string elementwiseKernel(Context& c, const std::vector<const Value*>& params, bool broadcast,
                              const std::string& threads, const std::string& chunksPer, const std::string& vecName)
{
    const std::string vectorTest = (broadcast ? "cols % " + vecName + " == 0 && " : std::string()) +
                                   "kf::aligned16(" + alignedPointers(c, params) + ")";
    auto call = [&](const std::string& w, const std::string& index) {
        return "generated_chunk<" + w + ">(" + argumentList(c, params, index + (broadcast ? ", cols" : "")) + ");";
    };

    Code k;
    k.line(0, "extern \"C\" __global__ void __launch_bounds__(" + threads + ")");
    k.line(1, c.kernel + "(" + parameterList(c, params, broadcast ? "long long n, long long cols" : "long long n") + ")");
    k.line(0, "{");
    k.line(1, "// The first chunk of this block.");
    k.line(1, "const long long first = static_cast<long long>(blockIdx.x) * " + threads + " * " + chunksPer + ";");
    k.line(1, "if (" + vectorTest + ") {");
    k.line(0, "#pragma unroll");
    k.line(2, "for (int k = 0; k < " + chunksPer + "; ++k) {");
    k.line(3, "const long long i = (first + k * " + threads + " + threadIdx.x) * " + vecName + ";");
    k.line(3, "if (i + " + vecName + " <= n)");
    k.line(4, call(vecName, "i"));
    k.line(2, "}");
    k.line(2, "// The elements after the last whole vector: one per thread of the last block.");
    k.line(2, "if (blockIdx.x == gridDim.x - 1 && threadIdx.x < n % " + vecName + ")");
    k.line(3, call("1", "n - n % " + vecName + " + threadIdx.x"));
    k.line(1, "} else {");
    k.line(2, "for (int k = 0; k < " + chunksPer + " * " + vecName + "; ++k) {");
    k.line(3, "const long long i = first * " + vecName + " + k * " + threads + " + threadIdx.x;");
    k.line(3, "if (i < n)");
    k.line(4, call("1", "i"));
    k.line(2, "}");
    k.line(1, "}");
    k.line(0, "}");
    return k.text();
}

} // namespace

Emitted emitElementwise(Context& c)
{
    const Tape& tape = c.tape;
    const auto params = parameters(tape);
    const bool broadcast = tape.broadcastDims > 0;
    const std::string blockKnob = c.knob("KF_BLOCK", c.options.blockThreads, {128, 256, 512, 1024},
                                         "threads per block: the launch plan's \"block\"");
    const std::string chunksKnob = c.knob("KF_CHUNKS", c.options.chunksPerThread, {1, 2, 4},
                                          "16-byte chunks per thread and tensor: loads in flight");
    const std::string threads = c.constant("kBlockThreads", "int", blockKnob, "threads per block: the launch plan's \"block\"");
    const std::string chunksPer = c.constant("kChunksPerThread", "int", chunksKnob,
                                             "vector chunks per thread: loads in flight per tensor");
    const std::string vecName = c.constant("kVec", "int", std::to_string(c.vec),
                                           "elements per 16-byte access of the widest stored type");

    Emitted e;
    e.helpers = chunkFunction(c, params, broadcast);
    e.kernel = elementwiseKernel(c, params, broadcast, threads, chunksPer, vecName);
    nlohmann::ordered_json launch;
    launch["kernel"] = c.kernel;
    launch["grid"] = "ceil_div(" + tape.elements() + ", " + blockKnob + " * " + chunksKnob + " * " + std::to_string(c.vec) + ")";
    launch["block"] = blockKnob;
    nlohmann::ordered_json args = tensorArguments(params);
    args.push_back({{"scalar", tape.elements()}, {"type", "int64"}});
    if (broadcast)
        args.push_back({{"scalar", tape.rowLength()}, {"type", "int64"}});
    launch["args"] = args;
    e.launches.push_back(launch);
    e.mode = "elementwise: " + std::to_string(c.options.blockThreads) + " threads per block, " +
             std::to_string(c.options.chunksPerThread) + " chunks of " + std::to_string(c.vec) +
             " elements per thread (16-byte accesses), a scalar path for misaligned tensors";
    return e;
}

} // namespace kf::gen::detail
