#include "engine/cast/CastModel.h"

#include "engine/cast/CastArchive.h"
#include "engine/core/JsonReader.h"

#include <algorithm>
#include <map>

namespace kf::cast {

namespace jr = kf::json;
using Json = nlohmann::json;

namespace {

// ScalarType codes of torch/_export/serde/schema.py, as a .pt2's graph writes them.
const std::map<int, std::string> kScalarTypes = {{1, "uint8"}, {2, "int8"},  {3, "int16"}, {4, "int32"},
                                                 {5, "int64"}, {6, "fp16"},  {7, "fp32"},  {8, "fp64"},
                                                 {12, "bool"}, {13, "bf16"}};

Error modelError(const std::string& origin, const std::string& entry, const std::string& why, std::string hint = {})
{
    if (hint.empty())
        hint = "save the model again with torch.export.save (or torch.jit.save) from plain tensors and modules";
    return Error{"read model " + origin, why, std::move(hint), origin, entry};
}

/// Every object in `v` that is a graph node ({"target": ..., "inputs": [...], "outputs": [...]}),
/// also inside nested graphs (control flow).
void collectTargets(const Json& v, std::set<std::string>& out)
{
    if (v.is_object()) {
        auto t = v.find("target");
        if (t != v.end() && t->is_string() && v.contains("inputs") && v.contains("outputs"))
            out.insert(t->get<std::string>());
        for (const auto& [k, child] : v.items())
            collectTargets(child, out);
    } else if (v.is_array()) {
        for (const Json& child : v)
            collectTargets(child, out);
    }
}

Json sizeJson(const Json& s)
{
    if (s.contains("as_int") && s["as_int"].is_number_integer())
        return s["as_int"];
    if (s.contains("as_expr") && s["as_expr"].is_object() && s["as_expr"].contains("expr_str") &&
        s["as_expr"]["expr_str"].is_string()) {
        // A symbolic extent: "s22", or sympy's "Symbol('s22', positive=True, integer=True)".
        std::string e = s["as_expr"]["expr_str"].get<std::string>();
        if (e.rfind("Symbol('", 0) == 0 && e.find('\'', 8) != std::string::npos)
            e = e.substr(8, e.find('\'', 8) - 8);
        return e;
    }
    return "?";
}

/// The payload config of weights or constants: every payload raw (no pickle), no custom object.
void checkPayloadConfig(const Archive& a, const std::string& name, const std::string& origin)
{
    const ArchiveEntry* e = a.find(name);
    if (!e)
        return;
    auto parsed = jr::parseText(e->bytes, origin + ":" + name);
    if (!parsed)
        throw parsed.error();
    const Json& cfg = parsed.value();
    if (!cfg.is_object() || !cfg.contains("config") || !cfg["config"].is_object())
        throw modelError(origin, name, "is not a payload configuration ({\"config\": {...}})");
    for (const auto& [fqn, meta] : cfg["config"].items()) {
        if (!meta.is_object())
            throw modelError(origin, name, "the entry for \"" + fqn + "\" is not an object");
        if (meta.value("use_pickle", false))
            throw modelError(origin, name,
                             "\"" + fqn + "\" is stored as a pickle; loading it would run code from the file",
                             "store plain dense tensors (no tensor subclasses) and save the model again");
        const std::string path = meta.value("path_name", std::string());
        if (path.rfind("custom_obj_", 0) == 0)
            throw modelError(origin, name, "\"" + fqn + "\" is a custom object; loading it would run code from the file");
    }
}

ModelInfo inspectExport(const Archive& a, const std::string& prefix, const std::string& origin)
{
    ModelInfo info;
    info.format = kModelTorchExport;
    std::string program;
    for (const ArchiveEntry& e : a.entries) {
        const std::string rel = e.name.substr(prefix.size());
        const bool allowed = rel == "archive_format" || rel == "archive_version" || rel == "byteorder" ||
                             rel == ".data/version" || rel == ".data/serialization_id" ||
                             rel.rfind("data/weights/", 0) == 0 || rel.rfind("data/constants/", 0) == 0 ||
                             rel.rfind("data/sample_inputs/", 0) == 0 || rel.rfind("extra/", 0) == 0 ||
                             (rel.rfind("models/", 0) == 0 && rel.size() > 12 && rel.compare(rel.size() - 5, 5, ".json") == 0);
        if (!allowed)
            throw modelError(origin, e.name,
                             "holds \"" + rel + "\", which is not part of a torch.export program (compiled AOTInductor or "
                             "ExecuTorch artefacts are not accepted: they are native code)",
                             "save the ExportedProgram itself with torch.export.save");
        if (rel.rfind("data/constants/custom_obj_", 0) == 0)
            throw modelError(origin, e.name, "is a custom object; loading it would run code from the file");
        if (rel.rfind("models/", 0) == 0) {
            if (!program.empty())
                throw modelError(origin, e.name, "the archive holds more than one program; a package model is one",
                                 "save one ExportedProgram per file");
            program = e.name;
        }
    }
    if (program.empty())
        throw modelError(origin, prefix + "models/", "the archive holds no program (models/<name>.json)");
    const std::string name = program.substr(prefix.size() + 7, program.size() - prefix.size() - 12);
    checkPayloadConfig(a, prefix + "data/weights/" + name + "_weights_config.json", origin);
    checkPayloadConfig(a, prefix + "data/constants/" + name + "_constants_config.json", origin);
    info.hasSampleInputs = a.find(prefix + "data/sample_inputs/" + name + ".pt") != nullptr;

    auto parsed = jr::parseText(a.find(program)->bytes, origin + ":" + program);
    if (!parsed)
        throw parsed.error();
    const Json& ep = parsed.value();
    const Json* graph = nullptr;
    const Json* signature = nullptr;
    if (ep.is_object() && ep.contains("graph_module") && ep["graph_module"].is_object()) {
        const Json& gm = ep["graph_module"];
        if (gm.contains("graph") && gm["graph"].is_object())
            graph = &gm["graph"];
        if (gm.contains("signature") && gm["signature"].is_object())
            signature = &gm["signature"];
    }
    if (!graph || !signature || !graph->contains("nodes") || !(*graph)["nodes"].is_array())
        throw modelError(origin, program, "is not a serialized ExportedProgram (no graph_module.graph.nodes)");
    if (ep.contains("torch_version") && ep["torch_version"].is_string())
        info.torchVersion = ep["torch_version"].get<std::string>();

    std::set<std::string> targets;
    collectTargets((*graph)["nodes"], targets);
    info.graphOps.assign(targets.begin(), targets.end());

    // The user inputs, in order, with the dtype and shape they were exported with.
    const Json empty = Json::object();
    const Json& values = graph->contains("tensor_values") && (*graph)["tensor_values"].is_object()
                             ? (*graph)["tensor_values"] : empty;
    if (signature->contains("input_specs") && (*signature)["input_specs"].is_array()) {
        for (const Json& spec : (*signature)["input_specs"]) {
            if (!spec.is_object() || !spec.contains("user_input"))
                continue;
            const Json& arg = spec["user_input"].value("arg", Json::object());
            ModelTensor t;
            if (arg.is_object() && arg.contains("as_tensor") && arg["as_tensor"].is_object())
                t.name = arg["as_tensor"].value("name", std::string());
            if (t.name.empty()) {
                t.name = "(not a tensor)";
                t.dtype = "scalar";
                t.shape = Json::array();
                info.inputs.push_back(std::move(t));
                continue;
            }
            const Json meta = values.value(t.name, Json::object());
            const int code = meta.is_object() && meta.contains("dtype") && meta["dtype"].is_number_integer()
                                 ? meta["dtype"].get<int>() : 0;
            auto dt = kScalarTypes.find(code);
            t.dtype = dt != kScalarTypes.end() ? dt->second : "scalar type " + std::to_string(code);
            t.shape = Json::array();
            if (meta.is_object() && meta.contains("sizes") && meta["sizes"].is_array())
                for (const Json& s : meta["sizes"])
                    t.shape.push_back(sizeJson(s));
            info.inputs.push_back(std::move(t));
        }
    }
    return info;
}

/// TorchScript code prints an ATen call as torch.<name>(...) and a custom one as ops.<ns>.<name>(...).
ModelInfo inspectScript(const Archive& a, const std::string& prefix)
{
    ModelInfo info;
    info.format = kModelTorchScript;
    std::set<std::string> calls;
    auto ident = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; };
    for (const ArchiveEntry& e : a.entries) {
        const std::string rel = e.name.substr(prefix.size());
        if (rel.rfind("code/", 0) != 0 || rel.size() < 3 || rel.compare(rel.size() - 3, 3, ".py") != 0)
            continue;
        const std::string& code = e.bytes;
        for (std::size_t at = code.find("torch."); at != std::string::npos; at = code.find("torch.", at + 1)) {
            if (at > 0 && (ident(code[at - 1]) || code[at - 1] == '.'))
                continue;
            std::size_t p = at + 6;
            std::string ns = "aten";
            if (code.compare(p, 4, "ops.") == 0) {
                p += 4;
                std::size_t q = p;
                while (q < code.size() && ident(code[q]))
                    ++q;
                ns = code.substr(p, q - p);
                if (q >= code.size() || code[q] != '.')
                    continue;
                p = q + 1;
            }
            std::size_t q = p;
            while (q < code.size() && ident(code[q]))
                ++q;
            if (q == p || q >= code.size() || code[q] != '(')
                continue;
            calls.insert(ns + "." + code.substr(p, q - p));
        }
    }
    info.graphOps.assign(calls.begin(), calls.end());
    return info;
}

} // namespace

Result<ModelInfo> inspectModel(std::string_view bytes, const std::string& origin)
{
    auto archive = readArchiveBytes(bytes, origin);
    if (!archive)
        return Error{"read model " + origin, archive.error().why,
                     "a model is a file written by torch.export.save (.pt2) or torch.jit.save (.pt/.ts)", origin,
                     archive.error().pointer};
    return inspectModelArchive(archive.value(), origin);
}

Result<ModelInfo> inspectModelArchive(const Archive& a, const std::string& origin)
{
    if (a.entries.empty())
        return modelError(origin, "", "the archive is empty");
    const std::string& first = a.entries.front().name;
    const std::size_t slash = first.find('/');
    if (slash == std::string::npos)
        return modelError(origin, first, "entries of a torch archive live under one top folder; \"" + first + "\" does not");
    const std::string prefix = first.substr(0, slash + 1);
    for (const ArchiveEntry& e : a.entries)
        if (e.name.rfind(prefix, 0) != 0)
            return modelError(origin, e.name, "is outside the archive's top folder \"" + prefix + "\"");
    try {
        ModelInfo info;
        if (const ArchiveEntry* f = a.find(prefix + "archive_format"); f && f->bytes == "pt2")
            info = inspectExport(a, prefix, origin);
        else if (a.find(prefix + "data.pkl") && a.find(prefix + "constants.pkl"))
            info = inspectScript(a, prefix);
        else
            return modelError(origin, "", "is neither a torch.export program (.pt2) nor a TorchScript module",
                              "write it with torch.export.save(torch.export.export(model, inputs), path) or torch.jit.save");
        for (std::string op : info.graphOps) {
            for (const char* prefix : {"torch.ops.cast.", "cast."})
                if (op.rfind(prefix, 0) == 0) {
                    op = op.substr(std::string_view(prefix).size());
                    info.castOps.push_back(op.substr(0, op.find('.')));
                }
        }
        return info;
    } catch (const Error& e) {
        return e;
    } catch (const jr::SchemaError& e) {
        return modelError(origin, e.pointer, e.message);
    }
}

std::string catalogOpOfAten(std::string_view target)
{
    static const std::map<std::string, std::string, std::less<>> kMap = {
        {"add", "add"},         {"sub", "sub"},         {"mul", "mul"},         {"div", "div"},
        {"neg", "neg"},         {"abs", "abs"},         {"exp", "exp"},         {"log", "log"},
        {"sqrt", "sqrt"},       {"rsqrt", "rsqrt"},     {"tanh", "tanh"},       {"sigmoid", "sigmoid"},
        {"relu", "relu"},       {"silu", "silu"},       {"gelu", "gelu"},       {"softmax", "softmax"},
        {"_softmax", "softmax"}, {"log_softmax", "log_softmax"}, {"_log_softmax", "log_softmax"},
        {"rms_norm", "rms_norm"}, {"layer_norm", "layer_norm"}, {"mm", "matmul"}, {"matmul", "matmul"},
        {"bmm", "bmm"}};
    std::string_view t = target;
    if (t.rfind("torch.ops.", 0) == 0)
        t.remove_prefix(10);
    if (t.rfind("aten.", 0) != 0)
        return {};
    t.remove_prefix(5);
    const std::string_view name = t.substr(0, t.find('.'));
    auto it = kMap.find(name);
    return it == kMap.end() ? std::string() : it->second;
}

std::vector<std::string> opsUsable(const ModelInfo& model,
                                   const std::vector<std::pair<std::string, std::vector<std::string>>>& tapes)
{
    std::set<std::string> called;
    for (const std::string& op : model.graphOps)
        if (std::string c = catalogOpOfAten(op); !c.empty())
            called.insert(c);
    std::vector<std::string> out;
    for (const auto& [name, steps] : tapes)
        if (!steps.empty() && std::all_of(steps.begin(), steps.end(), [&](const std::string& s) { return called.count(s) > 0; }))
            out.push_back(name);
    return out;
}

} // namespace kf::cast
