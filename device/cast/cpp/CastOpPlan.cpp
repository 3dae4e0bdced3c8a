// A call's plan (CastOp.h): for the inputs' shapes, the outputs' and scratch buffers' sizes and
// every launch's grid, block, shared memory and argument bytes, evaluated once per shape and kept.
#include "device/cast/cpp/CastOp.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace kf_cast::detail {

const CastOp::Plan& CastOp::plan(int device, c10::ArrayRef<at::Tensor> inputs)
{
    // Fast path: the same shapes as the last call, compared without building a key.
    if (const PlanNode* last = m_last.load(std::memory_order_acquire)) {
        const std::vector<std::int64_t>& k = last->key;
        bool same = !k.empty() && k[0] == device;
        std::size_t at = 1;
        for (std::size_t i = 0; same && i < inputs.size(); ++i) {
            const auto sizes = inputs[i].sizes();
            same = at < k.size() && k[at++] == static_cast<std::int64_t>(sizes.size());
            for (std::size_t d = 0; same && d < sizes.size(); ++d)
                same = at < k.size() && k[at++] == sizes[d];
        }
        if (same && at == k.size())
            return last->plan;
    }
    std::vector<std::int64_t> key{device};
    for (const auto& t : inputs) {
        key.push_back(t.dim());
        for (std::int64_t s : t.sizes())
            key.push_back(s);
    }
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        auto it = m_plans.find(key);
        if (it != m_plans.end()) {
            m_last.store(&it->second, std::memory_order_release);
            return it->second.plan;
        }
    }
    Plan p = makePlan(bind(inputs, true));
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_plans.size() >= 4096) {
        // Plans are referenced by calls in flight and never freed; past the cap, shapes are
        // evaluated on every call instead (a thread's own copy).
        thread_local Plan scratch;
        scratch = std::move(p);
        return scratch;
    }
    PlanNode& node = m_plans.emplace(key, PlanNode{std::move(p), key}).first->second;
    m_last.store(&node, std::memory_order_release);
    return node.plan;
}


/// The plan of shapes not seen before: the outputs' and scratch buffers' sizes, and every launch.
CastOp::Plan CastOp::makePlan(const kf::Env& env) const
{
    Plan p;
    for (const TensorDecl& o : m_outputs) {
        std::vector<std::int64_t> shape;
        for (const Dim& d : o.dims)
            shape.push_back(d.symbol.empty() ? d.value : env.at(d.symbol).i);
        p.outputs.push_back(std::move(shape));
    }
    for (const ScratchDecl& s : m_scratch) {
        auto n = s.count.evalInt(env);
        if (!n)
            bad("scratch buffer count " + s.count.text() + ": " + n.error().why);
        p.scratch.push_back(std::max<std::int64_t>(n.value(), 1));
    }
    for (std::size_t i = 0; i < m_launches.size(); ++i)
        p.launches.push_back(planLaunch(i, env));
    return p;
}

/// Launch `i` for these shapes: grid, block and shared memory within CUDA's limits, and its arguments.
CastOp::Plan::Launch CastOp::planLaunch(std::size_t i, const kf::Env& env) const
{
    static const std::int64_t maxGrid[3] = {2147483647, 65535, 65535};
    const LaunchDecl& l = m_launches[i];
    Plan::Launch pl;
    pl.index = static_cast<int>(i);
    std::int64_t threads = 1;
    for (int k = 0; k < 3; ++k) {
        auto g = l.grid[k].evalInt(env), b = l.block[k].evalInt(env);
        if (!g || !b)
            bad("launch " + std::to_string(i) + " (" + l.kernel + "): " + (!g ? g.error().why : b.error().why));
        if (g.value() < 0 || g.value() > maxGrid[k] || b.value() < 1 || b.value() > 1024)
            bad("launch " + std::to_string(i) + " (" + l.kernel + "): grid or block dimension " + std::to_string(k) +
                " is outside CUDA's limits (" + std::to_string(g.value()) + ", " + std::to_string(b.value()) + ")");
        pl.grid[k] = static_cast<unsigned>(g.value());
        pl.block[k] = static_cast<unsigned>(b.value());
        threads *= b.value();
    }
    auto shared = l.shared.evalInt(env);
    if (!shared || shared.value() < 0 || shared.value() > std::numeric_limits<int>::max() || threads > 1024)
        bad("launch " + std::to_string(i) + " (" + l.kernel + "): shared memory or block size is not a valid launch");
    pl.shared = static_cast<unsigned>(shared.value());
    for (const ArgDecl& a : l.args) {
        if (a.tensor >= 0) {
            pl.tensors.push_back(a.tensor);
            pl.scalars.push_back({});
            continue;
        }
        pl.tensors.push_back(-1);
        pl.scalars.push_back(scalarArg(i, a, env));
    }
    return pl;
}

/// A scalar argument's bytes as the kernel reads them (`type` in the manifest), refused when the
/// value does not fit it.
std::array<unsigned char, 8> CastOp::scalarArg(std::size_t i, const ArgDecl& a, const kf::Env& env) const
{
    std::array<unsigned char, 8> bytes{};
    auto v = a.scalar.eval(env);
    if (!v)
        bad("launch " + std::to_string(i) + ": scalar " + a.scalar.text() + ": " + v.error().why);
    const bool isFloat = a.type == "fp32" || a.type == "fp64";
    if (!isFloat && !v->isInt)
        bad("launch " + std::to_string(i) + ": scalar " + a.scalar.text() + " is not an integer");
    auto fits = [&](std::int64_t lo, std::int64_t hi) {
        if (v->i < lo || v->i > hi)
            bad("launch " + std::to_string(i) + ": scalar " + a.scalar.text() + " = " + std::to_string(v->i) +
                " does not fit " + a.type);
    };
    if (a.type == "int32") {
        fits(std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max());
        const std::int32_t x = static_cast<std::int32_t>(v->i);
        std::memcpy(bytes.data(), &x, sizeof x);
    } else if (a.type == "uint32") {
        fits(0, std::numeric_limits<std::uint32_t>::max());
        const std::uint32_t x = static_cast<std::uint32_t>(v->i);
        std::memcpy(bytes.data(), &x, sizeof x);
    } else if (a.type == "int64" || a.type == "uint64") {
        if (a.type == "uint64")
            fits(0, std::numeric_limits<std::int64_t>::max());
        std::memcpy(bytes.data(), &v->i, sizeof v->i);
    } else if (a.type == "fp32") {
        const float x = static_cast<float>(v->asDouble());
        std::memcpy(bytes.data(), &x, sizeof x);
    } else {
        const double x = v->asDouble();
        std::memcpy(bytes.data(), &x, sizeof x);
    }
    return bytes;
}

} // namespace kf_cast::detail
