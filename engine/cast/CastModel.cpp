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
const std::map<std::int64_t, std::string> kScalarTypes = {{1, "uint8"}, {2, "int8"},  {3, "int16"}, {4, "int32"},
                                                 {5, "int64"}, {6, "fp16"},  {7, "fp32"},  {8, "fp64"},
                                                 {12, "bool"}, {13, "bf16"}};

Error modelError(const std::string& origin, const std::string& entry, const std::string& why, std::string hint = {})
{
    if (hint.empty())
        hint = "save the model again with torch.export.save (or torch.jit.save) from plain tensors and modules";
    return Error::inFile(origin, entry, "read model " + origin, why, std::move(hint));
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
    if (!s.is_object())
        return "?";
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
/// Returns the payload files it names. Missing, torch would fall back to loading a pickle.
/// torch.export.save names payloads weight_N and tensor_N: a config may not bless another file,
/// such as the legacy model.pt that torch unpickles before it reads the config.
bool isPayloadName(const std::string& path, std::string_view prefix)
{
    if (path.rfind(prefix, 0) != 0 || path.size() == prefix.size() || path.size() > prefix.size() + 9)
        return false;
    return std::all_of(path.begin() + static_cast<long>(prefix.size()), path.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::set<std::string> checkPayloadConfig(const Archive& a, const std::string& name, const std::string& origin,
                                         std::string_view payloadPrefix)
{
    const ArchiveEntry* e = a.find(name);
    if (!e)
        throw modelError(origin, name, "is missing; torch.export.save writes it, and without it torch falls back to "
                                       "loading a pickle");
    auto parsed = jr::parseText(e->bytes, origin + ":" + name);
    if (!parsed)
        throw parsed.error();
    const Json& cfg = parsed.value();
    if (!cfg.is_object() || !cfg.contains("config") || !cfg["config"].is_object())
        throw modelError(origin, name, "is not a payload configuration ({\"config\": {...}})");
    std::set<std::string> files;
    for (const auto& [fqn, meta] : cfg["config"].items()) {
        if (!meta.is_object())
            throw modelError(origin, name, "the entry for \"" + fqn + "\" is not an object");
        const auto pickled = meta.find("use_pickle");
        if (pickled != meta.end() && !pickled->is_boolean())
            throw modelError(origin, name, "\"" + fqn + "\": use_pickle is not true or false");
        if (pickled != meta.end() && pickled->get<bool>())
            throw modelError(origin, name,
                             "\"" + fqn + "\" is stored as a pickle; loading it would run code from the file",
                             "store plain dense tensors (no tensor subclasses) and save the model again");
        const auto path = meta.find("path_name");
        if (path == meta.end() || !path->is_string() || path->get<std::string>().empty())
            throw modelError(origin, name, "\"" + fqn + "\" names no payload file");
        if (path->get<std::string>().rfind("custom_obj_", 0) == 0)
            throw modelError(origin, name, "\"" + fqn + "\" is a custom object; loading it would run code from the file");
        if (!isPayloadName(path->get<std::string>(), payloadPrefix))
            throw modelError(origin, name, "\"" + fqn + "\" names the payload '" + path->get<std::string>() +
                                               "'; torch.export.save names them " + std::string(payloadPrefix) + "N");
        files.insert(path->get<std::string>());
    }
    return files;
}

const Json* member(const Json& j, const char* key)
{
    if (!j.is_object())
        return nullptr;
    auto it = j.find(key);
    return it == j.end() ? nullptr : &*it;
}

ModelInfo inspectExport(const Archive& a, const std::string& prefix, const std::string& origin)
{
    ModelInfo info;
    info.format = kModelTorchExport;
    // torch.export.save writes one program, "model"; torch.export.load returns that one.
    const std::string program = prefix + "models/model.json";
    if (!a.find(program))
        throw modelError(origin, prefix + "models/",
                         "the archive holds no program models/model.json (torch.export.save writes one program, named model)");
    std::set<std::string> allowed = {"archive_format", "archive_version", "byteorder", ".data/version",
                                     ".data/serialization_id", "models/model.json", "data/weights/model_weights_config.json",
                                     "data/constants/model_constants_config.json", "data/sample_inputs/model.pt"};
    for (const std::string& f : checkPayloadConfig(a, prefix + "data/weights/model_weights_config.json", origin, "weight_"))
        allowed.insert("data/weights/" + f);
    for (const std::string& f : checkPayloadConfig(a, prefix + "data/constants/model_constants_config.json", origin, "tensor_"))
        allowed.insert("data/constants/" + f);
    for (const ArchiveEntry& e : a.entries) {
        const std::string rel = e.name.substr(prefix.size());
        if (!allowed.count(rel) && rel.rfind("extra/", 0) != 0)
            throw modelError(origin, e.name,
                             "holds \"" + rel + "\", which is not part of a torch.export program as torch.export.save "
                             "writes it (pickled payloads and compiled AOTInductor or ExecuTorch artefacts are not accepted)",
                             "save the ExportedProgram itself with torch.export.save");
    }
    info.hasSampleInputs = a.find(prefix + "data/sample_inputs/model.pt") != nullptr;

    auto parsed = jr::parseText(a.find(program)->bytes, origin + ":" + program);
    if (!parsed)
        throw parsed.error();
    const Json& ep = parsed.value();
    const Json* gm = member(ep, "graph_module");
    const Json* graph = gm ? member(*gm, "graph") : nullptr;
    const Json* signature = gm ? member(*gm, "signature") : nullptr;
    const Json* nodes = graph ? member(*graph, "nodes") : nullptr;
    if (!graph || !signature || !signature->is_object() || !nodes || !nodes->is_array())
        throw modelError(origin, program, "is not a serialized ExportedProgram (no graph_module.graph.nodes)");
    if (const Json* v = member(ep, "torch_version"); v && v->is_string())
        info.torchVersion = v->get<std::string>();

    std::set<std::string> targets;
    collectTargets(*nodes, targets);
    info.graphOps.assign(targets.begin(), targets.end());

    // The user inputs, in order, with the dtype and shape they were exported with.
    const Json* values = member(*graph, "tensor_values");
    const Json* specs = member(*signature, "input_specs");
    if (!specs || !specs->is_array())
        return info;
    for (const Json& spec : *specs) {
        const Json* user = member(spec, "user_input");
        if (!user)
            continue;
        const Json* arg = member(*user, "arg");
        const Json* tensor = arg ? member(*arg, "as_tensor") : nullptr;
        const Json* name = tensor ? member(*tensor, "name") : nullptr;
        ModelTensor t;
        t.shape = Json::array();
        if (!name || !name->is_string() || name->get<std::string>().empty()) {
            t.name = "(not a tensor)";
            t.dtype = "scalar";
            info.inputs.push_back(std::move(t));
            continue;
        }
        t.name = name->get<std::string>();
        const Json* meta = values ? member(*values, t.name.c_str()) : nullptr;
        const Json* dtype = meta ? member(*meta, "dtype") : nullptr;
        const std::int64_t code = dtype && dtype->is_number_integer() ? dtype->get<std::int64_t>() : 0;
        auto dt = kScalarTypes.find(code);
        t.dtype = dt != kScalarTypes.end() ? dt->second : "scalar type " + std::to_string(code);
        if (const Json* sizes = meta ? member(*meta, "sizes") : nullptr; sizes && sizes->is_array())
            for (const Json& size : *sizes)
                t.shape.push_back(sizeJson(size));
        info.inputs.push_back(std::move(t));
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
        return Error::inFile(origin, archive.error().pointer, "read model " + origin, archive.error().why, "a model is a file written by torch.export.save (.pt2) or torch.jit.save (.pt/.ts)");
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
        for (const std::string& op : info.graphOps)
            for (const char* prefix : {"torch.ops.cast.", "cast."})
                if (op.rfind(prefix, 0) == 0) {
                    const std::string rest = op.substr(std::string_view(prefix).size());
                    info.castOps.push_back(rest.substr(0, rest.find('.')));
                    break;
                }
        return info;
    } catch (const Error& e) {
        return e;
    } catch (const jr::SchemaError& e) {
        return modelError(origin, e.pointer, e.message);
    } catch (const nlohmann::json::exception& e) {
        // A shape this reader did not expect somewhere in the program: refused, never a crash.
        return modelError(origin, "", std::string("is not a program this KernelForge can read: ") + e.what());
    }
}

nlohmann::json modelInputsJson(const ModelInfo& model)
{
    Json inputs = Json::array();
    for (const ModelTensor& t : model.inputs)
        inputs.push_back({{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}});
    return inputs;
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
