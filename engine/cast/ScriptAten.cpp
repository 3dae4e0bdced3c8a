#include "engine/cast/ScriptAten.h"

#include "engine/cast/ScriptSyntax.h"

#include <map>
#include <set>

namespace kf::cast::script {

namespace {

using Json = nlohmann::json;

/// Parameter names in the order of ATen's schemas, for the overloads TorchScript prints.
const std::map<std::string, std::vector<std::string>, std::less<>>& schemas()
{
    static const std::map<std::string, std::vector<std::string>, std::less<>> s = [] {
        std::map<std::string, std::vector<std::string>, std::less<>> m = {
            {"add", {"self", "other", "alpha"}},
            {"sub", {"self", "other", "alpha"}},
            {"mul", {"self", "other"}},
            {"div", {"self", "other", "rounding_mode"}},
            {"gelu", {"self", "approximate"}},
            {"softmax", {"self", "dim", "dtype"}},
            {"log_softmax", {"self", "dim", "dtype"}},
            {"layer_norm", {"input", "normalized_shape", "weight", "bias", "eps", "cudnn_enable"}},
            {"rms_norm", {"input", "normalized_shape", "weight", "eps"}},
            {"sum", {"self", "dim", "keepdim", "dtype"}},
            {"mean", {"self", "dim", "keepdim", "dtype"}},
            {"amax", {"self", "dim", "keepdim"}},
            {"to", {"self", "dtype", "non_blocking", "copy", "memory_format"}},
            {"clone", {"self", "memory_format"}},
            {"matmul", {"self", "other"}},
            {"bmm", {"self", "mat2"}},
            {"transpose", {"self", "dim0", "dim1"}},
            {"permute", {"self", "dims"}},
            {"cumsum", {"self", "dim", "dtype"}},
        };
        for (const char* u : {"neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "silu"})
            m[u] = {"self"};
        return m;
    }();
    return s;
}

/// The arguments of one call bound to its schema's names.
class Call {
public:
    Call(const std::string& callee, int line) : m_callee(callee), m_line(line) {}

    [[noreturn]] void refuse(const std::string& why) const { throw ScriptError{m_line, m_callee + " " + why, {}}; }

    void bind(const std::vector<std::string>& names, const std::vector<Value>& positional,
              const std::vector<std::pair<std::string, Value>>& keywords)
    {
        if (positional.size() > names.size())
            refuse("has " + std::to_string(positional.size()) + " positional arguments; its schema takes " +
                   std::to_string(names.size()));
        for (std::size_t i = 0; i < positional.size(); ++i)
            m_args[names[i]] = positional[i];
        for (const auto& [key, value] : keywords) {
            bool known = false;
            for (const std::string& n : names)
                known = known || n == key;
            if (!known)
                refuse("has the argument " + key + ", which this reader does not know");
            if (!m_args.emplace(key, value).second)
                refuse("has the argument " + key + " twice");
        }
    }

    /// The argument, or nullptr when it is absent or None.
    const Value* given(const std::string& name) const
    {
        auto it = m_args.find(name);
        return it == m_args.end() || it->second.kind == Value::Kind::None ? nullptr : &it->second;
    }
    int tensor(const std::string& name) const
    {
        const Value* v = given(name);
        if (!v)
            refuse("has no " + name + " tensor");
        if (v->kind != Value::Kind::Tensor)
            refuse("takes " + describe(*v) + " as " + name + ", not a tensor");
        return v->tensor;
    }
    std::int64_t integer(const std::string& name) const
    {
        const Value* v = given(name);
        if (!v || v->kind != Value::Kind::Int)
            refuse("needs an integer " + name + ", not " + (v ? describe(*v) : std::string("None")));
        return v->integer;
    }
    bool flag(const std::string& name) const
    {
        const Value* v = given(name);
        if (v && v->kind != Value::Kind::Bool)
            refuse("needs True or False as " + name + ", not " + describe(*v));
        return v && v->flag;
    }
    std::vector<std::int64_t> integers(const std::string& name) const
    {
        const Value* v = given(name);
        std::vector<std::int64_t> out;
        if (!v)
            return out;
        if (v->kind == Value::Kind::Int)
            return {v->integer};
        if (v->kind != Value::Kind::List)
            refuse("needs a list of integers as " + name + ", not " + describe(*v));
        for (const Value& i : v->items) {
            if (i.kind != Value::Kind::Int)
                refuse("needs a list of integers as " + name + "; it holds " + describe(i));
            out.push_back(i.integer);
        }
        return out;
    }
    void mustBeNone(const std::string& name, const std::string& why) const
    {
        if (const Value* v = given(name))
            refuse("has " + name + "=" + shown(*v) + "; " + why);
    }
    void memoryFormat() const
    {
        // c10::MemoryFormat: 0 contiguous, 1 preserve (a task's tensors are contiguous).
        const Value* v = given("memory_format");
        if (v && !(v->kind == Value::Kind::Int && (v->integer == 0 || v->integer == 1)))
            refuse("has memory_format=" + shown(*v) + "; only the contiguous format is read");
    }

private:
    std::string m_callee;
    int m_line;
    std::map<std::string, Value, std::less<>> m_args;
};

/// A string literal as JSON writes it; bytes that are not UTF-8 become U+FFFD (the code is
/// untrusted, and Json::dump throws on them by default).
std::string quoted(const std::string& s) { return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string listText(const std::vector<std::int64_t>& v)
{
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i)
        s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

} // namespace

std::string describe(const Value& v)
{
    switch (v.kind) {
    case Value::Kind::Tensor: return "a tensor";
    case Value::Kind::Int: return "the integer " + std::to_string(v.integer);
    case Value::Kind::Float: return "the number " + Json(v.number).dump();
    case Value::Kind::Bool: return v.flag ? "True" : "False";
    case Value::Kind::None: return "None";
    case Value::Kind::Str: return "the string " + quoted(v.text);
    case Value::Kind::List: return "a list";
    case Value::Kind::Tuple: return "a tuple";
    }
    return "a value";
}

std::string shown(const Value& v)
{
    switch (v.kind) {
    case Value::Kind::Int: return std::to_string(v.integer);
    case Value::Kind::Float: return Json(v.number).dump();
    case Value::Kind::Bool: return v.flag ? "True" : "False";
    case Value::Kind::None: return "None";
    case Value::Kind::Str: return quoted(v.text);
    case Value::Kind::List:
    case Value::Kind::Tuple: {
        const bool list = v.kind == Value::Kind::List;
        std::string s = list ? "[" : "(";
        for (std::size_t i = 0; i < v.items.size() && i < 8; ++i)
            s += (i ? ", " : "") + shown(v.items[i]);
        if (v.items.size() > 8)
            s += ", ...";
        return s + (list ? "]" : ")");
    }
    case Value::Kind::Tensor: break;
    }
    return "a tensor";
}

std::string dtypeOfScalarType(std::int64_t code)
{
    // c10's ScalarType numbering: the codes torch.jit.save prints for dtype arguments.
    static const std::map<std::int64_t, std::string> names = {{0, "uint8"}, {1, "int8"}, {2, "int16"}, {3, "int32"},
                                                              {4, "int64"}, {5, "fp16"}, {6, "fp32"}, {7, "fp64"},
                                                              {11, "bool"}, {15, "bf16"}};
    auto it = names.find(code);
    return it == names.end() ? std::string() : it->second;
}

bool knownAtenOp(std::string_view name) { return schemas().count(name) > 0; }

namespace {

/// add, sub, mul, div: a tensor, then a tensor or a number; alpha 1 only.
void mapArithmetic(Call& c, const std::string& op, MappedCall& m)
{
    if (const Value* self = c.given("self"); self && self->kind != Value::Kind::Tensor)
        c.refuse("has " + describe(*self) + " as its first operand; the catalog's " + op + " takes a tensor first");
    m.inputs.push_back(c.tensor("self"));
    const Value* other = c.given("other");
    if (!other)
        c.refuse("has no second operand");
    if (other->kind == Value::Kind::Tensor)
        m.inputs.push_back(other->tensor);
    else if (other->kind == Value::Kind::Int)
        m.attrs["scalar"] = other->integer;
    else if (other->kind == Value::Kind::Float)
        m.attrs["scalar"] = other->number;
    else
        c.refuse("has " + describe(*other) + " as its second operand, neither a tensor nor a number");
    if (const Value* alpha = c.given("alpha"))
        if (!((alpha->kind == Value::Kind::Int && alpha->integer == 1) || (alpha->kind == Value::Kind::Float && alpha->number == 1.0)))
            c.refuse("has alpha=" + shown(*alpha) + "; the catalog's " + op + " has no alpha (only 1)");
    if (op == "div")
        c.mustBeNone("rounding_mode", "the catalog's div is true division");
}

/// layer_norm and rms_norm: the input, the optional weight (and bias), eps, and how many
/// trailing dimensions are normalized.
void mapNorm(Call& c, const std::string& op, MappedCall& m)
{
    m.inputs.push_back(c.tensor("input"));
    const Value* shape = c.given("normalized_shape");
    if (!shape || shape->kind != Value::Kind::List || shape->items.empty())
        c.refuse("needs normalized_shape as a list of one or more sizes, not " + (shape ? describe(*shape) : std::string("None")));
    const bool weight = c.given("weight") != nullptr;
    if (weight)
        m.inputs.push_back(c.tensor("weight"));
    if (op == "layer_norm" && c.given("bias")) {
        if (!weight)
            c.refuse("has a bias but no weight; the catalog's layer_norm takes x[, weight[, bias]]");
        m.inputs.push_back(c.tensor("bias"));
    }
    if (const Value* eps = c.given("eps")) {
        if (eps->kind == Value::Kind::Int)
            m.attrs["eps"] = static_cast<double>(eps->integer);
        else if (eps->kind == Value::Kind::Float)
            m.attrs["eps"] = eps->number;
        else
            c.refuse("needs a number as eps, not " + describe(*eps));
    }
    if (op == "layer_norm")
        (void)c.flag("cudnn_enable");
    m.attrs["normalized_dims"] = static_cast<std::int64_t>(shape->items.size());
}

/// sum, mean and amax over one dim or all.
void mapReduction(Call& c, const std::string& op, MappedCall& m)
{
    m.inputs.push_back(c.tensor("self"));
    const std::vector<std::int64_t> dims = c.integers("dim");
    if (dims.size() > 1)
        c.refuse("reduces over the dims " + listText(dims) + "; the catalog's " + op + " reduces over one dim or all");
    if (dims.size() == 1)
        m.attrs["dim"] = dims.front();
    if (c.flag("keepdim"))
        m.attrs["keepdim"] = true;
    if (op != "amax")
        c.mustBeNone("dtype", "a " + op + " that converts the dtype has no catalog op");
}

/// to(x, <ScalarType>): only a dtype is read.
void mapTo(Call& c, MappedCall& m)
{
    m.inputs.push_back(c.tensor("self"));
    const Value* dtype = c.given("dtype");
    if (!dtype || dtype->kind != Value::Kind::Int)
        c.refuse("converts to " + (dtype ? describe(*dtype) : std::string("None")) +
                 "; only a dtype (torch.to(x, <ScalarType>)) is read, not a device or another tensor");
    const std::string name = dtypeOfScalarType(dtype->integer);
    if (name.empty())
        c.refuse("converts to ScalarType " + std::to_string(dtype->integer) + ", which the task schema has no dtype for");
    m.attrs["dtype"] = name;
    (void)c.flag("non_blocking");
    (void)c.flag("copy");   // the catalog's to always makes a fresh tensor
    c.memoryFormat();
}

} // namespace

MappedCall mapAtenCall(const std::string& callee, std::string_view name, int line, const std::vector<Value>& positional,
                       const std::vector<std::pair<std::string, Value>>& keywords)
{
    Call c(callee, line);
    auto schema = schemas().find(name);
    if (schema == schemas().end())
        throw ScriptError{line, "forward calls " + callee + ", which maps to no op of KernelForge's reference catalog", {}};
    c.bind(schema->second, positional, keywords);
    MappedCall m;
    m.op = std::string(name);
    const std::string op = m.op;
    if (op == "add" || op == "sub" || op == "mul" || op == "div") {
        mapArithmetic(c, op, m);
    } else if (schema->second.size() == 1) {
        m.inputs.push_back(c.tensor("self"));
    } else if (op == "gelu") {
        m.inputs.push_back(c.tensor("self"));
        std::string approximate = "none";
        if (const Value* a = c.given("approximate")) {
            if (a->kind != Value::Kind::Str || (a->text != "none" && a->text != "tanh"))
                c.refuse("has approximate=" + shown(*a) + "; the catalog's gelu takes \"none\" or \"tanh\"");
            approximate = a->text;
        }
        m.attrs["approximate"] = approximate;
    } else if (op == "softmax" || op == "log_softmax") {
        m.inputs.push_back(c.tensor("self"));
        m.attrs["dim"] = c.integer("dim");
        c.mustBeNone("dtype", "a " + op + " that converts the dtype has no catalog op");
    } else if (op == "layer_norm" || op == "rms_norm") {
        mapNorm(c, op, m);
    } else if (op == "sum" || op == "mean" || op == "amax") {
        mapReduction(c, op, m);
    } else if (op == "to") {
        mapTo(c, m);
    } else if (op == "clone") {
        m.inputs.push_back(c.tensor("self"));
        c.memoryFormat();
    } else if (op == "matmul" || op == "bmm") {
        m.inputs = {c.tensor("self"), c.tensor(op == "bmm" ? "mat2" : "other")};
    } else if (op == "transpose") {
        m.inputs.push_back(c.tensor("self"));
        m.attrs["dim0"] = c.integer("dim0");
        m.attrs["dim1"] = c.integer("dim1");
    } else if (op == "permute") {
        m.inputs.push_back(c.tensor("self"));
        if (!c.given("dims") || c.given("dims")->kind != Value::Kind::List)
            c.refuse("needs dims as a list of integers");
        m.attrs["dims"] = c.integers("dims");
    } else if (op == "cumsum") {
        m.inputs.push_back(c.tensor("self"));
        m.attrs["dim"] = c.integer("dim");
        c.mustBeNone("dtype", "a cumsum that converts the dtype has no catalog op");
    }
    return m;
}

} // namespace kf::cast::script
