#include "engine/generate/Tape.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

namespace kf::gen {

namespace {

using Json = nlohmann::json;

const std::set<std::string, std::less<>> kBinary = {"add", "sub", "mul", "div"};
const std::set<std::string, std::less<>> kUnary = {"neg",  "abs",     "exp",  "log",  "sqrt", "rsqrt",
                                                   "tanh", "sigmoid", "relu", "silu", "gelu", "clone"};
const std::set<std::string, std::less<>> kRowReductions = {"sum", "mean", "amax"};
const std::set<std::string, std::less<>> kRowOps = {"softmax", "log_softmax", "rms_norm", "layer_norm"};

/// A refusal: the first unsupported step, named the way a compiler names a construct.
struct Refusal {
    std::string why;
};

std::string shapeText(const std::vector<std::string>& s)
{
    std::string t = "[";
    for (size_t i = 0; i < s.size(); ++i)
        t += (i ? ", " : "") + s[i];
    return t + "]";
}

std::string literalText(double v)
{
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

bool isOne(const std::string& d) { return d == "1"; }

std::vector<std::string> stripLeadingOnes(std::vector<std::string> s)
{
    auto it = std::find_if_not(s.begin(), s.end(), isOne);
    s.erase(s.begin(), it);
    return s;
}

/// PyTorch's broadcast of two shapes, symbolically: aligned trailing extents must be equal or 1.
std::optional<std::vector<std::string>> broadcast(const std::vector<std::string>& a, const std::vector<std::string>& b)
{
    const size_t n = std::max(a.size(), b.size());
    std::vector<std::string> out(n);
    for (size_t i = 0; i < n; ++i) {
        const std::string* x = i < a.size() ? &a[a.size() - 1 - i] : nullptr;
        const std::string* y = i < b.size() ? &b[b.size() - 1 - i] : nullptr;
        std::string r;
        if (!x || isOne(*x))
            r = y ? *y : "1";
        else if (!y || isOne(*y) || *x == *y)
            r = *x;
        else
            return std::nullopt;
        out[n - 1 - i] = r;
    }
    return out;
}

/// Where a shape sits in the iteration space `full`; nullopt when it is none of the levels.
std::optional<std::pair<Level, int>> classify(const std::vector<std::string>& s, const std::vector<std::string>& full)
{
    if (s == full)
        return std::pair{Level::Element, 0};
    const auto core = stripLeadingOnes(s);
    if (core.empty())
        return std::pair{Level::Const, 0};
    const size_t r = full.size();
    if (core.size() < r && std::equal(core.begin(), core.end(), full.end() - static_cast<long>(core.size())))
        return std::pair{Level::Column, static_cast<int>(core.size())};
    if (s.size() == r) {
        size_t k = 0;
        while (k < r && isOne(s[r - 1 - k]) && !isOne(full[r - 1 - k]))
            ++k;
        if (k > 0 && std::equal(s.begin(), s.end() - static_cast<long>(k), full.begin()))
            return std::pair{Level::Row, static_cast<int>(k)};
    }
    return std::nullopt;
}

Level combine(Level a, Level b)
{
    if (a == b)
        return a;
    if (a == Level::Const)
        return b;
    if (b == Level::Const)
        return a;
    return Level::Element; // Column with Row, or anything with Element
}

/// PyTorch's promotion among the float types; a 0-dim tensor does not take part.
DType promote(DType a, DType b)
{
    if (a == b)
        return a;
    return DType::F32; // fp32 with anything, or fp16 with bf16
}

bool supportedStorage(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

std::string levelWord(Level l)
{
    switch (l) {
    case Level::Const: return "a constant";
    case Level::Row: return "one value per row";
    case Level::Column: return "one value per column";
    case Level::Element: return "one value per element";
    }
    return "";
}

class Builder {
public:
    Builder(const Task& task) : m_task(task) {}

    /// Throws Refusal for the current step.
    Tape build(const std::vector<OpStep>& steps, size_t& failedStep)
    {
        m_tape.task = m_task.name;
        pickIterationSpace(steps);
        for (size_t i = 0; i < steps.size(); ++i) {
            failedStep = i;
            addStep(steps[i]);
        }
        failedStep = steps.size();
        bindOutputs();
        return std::move(m_tape);
    }

private:
    void pickIterationSpace(const std::vector<OpStep>& steps)
    {
        // The widest input: the highest rank, then the fewest extents of 1 ([B, D] over [B, 1]),
        // so the order of a step's operands does not matter.
        std::set<std::string> produced;
        const TensorSpec* widest = nullptr;
        auto ones = [](const TensorSpec& t) { return std::count_if(t.shape.begin(), t.shape.end(), isOne); };
        for (const auto& s : steps) {
            for (const auto& in : s.inputs)
                if (!produced.count(in))
                    if (const TensorSpec* t = findInput(in))
                        if (!widest || t->shape.size() > widest->shape.size() ||
                            (t->shape.size() == widest->shape.size() && ones(*t) < ones(*widest)))
                            widest = t;
            produced.insert(s.output);
        }
        if (!widest)
            throw Refusal{"no step reads a task input"};
        m_tape.full = widest->shape;
    }

    const TensorSpec* findInput(const std::string& name) const
    {
        for (const auto& t : m_task.inputs)
            if (t.name == name)
                return &t;
        return nullptr;
    }

    int valueOf(const std::string& name)
    {
        if (auto it = m_index.find(name); it != m_index.end())
            return it->second;
        const TensorSpec* t = findInput(name);
        if (!t)
            throw Refusal{"\"" + name + "\" is neither a task input nor the output of an earlier step"};
        if (!supportedStorage(t->dtype))
            throw Refusal{"input " + name + " is " + std::string(dtypeName(t->dtype)) +
                          "; the generator reads fp32, fp16 and bf16 tensors"};
        auto where = classify(t->shape, m_tape.full);
        if (!where)
            throw Refusal{"input " + name + " " + shapeText(t->shape) + " broadcasts against " + shapeText(m_tape.full) +
                          " in a way one kernel does not index (the generator takes full tensors, trailing-dimension "
                          "vectors such as [D], per-row values such as [B, 1], and scalars)"};
        Value v;
        v.name = name;
        v.level = where->first;
        v.span = where->second;
        v.natural = t->dtype;
        v.shape = t->shape;
        v.input = static_cast<int>(t - m_task.inputs.data());
        return add(std::move(v));
    }

    int add(Value v)
    {
        const int id = static_cast<int>(m_tape.values.size());
        m_index[v.name] = id;
        m_tape.values.push_back(std::move(v));
        return id;
    }

    /// Whether a per-row value broadcasts along its row against the iteration space: the full
    /// rank, the leading extents of `full`, 1 over the row ([B, 1]); or, with a single row, any
    /// shape of 1s ([] or [1] against [1, D]).
    bool rowLayout(const Value& v) const
    {
        const auto& f = m_tape.full;
        const size_t lead = f.size() - static_cast<size_t>(std::min<int>(v.span, static_cast<int>(f.size())));
        const bool singleRow = std::all_of(f.begin(), f.begin() + static_cast<long>(lead), isOne);
        if (singleRow && std::all_of(v.shape.begin(), v.shape.end(), isOne) && v.shape.size() <= f.size())
            return true;
        return v.shape.size() == f.size() && std::equal(f.begin(), f.begin() + static_cast<long>(lead), v.shape.begin()) &&
               std::all_of(v.shape.begin() + static_cast<long>(lead), v.shape.end(), isOne);
    }

    void useRowDims(int k, const std::string& why)
    {
        if (m_tape.rowDims == 0)
            m_tape.rowDims = k;
        else if (m_tape.rowDims != k)
            throw Refusal{why + " reduces over the last " + std::to_string(k) + " dimension(s), but an earlier step " +
                          "reduced over the last " + std::to_string(m_tape.rowDims) + "; one kernel has one row shape"};
    }

    int lastAxis(const Json& attrs, const char* key, bool required, const std::string& op)
    {
        const int rank = static_cast<int>(m_tape.full.size());
        if (!attrs.is_object() || !attrs.contains(key) || attrs[key].is_null()) {
            if (required)
                throw Refusal{op + " over all dimensions is not supported; give \"dim\": -1 (a reduction over the last "
                                   "dimension)"};
            return 1;
        }
        const Json& d = attrs[key];
        if (!d.is_number_integer())
            throw Refusal{op + ": \"" + key + "\" must be an integer"};
        const std::int64_t dim = d.get<std::int64_t>();
        if (dim != -1 && dim != rank - 1)
            throw Refusal{op + " over dim " + std::to_string(dim) + " is not supported; the generator reduces over the "
                               "last dimension (dim -1)"};
        return 1;
    }

    static std::optional<double> number(const Json& attrs, const char* key)
    {
        if (attrs.is_object() && attrs.contains(key) && attrs[key].is_number())
            return attrs[key].get<double>();
        return std::nullopt;
    }
    static Operand operand(int id) { return Operand{id, 0.0}; }
    const Value& arg(const std::vector<int>& ins, size_t i) const { return m_tape.values[static_cast<size_t>(ins[i])]; }

    // addStep by kind of op: `ins` are the inputs' values; each fills the step's arguments, the
    // result's shape, level and dtype, and the step as the trace renders it.
    void binaryStep(const OpStep& s, const std::vector<int>& ins, Step& step, Value& out, std::string& rendered)
    {
        if (ins.size() == 2) {
            auto shape = broadcast(arg(ins, 0).shape, arg(ins, 1).shape);
            if (!shape)
                throw Refusal{s.inputs[0] + " " + shapeText(arg(ins, 0).shape) + " and " + s.inputs[1] + " " +
                              shapeText(arg(ins, 1).shape) + " do not broadcast"};
            out.shape = *shape;
            out.level = combine(arg(ins, 0).level, arg(ins, 1).level);
            out.span = std::max(arg(ins, 0).span, arg(ins, 1).span);
            // A per-row value is indexed by its row: it must broadcast along the row, so it
            // needs the full rank with trailing 1s ([B, 1], a keepdim reduction). [B] against
            // [B, D] would broadcast along the columns in PyTorch.
            for (size_t k = 0; k < 2; ++k) {
                const Value& v = arg(ins, k);
                if (v.level != Level::Row)
                    continue;
                const bool asRow = out.level == Level::Row ? v.shape == out.shape : rowLayout(v);
                if (!asRow)
                    throw Refusal{v.name + " " + shapeText(v.shape) + " holds one value per row but broadcasts as " +
                                  shapeText(out.shape) + " against " + s.inputs[1 - k] + " " +
                                  shapeText(arg(ins, 1 - k).shape) + "; give its reduction \"keepdim\": true so it "
                                  "broadcasts along the row"};
            }
            const bool zeroDim0 = arg(ins, 0).shape.empty(), zeroDim1 = arg(ins, 1).shape.empty();
            out.natural = zeroDim0 && !zeroDim1 ? arg(ins, 1).natural
                          : zeroDim1 && !zeroDim0 ? arg(ins, 0).natural
                                                  : promote(arg(ins, 0).natural, arg(ins, 1).natural);
            step.args = {operand(ins[0]), operand(ins[1])};
            rendered = s.op + "(" + s.inputs[0] + ", " + s.inputs[1] + ")";
        } else {
            auto scalar = number(s.attrs, "scalar");
            if (!scalar)
                throw Refusal{s.op + " with one input needs a numeric \"scalar\""};
            if (!std::isfinite(*scalar) || std::fabs(*scalar) > std::numeric_limits<float>::max())
                throw Refusal{"the scalar " + literalText(*scalar) + " is outside fp32's range; the generated "
                              "kernel computes in fp32"};
            out.shape = arg(ins, 0).shape;
            out.level = arg(ins, 0).level;
            out.span = arg(ins, 0).span;
            out.natural = arg(ins, 0).natural;
            step.args = {operand(ins[0]), Operand{-1, *scalar}};
            rendered = s.op + "(" + s.inputs[0] + ", " + literalText(*scalar) + ")";
        }
        if (out.level == Level::Element && out.shape != m_tape.full)
            throw Refusal{"the result " + shapeText(out.shape) + " is wider than the iteration space " +
                          shapeText(m_tape.full) + " of the task's widest input"};
    }

    void unaryStep(const OpStep& s, const std::vector<int>& ins, Step& step, Value& out, std::string& rendered)
    {
        out.shape = arg(ins, 0).shape;
        out.level = arg(ins, 0).level;
        out.span = arg(ins, 0).span;
        out.natural = arg(ins, 0).natural;
        step.args = {operand(ins[0])};
        rendered = s.op + "(" + s.inputs[0];
        if (s.op == "gelu") {
            if (s.attrs.is_object() && s.attrs.contains("approximate") && s.attrs["approximate"].is_string())
                step.approximate = s.attrs["approximate"].get<std::string>();
            if (step.approximate != "none" && step.approximate != "tanh")
                throw Refusal{"gelu: approximate must be \"none\" or \"tanh\""};
            if (step.approximate != "none")
                rendered += ", approximate=" + step.approximate;
        } else if (s.op == "to") {
            std::string name = s.attrs.is_object() && s.attrs.contains("dtype") && s.attrs["dtype"].is_string()
                                   ? s.attrs["dtype"].get<std::string>() : "";
            auto t = parseDType(name);
            if (!t || !supportedStorage(*t))
                throw Refusal{"to " + (name.empty() ? std::string("an unnamed dtype") : name) +
                              " is not supported; the generator converts to fp32, fp16 and bf16"};
            step.to = *t;
            out.natural = *t;
            rendered += ", " + name;
        }
        rendered += ")";
    }

    void rowStep(const OpStep& s, const std::vector<int>& ins, Step& step, Value& out, std::string& rendered)
    {
        // Reductions over the row: the input must span the rows.
        const Value& x = arg(ins, 0);
        if (x.level == Level::Row)
            throw Refusal{"it reduces " + x.name + ", which is already reduced to one value per row"};
        if (x.level != Level::Element)
            throw Refusal{"it reduces " + x.name + " " + shapeText(x.shape) + ", which holds " + levelWord(x.level) +
                          ", not a full tensor"};
        if (m_tape.full.empty())
            throw Refusal{s.op + " of a 0-dimensional tensor is not supported"};
        out.natural = x.natural;
        step.args = {operand(ins[0])};
        rendered = s.op + "(" + s.inputs[0];
        if (kRowReductions.count(s.op)) {
            useRowDims(lastAxis(s.attrs, "dim", true, s.op), "it");
            step.keepdim = s.attrs.is_object() && s.attrs.contains("keepdim") && s.attrs["keepdim"].is_boolean() &&
                           s.attrs["keepdim"].get<bool>();
            out.level = Level::Row;
            out.span = 1;
            out.shape.assign(m_tape.full.begin(), m_tape.full.end() - 1);
            if (step.keepdim)
                out.shape.push_back("1");
            rendered += ", dim=-1" + std::string(step.keepdim ? ", keepdim=True" : "");
        } else if (s.op == "softmax" || s.op == "log_softmax") {
            useRowDims(lastAxis(s.attrs, "dim", false, s.op), "it");
            out.level = Level::Element;
            out.shape = m_tape.full;
            rendered += ", dim=-1";
        } else {
            int nd = 1;
            if (s.attrs.is_object() && s.attrs.contains("normalized_dims") && s.attrs["normalized_dims"].is_number_integer())
                nd = s.attrs["normalized_dims"].get<int>();
            if (nd < 1 || nd > static_cast<int>(m_tape.full.size()))
                throw Refusal{s.op + ": normalized_dims " + std::to_string(nd) + " is not between 1 and the rank " +
                              std::to_string(m_tape.full.size())};
            useRowDims(nd, "it");
            for (size_t k = 1; k < ins.size(); ++k) {
                const Value& w = arg(ins, k);
                if (w.level != Level::Column || w.span != nd)
                    throw Refusal{s.op + ": " + w.name + " " + shapeText(w.shape) + " must have the normalized shape " +
                                  shapeText(std::vector<std::string>(m_tape.full.end() - nd, m_tape.full.end()))};
                step.args.push_back(operand(ins[k]));
                rendered += ", " + s.inputs[k];
            }
            // LibTorch's defaults: layer_norm 1e-5; rms_norm the epsilon of the accumulation
            // type (float for fp32, fp16 and bf16 inputs).
            step.eps = number(s.attrs, "eps").value_or(s.op == "layer_norm" ? 1e-5
                                                                   : double(std::numeric_limits<float>::epsilon()));
            if (!(step.eps >= 0.0) || step.eps > std::numeric_limits<float>::max())
                throw Refusal{s.op + ": eps " + literalText(step.eps) + " is not a non-negative fp32 number"};
            out.level = Level::Element;
            out.shape = m_tape.full;
            rendered += ", eps=" + literalText(step.eps);
            if (nd != 1)
                rendered += ", normalized_dims=" + std::to_string(nd);
        }
        rendered += ")";
    }

    void addStep(const OpStep& s)
    {
        Step step;
        step.op = s.op;
        const bool known = kBinary.count(s.op) || kUnary.count(s.op) || kRowReductions.count(s.op) ||
                           kRowOps.count(s.op) || s.op == "to";
        if (!known)
            throw Refusal{s.op + " is not supported"};
        std::vector<int> ins;
        for (const auto& in : s.inputs)
            ins.push_back(valueOf(in));

        Value out;
        out.name = s.output;
        std::string rendered;
        if (kBinary.count(s.op))
            binaryStep(s, ins, step, out, rendered);
        else if (kUnary.count(s.op) || s.op == "to")
            unaryStep(s, ins, step, out, rendered);
        else
            rowStep(s, ins, step, out, rendered);
        // An op or tape reference casts a step that produces a task output to the output's dtype
        // at once, and later steps read the cast tensor; a TorchScript module casts only at the end.
        if (m_task.reference.kind != Reference::Kind::TorchScript)
            for (const auto& o : m_task.outputs)
                if (o.name == s.output && supportedStorage(o.dtype))
                    out.natural = o.dtype;
        for (int id : ins)
            m_tape.values[static_cast<size_t>(id)].uses++;
        step.text = s.output + " = " + rendered;
        step.result = add(std::move(out));
        m_tape.values[static_cast<size_t>(step.result)].step = static_cast<int>(m_tape.steps.size());
        m_tape.steps.push_back(std::move(step));
    }

    void bindOutputs()
    {
        // Spans must agree with the row shape (or with each other in an elementwise kernel).
        int spanSeen = 0;
        for (const auto& v : m_tape.values) {
            if (v.level != Level::Column && v.level != Level::Row)
                continue;
            if (m_tape.reduces()) {
                if (v.span != m_tape.rowDims)
                    throw Refusal{v.name + " " + shapeText(v.shape) + " spans the last " + std::to_string(v.span) +
                                  " dimension(s) but the rows are the last " + std::to_string(m_tape.rowDims)};
            } else if (spanSeen && v.span != spanSeen) {
                throw Refusal{v.name + " " + shapeText(v.shape) + " broadcasts over " + std::to_string(v.span) +
                              " trailing dimension(s) and another operand over " + std::to_string(spanSeen) +
                              "; one kernel indexes one period"};
            } else {
                spanSeen = v.span;
            }
        }
        m_tape.broadcastDims = m_tape.reduces() ? m_tape.rowDims : spanSeen;
        for (size_t o = 0; o < m_task.outputs.size(); ++o) {
            const TensorSpec& t = m_task.outputs[o];
            auto it = m_index.find(t.name);
            if (it == m_index.end())
                throw Refusal{"no step produces the task output " + t.name};
            Value& v = m_tape.values[static_cast<size_t>(it->second)];
            if (v.step < 0)
                throw Refusal{"the task output " + t.name + " is an input; nothing to compute"};
            if (!supportedStorage(t.dtype))
                throw Refusal{"output " + t.name + " is " + std::string(dtypeName(t.dtype)) +
                              "; the generator writes fp32, fp16 and bf16 tensors"};
            if (v.level == Level::Column || v.level == Level::Const ||
                (v.level == Level::Row && !m_tape.reduces()))
                throw Refusal{"output " + t.name + " holds " + levelWord(v.level) +
                              "; the generator writes outputs over the elements or the rows of " + shapeText(m_tape.full)};
            if (v.shape != t.shape)
                throw Refusal{"output " + t.name + " is declared " + shapeText(t.shape) + " but the reference computes " +
                              shapeText(v.shape)};
            v.output = static_cast<int>(o);
        }
        // Steps no output depends on are left out of the kernel.
        for (size_t i = m_tape.steps.size(); i-- > 0;) {
            Step& st = m_tape.steps[i];
            bool live = m_tape.values[static_cast<size_t>(st.result)].output >= 0;
            for (size_t k = i + 1; k < m_tape.steps.size() && !live; ++k)
                if (m_tape.steps[k].live)
                    for (const Operand& op : m_tape.steps[k].args)
                        live = live || op.value == st.result;
            st.live = live;
        }
    }

    const Task& m_task;
    Tape m_tape;
    std::map<std::string, int> m_index;
};

} // namespace

bool Step::isReduction() const { return kRowReductions.count(op) || kRowOps.count(op); }

std::string Tape::product(const std::vector<std::string>& dims)
{
    std::string s;
    for (const auto& d : dims)
        if (!isOne(d))
            s += (s.empty() ? "" : " * ") + d;
    return s.empty() ? "1" : s;
}

std::string Tape::rowLength() const
{
    const int k = reduces() ? rowDims : broadcastDims;
    return product(std::vector<std::string>(full.end() - k, full.end()));
}

std::string Tape::rowCount() const
{
    const int k = reduces() ? rowDims : broadcastDims;
    return product(std::vector<std::string>(full.begin(), full.end() - k));
}

const Value* Tape::find(const std::string& name) const
{
    for (const auto& v : values)
        if (v.name == name)
            return &v;
    return nullptr;
}

std::string supportedSummary()
{
    return "the generator fuses the elementwise ops add, sub, mul, div, neg, abs, exp, log, sqrt, rsqrt, tanh, "
           "sigmoid, relu, silu, gelu, clone and to (fp32, fp16, bf16), and the reductions over the last dimension "
           "sum, mean, amax, softmax, log_softmax, rms_norm and layer_norm; write this kernel by hand";
}

Result<Tape> buildTape(const Task& task, const std::vector<OpStep>& steps, const std::string& file,
                       const std::vector<std::string>& pointers)
{
    size_t failed = 0;
    try {
        Builder b(task);
        return b.build(steps, failed);
    } catch (const Refusal& r) {
        Error e;
        e.what = "generate a candidate for " + task.name;
        e.file = file;
        if (failed < steps.size()) {
            const OpStep& s = steps[failed];
            std::string call = s.output + " = " + s.op + "(";
            for (size_t i = 0; i < s.inputs.size(); ++i)
                call += (i ? ", " : "") + s.inputs[i];
            call += ")";
            e.why = "step " + std::to_string(failed + 1) + " (" + call + ") cannot be fused: " + r.why;
            if (failed < pointers.size())
                e.pointer = pointers[failed];
        } else {
            e.why = "the reference cannot be fused: " + r.why;
            if (!pointers.empty())
                e.pointer = "/reference";
        }
        e.hint = supportedSummary();
        return e;
    }
}

} // namespace kf::gen
