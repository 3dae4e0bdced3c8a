#include "engine/agent/ReferenceText.h"

#include "engine/task/OpCatalog.h"

#include <set>
#include <sstream>

namespace kf::agent {
namespace {

using nlohmann::json;

std::string literal(const json& v)
{
    if (v.is_boolean())
        return v.get<bool>() ? "True" : "False";
    if (v.is_string())
        return '"' + v.get<std::string>() + '"';
    if (v.is_array()) {
        std::string s = "[";
        for (size_t i = 0; i < v.size(); ++i)
            s += (i ? ", " : "") + literal(v[i]);
        return s + "]";
    }
    if (v.is_number_float()) {
        std::ostringstream o;
        o.precision(9);
        o << v.get<double>();
        std::string t = o.str();
        if (t.find_first_of(".eEn") == std::string::npos)
            t += ".0";
        return t;
    }
    return v.dump();
}

const char* torchDtype(std::string_view d)
{
    static const std::pair<const char*, const char*> names[] = {
        {"fp64", "torch.float64"}, {"fp32", "torch.float32"}, {"fp16", "torch.float16"}, {"bf16", "torch.bfloat16"},
        {"int64", "torch.int64"}, {"int32", "torch.int32"}, {"int16", "torch.int16"}, {"int8", "torch.int8"},
        {"uint8", "torch.uint8"}, {"bool", "torch.bool"}};
    for (auto [k, v] : names)
        if (d == k)
            return v;
    return "torch.float32";
}

std::string joined(const std::vector<std::string>& v)
{
    std::string s;
    for (size_t i = 0; i < v.size(); ++i)
        s += (i ? ", " : "") + v[i];
    return s;
}

std::string shapeText(const TensorSpec& t)
{
    return std::string(dtypeName(t.dtype)) + " [" + joined(t.shape) + "]";
}

// `args(step)` with the attributes as keywords: "x, w, eps=1e-06".
std::string callText(const OpStep& s)
{
    std::string t = s.op + "(" + joined(s.inputs);
    for (auto it = s.attrs.begin(); it != s.attrs.end(); ++it)
        t += ", " + it.key() + "=" + literal(it.value());
    return t + ")";
}

std::string lastDims(const std::string& x, const json& attrs)
{
    int nd = attrs.contains("normalized_dims") && attrs["normalized_dims"].is_number_integer()
                 ? attrs["normalized_dims"].get<int>() : 1;
    return x + ".shape[-" + std::to_string(nd) + ":]";
}

std::string pythonFor(const OpStep& s)
{
    const json& a = s.attrs;
    const auto& in = s.inputs;
    auto x = [&](size_t i) { return i < in.size() ? in[i] : std::string("?"); };
    auto attr = [&](const char* k, std::string fallback) { return a.contains(k) ? literal(a[k]) : fallback; };
    static const std::set<std::string> binary = {"add", "sub", "mul", "div"};
    static const std::set<std::string> unary = {"neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu"};
    if (binary.count(s.op))
        return "torch." + s.op + "(" + x(0) + ", " + (in.size() > 1 ? x(1) : attr("scalar", "?")) + ")";
    if (unary.count(s.op))
        return "torch." + s.op + "(" + x(0) + ")";
    if (s.op == "silu")
        return "torch.nn.functional.silu(" + x(0) + ")";
    if (s.op == "gelu")
        return "torch.nn.functional.gelu(" + x(0) + ", approximate=" + attr("approximate", "\"none\"") + ")";
    if (s.op == "softmax" || s.op == "log_softmax")
        return "torch." + s.op + "(" + x(0) + ", dim=" + attr("dim", "-1") + ")";
    if (s.op == "layer_norm")
        return "torch.nn.functional.layer_norm(" + x(0) + ", " + lastDims(x(0), a) + ", "
               + (in.size() > 1 ? x(1) : "None") + ", " + (in.size() > 2 ? x(2) : "None") + ", eps=" + attr("eps", "1e-05") + ")";
    if (s.op == "rms_norm")
        return "torch.nn.functional.rms_norm(" + x(0) + ", " + lastDims(x(0), a) + ", " + (in.size() > 1 ? x(1) : "None")
               + ", eps=" + attr("eps", "None") + ")";
    if (s.op == "matmul" || s.op == "bmm")
        return "torch." + s.op + "(" + x(0) + ", " + x(1) + ")";
    if (s.op == "transpose")
        return x(0) + ".transpose(" + attr("dim0", "?") + ", " + attr("dim1", "?") + ").contiguous()";
    if (s.op == "permute")
        return x(0) + ".permute(" + attr("dims", "?") + ").contiguous()";
    if (s.op == "sum" || s.op == "mean" || s.op == "amax") {
        std::string keep = a.contains("keepdim") ? ", keepdim=" + literal(a["keepdim"]) : "";
        return "torch." + s.op + "(" + x(0) + (a.contains("dim") ? ", dim=" + literal(a["dim"]) : std::string(s.op == "amax" ? ", dim=()" : "")) + keep + ")";
    }
    if (s.op == "cumsum")
        return "torch.cumsum(" + x(0) + ", dim=" + attr("dim", "?") + ")";
    if (s.op == "to")
        return x(0) + ".to(" + std::string(torchDtype(a.contains("dtype") && a["dtype"].is_string() ? a["dtype"].get<std::string>() : "fp32"))
               + ", copy=True)";
    if (s.op == "clone")
        return x(0) + ".clone()";
    return callText(s);   // not in the catalog: as written
}

} // namespace

std::string stepsInWords(const std::vector<OpStep>& steps)
{
    std::string out;
    for (size_t i = 0; i < steps.size(); ++i) {
        const OpStep& s = steps[i];
        const OpInfo* info = findOp(s.op);
        out += std::to_string(i + 1) + ". `" + s.output + " = " + callText(s) + "`";
        if (info && info->summary != "elementwise")
            out += ": " + std::string(info->summary);
        else if (info)
            out += ": elementwise " + s.op;
        out += "\n";
    }
    return out;
}

std::string stepsAsPyTorch(const Task& task, const std::vector<OpStep>& steps)
{
    std::string out = "import torch\n\n\ndef reference(";
    std::vector<std::string> names;
    for (const TensorSpec& t : task.inputs)
        names.push_back(t.name);
    out += joined(names) + "):\n";
    for (const TensorSpec& t : task.inputs)
        out += "    # " + t.name + ": " + shapeText(t) + "\n";
    for (const OpStep& s : steps) {
        out += "    " + s.output + " = " + pythonFor(s) + "\n";
        for (const TensorSpec& o : task.outputs)
            if (o.name == s.output && task.reference.kind != Reference::Kind::TorchScript)
                out += "    " + s.output + " = " + s.output + ".to(" + torchDtype(dtypeName(o.dtype)) + ")  # an output: "
                       + shapeText(o) + "\n";
    }
    std::vector<std::string> outs;
    for (const TensorSpec& o : task.outputs)
        outs.push_back(task.reference.kind == Reference::Kind::TorchScript
                           ? o.name + ".to(" + torchDtype(dtypeName(o.dtype)) + ")" : o.name);
    out += "    return " + joined(outs) + "\n";
    return out;
}

} // namespace kf::agent
