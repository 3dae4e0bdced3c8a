// The task model's own functions: distribution names, default tolerances, launch geometry for a
// shape, extents and admissible shapes. Parsing is TaskParse.cpp's, writing TaskJson.cpp's.
#include "engine/task/Task.h"

#include "engine/core/Architectures.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace kf {

using Json = nlohmann::json;

std::string_view distributionKindName(Distribution::Kind k)
{
    switch (k) {
    case Distribution::Kind::Normal: return "normal";
    case Distribution::Kind::Uniform: return "uniform";
    case Distribution::Kind::HeavyTailed: return "heavy_tailed";
    case Distribution::Kind::MixedScales: return "mixed_scales";
    case Distribution::Kind::IntRange: return "int_range";
    case Distribution::Kind::Special: return "special";
    }
    return "normal";
}

Tolerance Tolerance::defaultFor(DType t)
{
    // torch.testing.assert_close defaults; atol is scaled by the reference RMS (docs/verification.md 7).
    switch (t) {
    case DType::F64: return {1e-7, 1e-7, AtolMode::Rms};
    case DType::F32: return {1.3e-6, 1e-5, AtolMode::Rms};
    case DType::F16: return {1e-3, 1e-5, AtolMode::Rms};
    case DType::BF16: return {1.6e-2, 1e-5, AtolMode::Rms};
    default: return {0.0, 0.0, AtolMode::Absolute};
    }
}

Result<LaunchGeometry> evaluateLaunch(const Task& task, const Candidate& candidate, const Launch& launch,
                                      const ShapeBinding& shape)
{
    // Error::pointer names the launch's field at fault, so the task validator can point at it.
    auto bad = [&](const char* field, const std::string& why) {
        return Error::inFile({}, field, "configure " + launch.kernel + " at " + shape.describe(), why);
    };
    const Env env = task.environment(candidate, shape);
    const std::string at = "for " + shape.describe();
    static const std::int64_t gridMax[3] = {2147483647, 65535, 65535};
    LaunchGeometry g;
    std::int64_t threads = 1;
    for (int d = 0; d < 3; ++d) {
        auto gv = launch.grid[d].evalInt(env);
        if (!gv)
            return bad("grid", at + ": " + gv.error().why);
        if (*gv < 1 || *gv > gridMax[d])
            return bad("grid", at + " grid dimension " + std::to_string(d) + " is " + std::to_string(*gv) + ", outside [1, " +
                                   std::to_string(gridMax[d]) + "]");
        auto bv = launch.block[d].evalInt(env);
        if (!bv)
            return bad("block", at + ": " + bv.error().why);
        if (*bv < 1)
            return bad("block", at + " block dimension " + std::to_string(d) + " is " + std::to_string(*bv));
        g.grid[d] = *gv;
        g.block[d] = *bv;
        threads *= *bv;
    }
    if (threads > 1024)
        return bad("block", at + " the block has " + std::to_string(threads) + " threads; CUDA allows at most 1024");
    auto sh = launch.sharedBytes.evalInt(env);
    if (!sh || *sh < 0)
        return bad("shared_bytes", at + ": " + (sh ? "negative dynamic shared memory" : sh.error().why));
    g.sharedBytes = *sh;
    return g;
}

std::string ShapeBinding::describe() const
{
    std::string s;
    for (const auto& [k, v] : values)
        s += (s.empty() ? "" : " ") + k + "=" + std::to_string(v);
    return s;
}

const TensorSpec* Task::findTensor(std::string_view name) const
{
    for (const auto& t : inputs)
        if (t.name == name)
            return &t;
    for (const auto& t : outputs)
        if (t.name == name)
            return &t;
    return nullptr;
}

const Candidate* Task::findCandidate(std::string_view file) const
{
    for (const auto& c : candidates)
        if (c.file == file || std::filesystem::path(c.file).filename() == std::filesystem::path(file).filename())
            return &c;
    return nullptr;
}

Env Task::environment(const ShapeBinding& shape) const
{
    Env env;
    for (const auto& [k, v] : parameters)
        env[k] = v;
    for (const auto& [k, v] : shape.values)
        env[k] = Value::integer(v);
    return env;
}

Env Task::environment(const Candidate& candidate, const ShapeBinding& shape) const
{
    Env env = candidate.constants();
    for (const auto& [k, v] : parameters)
        env[k] = v;
    for (const auto& [k, v] : shape.values)
        env[k] = Value::integer(v);
    return env;
}

Env Candidate::constants() const
{
    Env env;
    for (const auto& [name, text] : defines) {
        auto e = Expr::parse(text);
        if (e && e->symbols().empty())
            if (auto v = e->eval({}))
                env[name] = *v;
    }
    return env;
}

const std::string* Candidate::define(std::string_view name) const
{
    for (const auto& [k, v] : defines)
        if (k == name)
            return &v;
    return nullptr;
}

Result<std::vector<std::int64_t>> Task::extents(const TensorSpec& t, const ShapeBinding& shape) const
{
    std::vector<std::int64_t> out;
    for (const auto& d : t.shape) {
        if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) {
            std::int64_t v = 0;
            const auto [end, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
            if (ec != std::errc() || end != d.data() + d.size())
                return Error::failed("bind the shape of " + t.name, "extent \"" + d + "\" is not an integer that int64 can hold");
            out.push_back(v);
            continue;
        }
        auto it = shape.values.find(d);
        if (it == shape.values.end())
            return Error::failed("bind the shape of " + t.name, "symbol " + d + " is not bound by shape " + shape.describe());
        out.push_back(it->second);
    }
    return out;
}

Result<void> Task::admits(const ShapeBinding& shape) const
{
    const std::string what = "check shape " + shape.describe();
    for (const SymbolSpec& s : symbols) {
        auto it = shape.values.find(s.name);
        if (it == shape.values.end())
            return Error::failed(what, "symbol " + s.name + " is not bound", "bind every symbol declared in /symbols");
        const std::int64_t v = it->second;
        if (v < s.min || v > s.max)
            return Error::failed(what, s.name + " = " + std::to_string(v) + " is outside its range [" + std::to_string(s.min) + ", " +
                                   std::to_string(s.max) + "]");
        if (s.multipleOf > 1 && v % s.multipleOf != 0)
            return Error::failed(what, s.name + " = " + std::to_string(v) + " is not a multiple of " + std::to_string(s.multipleOf));
    }
    const Env env = environment(shape);
    for (const Expr& c : constraints) {
        auto r = c.eval(env);
        if (!r)
            return Error::failed(what, "constraint \"" + c.text() + "\" cannot be evaluated: " + r.error().why);
        if (r->asDouble() == 0.0)
            return Error::failed(what, "violates the constraint \"" + c.text() + "\"");
    }
    for (const auto* list : {&inputs, &outputs})
        for (const TensorSpec& t : *list) {
            auto e = extents(t, shape);
            if (!e)
                return Error::failed(what, e.error().why);
            // Its size in bytes must be countable: a product that overflows int64 would wrap to a
            // small (or negative) allocation.
            std::int64_t bytes = dtypeSize(t.dtype);
            for (std::int64_t x : e.value())
                if (x < 0 || __builtin_mul_overflow(bytes, x, &bytes))
                    return Error::failed(what, t.name + " would hold more elements than a 64-bit size can count");
        }
    return {};
}

std::int64_t Task::totalElements(const ShapeBinding& shape) const
{
    std::int64_t total = 0;
    for (const auto* list : {&inputs, &outputs})
        for (const TensorSpec& t : *list) {
            auto ext = extents(t, shape);
            if (!ext)
                return -1;
            std::int64_t n = 1;
            for (std::int64_t e : ext.value())
                if (__builtin_mul_overflow(n, e, &n))
                    return -1;
            if (__builtin_add_overflow(total, n, &total))
                return -1;
        }
    return total;
}

} // namespace kf
