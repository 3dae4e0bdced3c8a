#include "engine/generate/Emit.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace kf::gen::detail {

namespace {

/// Identifiers the generated code declares itself, plus what CUDA already names.
const std::set<std::string, std::less<>> kReserved = {
    "row", "rows", "cols", "base", "chunks", "tid", "k", "c", "n", "i", "j", "W", "Block", "first", "tail",
    "vec", "vector", "d", "float", "int", "long", "const", "auto", "kf", "threadIdx", "blockIdx", "blockDim",
    "gridDim", "warpSize", "min", "max", "expf", "logf", "erff", "tanhf", "sqrtf", "rsqrtf", "fabsf", "fmaxf",
    "generated_row", "generated_chunk", "row_sum", "row_max", "kThreads", "kCached", "active",
    "partial", "segment", "segment_chunks", "head", "e", "begin", "end", "record", "generated_row_partial", "signed", "unsigned",
    "double", "short", "char", "bool", "void", "return", "if", "else", "for", "while", "do", "switch", "case",
    "default", "break", "continue", "new", "delete", "this", "true", "false", "static", "extern", "inline",
    "template", "typename", "class", "struct", "union", "enum", "namespace", "using", "operator", "sizeof",
    "volatile", "register", "goto", "try", "catch", "throw", "public", "private", "protected", "virtual",
    "friend", "mutable", "explicit", "typedef", "constexpr", "decltype", "nullptr", "alignas", "alignof",
    "noexcept", "static_assert", "thread_local", "asm", "and", "or", "not", "xor", "bitand", "bitor", "compl",
    "and_eq", "or_eq", "xor_eq", "not_eq", "half", "__half", "__nv_bfloat16", "float4", "int4", "uint4",
    "static_cast", "reinterpret_cast", "const_cast", "dynamic_cast", "typeid", "wchar_t", "char8_t", "char16_t",
    "char32_t", "export", "concept", "requires", "co_await", "co_return", "co_yield", "consteval", "constinit",
    "final", "override", "import", "module"};

/// What the generated code appends to a tensor's name for the values derived from it.
const char* const kSuffixes[] = {"_j", "_r", "_c", "_v", "_t", "_out", "_in", "_cache", "_acc", "_sumsq", "_m2",
                                 "_d", "_tmax", "_tnan", "_tsum", "_cmax", "_csum", "_max", "_sum", "_logsum",
                                 "_mean", "_rstd", "_part", "_pmax", "_psum", "_pnan"};

/// Names whose shape is ours whatever follows: constants (kVec, kStep1Scalar), the knobs' macros
/// (KF_BLOCK) and names that C++ reserves (__x). A suffix cannot fix them; a prefix can.
bool oursByPrefix(const std::string& name)
{
    return name.rfind("__", 0) == 0 || name.rfind("KF_", 0) == 0 ||
           (name.size() > 1 && name[0] == 'k' && std::isupper(static_cast<unsigned char>(name[1])));
}

/// Whether identifier `ids[i]` is one of ours (reserved, a pass lambda), equals another tensor's
/// identifier, or is another tensor's identifier with one of the suffixes above.
bool clashes(const std::vector<std::string>& ids, size_t i)
{
    const std::string& name = ids[i];
    if (kReserved.count(name) || oursByPrefix(name))
        return true;
    // pass1, pass2_one: the pass lambdas.
    const std::string lambda = name.size() > 4 && name.compare(name.size() - 4, 4, "_one") == 0 ? name.substr(0, name.size() - 4) : name;
    if (lambda.rfind("pass", 0) == 0 && lambda.size() > 4 &&
        std::all_of(lambda.begin() + 4, lambda.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); }))
        return true;
    for (size_t k = 0; k < ids.size(); ++k) {
        if (k == i)
            continue;
        if (ids[k] == name && k < i)
            return true;
        for (const char* suffix : kSuffixes)
            if (name == ids[k] + suffix)
                return true;
    }
    return false;
}

} // namespace

Context::Context(const Task& t, const Tape& tp, const GenerateOptions& o) : task(t), tape(tp), options(o)
{
    // Every tensor's identifier: its name, renamed until nothing clashes with ours or with what
    // is derived from another tensor's identifier (outputs y and y_out: y's local array is
    // y_out). Each round renames every clashing name, so it ends: names only grow, and a name
    // that clashes by its prefix gets one that cannot.
    for (const auto& v : tape.values)
        m_identifiers.push_back(oursByPrefix(v.name) ? "t_" + v.name : v.name);
    for (int round = 0; round < 64; ++round) {
        bool changed = false;
        for (size_t i = 0; i < m_identifiers.size(); ++i)
            if (clashes(m_identifiers, i)) {
                m_identifiers[i] += "_t";
                changed = true;
            }
        if (!changed)
            break;
    }
}

void Code::line(int indent, const std::string& text)
{
    if (!text.empty())
        m_text.append(static_cast<size_t>(indent) * 4, ' ').append(text);
    m_text += '\n';
}

std::string floatLiteral(double v)
{
    // The shortest spelling of the fp32 value the kernel's arithmetic sees (1e-06f, not
    // 9.99999997e-07f); the tape builder refused what overflows fp32.
    const float f = static_cast<float>(v);
    char buf[40];
    for (int precision = 1; precision <= 9; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, static_cast<double>(f));
        if (static_cast<float>(std::strtod(buf, nullptr)) == f)
            break;
    }
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos)
        s += ".0";
    return s + "f";
}

std::string Context::constant(const std::string& name, const std::string& type, const std::string& value,
                              const std::string& comment)
{
    if (m_constantNames.insert(name).second)
        m_constantLines.push_back("constexpr " + type + " " + name + " = " + value + ";" +
                                  (comment.empty() ? "" : "  // " + comment));
    return name;
}

std::string Context::knob(const std::string& name, int value, std::vector<int> values, const std::string& comment)
{
    for (const Knob& k : m_knobs)
        if (k.name == name)
            return name;
    values.push_back(value);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    m_knobs.push_back({name, value, std::move(values), comment});
    return name;
}

std::string Context::pointer(const Value& v) const
{
    return m_identifiers[static_cast<size_t>(&v - tape.values.data())];
}

std::string Context::token(const Value& v) const
{
    const std::string base = pointer(v);
    switch (v.level) {
    case Level::Const: return base + "_c";
    case Level::Row: return base + "_r";
    default: return base + "_j";
    }
}

std::string Context::cudaType(DType t) const { return std::string(dtypeCudaName(t)); }

std::string Context::rowName(const Step& s, const char* what) const
{
    return pointer(tape.values[static_cast<size_t>(s.result)]) + "_" + what;
}

std::string Context::stepLabel(const Step& s) const
{
    const size_t index = static_cast<size_t>(&s - tape.steps.data());
    return "step " + std::to_string(index + 1) + ": " + s.text;
}

std::string Context::operand(const Step& s, size_t i)
{
    const Operand& o = s.args[i];
    if (o.value >= 0)
        return token(tape.values[static_cast<size_t>(o.value)]);
    const size_t index = static_cast<size_t>(&s - tape.steps.data());
    return constant("kStep" + std::to_string(index + 1) + "Scalar", "float", floatLiteral(o.literal),
                    "step " + std::to_string(index + 1) + ": the scalar of " + s.op);
}

std::string Context::expression(const Step& s)
{
    const std::string& op = s.op;
    const std::string a = operand(s, 0);
    if (op == "add" || op == "sub" || op == "mul" || op == "div") {
        const char* sym = op == "add" ? " + " : op == "sub" ? " - " : op == "mul" ? " * " : " / ";
        return a + sym + operand(s, 1);
    }
    if (op == "neg")
        return "-" + a;
    if (op == "abs")
        return "fabsf(" + a + ")";
    if (op == "exp" || op == "log" || op == "sqrt" || op == "rsqrt" || op == "tanh")
        return op + "f(" + a + ")";
    if (op == "sigmoid")
        return "1.0f / (1.0f + expf(-" + a + "))";
    if (op == "silu")
        return a + " / (1.0f + expf(-" + a + "))";
    if (op == "relu") // keeps NaN, as torch.relu does (fmaxf would drop it)
        return "(" + a + " > 0.0f || " + a + " != " + a + ") ? " + a + " : 0.0f";
    if (op == "gelu") {
        if (s.approximate == "tanh") {
            const std::string k0 = constant("kSqrt2OverPi", "float", "0.797884561f", "sqrt(2 / pi), tanh GELU");
            const std::string k1 = constant("kGeluCubic", "float", "0.044715f", "the cubic term of tanh GELU");
            return "0.5f * " + a + " * (1.0f + tanhf(" + k0 + " * (" + a + " + " + k1 + " * " + a + " * " + a + " * " + a +
                   ")))";
        }
        const std::string k = constant("kInvSqrt2", "float", "0.707106781f", "1 / sqrt(2), exact GELU");
        return "0.5f * " + a + " * (1.0f + erff(" + a + " * " + k + "))";
    }
    if (op == "clone")
        return a;
    if (op == "to") {
        if (s.to == DType::F32)
            return a;
        return "kf::to_float(kf::from_float<" + cudaType(s.to) + ">(" + a + "))";
    }
    if (op == "softmax")
        return "expf(" + a + " - " + rowName(s, "max") + ") / " + rowName(s, "sum");
    if (op == "log_softmax")
        return a + " - " + rowName(s, "max") + " - " + rowName(s, "logsum");
    if (op == "rms_norm") {
        std::string e = a + " * " + rowName(s, "rstd");
        if (s.args.size() > 1)
            e += " * " + operand(s, 1);
        return e;
    }
    if (op == "layer_norm") {
        std::string e = "(" + a + " - " + rowName(s, "mean") + ") * " + rowName(s, "rstd");
        if (s.args.size() > 1)
            e += " * " + operand(s, 1);
        if (s.args.size() > 2)
            e += " + " + operand(s, 2);
        return e;
    }
    return a; // sum, mean, amax: computed per row by the row template
}

std::string Context::definition(const Value& v, const std::string& expr) const
{
    std::string e = expr;
    if (v.output >= 0 && v.natural != DType::F32) {
        const DType declared = task.outputs[static_cast<size_t>(v.output)].dtype;
        if (v.uses > 0 || declared != v.natural)
            e = "kf::to_float(kf::from_float<" + cudaType(v.natural) + ">(" + expr + "))";
    }
    return "const float " + token(v) + " = " + e + ";";
}

std::vector<const Value*> parameters(const Tape& tape)
{
    std::vector<const Value*> ins, outs;
    for (const auto& v : tape.values)
        if (v.input >= 0)
            ins.push_back(&v);
        else if (v.output >= 0)
            outs.push_back(&v);
    auto byInput = [](const Value* a, const Value* b) { return a->input < b->input; };
    auto byOutput = [](const Value* a, const Value* b) { return a->output < b->output; };
    std::sort(ins.begin(), ins.end(), byInput);
    std::sort(outs.begin(), outs.end(), byOutput);
    ins.insert(ins.end(), outs.begin(), outs.end());
    return ins;
}

std::string parameterList(Context& c, const std::vector<const Value*>& params, const std::string& tail)
{
    std::vector<std::string> parts;
    for (const Value* v : params) {
        const DType t = v->input >= 0 ? c.task.inputs[static_cast<size_t>(v->input)].dtype
                                      : c.task.outputs[static_cast<size_t>(v->output)].dtype;
        parts.push_back(std::string(v->input >= 0 ? "const " : "") + c.cudaType(t) + "* __restrict__ " + c.pointer(*v));
    }
    if (!tail.empty())
        parts.push_back(tail);
    // One line when it is short, else one parameter per line.
    size_t length = 0;
    for (const auto& p : parts)
        length += p.size() + 2;
    std::string s;
    for (size_t i = 0; i < parts.size(); ++i)
        s += (i == 0 ? "" : length > 80 ? ",\n        " : ", ") + parts[i];
    return s;
}

std::string argumentList(Context& c, const std::vector<const Value*>& params, const std::string& tail)
{
    std::string s;
    for (const Value* v : params)
        s += (s.empty() ? "" : ", ") + c.pointer(*v);
    if (!tail.empty())
        s += (s.empty() ? "" : ", ") + tail;
    return s;
}

std::string alignedPointers(Context& c, const std::vector<const Value*>& params)
{
    std::string aligned;
    for (const Value* v : params)
        if (v->level == Level::Element || v->level == Level::Column)
            aligned += (aligned.empty() ? "" : ", ") + c.pointer(*v);
    return aligned;
}

nlohmann::ordered_json tensorArguments(const std::vector<const Value*>& params)
{
    nlohmann::ordered_json args = nlohmann::ordered_json::array();
    for (const Value* v : params)
        args.push_back(v->name);
    return args;
}

} // namespace kf::gen::detail
