#include "engine/task/Task.h"

#include "engine/analysis/Occupancy.h"
#include "engine/core/JsonReader.h"
#include "engine/task/OpCatalog.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <regex>
#include <stdexcept>
#include <set>

namespace fs = std::filesystem;

namespace kf {

namespace jr = kf::json;
using Json = nlohmann::json;
using jr::fail;
using jr::Object;
using jr::SchemaError;

namespace {

bool isIdentifier(const std::string& s)
{
    static const std::regex re("^[A-Za-z_][A-Za-z0-9_]*$");
    return std::regex_match(s, re);
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

/// Parsing context: what names are in scope so references can be checked as they are read.
struct Ctx {
    const fs::path* dir = nullptr;
    std::set<std::string> symbols;
    std::set<std::string> params;
    std::set<std::string> tensors; // inputs + outputs
};

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

Distribution parseDistribution(const Json& v, const std::string& ptr, DType dtype)
{
    Object o(v, ptr);
    std::string kind = o.string("kind");
    Distribution d;
    if (kind == "normal") {
        d.kind = Distribution::Kind::Normal;
        d.mean = o.numberOr("mean", 0.0);
        d.std = o.numberOr("std", 1.0);
        if (!(d.std > 0))
            fail(o.at("std"), "std must be positive");
    } else if (kind == "uniform") {
        d.kind = Distribution::Kind::Uniform;
        d.low = o.numberOr("low", -1.0);
        d.high = o.numberOr("high", 1.0);
        if (!(d.low < d.high))
            fail(o.pointer(), "uniform needs low < high (got " + std::to_string(d.low) + " and " + std::to_string(d.high) + ")");
    } else if (kind == "heavy_tailed") {
        d.kind = Distribution::Kind::HeavyTailed;
        d.dof = o.numberOr("dof", 3.0);
        d.scale = o.numberOr("scale", 1.0);
        if (!(d.dof > 0))
            fail(o.at("dof"), "dof (degrees of freedom) must be positive");
    } else if (kind == "mixed_scales") {
        d.kind = Distribution::Kind::MixedScales;
        d.scales = {1e-3, 1.0, 1e3};
        if (const Json* s = o.optional("scales")) {
            d.scales.clear();
            const Json& a = jr::asArray(*s, o.at("scales"));
            for (size_t i = 0; i < a.size(); ++i)
                d.scales.push_back(jr::asNumber(a[i], jr::child(o.at("scales"), i)));
            if (d.scales.empty())
                fail(o.at("scales"), "give at least one scale");
        }
    } else if (kind == "int_range") {
        d.kind = Distribution::Kind::IntRange;
        d.low = static_cast<double>(o.integer("low"));
        d.high = static_cast<double>(o.integer("high"));
        if (d.low > d.high)
            fail(o.pointer(), "int_range needs low <= high");
    } else if (kind == "special") {
        d.kind = Distribution::Kind::Special;
        d.fraction = o.numberOr("fraction", 0.01);
        if (!(d.fraction > 0 && d.fraction <= 1))
            fail(o.at("fraction"), "fraction must be in (0, 1]");
        const Json& a = jr::asArray(o.required("values"), o.at("values"));
        if (a.empty())
            fail(o.at("values"), "give at least one special value");
        for (size_t i = 0; i < a.size(); ++i) {
            std::string p = jr::child(o.at("values"), i);
            if (a[i].is_string()) {
                std::string s = a[i];
                if (s == "nan")
                    d.specialValues.push_back(std::numeric_limits<double>::quiet_NaN());
                else if (s == "inf")
                    d.specialValues.push_back(std::numeric_limits<double>::infinity());
                else if (s == "-inf")
                    d.specialValues.push_back(-std::numeric_limits<double>::infinity());
                else
                    fail(p, "special value \"" + s + "\" is not a number, \"nan\", \"inf\" or \"-inf\"");
            } else {
                d.specialValues.push_back(jr::asNumber(a[i], p));
            }
        }
    } else {
        fail(o.at("kind"), "unknown distribution \"" + kind +
                               "\"; use normal, uniform, heavy_tailed, mixed_scales, int_range or special");
    }
    o.finish();
    const bool floatingKind = d.kind != Distribution::Kind::IntRange;
    if (floatingKind && !isFloating(dtype))
        fail(ptr, "distribution \"" + kind + "\" needs a floating dtype; for " + std::string(dtypeName(dtype)) +
                      " inputs use {\"kind\": \"int_range\", \"low\": ..., \"high\": ...}");
    if (!floatingKind && isFloating(dtype))
        fail(ptr, "int_range is for integer and bool inputs; for " + std::string(dtypeName(dtype)) + " use uniform");
    return d;
}

std::vector<Distribution> defaultDistributions(DType t)
{
    if (isFloating(t)) {
        Distribution n, u, h, m;
        n.kind = Distribution::Kind::Normal;
        u.kind = Distribution::Kind::Uniform;
        h.kind = Distribution::Kind::HeavyTailed;
        m.kind = Distribution::Kind::MixedScales;
        m.scales = {1e-3, 1.0, 1e3};
        return {n, u, h, m};
    }
    Distribution r;
    r.kind = Distribution::Kind::IntRange;
    if (t == DType::Bool) {
        r.low = 0, r.high = 1;
    } else if (t == DType::U8) {
        r.low = 0, r.high = 100;
    } else {
        r.low = -100, r.high = 100;
    }
    return {r};
}

Tolerance parseTolerance(const Json& v, const std::string& ptr, DType t)
{
    Object o(v, ptr);
    Tolerance tol = Tolerance::defaultFor(t);
    tol.rtol = o.numberOr("rtol", tol.rtol);
    tol.atol = o.numberOr("atol", tol.atol);
    std::string mode = o.stringOr("atol_mode", "rms");
    if (mode == "rms")
        tol.atolMode = Tolerance::AtolMode::Rms;
    else if (mode == "absolute")
        tol.atolMode = Tolerance::AtolMode::Absolute;
    else
        fail(o.at("atol_mode"), "atol_mode must be \"rms\" or \"absolute\"");
    if (tol.rtol < 0 || tol.atol < 0 || !std::isfinite(tol.rtol) || !std::isfinite(tol.atol))
        fail(ptr, "rtol and atol must be finite and non-negative");
    o.finish();
    return tol;
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

OpStep parseStep(const Json& v, const std::string& ptr, const std::set<std::string>& available, bool needOutput)
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
    Reference r;
    if (o.has("op")) {
        r.kind = Reference::Kind::Op;
        if (task.outputs.size() != 1)
            fail(ptr, "a single-op reference produces one output but the task has " +
                          std::to_string(task.outputs.size()) + "; use a \"tape\" that names each output");
        OpStep s = parseStep(v, ptr, available, false);
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
            OpStep s = parseStep(a[i], p, available, true);
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

void parseDefines(const Json& v, const std::string& ptr, std::vector<std::pair<std::string, std::string>>& out)
{
    Object o(v, ptr);
    for (auto it = v.begin(); it != v.end(); ++it) {
        std::string p = jr::child(ptr, it.key());
        if (!isIdentifier(it.key()))
            fail(p, "macro name \"" + it.key() + "\" is not an identifier");
        const Json& val = o.required(it.key());
        if (val.is_string())
            out.emplace_back(it.key(), val.get<std::string>());
        else if (val.is_number() || val.is_boolean())
            out.emplace_back(it.key(), val.dump());
        else
            fail(p, "a macro value is a string or a number, found " + jr::describe(val));
    }
    o.finish();
}

void parseDims(const Json& v, const std::string& ptr, const Ctx& ctx, Expr (&dims)[3], const std::string& what)
{
    if (v.is_array()) {
        if (v.empty() || v.size() > 3)
            fail(ptr, what + " has 1 to 3 dimensions, got " + std::to_string(v.size()));
        for (size_t i = 0; i < 3; ++i)
            dims[i] = i < v.size() ? expression(v[i], jr::child(ptr, i), ctx, what) : Expr::constant(Value::integer(1));
    } else {
        dims[0] = expression(v, ptr, ctx, what);
        dims[1] = dims[2] = Expr::constant(Value::integer(1));
    }
}

Candidate parseCandidate(const Json& v, const std::string& ptr, const Ctx& ctx)
{
    Object o(v, ptr);
    Candidate c;
    c.file = o.string("file");
    if (c.file.empty() || fs::path(c.file).is_absolute() || c.file.find("..") != std::string::npos)
        fail(o.at("file"), "give a file name inside the task folder");
    if (fs::path(c.file).extension() != ".cu")
        fail(o.at("file"), "a candidate is a .cu file");
    if (ctx.dir && !ctx.dir->empty() && !fs::exists(*ctx.dir / c.file))
        fail(o.at("file"), "file \"" + c.file + "\" does not exist in the task folder " + ctx.dir->string());
    c.description = o.stringOr("description", "");
    if (const Json* d = o.optional("defines"))
        parseDefines(*d, o.at("defines"), c.defines);

    std::set<std::string> tensorNames = ctx.tensors;
    if (const Json* s = o.optional("scratch")) {
        const Json& a = jr::asArray(*s, o.at("scratch"));
        for (size_t i = 0; i < a.size(); ++i) {
            std::string p = jr::child(o.at("scratch"), i);
            Object so(a[i], p);
            Scratch sc;
            sc.name = identifier(so.required("name"), so.at("name"), "scratch name");
            if (tensorNames.count(sc.name))
                fail(so.at("name"), "\"" + sc.name + "\" is already the name of a tensor");
            std::string dt = so.string("dtype");
            auto parsed = parseDType(dt);
            if (!parsed)
                fail(so.at("dtype"), "unknown dtype \"" + dt + "\"; use one of: " + dtypeNames());
            sc.dtype = *parsed;
            sc.count = expression(so.required("count"), so.at("count"), ctx, "scratch count");
            sc.zero = so.booleanOr("zero", true);
            so.finish();
            tensorNames.insert(sc.name);
            c.scratch.push_back(std::move(sc));
        }
    }

    const Json& launches = jr::asArray(o.required("launches"), o.at("launches"));
    if (launches.empty())
        fail(o.at("launches"), "a candidate needs at least one launch");
    for (size_t i = 0; i < launches.size(); ++i) {
        std::string p = jr::child(o.at("launches"), i);
        Object lo(launches[i], p);
        Launch l;
        l.kernel = lo.string("kernel");
        if (l.kernel.empty())
            fail(lo.at("kernel"), "give the kernel's name (a C++ name expression such as \"softmax<256>\")");
        parseDims(lo.required("grid"), lo.at("grid"), ctx, l.grid, "grid");
        parseDims(lo.required("block"), lo.at("block"), ctx, l.block, "block");
        const Json* sh = lo.optional("shared_bytes");
        l.sharedBytes = sh ? expression(*sh, lo.at("shared_bytes"), ctx, "shared_bytes") : Expr::constant(Value::integer(0));
        const Json& args = jr::asArray(lo.required("args"), lo.at("args"));
        for (size_t k = 0; k < args.size(); ++k) {
            std::string ap = jr::child(lo.at("args"), k);
            LaunchArg arg;
            if (args[k].is_string()) {
                arg.kind = LaunchArg::Kind::Tensor;
                arg.tensor = args[k];
            } else {
                Object ao(args[k], ap);
                if (ao.has("tensor") == ao.has("scalar"))
                    fail(ap, "an argument is a tensor name, {\"tensor\": name} or {\"scalar\": expression, \"type\": ...}");
                if (ao.has("tensor")) {
                    arg.kind = LaunchArg::Kind::Tensor;
                    arg.tensor = ao.string("tensor");
                } else {
                    arg.kind = LaunchArg::Kind::Scalar;
                    arg.scalar = expression(ao.required("scalar"), ao.at("scalar"), ctx, "scalar argument");
                    arg.scalarType = ao.stringOr("type", "int32");
                    static const std::set<std::string> types = {"int32", "int64", "uint32", "uint64", "fp32", "fp64"};
                    if (!types.count(arg.scalarType))
                        fail(ao.at("type"), "scalar type \"" + arg.scalarType + "\" is not one of int32, int64, uint32, uint64, fp32, fp64");
                }
                ao.finish();
            }
            if (arg.kind == LaunchArg::Kind::Tensor && !tensorNames.count(arg.tensor))
                fail(ap, "\"" + arg.tensor + "\" is not an input, output or scratch buffer of this task (known: " +
                             joined({tensorNames.begin(), tensorNames.end()}) + ")");
            l.args.push_back(std::move(arg));
        }
        lo.finish();
        c.launches.push_back(std::move(l));
    }
    o.finish();
    return c;
}

ShapeBinding parseBinding(const Json& v, const std::string& ptr, const Task& task)
{
    Object o(v, ptr);
    ShapeBinding b;
    b.label = o.stringOr("label", "");
    for (const auto& s : task.symbols) {
        std::int64_t value = o.integer(s.name);
        std::string p = o.at(s.name);
        if (value < s.min || value > s.max)
            fail(p, s.name + " = " + std::to_string(value) + " is outside its range [" + std::to_string(s.min) + ", " +
                        std::to_string(s.max) + "] declared in /symbols");
        if (value % s.multipleOf != 0)
            fail(p, s.name + " = " + std::to_string(value) + " is not a multiple of " + std::to_string(s.multipleOf) +
                        " as /symbols/" + s.name + " requires");
        b.values[s.name] = value;
    }
    for (auto it = v.begin(); it != v.end(); ++it)
        if (it.key() != "label" && !b.values.count(it.key()))
            fail(jr::child(ptr, it.key()), "\"" + it.key() + "\" is not a declared symbol (declare it in /symbols)");
    Env env = task.environment(b);
    for (size_t i = 0; i < task.constraints.size(); ++i) {
        auto r = task.constraints[i].eval(env);
        if (!r)
            fail(ptr, "constraint \"" + task.constraints[i].text() + "\": " + r.error().why);
        if (r->asDouble() == 0.0)
            fail(ptr, "this shape (" + b.describe() + ") violates the constraint \"" + task.constraints[i].text() + "\"");
    }
    return b;
}

// Launch plans are evaluated on every binding now, so a plan that cannot launch for some shape
// is reported when the task is opened, not halfway through a GPU run.
void checkLaunches(const Task& task, const std::string& candidatesPtr)
{
    std::vector<const ShapeBinding*> all;
    for (const auto& s : task.testShapes)
        all.push_back(&s);
    for (const auto& s : task.benchmarkShapes)
        all.push_back(&s);
    for (size_t ci = 0; ci < task.candidates.size(); ++ci) {
        const Candidate& c = task.candidates[ci];
        for (size_t li = 0; li < c.launches.size(); ++li) {
            const Launch& l = c.launches[li];
            std::string lp = jr::child(jr::child(jr::child(candidatesPtr, ci), "launches"), li);
            for (const ShapeBinding* b : all) {
                Env env = task.environment(*b);
                if (auto g = evaluateLaunch(task, l, *b); !g)
                    fail(jr::child(lp, g.error().pointer), g.error().why);
                for (size_t ai = 0; ai < l.args.size(); ++ai) {
                    if (l.args[ai].kind != LaunchArg::Kind::Scalar)
                        continue;
                    auto v = l.args[ai].scalar.eval(env);
                    if (!v)
                        fail(jr::child(jr::child(lp, "args"), ai), "for " + b->describe() + ": " + v.error().why);
                }
            }
            for (size_t si = 0; si < c.scratch.size(); ++si) {
                for (const ShapeBinding* b : all) {
                    auto n = c.scratch[si].count.evalInt(task.environment(*b));
                    if (!n || *n < 0)
                        fail(jr::child(jr::child(jr::child(candidatesPtr, ci), "scratch"), si),
                             "for " + b->describe() + ": " + (n ? "negative element count" : n.error().why));
                }
            }
        }
    }
}

Task parseTaskOrThrow(const Json& j, const fs::path& dir)
{
    Object o(j, "");
    Task t;
    t.directory = dir;
    std::int64_t version = o.integer("schema_version");
    if (version != kTaskSchemaVersion)
        fail(o.at("schema_version"), "schema_version " + std::to_string(version) + " is not supported; this KernelForge reads version " +
                                         std::to_string(kTaskSchemaVersion));
    t.name = o.string("name");
    static const std::regex nameRe("^[A-Za-z0-9_][A-Za-z0-9_-]*$");
    if (!std::regex_match(t.name, nameRe))
        fail(o.at("name"), "the name may hold letters, digits, '_' and '-' only");
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

    Ctx ctx;
    ctx.dir = &t.directory;
    if (const Json* p = o.optional("parameters")) {
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

    if (const Json* c = o.optional("constraints")) {
        const Json& a = jr::asArray(*c, o.at("constraints"));
        for (size_t i = 0; i < a.size(); ++i)
            t.constraints.push_back(expression(a[i], jr::child(o.at("constraints"), i), ctx, "constraint"));
    }

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

    {
        Object so(o.required("shapes"), o.at("shapes"));
        const Json& tests = jr::asArray(so.required("tests"), so.at("tests"));
        if (tests.empty())
            fail(so.at("tests"), "give at least one test shape (include awkward sizes: 1, primes, tails)");
        for (size_t i = 0; i < tests.size(); ++i)
            t.testShapes.push_back(parseBinding(tests[i], jr::child(so.at("tests"), i), t));
        if (const Json* b = so.optional("benchmarks")) {
            const Json& bench = jr::asArray(*b, so.at("benchmarks"));
            for (size_t i = 0; i < bench.size(); ++i)
                t.benchmarkShapes.push_back(parseBinding(bench[i], jr::child(so.at("benchmarks"), i), t));
        }
        so.finish();
    }

    t.reference = parseReference(o.required("reference"), o.at("reference"), t);
    if (t.reference.kind == Reference::Kind::TorchScript && !dir.empty() && !fs::exists(dir / t.reference.torchscript))
        fail(jr::child(o.at("reference"), "torchscript"), "file \"" + t.reference.torchscript.string() + "\" does not exist in " + dir.string());

    if (const Json* c = o.optional("compile")) {
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
            for (size_t i = 0; i < t.compile.includeDirs.size(); ++i) {
                // Inside the task folder and below it: the headers are part of the evidence (the
                // task hash covers them) and travel with a promoted kernel.
                const fs::path inc = fs::path(t.compile.includeDirs[i]).lexically_normal();
                if (inc.empty() || inc.is_absolute() || inc == "." || inc.string().rfind("..", 0) == 0)
                    fail(jr::child(co.at("include_dirs"), i),
                         "include folder \"" + t.compile.includeDirs[i] +
                             "\" must be a subfolder of the task folder (no absolute path, \".\" or \"..\"); "
                             "copy shared headers into one, e.g. \"include\"");
                if (!dir.empty() && !fs::is_directory(dir / t.compile.includeDirs[i]))
                    fail(jr::child(co.at("include_dirs"), i), "folder \"" + t.compile.includeDirs[i] + "\" does not exist in " + dir.string());
            }
        }
        if (const Json* opt = co.optional("options"))
            t.compile.extraOptions = jr::asStringArray(*opt, co.at("options"));
        co.finish();
    }

    {
        const Json& a = jr::asArray(o.required("candidates"), o.at("candidates"));
        if (a.empty())
            fail(o.at("candidates"), "list at least one candidate kernel file with its launch plan");
        std::set<std::string> files;
        for (size_t i = 0; i < a.size(); ++i) {
            std::string p = jr::child(o.at("candidates"), i);
            Candidate c = parseCandidate(a[i], p, ctx);
            if (!files.insert(c.file).second)
                fail(jr::child(p, "file"), "candidate \"" + c.file + "\" is listed twice");
            t.candidates.push_back(std::move(c));
        }
    }

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

Json exprJson(const Expr& e)
{
    auto v = e.symbols().empty() ? e.eval({}) : Result<Value>(Error{});
    if (v && v->isInt && e.text() == std::to_string(v->i))
        return v->i;
    return e.text();
}

Json definesJson(const std::vector<std::pair<std::string, std::string>>& d)
{
    Json o = Json::object();
    for (const auto& [k, v] : d)
        o[k] = v;
    return o;
}

} // namespace

std::string_view distributionKindName(Distribution::Kind k)
{
    switch (k) {
    case Distribution::Kind::Normal: return "normal";
    case Distribution::Kind::Uniform: return "uniform";
    case Distribution::Kind::HeavyTailed: return "heavy_tailed";
    case Distribution::Kind::MixedScales: return "mixed_scales";
    case Distribution::Kind::IntRange: return "int_range";
    case Distribution::Kind::Special: return "special";
    }
    return "normal";
}

Json Distribution::toJson() const
{
    Json j = {{"kind", std::string(distributionKindName(kind))}};
    switch (kind) {
    case Kind::Normal: j["mean"] = mean; j["std"] = std; break;
    case Kind::Uniform: j["low"] = low; j["high"] = high; break;
    case Kind::HeavyTailed: j["dof"] = dof; j["scale"] = scale; break;
    case Kind::MixedScales: j["scales"] = scales; break;
    case Kind::IntRange: j["low"] = static_cast<std::int64_t>(low); j["high"] = static_cast<std::int64_t>(high); break;
    case Kind::Special: {
        Json vals = Json::array();
        for (double v : specialValues) {
            if (std::isnan(v))
                vals.push_back("nan");
            else if (std::isinf(v))
                vals.push_back(v > 0 ? "inf" : "-inf");
            else
                vals.push_back(v);
        }
        j["values"] = vals;
        j["fraction"] = fraction;
        break;
    }
    }
    return j;
}

Tolerance Tolerance::defaultFor(DType t)
{
    // torch.testing.assert_close defaults; atol is scaled by the reference RMS (docs/verification.md 7).
    switch (t) {
    case DType::F64: return {1e-7, 1e-7, AtolMode::Rms};
    case DType::F32: return {1.3e-6, 1e-5, AtolMode::Rms};
    case DType::F16: return {1e-3, 1e-5, AtolMode::Rms};
    case DType::BF16: return {1.6e-2, 1e-5, AtolMode::Rms};
    default: return {0.0, 0.0, AtolMode::Absolute};
    }
}

Result<LaunchGeometry> evaluateLaunch(const Task& task, const Launch& launch, const ShapeBinding& shape)
{
    // Error::pointer names the launch's field at fault, so the task validator can point at it.
    auto bad = [&](const char* field, const std::string& why) {
        return Error{"configure " + launch.kernel + " at " + shape.describe(), why, "", {}, field};
    };
    const Env env = task.environment(shape);
    const std::string at = "for " + shape.describe();
    static const std::int64_t gridMax[3] = {2147483647, 65535, 65535};
    LaunchGeometry g;
    std::int64_t threads = 1;
    for (int d = 0; d < 3; ++d) {
        auto gv = launch.grid[d].evalInt(env);
        if (!gv)
            return bad("grid", at + ": " + gv.error().why);
        if (*gv < 1 || *gv > gridMax[d])
            return bad("grid", at + " grid dimension " + std::to_string(d) + " is " + std::to_string(*gv) + ", outside [1, " +
                                   std::to_string(gridMax[d]) + "]");
        auto bv = launch.block[d].evalInt(env);
        if (!bv)
            return bad("block", at + ": " + bv.error().why);
        if (*bv < 1)
            return bad("block", at + " block dimension " + std::to_string(d) + " is " + std::to_string(*bv));
        g.grid[d] = *gv;
        g.block[d] = *bv;
        threads *= *bv;
    }
    if (threads > 1024)
        return bad("block", at + " the block has " + std::to_string(threads) + " threads; CUDA allows at most 1024");
    auto sh = launch.sharedBytes.evalInt(env);
    if (!sh || *sh < 0)
        return bad("shared_bytes", at + ": " + (sh ? "negative dynamic shared memory" : sh.error().why));
    g.sharedBytes = *sh;
    return g;
}

std::string ShapeBinding::describe() const
{
    std::string s;
    for (const auto& [k, v] : values)
        s += (s.empty() ? "" : " ") + k + "=" + std::to_string(v);
    return s;
}

const TensorSpec* Task::findTensor(std::string_view name) const
{
    for (const auto& t : inputs)
        if (t.name == name)
            return &t;
    for (const auto& t : outputs)
        if (t.name == name)
            return &t;
    return nullptr;
}

const Candidate* Task::findCandidate(std::string_view file) const
{
    for (const auto& c : candidates)
        if (c.file == file || fs::path(c.file).filename() == fs::path(file).filename())
            return &c;
    return nullptr;
}

Env Task::environment(const ShapeBinding& shape) const
{
    Env env;
    for (const auto& [k, v] : parameters)
        env[k] = v;
    for (const auto& [k, v] : shape.values)
        env[k] = Value::integer(v);
    return env;
}

Result<std::vector<std::int64_t>> Task::extents(const TensorSpec& t, const ShapeBinding& shape) const
{
    std::vector<std::int64_t> out;
    for (const auto& d : t.shape) {
        if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) {
            out.push_back(std::stoll(d));
            continue;
        }
        auto it = shape.values.find(d);
        if (it == shape.values.end())
            return Error{"bind the shape of " + t.name, "symbol " + d + " is not bound by shape " + shape.describe(), "", {}, {}};
        out.push_back(it->second);
    }
    return out;
}

Result<void> Task::admits(const ShapeBinding& shape) const
{
    const std::string what = "check shape " + shape.describe();
    for (const SymbolSpec& s : symbols) {
        auto it = shape.values.find(s.name);
        if (it == shape.values.end())
            return Error{what, "symbol " + s.name + " is not bound", "bind every symbol declared in /symbols", {}, {}};
        const std::int64_t v = it->second;
        if (v < s.min || v > s.max)
            return Error{what, s.name + " = " + std::to_string(v) + " is outside its range [" + std::to_string(s.min) + ", " +
                                   std::to_string(s.max) + "]", {}, {}, {}};
        if (s.multipleOf > 1 && v % s.multipleOf != 0)
            return Error{what, s.name + " = " + std::to_string(v) + " is not a multiple of " + std::to_string(s.multipleOf), {}, {}, {}};
    }
    const Env env = environment(shape);
    for (const Expr& c : constraints) {
        auto r = c.eval(env);
        if (!r)
            return Error{what, "constraint \"" + c.text() + "\" cannot be evaluated: " + r.error().why, {}, {}, {}};
        if (r->asDouble() == 0.0)
            return Error{what, "violates the constraint \"" + c.text() + "\"", {}, {}, {}};
    }
    for (const auto* list : {&inputs, &outputs})
        for (const TensorSpec& t : *list)
            if (auto e = extents(t, shape); !e)
                return Error{what, e.error().why, {}, {}, {}};
    return {};
}

std::int64_t Task::totalElements(const ShapeBinding& shape) const
{
    std::int64_t total = 0;
    for (const auto* list : {&inputs, &outputs})
        for (const TensorSpec& t : *list) {
            auto ext = extents(t, shape);
            if (!ext)
                return -1;
            std::int64_t n = 1;
            for (std::int64_t e : ext.value())
                n *= e;
            total += n;
        }
    return total;
}

Result<ShapeBinding> parseShapeText(const Task& task, const std::string& text)
{
    auto bad = [&](const std::string& why) {
        return Error{"read the shape \"" + text + "\"", why, "write it as SYMBOL=VALUE pairs, e.g. N=4099,B=2", {}, {}};
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
        return Error{"read task", e.message, "see docs/task-schema.md", origin, e.pointer};
    }
}

Result<Task> loadTask(const fs::path& dirOrFile)
{
    fs::path file = dirOrFile;
    std::error_code ec;
    if (fs::is_directory(dirOrFile, ec))
        file = dirOrFile / "task.json";
    if (!fs::exists(file, ec))
        return Error{"open task", "no task.json found", "a task folder holds task.json and its candidate .cu files",
                     file.string(), {}};
    auto j = jr::readFile(file);
    if (!j)
        return j.error();
    return parseTask(*j, file.string(), file.parent_path());
}

Json taskToJson(const Task& t)
{
    Json j;
    j["schema_version"] = t.schemaVersion;
    j["name"] = t.name;
    if (!t.description.empty())
        j["description"] = t.description;
    j["architectures"] = t.architectures;
    if (!t.parameters.empty()) {
        Json p = Json::object();
        for (const auto& [k, v] : t.parameters)
            p[k] = v.isInt ? Json(v.i) : Json(v.d);
        j["parameters"] = p;
    }
    Json syms = Json::object();
    for (const auto& s : t.symbols)
        syms[s.name] = {{"min", s.min}, {"max", s.max}, {"multiple_of", s.multipleOf}};
    j["symbols"] = syms;
    if (!t.constraints.empty()) {
        Json c = Json::array();
        for (const auto& e : t.constraints)
            c.push_back(e.text());
        j["constraints"] = c;
    }
    auto tensorJson = [](const TensorSpec& ts, bool input) {
        Json s = Json::array();
        for (const auto& d : ts.shape) {
            if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0])))
                s.push_back(std::stoll(d));
            else
                s.push_back(d);
        }
        Json o = {{"name", ts.name}, {"dtype", std::string(dtypeName(ts.dtype))}, {"shape", s}};
        if (input) {
            Json d = Json::array();
            for (const auto& dist : ts.distributions)
                d.push_back(dist.toJson());
            o["distributions"] = d;
        } else if (ts.toleranceGiven) {
            o["tolerance"] = {{"rtol", ts.tolerance.rtol}, {"atol", ts.tolerance.atol},
                              {"atol_mode", ts.tolerance.atolMode == Tolerance::AtolMode::Rms ? "rms" : "absolute"}};
        }
        return o;
    };
    j["inputs"] = Json::array();
    for (const auto& ts : t.inputs)
        j["inputs"].push_back(tensorJson(ts, true));
    j["outputs"] = Json::array();
    for (const auto& ts : t.outputs)
        j["outputs"].push_back(tensorJson(ts, false));
    auto bindings = [](const std::vector<ShapeBinding>& v) {
        Json a = Json::array();
        for (const auto& b : v) {
            Json o = Json::object();
            if (!b.label.empty())
                o["label"] = b.label;
            for (const auto& [k, val] : b.values)
                o[k] = val;
            a.push_back(o);
        }
        return a;
    };
    j["shapes"] = {{"tests", bindings(t.testShapes)}, {"benchmarks", bindings(t.benchmarkShapes)}};
    const Reference& r = t.reference;
    auto stepJson = [](const OpStep& s, bool withOutput) {
        Json o = {{"op", s.op}, {"inputs", s.inputs}};
        if (!s.attrs.empty())
            o["attrs"] = s.attrs;
        if (withOutput)
            o["output"] = s.output;
        return o;
    };
    if (r.kind == Reference::Kind::Op) {
        j["reference"] = stepJson(r.steps.at(0), false);
    } else if (r.kind == Reference::Kind::Tape) {
        Json tape = Json::array();
        for (const auto& s : r.steps)
            tape.push_back(stepJson(s, true));
        j["reference"] = {{"tape", tape}};
    } else {
        j["reference"] = {{"torchscript", r.torchscript.string()}, {"inputs", r.scriptInputs}};
    }
    const CompileSettings defaults;
    Json comp = Json::object();
    if (t.compile.cxxStd != defaults.cxxStd)
        comp["std"] = t.compile.cxxStd;
    if (t.compile.fastMath)
        comp["fast_math"] = true;
    if (!t.compile.defines.empty())
        comp["defines"] = definesJson(t.compile.defines);
    if (!t.compile.includeDirs.empty())
        comp["include_dirs"] = t.compile.includeDirs;
    if (!t.compile.extraOptions.empty())
        comp["options"] = t.compile.extraOptions;
    if (!comp.empty())
        j["compile"] = comp;
    j["candidates"] = Json::array();
    for (const auto& c : t.candidates) {
        Json cj = {{"file", c.file}};
        if (!c.description.empty())
            cj["description"] = c.description;
        if (!c.defines.empty())
            cj["defines"] = definesJson(c.defines);
        if (!c.scratch.empty()) {
            Json s = Json::array();
            for (const auto& sc : c.scratch)
                s.push_back({{"name", sc.name}, {"dtype", std::string(dtypeName(sc.dtype))}, {"count", exprJson(sc.count)}, {"zero", sc.zero}});
            cj["scratch"] = s;
        }
        Json ls = Json::array();
        for (const auto& l : c.launches) {
            Json lj = {{"kernel", l.kernel}};
            lj["grid"] = {exprJson(l.grid[0]), exprJson(l.grid[1]), exprJson(l.grid[2])};
            lj["block"] = {exprJson(l.block[0]), exprJson(l.block[1]), exprJson(l.block[2])};
            lj["shared_bytes"] = exprJson(l.sharedBytes);
            Json args = Json::array();
            for (const auto& a : l.args) {
                if (a.kind == LaunchArg::Kind::Tensor)
                    args.push_back(a.tensor);
                else
                    args.push_back({{"scalar", exprJson(a.scalar)}, {"type", a.scalarType}});
            }
            lj["args"] = args;
            ls.push_back(lj);
        }
        cj["launches"] = ls;
        j["candidates"].push_back(cj);
    }
    if (!t.bytesFormula.empty() || !t.flopsFormula.empty()) {
        Json c = Json::object();
        if (!t.bytesFormula.empty())
            c["bytes"] = exprJson(t.bytesFormula);
        if (!t.flopsFormula.empty())
            c["flops"] = exprJson(t.flopsFormula);
        j["cost"] = c;
    }
    return j;
}

} // namespace kf
