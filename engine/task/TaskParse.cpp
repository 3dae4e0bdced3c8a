// task.json -> Task: every field read with its JSON pointer, every problem a sentence that names
// it (docs/task-schema.md). Distributions, tolerances, candidates and shapes are TaskParseFields.cpp's; the
// model's own functions are in Task.cpp, the writer in TaskJson.cpp.
#include "engine/task/Task.h"

#include "engine/core/Architectures.h"
#include "engine/core/Files.h"
#include "engine/core/JsonReader.h"
#include "engine/task/CompileOptions.h"
#include "engine/task/OpCatalog.h"
#include "engine/task/TaskFiles.h"
#include "engine/task/TaskParseInternal.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <set>

namespace fs = std::filesystem;

namespace kf {

namespace jr = kf::json;
using Json = nlohmann::json;
using jr::fail;
using jr::Object;
using jr::SchemaError;

namespace taskparse {

// Hand-written, not std::regex: libstdc++'s regex recurses once per character and a 30 000
// character name overflowed the stack. Names are capped at kMaxNameLength.
bool isIdentifier(const std::string& s)
{
    if (s.empty() || s.size() > kMaxNameLength || std::isdigit(static_cast<unsigned char>(s[0])))
        return false;
    return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string identifier(const Json& v, const std::string& ptr, const std::string& what)
{
    std::string s = jr::asString(v, ptr);
    if (!isIdentifier(s))
        fail(ptr, what + " \"" + s + "\" is not a valid identifier (letters, digits and _, not starting with a digit)");
    return s;
}

std::string joined(const std::vector<std::string>& v)
{
    std::string s;
    for (const auto& x : v)
        s += (s.empty() ? "" : ", ") + x;
    return s;
}


Expr expression(const Json& v, const std::string& ptr, const Ctx& ctx, const std::string& what)
{
    Expr e;
    if (v.is_number_integer() || v.is_number_unsigned()) {
        e = Expr::constant(Value::integer(jr::asInteger(v, ptr)));
    } else if (v.is_number()) {
        e = Expr::constant(Value::real(v.get<double>()));
    } else if (v.is_string()) {
        auto r = Expr::parse(v.get<std::string>());
        if (!r)
            fail(ptr, what + ": " + r.error().why);
        e = std::move(r.value());
    } else {
        fail(ptr, what + ": expected an expression (a string such as \"ceil_div(N, 256)\" or a number), found " +
                      jr::describe(v));
    }
    for (const auto& s : e.symbols()) {
        if (!ctx.symbols.count(s) && !ctx.params.count(s)) {
            std::vector<std::string> known(ctx.symbols.begin(), ctx.symbols.end());
            known.insert(known.end(), ctx.params.begin(), ctx.params.end());
            fail(ptr, what + " \"" + e.text() + "\" uses unknown symbol '" + s + "'; declare it in /symbols or "
                      "/parameters (known: " + (known.empty() ? "none" : joined(known)) + ")");
        }
    }
    return e;
}

} // namespace taskparse

using namespace taskparse;

namespace {

/// /shapes/tests or /shapes/benchmarks: an array of at most kMaxShapesPerList bindings.
const Json& shapeList(const Json& v, const std::string& ptr, const std::string& kind)
{
    const Json& list = jr::asArray(v, ptr);
    if (list.size() > kMaxShapesPerList)
        fail(ptr, "the task lists " + std::to_string(list.size()) + " " + kind + " shapes; a task may list at most " +
                      std::to_string(kMaxShapesPerList) + " (keep the awkward sizes and a spread of the rest)");
    return list;
}

TensorSpec parseTensor(const Json& v, const std::string& ptr, bool isInput, const Ctx& ctx)
{
    Object o(v, ptr);
    TensorSpec t;
    t.name = identifier(o.required("name"), o.at("name"), "tensor name");
    std::string dt = o.string("dtype");
    auto parsed = parseDType(dt);
    if (!parsed)
        fail(o.at("dtype"), "unknown dtype \"" + dt + "\"; use one of: " + dtypeNames());
    t.dtype = *parsed;
    const Json& shape = jr::asArray(o.required("shape"), o.at("shape"));
    for (size_t i = 0; i < shape.size(); ++i) {
        std::string p = jr::child(o.at("shape"), i);
        if (shape[i].is_number_integer() || shape[i].is_number_unsigned()) {
            std::int64_t n = jr::asInteger(shape[i], p);
            if (n < 0)
                fail(p, "a fixed extent must be non-negative");
            t.shape.push_back(std::to_string(n));
        } else if (shape[i].is_string()) {
            std::string s = shape[i];
            if (!ctx.symbols.count(s))
                fail(p, "shape symbol \"" + s + "\" is not declared in /symbols");
            t.shape.push_back(s);
        } else {
            fail(p, "a shape entry is a symbol name or a non-negative integer, found " + jr::describe(shape[i]));
        }
    }
    if (isInput) {
        if (const Json* d = o.optional("distributions")) {
            const Json& a = jr::asArray(*d, o.at("distributions"));
            if (a.empty())
                fail(o.at("distributions"), "give at least one distribution, or leave the key out for the defaults");
            for (size_t i = 0; i < a.size(); ++i)
                t.distributions.push_back(parseDistribution(a[i], jr::child(o.at("distributions"), i), t.dtype));
        } else {
            t.distributions = defaultDistributions(t.dtype);
        }
        t.tolerance = Tolerance::defaultFor(t.dtype);
    } else {
        if (const Json* tol = o.optional("tolerance")) {
            t.tolerance = parseTolerance(*tol, o.at("tolerance"), t.dtype);
            t.toleranceGiven = true;
        } else {
            t.tolerance = Tolerance::defaultFor(t.dtype);
        }
    }
    o.finish();
    return t;
}

void checkAttrs(const OpInfo& op, const Json& attrs, const std::string& ptr)
{
    Object o(attrs, ptr);
    for (const auto& a : op.attrs) {
        const Json* v = a.required ? &o.required(a.name) : o.optional(a.name);
        if (!v)
            continue;
        std::string p = o.at(a.name);
        if (a.type == "number")
            jr::asNumber(*v, p);
        else if (a.type == "integer")
            jr::asInteger(*v, p);
        else if (a.type == "bool")
            jr::asBool(*v, p);
        else if (a.type == "string")
            jr::asString(*v, p);
        else if (a.type == "integer_list") {
            const Json& arr = jr::asArray(*v, p);
            for (size_t i = 0; i < arr.size(); ++i)
                jr::asInteger(arr[i], jr::child(p, i));
        } else if (a.type == "dtype") {
            std::string s = jr::asString(*v, p);
            if (!parseDType(s))
                fail(p, "unknown dtype \"" + s + "\"; use one of: " + dtypeNames());
        }
    }
    if (op.name == "gelu") {
        if (const Json* ap = attrs.contains("approximate") ? &attrs["approximate"] : nullptr) {
            std::string s = *ap;
            if (s != "none" && s != "tanh")
                fail(jr::child(ptr, "approximate"), "approximate must be \"none\" or \"tanh\"");
        }
    }
    o.finish();
}

OpStep parseStep(const Json& v, const std::string& ptr, const std::set<std::string>& available, bool needOutput,
                 const std::map<std::string, int>* ranks = nullptr)
{
    Object o(v, ptr);
    OpStep s;
    s.op = o.string("op");
    const OpInfo* op = findOp(s.op);
    if (!op) {
        std::vector<std::string> names;
        for (const auto& info : opCatalog())
            names.emplace_back(info.name);
        fail(o.at("op"), "\"" + s.op + "\" is not a catalog op; use one of: " + joined(names) +
                             ", or a TorchScript reference for anything else");
    }
    s.inputs = jr::asStringArray(o.required("inputs"), o.at("inputs"));
    int n = static_cast<int>(s.inputs.size());
    if (n < op->minInputs || n > op->maxInputs)
        fail(o.at("inputs"), s.op + " takes " +
                                 (op->minInputs == op->maxInputs ? std::to_string(op->minInputs)
                                                                 : std::to_string(op->minInputs) + " to " + std::to_string(op->maxInputs)) +
                                 " input(s), got " + std::to_string(n));
    for (size_t i = 0; i < s.inputs.size(); ++i)
        if (!available.count(s.inputs[i]))
            fail(jr::child(o.at("inputs"), i),
                 "\"" + s.inputs[i] + "\" is neither a task input nor the output of an earlier step");
    if (const Json* a = o.optional("attrs")) {
        checkAttrs(*op, *a, o.at("attrs"));
        s.attrs = *a;
        // A dimension names an axis of the first input: within its rank when it is a task input
        // (known here), else within the 64 dimensions a tensor can have at all.
        int rank = 64;
        if (ranks && !s.inputs.empty())
            if (auto it = ranks->find(s.inputs.front()); it != ranks->end())
                rank = std::max(it->second, 1);
        for (const char* key : {"dim", "dim0", "dim1"})
            if (a->contains(key) && (*a)[key].is_number_integer()) {
                const Json& v = (*a)[key];
                const std::int64_t d = !v.is_number_unsigned() ? v.get<std::int64_t>()
                                       : v.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max())
                                           ? std::numeric_limits<std::int64_t>::max()
                                           : static_cast<std::int64_t>(v.get<std::uint64_t>());
                if (d < -rank || d >= rank)
                    fail(jr::child(o.at("attrs"), key), std::string(key) + " " + (*a)[key].dump() + " is not an axis of \"" +
                                                            s.inputs.front() + "\" (rank " + std::to_string(rank) +
                                                            "): use -" + std::to_string(rank) + " to " + std::to_string(rank - 1));
            }
    } else {
        checkAttrs(*op, Json::object(), o.at("attrs"));
    }
    if (needOutput)
        s.output = identifier(o.required("output"), o.at("output"), "step output");
    o.finish();
    return s;
}

Reference parseReference(const Json& v, const std::string& ptr, const Task& task)
{
    Object o(v, ptr);
    std::set<std::string> available;
    for (const auto& t : task.inputs)
        available.insert(t.name);
    int forms = o.has("op") + o.has("tape") + o.has("torchscript");
    if (forms != 1)
        fail(ptr, "give exactly one of \"op\", \"tape\" or \"torchscript\" (found " + std::to_string(forms) + ")");
    std::map<std::string, int> ranks;
    for (const auto& t : task.inputs)
        ranks[t.name] = static_cast<int>(t.shape.size());
    Reference r;
    if (o.has("op")) {
        r.kind = Reference::Kind::Op;
        if (task.outputs.size() != 1)
            fail(ptr, "a single-op reference produces one output but the task has " +
                          std::to_string(task.outputs.size()) + "; use a \"tape\" that names each output");
        OpStep s = parseStep(v, ptr, available, false, &ranks);
        s.output = task.outputs[0].name;
        r.steps.push_back(std::move(s));
        return r; // parseStep already consumed and checked every key of this object
    }
    if (const Json* tape = o.optional("tape")) {
        r.kind = Reference::Kind::Tape;
        const Json& a = jr::asArray(*tape, o.at("tape"));
        if (a.empty())
            fail(o.at("tape"), "the tape needs at least one step");
        for (size_t i = 0; i < a.size(); ++i) {
            std::string p = jr::child(o.at("tape"), i);
            OpStep s = parseStep(a[i], p, available, true, &ranks);
            if (available.count(s.output))
                fail(jr::child(p, "output"), "\"" + s.output + "\" is already defined; give each step a new name");
            available.insert(s.output);
            r.steps.push_back(std::move(s));
        }
        for (const auto& out : task.outputs)
            if (!available.count(out.name))
                fail(o.at("tape"), "no step produces the task output \"" + out.name + "\"");
    } else {
        r.kind = Reference::Kind::TorchScript;
        std::string file = o.string("torchscript");
        r.torchscript = file;
        if (fs::path(file).is_absolute() || file.find("..") != std::string::npos)
            fail(o.at("torchscript"), "give a path inside the task folder");
        r.scriptInputs = jr::asStringArray(o.required("inputs"), o.at("inputs"));
        for (size_t i = 0; i < r.scriptInputs.size(); ++i)
            if (!available.count(r.scriptInputs[i]))
                fail(jr::child(o.at("inputs"), i), "\"" + r.scriptInputs[i] + "\" is not a task input");
    }
    o.finish();
    return r;
}

/// schema_version, name, description and architectures.
void parseHeader(Object& o, Task& t)
{
    std::int64_t version = o.integer("schema_version");
    if (version != kTaskSchemaVersion)
        fail(o.at("schema_version"), "schema_version " + std::to_string(version) + " is not supported; this KernelForge reads version " +
                                         std::to_string(kTaskSchemaVersion));
    t.name = o.string("name");
    const bool nameOk = !t.name.empty() && t.name.size() <= kMaxNameLength && t.name[0] != '-' &&
                        std::all_of(t.name.begin(), t.name.end(), [](char c) {
                            return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
                        });
    if (!nameOk)
        fail(o.at("name"), "the name may hold letters, digits, '_' and '-' only, at most " + std::to_string(kMaxNameLength) +
                               " characters");
    t.description = o.stringOr("description", "");

    t.architectures = jr::asStringArray(o.required("architectures"), o.at("architectures"));
    if (t.architectures.empty())
        fail(o.at("architectures"), "list at least one target architecture, e.g. [\"sm_90\"]");
    for (size_t i = 0; i < t.architectures.size(); ++i) {
        const ArchInfo* a = findArchitecture(t.architectures[i]);
        if (!a || t.architectures[i].rfind("sm_", 0) != 0) {
            std::vector<std::string> names;
            for (const auto& k : knownArchitectures())
                names.push_back(k.arch);
            fail(jr::child(o.at("architectures"), i), "\"" + t.architectures[i] + "\" is not a known architecture; use one of: " + joined(names));
        }
    }
}

void parseParameters(Object& o, Task& t, Ctx& ctx)
{
    const Json* p = o.optional("parameters");
    if (!p)
        return;
    Object po(*p, o.at("parameters"));
    for (auto it = p->begin(); it != p->end(); ++it) {
        std::string pp = po.at(it.key());
        if (!isIdentifier(it.key()))
            fail(pp, "parameter name \"" + it.key() + "\" is not an identifier");
        const Json& v = po.required(it.key());
        if (v.is_number_integer() || v.is_number_unsigned())
            t.parameters[it.key()] = Value::integer(jr::asInteger(v, pp));
        else
            t.parameters[it.key()] = Value::real(jr::asNumber(v, pp));
        ctx.params.insert(it.key());
    }
    po.finish();
}

void parseSymbols(Object& o, Task& t, Ctx& ctx)
{
    const Json& s = o.required("symbols");
    Object so(s, o.at("symbols"));
    for (auto it = s.begin(); it != s.end(); ++it) {
        std::string sp = so.at(it.key());
        if (!isIdentifier(it.key()))
            fail(sp, "symbol name \"" + it.key() + "\" is not an identifier");
        if (ctx.params.count(it.key()))
            fail(sp, "\"" + it.key() + "\" is both a symbol and a parameter");
        Object one(so.required(it.key()), sp);
        SymbolSpec spec;
        spec.name = it.key();
        spec.min = one.integerOr("min", 1);
        spec.max = one.integerOr("max", 2147483647);
        spec.multipleOf = one.integerOr("multiple_of", 1);
        if (spec.min < 0 || spec.min > spec.max)
            fail(sp, "needs 0 <= min <= max (got min " + std::to_string(spec.min) + ", max " + std::to_string(spec.max) + ")");
        if (spec.multipleOf < 1)
            fail(one.at("multiple_of"), "multiple_of must be at least 1");
        one.finish();
        t.symbols.push_back(spec);
        ctx.symbols.insert(spec.name);
    }
    so.finish();
}

/// Inputs then outputs: at least one of each, every name new (not a symbol or parameter).
void parseTensors(Object& o, Task& t, Ctx& ctx)
{
    std::set<std::string> names;
    auto readTensors = [&](const char* key, bool input, std::vector<TensorSpec>& out) {
        const Json& a = jr::asArray(o.required(key), o.at(key));
        if (a.empty())
            fail(o.at(key), std::string("the task needs at least one ") + (input ? "input" : "output"));
        for (size_t i = 0; i < a.size(); ++i) {
            std::string p = jr::child(o.at(key), i);
            TensorSpec ts = parseTensor(a[i], p, input, ctx);
            if (!names.insert(ts.name).second)
                fail(jr::child(p, "name"), "tensor name \"" + ts.name + "\" is used twice");
            if (ctx.symbols.count(ts.name) || ctx.params.count(ts.name))
                fail(jr::child(p, "name"), "\"" + ts.name + "\" is already a symbol or parameter name");
            out.push_back(std::move(ts));
        }
    };
    readTensors("inputs", true, t.inputs);
    readTensors("outputs", false, t.outputs);
    ctx.tensors = names;
}

/// The test shapes (at least one) and the benchmark shapes.
void parseShapes(Object& o, Task& t)
{
    Object so(o.required("shapes"), o.at("shapes"));
    const Json& tests = shapeList(so.required("tests"), so.at("tests"), "test");
    if (tests.empty())
        fail(so.at("tests"), "give at least one test shape (include awkward sizes: 1, primes, tails)");
    for (size_t i = 0; i < tests.size(); ++i)
        t.testShapes.push_back(parseBinding(tests[i], jr::child(so.at("tests"), i), t));
    if (const Json* b = so.optional("benchmarks")) {
        const Json& bench = shapeList(*b, so.at("benchmarks"), "benchmark");
        for (size_t i = 0; i < bench.size(); ++i)
            t.benchmarkShapes.push_back(parseBinding(bench[i], jr::child(so.at("benchmarks"), i), t));
    }
    so.finish();
}

/// An include folder: inside the task folder and below it, also once links are followed — the
/// headers are part of the evidence (the task hash covers them) and travel with a promoted kernel.
void checkIncludeDir(const std::string& name, const std::string& ptr, const fs::path& dir)
{
    const fs::path inc = fs::path(name).lexically_normal();
    if (inc.empty() || inc.is_absolute() || inc == "." || inc.string().rfind("..", 0) == 0)
        fail(ptr,
             "include folder \"" + name +
                 "\" must be a subfolder of the task folder (no absolute path, \".\" or \"..\"); "
                 "copy shared headers into one, e.g. \"include\"");
    if (!dir.empty() && !fs::is_directory(dir / name))
        fail(ptr, "folder \"" + name + "\" does not exist in " + dir.string());
    // Spelled inside, and inside once symbolic links are followed: a link to another
    // folder would put its files in the task hash and in the registry.
    if (!dir.empty() && !isInsideFolder(dir / name, dir)) {
        std::error_code ec;
        fail(ptr,
             "include folder \"" + name + "\" is a link to " +
                 fs::weakly_canonical(dir / name, ec).string() +
                 ", outside the task folder; copy the headers into the task instead");
    }
}

void parseCompile(Object& o, Task& t, const fs::path& dir)
{
    const Json* c = o.optional("compile");
    if (!c)
        return;
    Object co(*c, o.at("compile"));
    t.compile.cxxStd = co.stringOr("std", "c++17");
    static const std::set<std::string> stds = {"c++11", "c++14", "c++17", "c++20"};
    if (!stds.count(t.compile.cxxStd))
        fail(co.at("std"), "std must be one of c++11, c++14, c++17, c++20");
    t.compile.fastMath = co.booleanOr("fast_math", false);
    if (const Json* d = co.optional("defines"))
        parseDefines(*d, co.at("defines"), t.compile.defines);
    if (const Json* inc = co.optional("include_dirs")) {
        t.compile.includeDirs = jr::asStringArray(*inc, co.at("include_dirs"));
        for (size_t i = 0; i < t.compile.includeDirs.size(); ++i)
            checkIncludeDir(t.compile.includeDirs[i], jr::child(co.at("include_dirs"), i), dir);
    }
    if (const Json* opt = co.optional("options")) {
        t.compile.extraOptions = jr::asStringArray(*opt, co.at("options"));
        for (size_t i = 0; i < t.compile.extraOptions.size(); ++i)
            if (!isAllowedTaskOption(t.compile.extraOptions[i]))
                fail(jr::child(co.at("options"), i),
                     "\"" + t.compile.extraOptions[i].substr(0, 100) + "\" is not an option a task may set: a task "
                     "compile reads only the task's files and writes none. Allowed: " + allowedTaskOptionsText() +
                     "; use \"include_dirs\", \"defines\" and \"fast_math\" for the rest");
    }
    co.finish();
}

/// May be empty: a task just imported or written has no kernel yet (kforge candidate add).
void parseCandidates(Object& o, Task& t, const Ctx& ctx)
{
    const Json& a = jr::asArray(o.required("candidates"), o.at("candidates"));
    std::set<std::string> files;
    for (size_t i = 0; i < a.size(); ++i) {
        std::string p = jr::child(o.at("candidates"), i);
        Candidate c = parseCandidate(a[i], p, ctx);
        if (!files.insert(c.file).second)
            fail(jr::child(p, "file"), "candidate \"" + c.file + "\" is listed twice");
        t.candidates.push_back(std::move(c));
    }
}

Task parseTaskOrThrow(const Json& j, const fs::path& dir)
{
    Object o(j, "");
    Task t;
    t.directory = dir;
    parseHeader(o, t);
    Ctx ctx;
    ctx.dir = &t.directory;
    parseParameters(o, t, ctx);
    parseSymbols(o, t, ctx);
    if (const Json* c = o.optional("constraints")) {
        const Json& a = jr::asArray(*c, o.at("constraints"));
        for (size_t i = 0; i < a.size(); ++i)
            t.constraints.push_back(expression(a[i], jr::child(o.at("constraints"), i), ctx, "constraint"));
    }
    parseTensors(o, t, ctx);
    parseShapes(o, t);
    t.reference = parseReference(o.required("reference"), o.at("reference"), t);
    if (t.reference.kind == Reference::Kind::TorchScript && !dir.empty() && !fs::exists(dir / t.reference.torchscript))
        fail(jr::child(o.at("reference"), "torchscript"), "file \"" + t.reference.torchscript.string() + "\" does not exist in " + dir.string());
    if (t.reference.kind == Reference::Kind::TorchScript && !dir.empty())
        if (auto inside = resolveTaskFile(dir, t.reference.torchscript); !inside)
            fail(jr::child(o.at("reference"), "torchscript"), inside.error().why + "; " + inside.error().hint);
    parseCompile(o, t, dir);
    parseCandidates(o, t, ctx);
    if (const Json* c = o.optional("cost")) {
        Object co(*c, o.at("cost"));
        if (const Json* b = co.optional("bytes"))
            t.bytesFormula = expression(*b, co.at("bytes"), ctx, "bytes formula");
        if (const Json* f = co.optional("flops"))
            t.flopsFormula = expression(*f, co.at("flops"), ctx, "flops formula");
        co.finish();
    }
    o.finish();
    checkLaunches(t, "/candidates");
    return t;
}

} // namespace

Result<ShapeBinding> parseShapeText(const Task& task, const std::string& text)
{
    auto bad = [&](const std::string& why) {
        return Error::failed("read the shape \"" + text + "\"", why, "write it as SYMBOL=VALUE pairs, e.g. N=4099,B=2");
    };
    ShapeBinding b;
    std::string item;
    auto take = [&]() -> std::optional<Error> {
        if (item.empty())
            return std::nullopt;
        const auto eq = item.find('=');
        if (eq == std::string::npos)
            return bad("\"" + item + "\" is not SYMBOL=VALUE");
        const std::string value = item.substr(eq + 1);
        size_t used = 0;
        std::int64_t v = 0;
        try {
            v = std::stoll(value, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (value.empty() || used != value.size())
            return bad("\"" + value + "\" is not an integer");
        b.values[item.substr(0, eq)] = v;
        item.clear();
        return std::nullopt;
    };
    for (char c : text + " ") {
        if (c == ',' || c == ' ' || c == '\t') {
            if (auto e = take())
                return *e;
        } else {
            item += c;
        }
    }
    for (const SymbolSpec& s : task.symbols)
        if (!b.values.count(s.name))
            return bad("give every symbol of the task; " + s.name + " is missing");
    if (auto ok = task.admits(b); !ok)
        return bad(ok.error().why);
    return b;
}

Result<Task> parseTask(const Json& j, const std::string& origin, const fs::path& directory)
{
    try {
        return parseTaskOrThrow(j, directory);
    } catch (const SchemaError& e) {
        return Error::inFile(origin, e.pointer, "read task", e.message, "see docs/task-schema.md");
    }
}

} // namespace kf
