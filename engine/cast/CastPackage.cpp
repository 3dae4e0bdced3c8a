#include "engine/cast/CastPackage.h"

#include "engine/cast/CastModelCheck.h"

#include "engine/core/Hmac.h"
#include "engine/core/JsonReader.h"
#include "engine/task/DType.h"
#include "engine/task/Expr.h"
#include "engine/task/OpCatalog.h"
#include "engine/task/Task.h"

#include <algorithm>
#include <cmath>
#include <array>
#include <map>
#include <set>

namespace kf::cast {

namespace jr = kf::json;
using Json = nlohmann::json;

namespace {

constexpr std::size_t kMaxManifestBytes = std::size_t(16) << 20;
constexpr int kMaxTreeDepth = 200;

const std::set<std::string, std::less<>> kScalarTypes = {"int32", "int64", "uint32", "uint64", "fp32", "fp64"};
const std::set<std::string, std::less<>> kFunctions = {"ceil_div", "round_up", "min", "max", "abs",
                                                       "next_pow2", "log2", "sqrt", "float", "int"};
const std::set<std::string, std::less<>> kOperators = {"+", "-", "*", "/", "%", "==", "!=", "<",
                                                       "<=", ">", ">=", "&&", "||", "!"};

bool isArchName(std::string_view s)
{
    const std::string_view prefix = s.rfind("sm_", 0) == 0 ? "sm_" : s.rfind("compute_", 0) == 0 ? "compute_" : "";
    if (prefix.empty() || s.size() == prefix.size() || s.size() > prefix.size() + 4)
        return false;
    return std::all_of(s.begin() + static_cast<long>(prefix.size()), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// What one op may name: its symbols and parameters (expressions), its tensors (launch args).
struct OpScope {
    std::set<std::string, std::less<>> symbols;     // shape symbols and parameters
    std::set<std::string, std::less<>> tensors;     // inputs, outputs, scratch
};

void checkTree(const Json& t, const std::string& ptr, const OpScope& scope, int depth)
{
    if (depth > kMaxTreeDepth)
        jr::fail(ptr, "the expression is nested more than " + std::to_string(kMaxTreeDepth) + " levels deep");
    if (!t.is_object() || t.size() < 1 || t.size() > 2)
        jr::fail(ptr, "an expression node must be an object such as {\"int\": 4} or {\"op\": \"*\", \"args\": [...]}");
    jr::Object o(t, ptr);
    if (const Json* v = o.optional("int")) {
        if (!v->is_number_integer())
            jr::fail(o.at("int"), "must be an integer");
    } else if (const Json* r = o.optional("real")) {
        if (!r->is_number())
            jr::fail(o.at("real"), "must be a number");
    } else if (o.has("sym")) {
        const std::string s = o.string("sym");
        if (!scope.symbols.count(s))
            jr::fail(o.at("sym"), "\"" + s + "\" is neither a symbol nor a parameter of this op");
    } else if (o.has("op") || o.has("call")) {
        const bool call = o.has("call");
        const std::string name = o.string(call ? "call" : "op");
        if (call ? !kFunctions.count(name) : !kOperators.count(name))
            jr::fail(o.at(call ? "call" : "op"), "\"" + name + "\" is not a " + (call ? "function" : "operator") +
                                                     " of the expression language");
        const Json& args = jr::asArray(o.required("args"), o.at("args"));
        if (args.empty() || args.size() > 3)
            jr::fail(o.at("args"), "must list 1 to 3 operands");
        for (std::size_t i = 0; i < args.size(); ++i)
            checkTree(args[i], jr::child(o.at("args"), i), scope, depth + 1);
    } else {
        jr::fail(ptr, "an expression node has one of the keys int, real, sym, op or call");
    }
    o.finish();
}

/// {"text": "...", "tree": {...}}: the tree must be exactly the parse of the text.
void checkExpr(const Json& e, const std::string& ptr, const OpScope& scope)
{
    jr::Object o(e, ptr);
    const std::string text = o.string("text");
    const Json& tree = o.required("tree");
    checkTree(tree, o.at("tree"), scope, 0);
    auto parsed = Expr::parse(text);
    if (!parsed)
        jr::fail(o.at("text"), "does not parse: " + parsed.error().why);
    if (parsed->tree() != tree)
        jr::fail(o.at("tree"), "is not the parse of its text \"" + text + "\" (the manifest was edited)");
    o.finish();
}

void checkTensorList(const Json& list, const std::string& ptr, std::set<std::string, std::less<>>& names,
                     std::set<std::string, std::less<>>& shapeSymbols, bool declare)
{
    const Json& arr = jr::asArray(list, ptr);
    for (std::size_t i = 0; i < arr.size(); ++i) {
        jr::Object t(arr[i], jr::child(ptr, i));
        const std::string name = t.string("name");
        if (!isOpName(name))
            jr::fail(t.at("name"), "\"" + name + "\" is not an identifier");
        if (!names.insert(name).second)
            jr::fail(t.at("name"), "\"" + name + "\" is declared twice");
        const std::string dtype = t.string("dtype");
        if (!parseDType(dtype))
            jr::fail(t.at("dtype"), "unknown dtype \"" + dtype + "\"; one of " + dtypeNames());
        const Json& shape = jr::asArray(t.required("shape"), t.at("shape"));
        for (std::size_t d = 0; d < shape.size(); ++d) {
            const std::string dp = jr::child(t.at("shape"), d);
            if (shape[d].is_number_integer()) {
                if (shape[d].get<std::int64_t>() < 0)
                    jr::fail(dp, "an extent cannot be negative");
            } else if (shape[d].is_string()) {
                const std::string s = shape[d].get<std::string>();
                if (declare)
                    shapeSymbols.insert(s);
                else if (!shapeSymbols.count(s))
                    jr::fail(dp, "symbol \"" + s + "\" is not an extent of any input, so a call could not bind it");
            } else {
                jr::fail(dp, "an extent is a symbol name or an integer");
            }
        }
        t.finish();
    }
}

/// The schema is derived from the tensors; a hand-edited one would register another signature.
void checkSchema(jr::Object& o, const std::string& name, const std::string& schema)
{
    std::string want = name + "(";
    const Json& ins = o.required("inputs");
    for (std::size_t i = 0; i < ins.size(); ++i)
        want += (i ? ", Tensor " : "Tensor ") + ins[i]["name"].get<std::string>();
    const std::size_t nOut = o.required("outputs").size();
    want += ") -> ";
    if (nOut == 1) {
        want += "Tensor";
    } else {
        want += "(";
        for (std::size_t i = 0; i < nOut; ++i)
            want += i ? ", Tensor" : "Tensor";
        want += ")";
    }
    if (schema != want)
        jr::fail(o.at("schema"), "is \"" + schema + "\" but the inputs and outputs make \"" + want + "\"");
}

/// Parameters, the shape symbols' ranges and the constraints; parameters and symbols join `scope`.
void checkSymbols(jr::Object& o, const std::set<std::string, std::less<>>& shapeSymbols, OpScope& scope)
{
    jr::Object params(o.required("parameters"), o.at("parameters"));
    for (const auto& [k, v] : params.raw().items()) {
        if (!v.is_number())
            jr::fail(params.at(k), "a parameter is a number");
        if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
            jr::fail(params.at(k), "a parameter is a 64-bit signed integer or a double");
        if (shapeSymbols.count(k) || scope.tensors.count(k))
            jr::fail(params.at(k), "\"" + k + "\" names a parameter and also a symbol or tensor");
        params.required(k);
        scope.symbols.insert(k);
    }
    params.finish();
    const Json& syms = jr::asArray(o.required("symbols"), o.at("symbols"));
    for (std::size_t i = 0; i < syms.size(); ++i) {
        jr::Object s(syms[i], jr::child(o.at("symbols"), i));
        const std::string name = s.string("name");
        if (!shapeSymbols.count(name))
            jr::fail(s.at("name"), "symbol \"" + name + "\" is no input's extent");
        if (scope.tensors.count(name))
            jr::fail(s.at("name"), "\"" + name + "\" names a symbol and also a tensor");
        const std::int64_t lo = s.integer("min"), hi = s.integer("max"), m = s.integer("multiple_of");
        if (lo > hi || m < 1)
            jr::fail(s.pointer(), "needs min <= max and multiple_of >= 1");
        scope.symbols.insert(name);
        s.finish();
    }
    for (const std::string& s : shapeSymbols)
        if (!scope.symbols.count(s))
            jr::fail(o.at("symbols"), "symbol \"" + s + "\" of a tensor's shape has no range here");
    const Json& cons = jr::asArray(o.required("constraints"), o.at("constraints"));
    for (std::size_t i = 0; i < cons.size(); ++i)
        checkExpr(cons[i], jr::child(o.at("constraints"), i), scope);
}

void checkScratch(jr::Object& o, OpScope& scope)
{
    const Json& scratch = jr::asArray(o.required("scratch"), o.at("scratch"));
    for (std::size_t i = 0; i < scratch.size(); ++i) {
        jr::Object s(scratch[i], jr::child(o.at("scratch"), i));
        const std::string name = s.string("name");
        if (!isOpName(name) || !scope.tensors.insert(name).second)
            jr::fail(s.at("name"), "\"" + name + "\" is not a new identifier");
        if (!parseDType(s.string("dtype")))
            jr::fail(s.at("dtype"), "unknown dtype");
        checkExpr(s.required("count"), s.at("count"), scope);
        if (!s.required("zero").is_boolean())
            jr::fail(s.at("zero"), "must be true or false");
        s.finish();
    }
}

/// Every launch: the kernel's names, grid, block and shared memory, and arguments in scope.
void checkLaunches(jr::Object& o, const OpScope& scope)
{
    const Json& launches = jr::asArray(o.required("launches"), o.at("launches"));
    if (launches.empty())
        jr::fail(o.at("launches"), "an op launches at least one kernel");
    for (std::size_t i = 0; i < launches.size(); ++i) {
        jr::Object l(launches[i], jr::child(o.at("launches"), i));
        l.string("kernel");
        const std::string lowered = l.string("lowered");
        if (lowered.empty() || lowered.size() > 4096)
            jr::fail(l.at("lowered"), "a lowered kernel name is 1 to 4096 characters");
        for (const char* key : {"grid", "block"}) {
            const Json& dims = jr::asArray(l.required(key), l.at(key));
            if (dims.size() != 3)
                jr::fail(l.at(key), "lists exactly 3 expressions (x, y, z)");
            for (std::size_t d = 0; d < 3; ++d)
                checkExpr(dims[d], jr::child(l.at(key), d), scope);
        }
        checkExpr(l.required("shared_bytes"), l.at("shared_bytes"), scope);
        const Json& args = jr::asArray(l.required("args"), l.at("args"));
        for (std::size_t a = 0; a < args.size(); ++a) {
            jr::Object arg(args[a], jr::child(l.at("args"), a));
            if (arg.has("tensor")) {
                const std::string t = arg.string("tensor");
                if (!scope.tensors.count(t))
                    jr::fail(arg.at("tensor"), "\"" + t + "\" is not an input, output or scratch buffer of this op");
            } else {
                checkExpr(arg.required("scalar"), arg.at("scalar"), scope);
                const std::string type = arg.string("type");
                if (!kScalarTypes.count(type))
                    jr::fail(arg.at("type"), "\"" + type + "\" is not one of int32, int64, uint32, uint64, fp32, fp64");
            }
            arg.finish();
        }
        l.finish();
    }
}

/// The reference: a tape of catalog ops, or a TorchScript file of the package on the op's inputs.
void checkReference(jr::Object& o, const std::set<std::string, std::less<>>& files)
{
    jr::Object ref(o.required("reference"), o.at("reference"));
    const std::string kind = ref.string("kind");
    if (kind == "tape") {
        const Json& steps = jr::asArray(ref.required("steps"), ref.at("steps"));
        if (steps.empty())
            jr::fail(ref.at("steps"), "a tape has at least one step");
        for (std::size_t i = 0; i < steps.size(); ++i) {
            jr::Object s(steps[i], jr::child(ref.at("steps"), i));
            const std::string stepOp = s.string("op");
            if (!findOp(stepOp))
                jr::fail(s.at("op"), "\"" + stepOp + "\" is not an op of the reference catalog");
            jr::asStringArray(s.required("inputs"), s.at("inputs"));
            if (const Json* a = s.optional("attrs"); a && !a->is_object())
                jr::fail(s.at("attrs"), "must be an object");
            s.string("output");
            s.finish();
        }
    } else if (kind == "torchscript") {
        needFile(files, ref.required("file"), ref.at("file"));
        const Json& ins = o.required("inputs");
        for (const std::string& n : jr::asStringArray(ref.required("inputs"), ref.at("inputs")))
            if (std::none_of(ins.begin(), ins.end(), [&](const Json& t) { return t["name"] == n; }))
                jr::fail(ref.at("inputs"), "\"" + n + "\" is not an input of the op");
    } else {
        jr::fail(ref.at("kind"), "is \"tape\" or \"torchscript\", not \"" + kind + "\"");
    }
    ref.finish();
}

/// The images by architecture, each a file of the package; returns the architectures.
std::vector<std::string> checkImages(jr::Object& o, const std::set<std::string, std::less<>>& files)
{
    std::vector<std::string> archs;
    jr::Object images(o.required("images"), o.at("images"));
    for (const auto& [arch, path] : images.raw().items()) {
        if (!isArchName(arch))
            jr::fail(images.at(arch), "\"" + arch + "\" is not an architecture (sm_XY or compute_XY)");
        needFile(files, images.required(arch), images.at(arch));
        archs.push_back(arch);
    }
    if (archs.empty())
        jr::fail(o.at("images"), "an op carries at least one cubin or PTX");
    images.finish();
    return archs;
}

/// Sources, task and evidence: files of the package, and the evidence's summary fields typed.
void checkEvidence(jr::Object& o, const std::set<std::string, std::less<>>& files)
{
    const Json& sources = jr::asArray(o.required("sources"), o.at("sources"));
    for (std::size_t i = 0; i < sources.size(); ++i)
        needFile(files, sources[i], jr::child(o.at("sources"), i));
    needFile(files, o.required("task"), o.at("task"));
    jr::Object ev(o.required("evidence"), o.at("evidence"));
    for (const char* key : {"correctness", "performance", "promotion"})
        needFile(files, ev.required(key), ev.at(key));
    // The summary is shown by `inspect`; the reports and the signed record above are the evidence.
    for (const char* key : {"gpu", "arch", "torch", "promoted_at", "baseline", "scope", "registry_signature"})
        if (const Json* v = ev.optional(key); v && !v->is_string())
            jr::fail(ev.at(key), "must be a string");
    for (const char* key : {"geomean_speedup", "min_speedup", "threshold", "compile_speedup", "compile_threshold"})
        if (const Json* v = ev.optional(key); v && !v->is_number() && !v->is_null())
            jr::fail(ev.at(key), "must be a number or null");
    for (const char* key : {"per_shape", "gates"})
        if (const Json* v = ev.optional(key); v && !v->is_array())
            jr::fail(ev.at(key), "must be a list");
    if (const Json* v = ev.optional("unsigned_evidence_accepted"); v && !v->is_boolean())
        jr::fail(ev.at("unsigned_evidence_accepted"), "must be true or false");
    ev.finish();
}

PackageOp checkOp(const Json& op, const std::string& ptr, const std::set<std::string, std::less<>>& files,
                  std::set<std::string, std::less<>>& opNames)
{
    jr::Object o(op, ptr);
    PackageOp out;
    out.json = op;
    out.name = newName(o, opNames, "cannot name an operator: letters, digits and _, not starting with a digit", "ops");
    out.registryId = o.string("registry_id");
    out.schema = o.string("schema");
    o.string("task_name");

    OpScope scope;
    std::set<std::string, std::less<>> shapeSymbols;
    checkTensorList(o.required("inputs"), o.at("inputs"), scope.tensors, shapeSymbols, true);
    checkTensorList(o.required("outputs"), o.at("outputs"), scope.tensors, shapeSymbols, false);
    if (o.required("inputs").empty() || o.required("outputs").empty())
        jr::fail(ptr, "an op needs at least one input and one output");
    checkSchema(o, out.name, out.schema);
    checkSymbols(o, shapeSymbols, scope);
    checkScratch(o, scope);
    checkLaunches(o, scope);
    checkReference(o, files);
    out.images = checkImages(o, files);
    checkEvidence(o, files);
    o.finish();
    return out;
}

/// The op's inputs and outputs must be the ones of the task.json it carries.
void checkAgainstTask(const PackageOp& op, const Json& taskJson, const std::string& origin, const std::string& ptr)
{
    auto task = parseTask(taskJson, origin);
    if (!task)
        jr::fail(ptr, "its task.json does not load: " + task.error().why);
    auto same = [&](const char* key, const std::vector<TensorSpec>& specs) {
        const Json& list = op.json[key];
        if (list.size() != specs.size())
            jr::fail(jr::child(ptr, key), "lists " + std::to_string(list.size()) + " tensors; its task.json has " +
                                              std::to_string(specs.size()));
        for (std::size_t i = 0; i < specs.size(); ++i) {
            if (list[i]["name"] != specs[i].name || list[i]["dtype"] != dtypeName(specs[i].dtype) ||
                list[i]["shape"] != shapeJson(specs[i].shape))
                jr::fail(jr::child(jr::child(ptr, key), i), "differs from \"" + specs[i].name + "\" in its task.json");
        }
    };
    same("inputs", task->inputs);
    same("outputs", task->outputs);
}


} // namespace

std::string needFile(const std::set<std::string, std::less<>>& files, const Json& v, const std::string& p)
{
    const std::string path = jr::asString(v, p);
    if (!files.count(path))
        jr::fail(p, "names \"" + path + "\", which is not a file of the package");
    return path;
}

std::string newName(jr::Object& o, std::set<std::string, std::less<>>& names, const std::string& notIdentifier,
                    const char* kind)
{
    const std::string name = o.string("name");
    if (!isOpName(name))
        jr::fail(o.at("name"), "\"" + name + "\" " + notIdentifier);
    if (!names.insert(name).second)
        jr::fail(o.at("name"), std::string("two ") + kind + " are named \"" + name + "\"");
    return name;
}

bool isFixedExtent(const std::string& extent)
{
    return !extent.empty() && std::all_of(extent.begin(), extent.end(), [](char c) { return c >= '0' && c <= '9'; });
}

Json shapeJson(const std::vector<std::string>& shape)
{
    Json out = Json::array();
    for (const std::string& s : shape) {
        if (isFixedExtent(s))
            out.push_back(std::stoll(s));
        else
            out.push_back(s);
    }
    return out;
}

bool isOpName(std::string_view name)
{
    static const std::set<std::string, std::less<>> keywords = {
        "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
        "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
        "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield"};
    if (name.empty() || name.size() > 64 || (name[0] >= '0' && name[0] <= '9'))
        return false;
    for (char c : name)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    return !keywords.count(name);
}

namespace {

/// The manifest's header: format and version first (a newer package must say so, not fail on a
/// key we do not know), the package's name and version, the architectures. Returns the schema.
std::int64_t checkHeader(jr::Object& top, Package& pkg)
{
    if (top.string("format") != kCastFormat)
        jr::fail("/format", "is not \"" + std::string(kCastFormat) + "\": this is not a KernelForge package");
    const std::int64_t version = top.integer("schema_version");
    if (version != kCastSchemaVersion && version != kCastModelSchemaVersion)
        jr::fail("/schema_version", "is " + std::to_string(version) + "; this KernelForge reads schemas " +
                                        std::to_string(kCastSchemaVersion) + " and " +
                                        std::to_string(kCastModelSchemaVersion) +
                                        (version > kCastModelSchemaVersion ? " (the package is newer: update KernelForge)" : ""));
    pkg.schemaVersion = static_cast<int>(version);
    jr::Object package(top.required("package"), "/package");
    pkg.name = package.string("name");
    pkg.version = package.string("version");
    package.finish();
    pkg.kernelforgeVersion = top.string("kernelforge_version");
    pkg.createdAt = top.string("created_at");
    top.string("nvrtc_version");
    for (const std::string& a : jr::asStringArray(top.required("architectures"), "/architectures"))
        if (!isArchName(a) || a.rfind("sm_", 0) != 0)
            jr::fail("/architectures", "\"" + a + "\" is not an sm_XY architecture");
    if (const Json* ptx = top.optional("ptx"); ptx && !ptx->is_null() && !(ptx->is_string() && isArchName(ptx->get<std::string>())))
        jr::fail("/ptx", "is a compute_XY architecture or null");
    return version;
}

/// Files: exactly the archive's entries after the manifest, each hash and size right. Returns
/// the paths listed.
std::set<std::string, std::less<>> checkFiles(jr::Object& top, const Archive& archive, Package& pkg)
{
    const Json& files = jr::asArray(top.required("files"), "/files");
    std::set<std::string, std::less<>> listed;
    for (std::size_t i = 0; i < files.size(); ++i) {
        const std::string p = jr::child("/files", i);
        jr::Object f(files[i], p);
        PackageFile pf;
        pf.path = f.string("path");
        pf.sha256 = f.string("sha256");
        pf.bytes = f.integer("bytes");
        f.finish();
        if (pf.path == kManifestName || !listed.insert(pf.path).second)
            jr::fail(p + "/path", "\"" + pf.path + "\" is listed twice");
        if (pf.sha256.size() != 64 || pf.sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
            jr::fail(p + "/sha256", "is not 64 lowercase hex digits");
        const ArchiveEntry* e = archive.find(pf.path);
        if (!e)
            jr::fail(p + "/path", "\"" + pf.path + "\" is listed but not in the archive");
        if (static_cast<std::int64_t>(e->bytes.size()) != pf.bytes)
            jr::fail(p + "/bytes", "\"" + pf.path + "\" has " + std::to_string(e->bytes.size()) +
                                       " bytes, the manifest says " + std::to_string(pf.bytes));
        auto sha = sha256Hex(e->bytes);
        if (!sha)
            throw sha.error();
        if (!constantTimeEquals(sha.value(), pf.sha256))
            jr::fail(p + "/sha256", "\"" + pf.path + "\" does not match its SHA-256 (the file was changed after export)");
        pkg.files.push_back(std::move(pf));
    }
    for (std::size_t i = 1; i < archive.entries.size(); ++i)
        if (!listed.count(archive.entries[i].name))
            jr::fail("/files", "the archive holds \"" + archive.entries[i].name + "\", which the manifest does not list");
    return listed;
}

/// The ops, each against its task, and (schema 2) the models.
void checkOpsAndModels(jr::Object& top, std::int64_t version, const Archive& archive, const std::set<std::string, std::less<>>& listed,
                       const std::string& origin, Package& pkg)
{
    const Json& ops = jr::asArray(top.required("ops"), "/ops");
    if (ops.empty())
        jr::fail("/ops", "a package holds at least one op");
    std::set<std::string, std::less<>> names;
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const std::string p = jr::child("/ops", i);
        PackageOp op = checkOp(ops[i], p, listed, names);
        const ArchiveEntry* task = archive.find(op.json["task"].get<std::string>());
        auto taskJson = jr::parseText(task->bytes, origin + ":" + task->name);
        if (!taskJson)
            jr::fail(p + "/task", taskJson.error().why);
        checkAgainstTask(op, taskJson.value(), origin + ":" + task->name, p);
        pkg.ops.push_back(std::move(op));
    }
    // Schema 2 adds models; schema 1 has none, so its readers never meet one.
    if (version == kCastModelSchemaVersion) {
        const Json& models = jr::asArray(top.required("models"), "/models");
        if (models.empty())
            jr::fail("/models", "a schema 2 package holds at least one model (without models it is schema 1)");
        std::set<std::string, std::less<>> opNames, modelNames;
        for (const PackageOp& op : pkg.ops)
            opNames.insert(op.name);
        for (std::size_t i = 0; i < models.size(); ++i)
            pkg.models.push_back(checkModel(models[i], jr::child("/models", i), archive, listed, opNames, modelNames, origin));
    }
}

} // namespace

Result<Package> checkPackage(Archive archive, const std::string& origin)
{
    const std::string what = "open package " + origin;
    const std::string hint = "the package is damaged or was edited; export it again with `kforge cast export`";
    if (archive.entries.empty() || archive.entries.front().name != kManifestName)
        return Error::inFile(origin, archive.entries.empty() ? "" : archive.entries.front().name, what, "its first entry is not manifest.json", hint);
    const std::string& text = archive.entries.front().bytes;
    if (text.size() > kMaxManifestBytes)
        return Error::inFile(origin, kManifestName, what, "manifest.json is " + std::to_string(text.size()) + " bytes; the limit is " +
                               std::to_string(kMaxManifestBytes), hint);
    auto parsed = jr::parseText(text, origin + ":manifest.json");
    if (!parsed)
        return parsed.error();
    Package pkg;
    pkg.origin = origin;
    pkg.manifest = std::move(parsed.value());
    const Json& m = pkg.manifest;
    try {
        if (!m.is_object())
            jr::fail("", "the manifest is a JSON object");
        jr::Object top(m, "");
        const std::int64_t version = checkHeader(top, pkg);
        const std::set<std::string, std::less<>> listed = checkFiles(top, archive, pkg);
        checkOpsAndModels(top, version, archive, listed, origin, pkg);
        top.finish();
    } catch (const jr::SchemaError& e) {
        return Error::inFile(origin, "manifest.json#" + e.pointer, what, e.message, hint);
    } catch (const Error& e) {
        return e;
    }
    pkg.archive = std::move(archive);
    return pkg;
}

Result<Package> openPackage(const std::filesystem::path& file, const ArchiveLimits& limits)
{
    auto archive = readArchive(file, limits);
    if (!archive)
        return archive.error();
    return checkPackage(std::move(archive.value()), file.string());
}

Result<Package> openPackageBytes(std::string_view bytes, const std::string& origin, const ArchiveLimits& limits)
{
    auto archive = readArchiveBytes(bytes, origin, limits);
    if (!archive)
        return archive.error();
    return checkPackage(std::move(archive.value()), origin);
}

} // namespace kf::cast
