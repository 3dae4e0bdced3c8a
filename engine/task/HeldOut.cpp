#include "engine/task/HeldOut.h"

#include <algorithm>
#include <random>

namespace kf {

namespace {

bool sameValues(const ShapeBinding& a, const ShapeBinding& b) { return a.values == b.values; }

} // namespace

std::vector<ShapeBinding> deriveHeldOutShapes(const Task& task, std::uint64_t seed, int count)
{
    std::vector<ShapeBinding> out;
    if (task.symbols.empty() || task.testShapes.empty() || count <= 0)
        return out;

    std::int64_t budget = 0;
    for (const ShapeBinding& t : task.testShapes)
        budget = std::max(budget, task.totalElements(t));

    // Per symbol: the multiples of `multiple_of` between min and the largest test value.
    struct Range {
        std::int64_t lo, hi, step;
    };
    std::vector<Range> ranges;
    for (const SymbolSpec& s : task.symbols) {
        std::int64_t largest = s.min;
        for (const ShapeBinding& t : task.testShapes)
            if (auto it = t.values.find(s.name); it != t.values.end())
                largest = std::max(largest, it->second);
        const std::int64_t step = std::max<std::int64_t>(1, s.multipleOf);
        const std::int64_t lo = (s.min + step - 1) / step;                  // in units of step
        const std::int64_t hi = std::min(s.max, largest) / step;
        ranges.push_back({lo, std::max(lo, hi), step});
    }

    std::mt19937_64 rng(seed);
    const int attemptsPerShape = 400;
    for (int shape = 0; shape < count; ++shape) {
        // The first shape stays in the lower quarter of each range (small, tail-heavy sizes); the
        // others roam the whole range.
        const bool small = shape == 0;
        for (int attempt = 0; attempt < attemptsPerShape; ++attempt) {
            ShapeBinding b;
            b.label = "held-out " + std::to_string(shape + 1);
            for (size_t i = 0; i < task.symbols.size(); ++i) {
                const Range& r = ranges[i];
                const std::int64_t hi = small ? r.lo + (r.hi - r.lo) / 4 : r.hi;
                std::uniform_int_distribution<std::int64_t> pick(r.lo, hi);
                std::int64_t units = pick(rng);
                // Prefer a value no power-of-two tile divides: redraw an even one a few times.
                for (int redraw = 0; redraw < 3 && units % 2 == 0 && hi > r.lo; ++redraw)
                    units = pick(rng);
                b.values[task.symbols[i].name] = units * r.step;
            }
            if (!task.admits(b))
                continue;
            const std::int64_t elements = task.totalElements(b);
            if (elements < 0 || elements > budget)
                continue;
            auto clash = [&](const ShapeBinding& o) { return sameValues(o, b); };
            if (std::any_of(task.testShapes.begin(), task.testShapes.end(), clash) ||
                std::any_of(out.begin(), out.end(), clash))
                continue;
            out.push_back(std::move(b));
            break;
        }
    }
    return out;
}

nlohmann::json heldOutJson(const std::vector<ShapeBinding>& shapes)
{
    nlohmann::json a = nlohmann::json::array();
    for (const ShapeBinding& b : shapes) {
        nlohmann::json o = nlohmann::json::object();
        if (!b.label.empty())
            o["label"] = b.label;
        for (const auto& [k, v] : b.values)
            o[k] = v;
        a.push_back(std::move(o));
    }
    return a;
}

} // namespace kf
