// task.json's field parsers: input distributions and their defaults, output tolerances, candidates
// (launch plans, defines), shape bindings, and the check that every launch plan evaluates at every
// listed shape. Part of the task parser (TaskParse.cpp).
#include "engine/task/TaskParseInternal.h"

#include "engine/core/Architectures.h"
#include "engine/task/OpCatalog.h"
#include "engine/task/TaskFiles.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <limits>

namespace fs = std::filesystem;

namespace kf::taskparse {

namespace jr = kf::json;
using Json = nlohmann::json;
using jr::fail;
using jr::Object;
using jr::SchemaError;

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

void parseDefines(const Json& v, const std::string& ptr, std::vector<std::pair<std::string, std::string>>& out)
{
    Object o(v, ptr);
    for (auto it = v.begin(); it != v.end(); ++it) {
        std::string p = jr::child(ptr, it.key());
        if (!isIdentifier(it.key()))
            fail(p, "macro name \"" + it.key() + "\" is not an identifier");
        const Json& val = o.required(it.key());
        if (val.is_string()) {
            // One line: a newline would end the definition and start a directive of its own.
            if (val.get<std::string>().find_first_of("\n\r") != std::string::npos)
                fail(p, "a macro value must be one line; found a line break");
            out.emplace_back(it.key(), val.get<std::string>());
        }
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

namespace {

/// A value of a tune list: a number or one line of macro text, as "defines" takes them.
std::string tuneValue(const Json& v, const std::string& ptr)
{
    if (v.is_string()) {
        const std::string text = v.get<std::string>();
        if (text.empty() || text.find_first_of("\n\r") != std::string::npos)
            fail(ptr, "a value to try is a number or one line of macro text");
        return text;
    }
    if (v.is_number() || v.is_boolean())
        return v.dump();
    fail(ptr, "a value to try is a number or a string, found " + jr::describe(v));
}

} // namespace

/// "tune": {"space": {"BLOCK": [128, 256], ...}, "where": ["BLOCK * VEC <= 2048"]}: every name a
/// define of the candidate (its value is the default point), every list non-empty without repeats.
TuneSpace parseTune(const Json& v, const std::string& ptr, const Candidate& c, const Ctx& ctx)
{
    Object o(v, ptr);
    TuneSpace t;
    const Json& space = o.required("space");
    Object so(space, o.at("space"));
    if (space.empty())
        fail(o.at("space"), "name at least one define and the values to try, e.g. {\"BLOCK\": [128, 256, 512]}");
    for (auto it = space.begin(); it != space.end(); ++it) {
        const std::string p = jr::child(o.at("space"), it.key());
        if (!c.define(it.key()))
            fail(p, "\"" + it.key() + "\" is not one of this candidate's defines; add it to \"defines\" with the value to "
                    "use when not tuning");
        if (ctx.symbols.count(it.key()) || ctx.params.count(it.key()))
            fail(p, "\"" + it.key() + "\" is also a shape symbol or parameter of the task; give the define another name");
        const Json& values = jr::asArray(so.required(it.key()), p);
        if (values.empty())
            fail(p, "give at least one value to try");
        std::vector<std::string> list;
        for (size_t i = 0; i < values.size(); ++i) {
            std::string value = tuneValue(values[i], jr::child(p, i));
            if (std::find(list.begin(), list.end(), value) != list.end())
                fail(jr::child(p, i), "the value " + value + " is listed twice");
            list.push_back(std::move(value));
        }
        t.params.emplace_back(it.key(), std::move(list));
    }
    so.finish();
    if (const Json* w = o.optional("where")) {
        Ctx scope = ctx;
        for (const auto& [name, value] : c.defines)
            scope.params.insert(name);
        const Json& a = jr::asArray(*w, o.at("where"));
        for (size_t i = 0; i < a.size(); ++i)
            t.where.push_back(expression(a[i], jr::child(o.at("where"), i), scope, "tune condition"));
    }
    o.finish();
    return t;
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
    // A link out of the folder would compile, hash and promote another file (engine/task/TaskFiles.h).
    if (ctx.dir && !ctx.dir->empty())
        if (auto inside = resolveTaskFile(*ctx.dir, c.file); !inside)
            fail(o.at("file"), inside.error().why + "; " + inside.error().hint);
    c.description = o.stringOr("description", "");
    if (const Json* d = o.optional("defines"))
        parseDefines(*d, o.at("defines"), c.defines);
    if (const Json* t = o.optional("tune"))
        c.tune = parseTune(*t, o.at("tune"), c, ctx);
    // The launch plan and scratch counts may name the candidate's numeric defines (what tune varies).
    Ctx ctxWithDefines = ctx;
    for (const auto& [name, value] : c.constants())
        ctxWithDefines.params.insert(name);
    return parseCandidateBody(o, std::move(c), ctxWithDefines);
}

Candidate parseCandidateBody(Object& o, Candidate c, const Ctx& ctx)
{
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
    // Every tensor's size in bytes must be countable (admits() says which one is not).
    if (auto ok = task.admits(b); !ok)
        fail(ptr, "this shape (" + b.describe() + "): " + ok.error().why);
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
                Env env = task.environment(c, *b);
                if (auto g = evaluateLaunch(task, c, l, *b); !g)
                    fail(jr::child(lp, g.error().pointer), g.error().why);
                for (size_t ai = 0; ai < l.args.size(); ++ai) {
                    if (l.args[ai].kind != LaunchArg::Kind::Scalar)
                        continue;
                    auto v = l.args[ai].scalar.eval(env);
                    if (!v)
                        fail(jr::child(jr::child(lp, "args"), ai), "for " + b->describe() + ": " + v.error().why);
                    // An integer parameter takes an integer: "1.5" for an int32 would be cut to 1.
                    const std::string& type = l.args[ai].scalarType;
                    if (type != "fp32" && type != "fp64" && !v->isInt && (!std::isfinite(v->d) || v->d != std::trunc(v->d))) {
                        char value[32];
                        std::snprintf(value, sizeof value, "%g", v->d);
                        fail(jr::child(jr::child(lp, "args"), ai), "for " + b->describe() + " the " + type +
                                                                       " argument evaluates to " + value +
                                                                       ", not an integer; use int(...) or a floating type "
                                                                       "(fp32, fp64)");
                    }
                }
            }
            for (size_t si = 0; si < c.scratch.size(); ++si) {
                for (const ShapeBinding* b : all) {
                    auto n = c.scratch[si].count.evalInt(task.environment(c, *b));
                    if (!n || *n < 0)
                        fail(jr::child(jr::child(jr::child(candidatesPtr, ci), "scratch"), si),
                             "for " + b->describe() + ": " + (n ? "negative element count" : n.error().why));
                }
            }
        }
    }
}

} // namespace kf::taskparse
