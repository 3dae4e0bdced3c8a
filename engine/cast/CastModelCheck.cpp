#include "engine/cast/CastModelCheck.h"

#include "engine/cast/CastModel.h"
#include "engine/core/JsonReader.h"
#include "engine/task/DType.h"

#include <algorithm>
#include <cmath>
#include <set>

// The model half of the package checks (docs/cast-format.md, "Models"): a model entry against
// its file, a model's input description, and a model run's evidence. CastPackage.cpp calls
// checkModel for each entry of a schema 2 manifest.

namespace kf::cast {

namespace jr = kf::json;
using Json = nlohmann::json;

namespace {

/// {median, min, max, p10, p90}, times in ms in that order. Returns the median.
double checkTiming(const Json& v, const std::string& ptr)
{
    jr::Object t(v, ptr);
    double x[5];
    const char* keys[] = {"min", "p10", "median", "p90", "max"};
    for (int i = 0; i < 5; ++i) {
        x[i] = jr::asNumber(t.required(keys[i]), t.at(keys[i]));
        if (x[i] < 0)
            jr::fail(t.at(keys[i]), "a time cannot be negative");
        if (i > 0 && x[i] < x[i - 1])
            jr::fail(ptr, "needs min <= p10 <= median <= p90 <= max");
    }
    t.finish();
    return x[2];
}

void checkErrors(const Json& v, const std::string& ptr)
{
    jr::Object e(v, ptr);
    for (const char* key : {"max_abs", "rms"})
        if (jr::asNumber(e.required(key), e.at(key)) < 0)
            jr::fail(e.at(key), "an error cannot be negative");
    if (!e.required("finite_alike").is_boolean())
        jr::fail(e.at("finite_alike"), "is true or false");
    e.finish();
}

void checkExtents(const Json& v, const std::string& ptr)
{
    const Json& shape = jr::asArray(v, ptr);
    for (std::size_t d = 0; d < shape.size(); ++d)
        if (jr::asInteger(shape[d], jr::child(ptr, d)) < 0)
            jr::fail(jr::child(ptr, d), "an extent cannot be negative");
}

} // namespace

PackageModel checkModel(const Json& m, const std::string& ptr, const Archive& archive,
                        const std::set<std::string, std::less<>>& files, const std::set<std::string, std::less<>>& opNames,
                        std::set<std::string, std::less<>>& modelNames, const std::string& origin)
{
    jr::Object o(m, ptr);
    PackageModel out;
    out.json = m;
    out.name = newName(o, modelNames, "is not an identifier", "models");
    out.format = o.string("format");
    if (out.format != kModelTorchExport && out.format != kModelTorchScript)
        jr::fail(o.at("format"), "is \"torch.export\" or \"torchscript\", not \"" + out.format + "\"");
    out.file = needFile(files, o.required("file"), o.at("file"));

    // The manifest must describe the model file as it is: what it calls and takes.
    auto info = inspectModel(archive.find(out.file)->bytes, origin + ":" + out.file);
    if (!info)
        jr::fail(o.at("file"), info.error().why + (info.error().pointer.empty() ? "" : " (" + info.error().pointer + ")"));
    if (info->format != out.format)
        jr::fail(o.at("format"), "says \"" + out.format + "\" but the file is a " + info->format + " model");
    const std::string torchVersion = o.string("torch_version");
    if (torchVersion != info->torchVersion)
        jr::fail(o.at("torch_version"), "says \"" + torchVersion + "\"; the file was written by \"" + info->torchVersion + "\"");
    if (jr::asStringArray(o.required("graph_ops"), o.at("graph_ops")) != info->graphOps)
        jr::fail(o.at("graph_ops"), "is not the list of operators the model file calls (the manifest or the file was edited)");
    if (o.required("inputs") != modelInputsJson(info.value()))
        jr::fail(o.at("inputs"), "is not the inputs the model file was exported with");
    for (const std::string& c : info->castOps)
        if (!opNames.count(c))
            jr::fail(o.at("file"), "the model calls cast::" + c + ", which this package does not hold");
    out.uses = jr::asStringArray(o.required("uses"), o.at("uses"));
    for (std::size_t i = 0; i < out.uses.size(); ++i)
        if (!opNames.count(out.uses[i]))
            jr::fail(jr::child(o.at("uses"), i), "the model uses cast::" + out.uses[i] + ", which this package does not hold");

    jr::Object ex(o.required("example"), o.at("example"));
    const std::string kind = ex.string("kind");
    const Json& exFile = ex.required("file");
    if (kind == "program") {
        if (!exFile.is_null())
            jr::fail(ex.at("file"), "is null: the program's own sample inputs are used");
        if (!info->hasSampleInputs)
            jr::fail(ex.at("kind"), "the model file carries no sample inputs; export with --inputs");
    } else if (kind == "shapes" || kind == "tensors") {
        const std::string path = needFile(files, exFile, ex.at("file"));
        if (kind == "shapes") {
            auto spec = jr::parseText(archive.find(path)->bytes, origin + ":" + path);
            if (!spec)
                jr::fail(ex.at("file"), spec.error().why);
            try {
                checkInputSpec(spec.value(), "");
            } catch (const jr::SchemaError& e) {
                jr::fail(ex.at("file"), path + "#" + e.pointer + ": " + e.message);
            }
        }
    } else {
        jr::fail(ex.at("kind"), "is \"program\", \"shapes\" or \"tensors\", not \"" + kind + "\"");
    }
    ex.finish();

    const Json& runs = jr::asArray(o.required("runs"), o.at("runs"));
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const std::string path = needFile(files, runs[i], jr::child(o.at("runs"), i));
        auto run = jr::parseText(archive.find(path)->bytes, origin + ":" + path);
        if (!run)
            jr::fail(jr::child(o.at("runs"), i), run.error().why);
        try {
            checkModelRun(run.value(), "", out.name);
        } catch (const jr::SchemaError& e) {
            jr::fail(jr::child(o.at("runs"), i), path + "#" + e.pointer + ": " + e.message);
        }
        out.runs.push_back(path);
    }
    o.finish();
    return out;
}

void checkInputSpec(const Json& spec, const std::string& pointer)
{
    jr::Object top(spec, pointer);
    const Json& list = jr::asArray(top.required("inputs"), top.at("inputs"));
    if (list.empty())
        jr::fail(top.at("inputs"), "lists at least one input");
    for (std::size_t i = 0; i < list.size(); ++i) {
        jr::Object t(list[i], jr::child(top.at("inputs"), i));
        t.string("name");
        const std::string dtype = t.string("dtype");
        if (!parseDType(dtype))
            jr::fail(t.at("dtype"), "unknown dtype \"" + dtype + "\"; one of " + dtypeNames());
        const Json& shape = jr::asArray(t.required("shape"), t.at("shape"));
        std::int64_t elements = 1;
        for (std::size_t d = 0; d < shape.size(); ++d) {
            const std::int64_t e = jr::asInteger(shape[d], jr::child(t.at("shape"), d));
            if (e < 0 || e > (std::int64_t(1) << 31))
                jr::fail(jr::child(t.at("shape"), d), "an extent is 0 to 2^31");
            // Checked before multiplying: 2^34 elements times an extent of 2^31 would overflow.
            if (e > 1 && elements > (std::int64_t(1) << 34) / e)
                jr::fail(t.at("shape"), "more than 2^34 elements");
            elements *= std::max<std::int64_t>(e, 1);
        }
        const std::string dist = t.stringOr("distribution", "normal");
        static const std::set<std::string, std::less<>> kDists = {"normal", "uniform", "randint", "ones", "zeros"};
        if (!kDists.count(dist))
            jr::fail(t.at("distribution"), "is one of normal, uniform, randint, ones, zeros");
        const double lo = t.numberOr("low", 0), hi = t.numberOr("high", 1);
        if (dist == "randint" && !t.has("high"))
            jr::fail(t.pointer(), "a randint input needs \"high\" (exclusive), e.g. the vocabulary size");
        if (hi <= lo && (dist == "randint" || dist == "uniform"))
            jr::fail(t.pointer(), "needs low < high");
        t.finish();
    }
    top.finish();
}

void checkModelRun(const Json& run, const std::string& pointer, const std::string& model)
{
    jr::Object r(run, pointer);
    if (r.string("scope") != kModelRunScope)
        jr::fail(r.at("scope"), std::string("a model run's scope is \"") + kModelRunScope + "\"");
    if (r.string("model") != model)
        jr::fail(r.at("model"), "is the run of another model, not \"" + model + "\"");
    jr::Object pkg(r.required("package"), r.at("package"));
    pkg.string("name");
    pkg.string("version");
    pkg.finish();
    for (const char* key : {"created_at", "device", "gpu", "torch", "cuda_driver", "runtime"})
        r.string(key);
    const Json& inputs = jr::asArray(r.required("inputs"), r.at("inputs"));
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        jr::Object t(inputs[i], jr::child(r.at("inputs"), i));
        t.string("name");
        t.string("dtype");
        checkExtents(t.required("shape"), t.at("shape"));
        t.finish();
    }
    if (r.integer("runs") < 1 || r.integer("warmup") < 0)
        jr::fail(r.pointer(), "needs runs >= 1 and warmup >= 0");
    const double without = checkTiming(r.required("without_kernels_ms"), r.at("without_kernels_ms"));
    const Json* speedup = r.optional("speedup");
    if (!speedup)
        jr::fail(r.at("speedup"), "is missing");
    if (const Json* with = r.optional("with_kernels_ms")) {
        const double w = checkTiming(*with, r.at("with_kernels_ms"));
        // The speedup is what the two medians say, never a number of its own.
        if (!speedup->is_number() || w <= 0 ||
            std::abs(speedup->get<double>() - without / w) > 1e-6 * std::max(1.0, without / w))
            jr::fail(r.at("speedup"), "is not the ratio of the two medians (without / with)");
    } else if (!speedup->is_null()) {
        jr::fail(r.at("speedup"), "is null when the model ran without kernels only");
    }
    std::set<std::string, std::less<>> substituted;
    const Json& subs = jr::asArray(r.required("substitution"), r.at("substitution"));
    for (std::size_t i = 0; i < subs.size(); ++i) {
        jr::Object s(subs[i], jr::child(r.at("substitution"), i));
        for (const char* key : {"node", "op", "reason"})
            s.string(key);
        const std::string status = s.string("status");
        if (status != "substituted" && status != "kept")
            jr::fail(s.at("status"), "is \"substituted\" or \"kept\"");
        const std::string castOp = s.string("cast_op");
        if ((status == "substituted") != !castOp.empty())
            jr::fail(s.at("cast_op"), "names the op exactly when the site was substituted");
        if (!castOp.empty())
            substituted.insert(castOp);
        s.finish();
    }
    jr::Object fb(r.required("fallbacks"), r.at("fallbacks"));
    for (const auto& [k, v] : fb.raw().items())
        if (jr::asInteger(fb.required(k), fb.at(k)) < 1 || !substituted.count(k))
            jr::fail(fb.at(k), "is a count of at least 1 for an op substituted in this run");
    fb.finish();
    const Json& check = r.required("check");
    if (!check.is_null()) {
        jr::Object c(check, r.at("check"));
        c.string("fp64");
        const Json& outputs = jr::asArray(c.required("outputs"), c.at("outputs"));
        for (std::size_t i = 0; i < outputs.size(); ++i) {
            jr::Object o(outputs[i], jr::child(c.at("outputs"), i));
            if (o.integer("index") < 0)
                jr::fail(o.at("index"), "cannot be negative");
            o.string("dtype");
            checkExtents(o.required("shape"), o.at("shape"));
            for (const char* key : {"kernels_vs_original", "kernels_vs_fp64", "original_vs_fp64"})
                if (const Json* e = o.optional(key))
                    checkErrors(*e, o.at(key));
            o.finish();
        }
        c.finish();
    }
    r.finish();
}

} // namespace kf::cast
