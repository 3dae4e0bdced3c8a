#include "device/cast/cpp/CastOp.h"

#include "device/CudaDriver.h"
#include "device/runner/TorchCatalog.h"

#include <c10/core/DeviceGuard.h>
#include <c10/core/GradMode.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <sstream>

namespace kf_cast::detail {

using Json = nlohmann::json;

namespace {

/// The manifest's dtype names were checked when the package was opened.
at::ScalarType scalarOf(const std::string& dtype)
{
    return kf::device::scalarTypeOf(*kf::parseDType(dtype));
}

kf::Expr exprOf(const Json& e)
{
    auto parsed = kf::Expr::parse(e.at("text").get<std::string>());
    if (!parsed)
        throw std::runtime_error(parsed.error().message());   // the package check parsed it already
    return std::move(parsed.value());
}

std::string joined(const std::vector<std::int64_t>& v)
{
    std::string s;
    for (std::int64_t x : v)
        s += (s.empty() ? "" : ", ") + std::to_string(x);
    return "[" + s + "]";
}

} // namespace

CastOp::CastOp(const kf::cast::Package& package, const kf::cast::PackageOp& op, const LoadOptions& options)
    : m_name(op.name), m_qualified("cast::" + op.name), m_kernels(options.kernels), m_forceImage(options.image)
{
    const Json& j = op.json;
    m_inputs = tensorDecls(j["inputs"]);
    m_outputs = tensorDecls(j["outputs"]);
    for (const auto& [k, v] : j["parameters"].items())
        m_parameters[k] = v.is_number_integer() ? kf::Value::integer(v.get<std::int64_t>()) : kf::Value::real(v.get<double>());
    for (const Json& s : j["symbols"])
        m_symbols[s["name"]] = {s["min"].get<std::int64_t>(), s["max"].get<std::int64_t>(), s["multiple_of"].get<std::int64_t>()};
    for (const Json& c : j["constraints"])
        m_constraints.push_back(exprOf(c));
    for (const auto& t : m_inputs)
        m_bufferNames.push_back(t.name);
    for (const auto& t : m_outputs)
        m_bufferNames.push_back(t.name);
    for (const Json& s : j["scratch"]) {
        m_scratch.push_back({scalarOf(s["dtype"]), exprOf(s["count"]), s["zero"].get<bool>()});
        m_bufferNames.push_back(s["name"]);
    }
    for (const Json& l : j["launches"])
        m_launches.push_back(launchDecl(l));
    for (const auto& [arch, path] : j["images"].items())
        m_images[arch] = package.file(path.get<std::string>())->bytes;

    const Json& ref = j["reference"];
    if (ref["kind"] == "tape") {
        loadTape(package, ref);
    } else {
        m_script = loadScript(package.file(ref["file"].get<std::string>())->bytes, package.origin);
        for (const Json& n : ref["inputs"]) {
            auto it = std::find_if(m_inputs.begin(), m_inputs.end(), [&](const TensorDecl& t) { return t.name == n.get<std::string>(); });
            m_scriptInputs.push_back(static_cast<int>(it - m_inputs.begin()));
        }
    }
}

std::vector<CastOp::TensorDecl> CastOp::tensorDecls(const Json& list)
{
    std::vector<TensorDecl> out;
    for (const Json& t : list) {
        TensorDecl d{t["name"], t["dtype"], scalarOf(t["dtype"]), {}};
        for (const Json& e : t["shape"])
            d.dims.push_back(e.is_string() ? Dim{e.get<std::string>(), 0} : Dim{{}, e.get<std::int64_t>()});
        out.push_back(std::move(d));
    }
    return out;
}

CastOp::LaunchDecl CastOp::launchDecl(const Json& l) const
{
    LaunchDecl d;
    d.kernel = l["kernel"];
    d.lowered = l["lowered"];
    for (int k = 0; k < 3; ++k) {
        d.grid[k] = exprOf(l["grid"][k]);
        d.block[k] = exprOf(l["block"][k]);
    }
    d.shared = exprOf(l["shared_bytes"]);
    for (const Json& a : l["args"]) {
        ArgDecl arg;
        if (a.contains("tensor")) {
            const std::string t = a["tensor"];
            arg.tensor = static_cast<int>(std::find(m_bufferNames.begin(), m_bufferNames.end(), t) - m_bufferNames.begin());
        } else {
            arg.scalar = exprOf(a["scalar"]);
            arg.type = a["type"];
        }
        d.args.push_back(std::move(arg));
    }
    return d;
}

void CastOp::loadTape(const kf::cast::Package& package, const Json& ref)
{
    std::map<std::string, int> slots;
    for (std::size_t i = 0; i < m_inputs.size(); ++i)
        slots[m_inputs[i].name] = static_cast<int>(i);
    int next = static_cast<int>(m_inputs.size());
    for (const Json& s : ref["steps"]) {
        kf::OpStep step{s["op"], s["inputs"].get<std::vector<std::string>>(), s.value("attrs", Json::object()), s["output"]};
        std::string why;
        RefStep r;
        r.fn = kf::device::catalogOp(step, why);
        if (!r.fn)
            throw std::runtime_error(package.origin + ": " + m_qualified + ": its reference step " + step.op +
                                     " cannot run: " + why);
        for (std::size_t k = 0; k < step.inputs.size() && k < 3; ++k) {
            auto it = slots.find(step.inputs[k]);
            if (it == slots.end())
                throw std::runtime_error(package.origin + ": " + m_qualified + ": reference step " + step.op +
                                         " reads \"" + step.inputs[k] + "\", which nothing before it produces");
            r.args[k] = it->second;
        }
        r.slot = next++;
        slots[step.output] = r.slot;
        m_tape.push_back(std::move(r));
    }
    m_slotCount = static_cast<std::size_t>(next);
    for (const auto& o : m_outputs) {
        auto it = slots.find(o.name);
        if (it == slots.end())
            throw std::runtime_error(package.origin + ": " + m_qualified + ": no reference step produces " + o.name);
        m_outputSlots.push_back(it->second);
    }
}

void CastOp::bad(const std::string& what) const
{
    TORCH_CHECK_VALUE(false, m_qualified, ": ", what);
    std::abort();
}

void CastOp::warnOnce(const std::string& key, const std::string& text)
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (!m_warned.insert(key).second)
            return;
    }
    TORCH_WARN(m_qualified, ": ", text);
}

kf::Env CastOp::bind(c10::ArrayRef<at::Tensor> inputs, bool checkRanges) const
{
    if (inputs.size() != m_inputs.size())
        bad("takes " + std::to_string(m_inputs.size()) + " tensors, got " + std::to_string(inputs.size()));
    kf::Env env = m_parameters;
    std::map<std::string, std::string> origin;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const TensorDecl& d = m_inputs[i];
        const at::Tensor& t = inputs[i];
        if (!t.defined())
            bad("argument '" + d.name + "' is an undefined tensor");
        if (t.scalar_type() != d.type)
            bad("argument '" + d.name + "' is " + std::string(c10::toString(t.scalar_type())) + "; the kernel takes " + d.dtype);
        if (t.dim() != static_cast<std::int64_t>(d.dims.size()))
            bad("argument '" + d.name + "' has " + std::to_string(t.dim()) + " dimension(s); the kernel takes " +
                std::to_string(d.dims.size()));
        for (std::size_t k = 0; k < d.dims.size(); ++k) {
            const std::int64_t extent = t.size(static_cast<std::int64_t>(k));
            const Dim& dim = d.dims[k];
            if (dim.symbol.empty()) {
                if (checkRanges && extent != dim.value)
                    bad("argument '" + d.name + "' has extent " + std::to_string(extent) + " at dim " + std::to_string(k) +
                        "; the kernel takes " + std::to_string(dim.value));
            } else if (auto it = origin.find(dim.symbol); it != origin.end()) {
                if (checkRanges && env[dim.symbol].i != extent)
                    bad("argument '" + d.name + "' has " + dim.symbol + "=" + std::to_string(extent) + " at dim " +
                        std::to_string(k) + ", but '" + it->second + "' gave " + dim.symbol + "=" +
                        std::to_string(env[dim.symbol].i));
            } else {
                env[dim.symbol] = kf::Value::integer(extent);
                origin[dim.symbol] = d.name;
            }
        }
    }
    if (!checkRanges)
        return env;
    for (const auto& [sym, r] : m_symbols) {
        const std::int64_t v = env[sym].i;
        if (v < r.min || v > r.max)
            bad(sym + "=" + std::to_string(v) + " (from argument '" + origin[sym] +
                "') is outside the range the kernel was verified for, [" + std::to_string(r.min) + ", " +
                std::to_string(r.max) + "]");
        if (v % r.multipleOf)
            bad(sym + "=" + std::to_string(v) + " (from argument '" + origin[sym] + "') is not a multiple of " +
                std::to_string(r.multipleOf));
    }
    for (const kf::Expr& c : m_constraints) {
        auto v = c.eval(env);
        if (!v)
            bad("constraint " + c.text() + " cannot be evaluated: " + v.error().why);
        if (v->asDouble() == 0.0) {
            std::string shapes;
            for (const auto& [sym, r] : m_symbols)
                shapes += (shapes.empty() ? "" : " ") + sym + "=" + std::to_string(env[sym].i);
            bad("the shapes (" + shapes + ") break the constraint " + c.text());
        }
    }
    return env;
}

std::vector<at::Tensor> CastOp::finish(std::vector<at::Tensor> outs) const
{
    for (std::size_t i = 0; i < outs.size(); ++i) {
        if (outs[i].scalar_type() != m_outputs[i].type)
            outs[i] = outs[i].to(m_outputs[i].type);
        outs[i] = outs[i].contiguous();
    }
    return outs;
}

std::vector<at::Tensor> CastOp::reference(c10::ArrayRef<at::Tensor> inputs)
{
    c10::AutoGradMode noGrad(false);
    std::vector<at::Tensor> outs;
    if (m_script) {
        std::vector<at::Tensor> args;
        for (int k : m_scriptInputs)
            args.push_back(inputs[static_cast<std::size_t>(k)]);
        outs = m_script(args);
    } else {
        std::vector<at::Tensor> slots(m_slotCount);
        for (std::size_t i = 0; i < inputs.size(); ++i)
            slots[i] = inputs[i];
        for (const RefStep& s : m_tape) {
            std::array<const at::Tensor*, 3> args{nullptr, nullptr, nullptr};
            for (int k = 0; k < 3; ++k)
                if (s.args[static_cast<std::size_t>(k)] >= 0)
                    args[static_cast<std::size_t>(k)] = &slots[static_cast<std::size_t>(s.args[static_cast<std::size_t>(k)])];
            slots[static_cast<std::size_t>(s.slot)] = s.fn(args);
        }
        for (int slot : m_outputSlots)
            outs.push_back(slots[static_cast<std::size_t>(slot)]);
    }
    outs = finish(std::move(outs));
    for (auto& o : outs)
        for (const auto& in : inputs)
            if (o.is_alias_of(in)) {
                o = o.clone();
                break;
            }
    return outs;
}

std::string CastOp::refusal(c10::ArrayRef<at::Tensor> inputs) const
{
    try {
        bind(inputs, true);
    } catch (const c10::Error& e) {
        std::string why = e.what_without_backtrace();
        if (why.rfind(m_qualified + ": ", 0) == 0)
            why = why.substr(m_qualified.size() + 2);
        return why;
    }
    return {};
}

std::vector<at::Tensor> CastOp::run(c10::ArrayRef<at::Tensor> inputs, Mode mode)
{
    if (mode == Mode::Meta || !m_allowFallback.load(std::memory_order_relaxed))
        return runOnce(inputs, mode);
    try {
        return runOnce(inputs, mode);
    } catch (const std::exception& e) {
        m_fallbacks.fetch_add(1, std::memory_order_relaxed);
        std::string why = e.what();
        warnOnce("raised", "raised (" + why.substr(0, why.find('\n')) +
                               "); fallback allowed: running its reference ops instead, every time counted");
        return reference(inputs);
    }
}

std::vector<at::Tensor> CastOp::runOnce(c10::ArrayRef<at::Tensor> inputs, Mode mode)
{
    if (mode == Mode::Meta)
        return metaOutputs(inputs);
    if (mode == Mode::Cpu) {
        bind(inputs, true);
        if (m_kernels)
            warnOnce("cpu", "CPU tensors run the reference ops (the package's kernels are CUDA kernels)");
        return reference(inputs);
    }
    if (!m_kernels) {
        bind(inputs, true);
        return reference(inputs);
    }
    const at::Device device = inputs.front().device();
    checkKernelArguments(inputs, device);
    c10::DeviceGuard guard(device);
    const int index = device.index();
    DeviceImage& img = image(index);
    if (img.functions.empty()) {
        bind(inputs, true);
        warnOnce("fallback" + std::to_string(index), "running the reference ops instead of the kernel on cuda:" +
                                                          std::to_string(index) + " (" + img.reason + ")");
        return reference(inputs);
    }
    const Plan& p = plan(index, inputs);
    std::vector<at::Tensor> outs;
    outs.reserve(m_outputs.size());
    for (std::size_t o = 0; o < m_outputs.size(); ++o)
        outs.push_back(at::empty(p.outputs[o], inputs.front().options().dtype(m_outputs[o].type)));
    std::vector<at::Tensor> scratch;
    for (std::size_t s = 0; s < m_scratch.size(); ++s) {
        auto opts = inputs.front().options().dtype(m_scratch[s].type);
        scratch.push_back(m_scratch[s].zero ? at::zeros({p.scratch[s]}, opts) : at::empty({p.scratch[s]}, opts));
    }
    launchAll(p, img, index, inputs, outs, scratch);
    return outs;
}

std::vector<at::Tensor> CastOp::metaOutputs(c10::ArrayRef<at::Tensor> inputs) const
{
    const kf::Env env = bind(inputs, false);
    std::vector<at::Tensor> outs;
    for (const TensorDecl& o : m_outputs) {
        std::vector<std::int64_t> shape;
        for (const Dim& d : o.dims)
            shape.push_back(d.symbol.empty() ? d.value : env.at(d.symbol).i);
        outs.push_back(at::empty(shape, inputs.front().options().dtype(o.type)));
    }
    return outs;
}

void CastOp::checkKernelArguments(c10::ArrayRef<at::Tensor> inputs, const at::Device& device) const
{
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const at::Tensor& t = inputs[i];
        if (t.scalar_type() != m_inputs[i].type)
            bad("argument '" + m_inputs[i].name + "' is " + std::string(c10::toString(t.scalar_type())) +
                "; the kernel takes " + m_inputs[i].dtype);
        if (t.device() != device)
            bad("argument '" + m_inputs[i].name + "' is on " + t.device().str() + " but '" + m_inputs[0].name + "' is on " +
                device.str());
        if (!t.is_contiguous())
            bad("argument '" + m_inputs[i].name + "' is not contiguous; pass x.contiguous()");
        if (reinterpret_cast<std::uintptr_t>(t.data_ptr()) % 16 != 0)
            bad("argument '" + m_inputs[i].name +
                "' starts at an address that is not 16-byte aligned (a view with an offset); pass x.clone()");
    }
}

void CastOp::launchAll(const Plan& p, DeviceImage& img, int index, c10::ArrayRef<at::Tensor> inputs,
                       const std::vector<at::Tensor>& outs, const std::vector<at::Tensor>& scratch)
{
    const auto& cu = kf::device::cuda();
    CUstream stream = c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(index)).stream();
    void* small[16];
    std::vector<void*> large;
    const std::size_t bufferCount = inputs.size() + outs.size() + scratch.size();
    void** pointers = small;
    if (bufferCount > 16) {
        large.resize(bufferCount);
        pointers = large.data();
    }
    std::size_t at = 0;
    for (const auto& t : inputs)
        pointers[at++] = t.data_ptr();
    for (const auto& t : outs)
        pointers[at++] = t.data_ptr();
    for (const auto& t : scratch)
        pointers[at++] = t.data_ptr();
    void* params[64];
    for (const Plan::Launch& l : p.launches) {
        if (l.grid[0] == 0 || l.grid[1] == 0 || l.grid[2] == 0)
            continue;
        const std::size_t n = l.tensors.size();
        if (n > 64)
            bad("launch " + std::to_string(l.index) + " has more than 64 arguments");
        for (std::size_t a = 0; a < n; ++a)
            params[a] = l.tensors[a] >= 0 ? static_cast<void*>(&pointers[static_cast<std::size_t>(l.tensors[a])])
                                          : const_cast<unsigned char*>(l.scalars[a].data());
        CUfunction f = reinterpret_cast<CUfunction>(img.functions[static_cast<std::size_t>(l.index)]);
        if (l.shared > 48 * 1024)
            raiseSharedLimit(img, l);
        const CUresult rc = cu.cuLaunchKernel(f, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
                                              l.shared, stream, params, nullptr);
        if (rc != CUDA_SUCCESS) {
            const char* text = nullptr;
            cu.cuGetErrorString(rc, &text);
            TORCH_CHECK(false, m_qualified, ": cuLaunchKernel of ", m_launches[static_cast<std::size_t>(l.index)].kernel,
                        " failed: ", text ? text : "unknown error", " (grid ", joined({l.grid[0], l.grid[1], l.grid[2]}),
                        ", block ", joined({l.block[0], l.block[1], l.block[2]}), ")");
        }
    }
}

void CastOp::raiseSharedLimit(DeviceImage& img, const Plan::Launch& l)
{
    // Raised to the largest amount a shape has needed so far, again when a shape needs more.
    std::lock_guard<std::mutex> lock(m_mutex);
    unsigned& allowed = img.sharedRaised[l.index];
    if (l.shared > allowed) {
        CUfunction f = reinterpret_cast<CUfunction>(img.functions[static_cast<std::size_t>(l.index)]);
        kf::device::cuda().cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(l.shared));
        allowed = l.shared;
    }
}

} // namespace kf_cast::detail
