// The reader of synthesis.json's progress (Synthesis.h, readSynthProgress); the writer is
// Run::save in Synthesis.cpp.
#include "engine/synth/Synthesis.h"

#include "engine/core/JsonReader.h"

namespace kf::synth {

namespace {

using kf::json::Json;

void addKernels(json::Object& st, std::vector<SynthProgress::KernelRow>& kernels)
{
    const Json* steps = st.optional("steps");
    if (!steps)
        return;
    const Json& list = json::asArray(*steps, st.at("steps"));
    for (std::size_t i = 0; i < list.size(); ++i) {
        json::Object step(list[i], json::child(st.at("steps"), i));
        if (!step.has("candidate"))
            continue; // a model call that cut no kernel (a question, an error)
        SynthProgress::KernelRow k;
        k.file = step.string("candidate");
        k.result = step.stringOr("result", "");
        if (const Json* speedup = step.optional("speedup"); speedup && !speedup->is_null())
            k.speedup = json::asNumber(*speedup, step.at("speedup"));
        kernels.push_back(std::move(k));
    }
}

} // namespace

Result<SynthProgress> readSynthProgress(const std::filesystem::path& runDir)
{
    const std::filesystem::path file = runDir / "synthesis.json";
    auto doc = json::readFile(file);
    if (!doc)
        return doc.error();
    SynthProgress out;
    try {
        json::Object o(*doc, "");
        if (o.integer("schema_version") != 1)
            json::fail(o.at("schema_version"), "schema_version must be 1");
        if (o.string("kind") != "synthesis")
            json::fail(o.at("kind"), "kind must be \"synthesis\"");
        const Json& stages = json::asArray(o.required("stages"), o.at("stages"));
        for (std::size_t i = 0; i < stages.size(); ++i) {
            json::Object st(stages[i], json::child(o.at("stages"), i));
            out.stages.push_back({st.string("stage"), st.string("status"), st.stringOr("reason", "")});
            addKernels(st, out.kernels);
        }
    } catch (const json::SchemaError& e) {
        return Error::inFile(file.string(), e.pointer, "read the synthesis trace", e.message, "the run folder keeps the run's files; start a new run");
    }
    return out;
}

} // namespace kf::synth
