#include "engine/cast/ExportModels.h"

#include "engine/cast/CastPackage.h"
#include "engine/core/Files.h"
#include "engine/core/JsonReader.h"

namespace kf::cast::detail {

using Json = nlohmann::json;

namespace {

/// An error reading a file the user named: the same sentence, refused as a bad argument.
Error asBadArgument(const Error& e)
{
    return Error::inFile(e.file, {}, e.what, e.why, e.hint).withKind(kCastBadArgument);
}

/// The sample inputs of a model: the .pt2's own ("program"), a shapes file, or torch.save tensors.
Result<void> readSampleInputs(const ModelExport& m, ModelFiles& mf)
{
    if (m.inputs.empty()) {
        if (mf.info.format != kModelTorchExport || !mf.info.hasSampleInputs)
            return badArgument(m.file.string() + " carries no sample inputs",
                               "give its inputs with --inputs shapes.json or --inputs example.pt");
        mf.inputsKind = "program";
        return {};
    }
    auto in = readFileBytes(m.inputs, ArchiveLimits{}.maxEntryBytes);
    if (!in)
        return asBadArgument(in.error());
    mf.inputsBytes = std::move(in.value());
    if (m.inputs.extension() == ".json") {
        mf.inputsKind = "shapes";
        auto spec = kf::json::parseText(mf.inputsBytes, m.inputs.string());
        if (!spec)
            return Error::inFile(m.inputs.string(), {}, spec.error().what, spec.error().why, spec.error().hint).withKind(kCastBadArgument);
        try {
            checkInputSpec(spec.value(), "");
        } catch (const kf::json::SchemaError& e) {
            return Error::inFile(m.inputs.string(), e.pointer, "export a .cast package", e.message, "see \"Models\" in docs/cast-format.md for the inputs file").withKind(kCastBadArgument);
        }
        return {};
    }
    mf.inputsKind = "tensors";
    // torch.save writes a zip; what is inside is read with weights_only by the runtime.
    auto a = readArchiveBytes(mf.inputsBytes, m.inputs.string());
    if (!a)
        return Error::inFile(m.inputs.string(), {}, "export a .cast package", "is not a file written by torch.save: " + a.error().why, "save a tuple of tensors with torch.save, or describe them in a .json").withKind(kCastBadArgument);
    return {};
}

Result<ModelFiles> readModel(const ModelExport& m, const std::string& name, const std::set<std::string>& opNames)
{
    ModelFiles mf;
    mf.name = name;
    auto bytes = readFileBytes(m.file, ArchiveLimits{}.maxEntryBytes);
    if (!bytes)
        return asBadArgument(bytes.error());
    mf.modelBytes = std::move(bytes.value());
    auto info = inspectModel(mf.modelBytes, m.file.string());
    if (!info)
        return Error::inFile(m.file.string(), info.error().pointer, "export a .cast package", info.error().why, info.error().hint).withKind(kCastBadArgument);
    mf.info = std::move(info.value());
    for (const std::string& c : mf.info.castOps)
        if (!opNames.count(c))
            return badArgument(m.file.string() + " calls cast::" + c + ", which the package would not hold",
                               "export the original model, before substitution");
    if (auto in = readSampleInputs(m, mf); !in)
        return in.error();
    mf.format = mf.info.format;
    return mf;
}

} // namespace

Result<std::vector<ModelFiles>> readModels(const std::vector<ModelExport>& models, const std::set<std::string>& opNames)
{
    std::vector<ModelFiles> out;
    std::set<std::string> modelNames;
    for (const ModelExport& m : models) {
        const std::string name = m.name.empty() ? defaultOpName(m.file.stem().string()) : m.name;
        if (!isOpName(name))
            return badArgument("\"" + name + "\" cannot name a model", "use letters, digits and _: --model NAME=FILE");
        if (!modelNames.insert(name).second)
            return badArgument("two models are named " + name, "name them: --model NAME=FILE");
        auto mf = readModel(m, name, opNames);
        if (!mf)
            return mf.error();
        out.push_back(std::move(mf.value()));
    }
    return out;
}

Result<Json> writeModel(ModelFiles& mf, const OpTapes& tapes, PackageFiles& files)
{
    const std::string base = "models/" + mf.name + "/";
    const std::string file = base + (mf.format == kModelTorchExport ? "model.pt2" : "model.ts");
    if (auto r = files.add(file, std::move(mf.modelBytes)); !r)
        return r.error();
    Json example = {{"kind", mf.inputsKind}, {"file", nullptr}};
    if (mf.inputsKind != "program") {
        example["file"] = base + (mf.inputsKind == "shapes" ? "inputs.json" : "inputs.pt");
        if (auto r = files.add(example["file"].get<std::string>(), std::move(mf.inputsBytes)); !r)
            return r.error();
    }
    return Json{{"name", mf.name},
                {"format", mf.format},
                {"file", file},
                {"torch_version", mf.info.torchVersion},
                {"inputs", modelInputsJson(mf.info)},
                {"example", example},
                {"graph_ops", mf.info.graphOps},
                {"uses", opsUsable(mf.info, tapes)},
                {"runs", Json::array()}};
}

} // namespace kf::cast::detail
