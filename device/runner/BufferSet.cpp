#include "device/runner/BufferSet.h"

#include "device/runner/RunPlan.h"

#include <algorithm>
#include <limits>

namespace kf::device {

namespace {

Result<std::int64_t> checkedProduct(const std::vector<std::int64_t>& extents, const std::string& name)
{
    std::int64_t n = 1;
    for (auto e : extents) {
        if (e < 0)
            return Error::failed("size " + name, "a dimension is negative (" + std::to_string(e) + ")");
        if (e != 0 && n > std::numeric_limits<std::int64_t>::max() / e)
            return Error::failed("size " + name, "the element count overflows 64 bits");
        n *= e;
    }
    return n;
}

Result<void> checkBytes(TensorLayout& t, std::int64_t memoryLimit, const ShapeBinding& shape)
{
    const std::int64_t size = dtypeSize(t.dtype);
    if (t.elements > std::numeric_limits<std::int64_t>::max() / size)
        return Error::failed("size " + t.name, "the byte count overflows 64 bits");
    const std::int64_t bytes = t.elements * size;
    if (memoryLimit > 0 && bytes > memoryLimit)
        return Error::failed("size " + t.name, t.name + " needs " + std::to_string(bytes) + " bytes at " + shape.describe() + ", more than the GPU's " +
                         std::to_string(memoryLimit), "use smaller shapes");
    t.bytes = static_cast<size_t>(bytes);
    return {};
}

} // namespace

Result<std::vector<TensorLayout>> layoutFor(const Task& task, const Candidate& candidate, const ShapeBinding& shape,
                                            std::int64_t memoryLimit)
{
    std::vector<TensorLayout> out;
    auto add = [&](const TensorSpec& spec, TensorLayout::Role role) -> Result<void> {
        TensorLayout t;
        t.name = spec.name;
        t.dtype = spec.dtype;
        t.role = role;
        t.spec = &spec;
        auto ext = task.extents(spec, shape);
        if (!ext)
            return ext.error();
        t.extents = std::move(ext.value());
        auto n = checkedProduct(t.extents, t.name);
        if (!n)
            return n.error();
        t.elements = n.value();
        if (auto r = checkBytes(t, memoryLimit, shape); !r)
            return r;
        out.push_back(std::move(t));
        return {};
    };
    for (const auto& s : task.inputs)
        if (auto r = add(s, TensorLayout::Role::Input); !r)
            return r.error();
    for (const auto& s : task.outputs)
        if (auto r = add(s, TensorLayout::Role::Output); !r)
            return r.error();
    const Env env = task.environment(candidate, shape);
    for (const auto& s : candidate.scratch) {
        TensorLayout t;
        t.name = s.name;
        t.dtype = s.dtype;
        t.role = TensorLayout::Role::Scratch;
        t.zero = s.zero;
        auto n = s.count.evalInt(env);
        if (!n)
            return Error::failed("size scratch " + s.name, n.error().why);
        if (*n < 0)
            return Error::failed("size scratch " + s.name, "the element count is negative");
        t.elements = *n;
        t.extents = {*n};
        if (auto r = checkBytes(t, memoryLimit, shape); !r)
            return r.error();
        out.push_back(std::move(t));
    }
    return out;
}

Result<BufferSet> BufferSet::allocate(const std::vector<TensorLayout>& layout, std::vector<TensorLayout::Role> roles,
                                      std::uint64_t seed, CUstream stream)
{
    BufferSet set;
    for (size_t i = 0; i < layout.size(); ++i) {
        const TensorLayout& t = layout[i];
        if (std::find(roles.begin(), roles.end(), t.role) == roles.end())
            continue;
        auto b = GuardedBuffer::allocate(t.name, t.bytes, deriveSeed(seed, 0x6a09e667ull + i), stream);
        if (!b)
            return b.error();
        set.m_buffers.push_back(std::move(b.value()));
    }
    return set;
}

const GuardedBuffer* BufferSet::find(const std::string& name) const
{
    for (const auto& b : m_buffers)
        if (b.name() == name)
            return &b;
    return nullptr;
}

std::map<std::string, CUdeviceptr> BufferSet::pointers() const
{
    std::map<std::string, CUdeviceptr> m;
    for (const auto& b : m_buffers)
        m[b.name()] = b.ptr();
    return m;
}

Result<std::vector<GuardViolation>> BufferSet::checkGuards(CUstream stream) const
{
    std::vector<GuardViolation> all;
    for (const auto& b : m_buffers) {
        auto v = b.checkGuards(stream);
        if (!v)
            return v.error();
        all.insert(all.end(), v->begin(), v->end());
    }
    return all;
}

Result<void> BufferSet::writeGuards(CUstream stream) const
{
    for (const auto& b : m_buffers)
        if (auto r = b.writeGuards(stream); !r)
            return r;
    return {};
}

std::string formatIndex(const std::vector<std::int64_t>& index)
{
    std::string s = "[";
    for (size_t i = 0; i < index.size(); ++i)
        s += (i ? ", " : "") + std::to_string(index[i]);
    return s + "]";
}

} // namespace kf::device
