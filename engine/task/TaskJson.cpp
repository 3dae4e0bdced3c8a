// Task -> JSON: the writer behind the task editor's raw view and saved files; it writes what the
// parser (TaskParse.cpp) reads, and tst_task round-trips every example through both.
#include "engine/task/Task.h"

namespace kf {

using Json = nlohmann::json;

namespace {

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

namespace {

Json tensorJson(const TensorSpec& ts, bool input)
{
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
}

Json bindingsJson(const std::vector<ShapeBinding>& v)
{
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
}

Json stepJson(const OpStep& s, bool withOutput)
{
    Json o = {{"op", s.op}, {"inputs", s.inputs}};
    if (!s.attrs.empty())
        o["attrs"] = s.attrs;
    if (withOutput)
        o["output"] = s.output;
    return o;
}

/// "reference": one op, a tape of steps, or a TorchScript file with its inputs.
Json referenceJson(const Reference& r)
{
    if (r.kind == Reference::Kind::Op)
        return stepJson(r.steps.at(0), false);
    if (r.kind == Reference::Kind::Tape) {
        Json tape = Json::array();
        for (const auto& s : r.steps)
            tape.push_back(stepJson(s, true));
        return {{"tape", tape}};
    }
    return {{"torchscript", r.torchscript.string()}, {"inputs", r.scriptInputs}};
}

/// "compile": only what differs from the defaults.
Json compileJson(const CompileSettings& compile)
{
    const CompileSettings defaults;
    Json comp = Json::object();
    if (compile.cxxStd != defaults.cxxStd)
        comp["std"] = compile.cxxStd;
    if (compile.fastMath)
        comp["fast_math"] = true;
    if (!compile.defines.empty())
        comp["defines"] = definesJson(compile.defines);
    if (!compile.includeDirs.empty())
        comp["include_dirs"] = compile.includeDirs;
    if (!compile.extraOptions.empty())
        comp["options"] = compile.extraOptions;
    return comp;
}

Json launchJson(const Launch& l)
{
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
    return lj;
}

Json tuneJson(const TuneSpace& t)
{
    Json space = Json::object();
    for (const auto& [name, values] : t.params) {
        Json list = Json::array();
        for (const auto& v : values)
            list.push_back(macroValueJson(v));
        space[name] = list;
    }
    Json out = {{"space", space}};
    if (!t.where.empty()) {
        Json where = Json::array();
        for (const auto& e : t.where)
            where.push_back(e.text());
        out["where"] = where;
    }
    return out;
}

Json candidateJson(const Candidate& c)
{
    Json cj = {{"file", c.file}};
    if (!c.description.empty())
        cj["description"] = c.description;
    if (!c.defines.empty())
        cj["defines"] = definesJson(c.defines);
    if (!c.tune.empty())
        cj["tune"] = tuneJson(c.tune);
    if (!c.scratch.empty()) {
        Json s = Json::array();
        for (const auto& sc : c.scratch)
            s.push_back({{"name", sc.name}, {"dtype", std::string(dtypeName(sc.dtype))}, {"count", exprJson(sc.count)}, {"zero", sc.zero}});
        cj["scratch"] = s;
    }
    Json ls = Json::array();
    for (const auto& l : c.launches)
        ls.push_back(launchJson(l));
    cj["launches"] = ls;
    return cj;
}

} // namespace

Json macroValueJson(const std::string& text)
{
    Json parsed = Json::parse(text, nullptr, false);
    if (!parsed.is_discarded() && (parsed.is_number() || parsed.is_boolean()) && parsed.dump() == text)
        return parsed;
    return text;
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
    j["inputs"] = Json::array();
    for (const auto& ts : t.inputs)
        j["inputs"].push_back(tensorJson(ts, true));
    j["outputs"] = Json::array();
    for (const auto& ts : t.outputs)
        j["outputs"].push_back(tensorJson(ts, false));
    j["shapes"] = {{"tests", bindingsJson(t.testShapes)}, {"benchmarks", bindingsJson(t.benchmarkShapes)}};
    j["reference"] = referenceJson(t.reference);
    if (Json comp = compileJson(t.compile); !comp.empty())
        j["compile"] = comp;
    j["candidates"] = Json::array();
    for (const auto& c : t.candidates)
        j["candidates"].push_back(candidateJson(c));
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
