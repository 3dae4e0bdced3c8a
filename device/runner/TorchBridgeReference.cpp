// The catalog op / op tape reference: each catalog op (engine/task/OpCatalog.cpp) maps to
// LibTorch's own, fused where one exists, because the reference is also the benchmark baseline.
// Attributes are read once in prepareReference; run() only dispatches the ATen calls, so a bench
// that times run() measures LibTorch's work and nothing of ours.
// Output dtype: each op gives its natural PyTorch result (type promotion: an int32 sum is int64,
// an integer div is fp32, a half softmax stays half); a step that produces a task output then
// casts to the output's declared dtype when the two differ (detail::finishOutput).
#include "device/runner/TorchBridgeInternal.h"
#include "device/runner/TorchCatalog.h"

#include "engine/task/OpCatalog.h"

#include <c10/core/InferenceMode.h>

#include <array>
#include <functional>
#include <limits>
#include <optional>

namespace kf::device {

namespace {

using detail::bridgeError;
using Json = nlohmann::json;
/// Arguments of one step, in its input order (at most three: layer_norm x, weight, bias).
using Args = CatalogArgs;
using OpFn = CatalogOp;

/// Attribute reader for one step; a wrong type is an error sentence, not an exception.
class Attrs {
public:
    Attrs(const OpStep& s) : m_step(s) {}
    const std::string& error() const { return m_error; }

    std::optional<std::int64_t> integer(const char* name)
    {
        const Json* v = find(name);
        if (!v)
            return std::nullopt;
        if (!v->is_number_integer())
            return fail(name, "an integer"), std::nullopt;
        return v->get<std::int64_t>();
    }
    std::optional<double> number(const char* name)
    {
        const Json* v = find(name);
        if (!v)
            return std::nullopt;
        if (!v->is_number())
            return fail(name, "a number"), std::nullopt;
        return v->get<double>();
    }
    std::optional<bool> boolean(const char* name)
    {
        const Json* v = find(name);
        if (!v)
            return std::nullopt;
        if (!v->is_boolean())
            return fail(name, "true or false"), std::nullopt;
        return v->get<bool>();
    }
    std::optional<std::string> string(const char* name)
    {
        const Json* v = find(name);
        if (!v)
            return std::nullopt;
        if (!v->is_string())
            return fail(name, "a string"), std::nullopt;
        return v->get<std::string>();
    }
    std::optional<std::vector<std::int64_t>> integers(const char* name)
    {
        const Json* v = find(name);
        if (!v)
            return std::nullopt;
        std::vector<std::int64_t> out;
        if (v->is_array())
            for (const auto& e : *v) {
                if (!e.is_number_integer())
                    return fail(name, "a list of integers"), std::nullopt;
                out.push_back(e.get<std::int64_t>());
            }
        else
            return fail(name, "a list of integers"), std::nullopt;
        return out;
    }
    /// The JSON value itself (the binary ops keep an integer scalar an integer).
    const Json* raw(const char* name) { return find(name); }
    void require(const char* name)
    {
        if (!find(name) && m_error.empty())
            m_error = "attribute \"" + std::string(name) + "\" is required";
    }
    void fail(const char* name, const std::string& expected)
    {
        if (m_error.empty())
            m_error = "attribute \"" + std::string(name) + "\" must be " + expected;
    }

private:
    const Json* find(const char* name) const
    {
        if (!m_step.attrs.is_object())
            return nullptr;
        auto it = m_step.attrs.find(name);
        return it == m_step.attrs.end() || it->is_null() ? nullptr : &*it;
    }
    const OpStep& m_step;
    std::string m_error;
};

/// The trailing `count` extents of x (normalized_shape of layer_norm / rms_norm).
std::vector<std::int64_t> lastDims(const at::Tensor& x, std::int64_t count, const char* op)
{
    TORCH_CHECK(count >= 1 && count <= x.dim(), op, ": normalized_dims is ", count, " but the input has ", x.dim(),
                " dimension(s)");
    auto s = x.sizes();
    return std::vector<std::int64_t>(s.end() - count, s.end());
}

/// add, sub, mul, div: two tensors, or a tensor and the attribute "scalar".
OpFn arithmeticOp(const std::string& op, size_t n, Attrs& a, std::string& why)
{
    OpFn fn;
    at::Tensor (*bt)(const at::Tensor&, const at::Tensor&) = nullptr;
    at::Tensor (*bs)(const at::Tensor&, const at::Scalar&) = nullptr;
    if (op == "add") {
        bt = [](const at::Tensor& x, const at::Tensor& y) { return at::add(x, y); };
        bs = [](const at::Tensor& x, const at::Scalar& y) { return at::add(x, y); };
    } else if (op == "sub") {
        bt = [](const at::Tensor& x, const at::Tensor& y) { return at::sub(x, y); };
        bs = [](const at::Tensor& x, const at::Scalar& y) { return at::sub(x, y); };
    } else if (op == "mul") {
        bt = [](const at::Tensor& x, const at::Tensor& y) { return at::mul(x, y); };
        bs = [](const at::Tensor& x, const at::Scalar& y) { return at::mul(x, y); };
    } else {
        bt = [](const at::Tensor& x, const at::Tensor& y) { return at::div(x, y); };
        bs = [](const at::Tensor& x, const at::Scalar& y) { return at::div(x, y); };
    }
    const Json* scalar = a.raw("scalar");
    if (n == 2 && scalar) {
        why = op + " takes either two inputs or one input and the attribute \"scalar\", not both";
    } else if (n == 2) {
        fn = [bt](const Args& x) { return bt(*x[0], *x[1]); };
    } else if (!scalar || !scalar->is_number()) {
        why = op + " with one input needs a numeric attribute \"scalar\"";
    } else {
        // An integer scalar keeps an integer tensor integer (PyTorch's type promotion).
        at::Scalar v = scalar->is_number_integer() ? at::Scalar(scalar->get<std::int64_t>())
                                                   : at::Scalar(scalar->get<double>());
        fn = [bs, v](const Args& x) { return bs(*x[0], v); };
    }
    return fn;
}

/// The elementwise ops of one tensor; empty when `op` is none of them.
OpFn elementwiseOp(const std::string& op, Attrs& a, std::string& why)
{
    OpFn fn;
    if (op == "neg") {
        fn = [](const Args& x) { return at::neg(*x[0]); };
    } else if (op == "abs") {
        fn = [](const Args& x) { return at::abs(*x[0]); };
    } else if (op == "exp") {
        fn = [](const Args& x) { return at::exp(*x[0]); };
    } else if (op == "log") {
        fn = [](const Args& x) { return at::log(*x[0]); };
    } else if (op == "sqrt") {
        fn = [](const Args& x) { return at::sqrt(*x[0]); };
    } else if (op == "rsqrt") {
        fn = [](const Args& x) { return at::rsqrt(*x[0]); };
    } else if (op == "tanh") {
        fn = [](const Args& x) { return at::tanh(*x[0]); };
    } else if (op == "sigmoid") {
        fn = [](const Args& x) { return at::sigmoid(*x[0]); };
    } else if (op == "relu") {
        fn = [](const Args& x) { return at::relu(*x[0]); };
    } else if (op == "silu") {
        fn = [](const Args& x) { return at::silu(*x[0]); };
    } else if (op == "gelu") {
        std::string approx = a.string("approximate").value_or("none");
        if (approx != "none" && approx != "tanh")
            why = "gelu: approximate must be \"none\" or \"tanh\", not \"" + approx + "\"";
        fn = [approx](const Args& x) { return at::gelu(*x[0], approx); };
    }
    return fn;
}

/// softmax, log_softmax, layer_norm and rms_norm over the trailing dimensions.
OpFn normalisingOp(const std::string& op, size_t n, Attrs& a, bool golden, std::optional<double> goldenEps)
{
    OpFn fn;
    if (op == "softmax" || op == "log_softmax") {
        // No dtype argument: a half input gives a half output (accumulation is fp32 inside).
        std::int64_t dim = a.integer("dim").value_or(-1);
        if (op == "softmax")
            fn = [dim](const Args& x) { return at::softmax(*x[0], dim); };
        else
            fn = [dim](const Args& x) { return at::log_softmax(*x[0], dim); };
    } else if (op == "layer_norm") {
        double eps = a.number("eps").value_or(1e-5);
        std::int64_t nd = a.integer("normalized_dims").value_or(1);
        fn = [eps, nd, n](const Args& x) {
            std::optional<at::Tensor> w, b;
            if (n >= 2)
                w = *x[1];
            if (n >= 3)
                b = *x[2];
            return at::layer_norm(*x[0], lastDims(*x[0], nd, "layer_norm"), w, b, eps, /*cudnn_enable=*/true);
        };
    } else if (op == "rms_norm") {
        // No eps: LibTorch's default (the epsilon of the input's accumulation type), as in Python.
        std::optional<double> eps = a.number("eps");
        if (!eps && golden)
            eps = goldenEps; // the native dtype's default, not float64's far smaller one
        std::int64_t nd = a.integer("normalized_dims").value_or(1);
        fn = [eps, nd, n](const Args& x) {
            std::optional<at::Tensor> w;
            if (n >= 2)
                w = *x[1];
            return at::rms_norm(*x[0], lastDims(*x[0], nd, "rms_norm"), w, eps);
        };
    }
    return fn;
}

/// matmul, bmm, transpose and permute.
OpFn layoutOp(const std::string& op, Attrs& a)
{
    OpFn fn;
    if (op == "matmul") {
        fn = [](const Args& x) { return at::matmul(*x[0], *x[1]); };
    } else if (op == "bmm") {
        fn = [](const Args& x) { return at::bmm(*x[0], *x[1]); };
    } else if (op == "transpose" || op == "permute") {
        // clone(Contiguous) rather than contiguous(): when the view happens to be contiguous
        // (a swapped dim of size 1) contiguous() would return the input itself and the baseline
        // would do no work while a kernel must still write every element.
        if (op == "transpose") {
            a.require("dim0");
            a.require("dim1");
            std::int64_t d0 = a.integer("dim0").value_or(0), d1 = a.integer("dim1").value_or(0);
            fn = [d0, d1](const Args& x) { return x[0]->transpose(d0, d1).clone(at::MemoryFormat::Contiguous); };
        } else {
            a.require("dims");
            std::vector<std::int64_t> dims = a.integers("dims").value_or(std::vector<std::int64_t>{});
            fn = [dims](const Args& x) { return x[0]->permute(dims).clone(at::MemoryFormat::Contiguous); };
        }
    }
    return fn;
}

/// sum, mean, amax and cumsum.
OpFn reductionOp(const std::string& op, Attrs& a)
{
    OpFn fn;
    if (op == "sum" || op == "mean" || op == "amax") {
        std::optional<std::int64_t> dim = a.integer("dim");
        bool keep = a.boolean("keepdim").value_or(false);
        // No dim reduces every dimension (keepdim then keeps them all as size 1).
        at::OptionalIntArrayRef none;
        if (op == "sum")
            fn = [dim, keep, none](const Args& x) {
                return dim ? at::sum(*x[0], at::IntArrayRef(*dim), keep) : at::sum(*x[0], none, keep);
            };
        else if (op == "mean")
            fn = [dim, keep, none](const Args& x) {
                return dim ? at::mean(*x[0], at::IntArrayRef(*dim), keep) : at::mean(*x[0], none, keep);
            };
        else
            fn = [dim, keep](const Args& x) {
                return dim ? at::amax(*x[0], at::IntArrayRef(*dim), keep) : at::amax(*x[0], {}, keep);
            };
    } else if (op == "cumsum") {
        a.require("dim");
        std::int64_t dim = a.integer("dim").value_or(0);
        fn = [dim](const Args& x) { return at::cumsum(*x[0], dim); };
    }
    return fn;
}

/// Compiles one step into a closure over its parsed attributes; an empty function plus a
/// sentence in `why` when the step cannot be run.
OpFn compileOp(const OpStep& s, bool golden, std::optional<double> goldenEps, std::string& why)
{
    Attrs a(s);
    const std::string& op = s.op;
    const size_t n = s.inputs.size();
    const OpInfo* info = findOp(op);
    if (!info) {
        why = "\"" + op + "\" is not a catalog op";
        return {};
    }
    if (static_cast<int>(n) < info->minInputs || static_cast<int>(n) > info->maxInputs) {
        why = op + " takes " + std::to_string(info->minInputs) +
              (info->minInputs == info->maxInputs ? "" : " to " + std::to_string(info->maxInputs)) + " input(s), got " +
              std::to_string(n);
        return {};
    }
    OpFn fn;

    if (op == "add" || op == "sub" || op == "mul" || op == "div") {
        fn = arithmeticOp(op, n, a, why);
    } else if (op == "softmax" || op == "log_softmax" || op == "layer_norm" || op == "rms_norm") {
        fn = normalisingOp(op, n, a, golden, goldenEps);
    } else if (op == "matmul" || op == "bmm" || op == "transpose" || op == "permute") {
        fn = layoutOp(op, a);
    } else if (op == "sum" || op == "mean" || op == "amax" || op == "cumsum") {
        fn = reductionOp(op, a);
    } else if (op == "to") {
        a.require("dtype");
        std::string name = a.string("dtype").value_or("");
        std::optional<DType> t = parseDType(name);
        if (!t && a.error().empty())
            why = "to: unknown dtype \"" + name + "\"; use one of: " + dtypeNames();
        at::ScalarType st = t ? detail::producedType(*t, golden) : at::kFloat;
        // copy=true: converting to the dtype it already has is still a fresh tensor.
        fn = [st](const Args& x) { return x[0]->to(st, /*non_blocking=*/false, /*copy=*/true); };
    } else if (op == "clone") {
        fn = [](const Args& x) { return at::clone(*x[0], at::MemoryFormat::Contiguous); };
    } else if (OpFn f = elementwiseOp(op, a, why)) {
        fn = std::move(f);
    } else {
        why = "\"" + op + "\" is in the catalog but this runner has no mapping for it";
    }
    if (why.empty() && !a.error().empty())
        why = op + ": " + a.error();
    if (!why.empty())
        return {};
    return fn;
}

/// Catalog op and op tape: a straight list of compiled steps over value slots (task inputs
/// first, then each step's output), resolved by name once at preparation.
class OpReference final : public detail::ReferenceBase {
public:
    struct Step {
        std::string op;
        std::array<int, 3> args{-1, -1, -1};
        int slot = -1;
        int outputIndex = -1;                   ///< index into the task outputs, or -1
        at::ScalarType declared = at::kFloat;  ///< the task output's dtype when outputIndex >= 0
        OpFn fn;
    };

    static Result<std::unique_ptr<TorchBridge::Reference>> make(const Task& task,
                                                                const std::map<std::string, at::Tensor>& inputs, bool golden)
    {
        // rms_norm's default eps is the epsilon of the input's accumulation type: float for
        // fp32/fp16/bf16 tasks, which a golden run in float64 must keep.
        std::optional<double> goldenEps = std::numeric_limits<float>::epsilon();
        for (const auto& in : task.inputs)
            if (in.dtype == DType::F64)
                goldenEps.reset();
        auto ref = std::make_unique<OpReference>();
        std::map<std::string, int> slots;
        for (const auto& [name, t] : inputs) {
            slots[name] = static_cast<int>(ref->m_slots.size());
            ref->m_slots.push_back(t);
            ref->m_inputs.push_back(t);
        }
        for (const auto& out : task.outputs)
            ref->m_outputNames.push_back(out.name);
        ref->m_results.resize(task.outputs.size());
        ref->m_outputSlots.assign(task.outputs.size(), -1);

        for (size_t i = 0; i < task.reference.steps.size(); ++i) {
            const OpStep& s = task.reference.steps[i];
            const std::string what = "prepare reference op " + s.op + (task.reference.steps.size() > 1 ? " (tape step " + std::to_string(i + 1) + ")" : "");
            Step step;
            step.op = s.op;
            std::string why;
            step.fn = compileOp(s, golden, goldenEps, why);
            if (!step.fn)
                return bridgeError(what, why);
            for (size_t k = 0; k < s.inputs.size(); ++k) {
                auto it = slots.find(s.inputs[k]);
                if (it == slots.end())
                    return bridgeError(what, "\"" + s.inputs[k] +
                                                 "\" is neither a given task input nor the output of an earlier step");
                step.args[k] = it->second;
            }
            // A single-op reference may leave its output unnamed: it is the task's only output.
            std::string outName = s.output.empty() && task.outputs.size() == 1 ? task.outputs[0].name : s.output;
            for (size_t o = 0; o < task.outputs.size(); ++o)
                if (task.outputs[o].name == outName) {
                    step.outputIndex = static_cast<int>(o);
                    step.declared = detail::producedType(task.outputs[o].dtype, golden);
                }
            step.slot = static_cast<int>(ref->m_slots.size());
            slots[outName] = step.slot;
            ref->m_slots.emplace_back();
            if (step.outputIndex >= 0)
                ref->m_outputSlots[static_cast<size_t>(step.outputIndex)] = step.slot;
            ref->m_steps.push_back(std::move(step));
        }
        for (size_t o = 0; o < task.outputs.size(); ++o)
            if (ref->m_outputSlots[o] < 0)
                return bridgeError("prepare the reference", "no step produces the task output \"" + task.outputs[o].name + "\"");
        return std::unique_ptr<TorchBridge::Reference>(std::move(ref));
    }

    Result<void> run() override
    {
        // Inference mode: no autograd bookkeeping, as a PyTorch user would benchmark inference.
        c10::InferenceMode guard;
        const Step* current = nullptr;
        try {
            for (const Step& s : m_steps) {
                current = &s;
                Args args{nullptr, nullptr, nullptr};
                for (size_t k = 0; k < args.size(); ++k)
                    if (s.args[k] >= 0)
                        args[k] = &m_slots[static_cast<size_t>(s.args[k])];
                at::Tensor r = s.fn(args);
                if (s.outputIndex >= 0)
                    r = detail::finishOutput(std::move(r), s.declared, m_inputs);
                m_slots[static_cast<size_t>(s.slot)] = std::move(r);
            }
            for (size_t o = 0; o < m_outputSlots.size(); ++o)
                m_results[o] = m_slots[static_cast<size_t>(m_outputSlots[o])];
            return {};
        } catch (const c10::Error& e) {
            return detail::torchError("reference op " + (current ? current->op : std::string("?")), e);
        } catch (const std::exception& e) {
            std::string what = "reference op " + (current ? current->op : std::string("?"));
            return bridgeError(what, what + " failed: " + e.what());
        }
    }

private:
    std::vector<at::Tensor> m_slots;
    std::vector<at::Tensor> m_inputs;
    std::vector<Step> m_steps;
    std::vector<int> m_outputSlots;
};

} // namespace

at::ScalarType scalarTypeOf(DType t)
{
    return detail::scalarType(t);
}

CatalogOp catalogOp(const OpStep& step, std::string& why)
{
    return compileOp(step, /*golden=*/false, std::nullopt, why);
}

Result<std::unique_ptr<TorchBridge::Reference>> TorchBridge::prepareReference(const Task& task,
                                                                              const std::map<std::string, RawTensor>& inputs,
                                                                              Precision precision)
{
    const bool golden = precision == Precision::Golden;
    const std::string what = std::string("prepare the ") + (golden ? "float64 golden " : "") + "reference of task " + task.name;
    try {
        std::map<std::string, at::Tensor> wrapped;
        for (const auto& [name, raw] : inputs) {
            const TensorSpec* spec = nullptr;
            for (const auto& t : task.inputs)
                if (t.name == name)
                    spec = &t;
            if (!spec)
                return bridgeError(what, "\"" + name + "\" is not an input of the task");
            if (spec->dtype != raw.dtype)
                return bridgeError(what, "input \"" + name + "\" is declared " + std::string(dtypeName(spec->dtype)) +
                                             " but was given as " + std::string(dtypeName(raw.dtype)));
            if (!raw.data && raw.elements() != 0)
                return bridgeError(what, "input \"" + name + "\" has a null pointer");
            wrapped[name] = detail::wrap(raw);
            if (golden && isFloating(raw.dtype))
                wrapped[name] = wrapped[name].to(at::kDouble);
        }
        if (task.outputs.empty())
            return bridgeError(what, "the task has no outputs");

        if (task.reference.kind == kf::Reference::Kind::TorchScript) {
            std::vector<at::Tensor> ordered;
            for (const auto& name : task.reference.scriptInputs) {
                auto it = wrapped.find(name);
                if (it == wrapped.end())
                    return bridgeError(what, "the TorchScript reference takes input \"" + name + "\", which was not given");
                ordered.push_back(it->second);
            }
            return detail::makeScriptReference(task, std::move(ordered), golden);
        }
        if (task.reference.steps.empty())
            return bridgeError(what, "the reference has no op");
        return OpReference::make(task, wrapped, golden);
    } catch (const c10::Error& e) {
        return detail::torchError(what, e);
    }
}

std::unique_ptr<TorchBridge::Reference> TorchBridge::runGolden(const Task& task,
                                                              const std::map<std::string, RawTensor>& inputs, std::string& note)
{
    bool anyFloating = false;
    for (const auto& out : task.outputs)
        anyFloating = anyFloating || isFloating(out.dtype);
    if (!anyFloating)
        return nullptr;
    auto golden = prepareReference(task, inputs, Precision::Golden);
    Result<void> ran = golden ? golden.value()->run() : Result<void>(golden.error());
    if (!ran) {
        note = ran.error().why + "; compared with LibTorch's result instead";
        return nullptr;
    }
    return std::move(golden.value());
}

} // namespace kf::device
