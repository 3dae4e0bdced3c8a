// The row template's schedule (docs/generate.md): the row's statistics are scheduled into passes
// over it — a statistic whose input needs another statistic comes one pass later (layer_norm's
// variance after its mean) — and an output is written in the first pass that has everything it
// needs. Inputs read by more than one pass are the ones the register cache keeps.
#include "engine/generate/RowPlan.h"

#include <algorithm>
#include <climits>
#include <functional>

namespace kf::gen::detail {

Plan schedule(const Tape& tape)
{
    Plan p;
    p.needs.resize(tape.values.size());
    p.ready.assign(tape.values.size(), 0);
    auto passOf = [&](const std::set<int>& s) {
        int m = 0;
        for (int i : s)
            m = std::max(m, p.stats[static_cast<size_t>(i)].pass);
        return m;
    };
    for (size_t si = 0; si < tape.steps.size(); ++si) {
        const Step& s = tape.steps[si];
        if (!s.live)
            continue;
        std::set<int> needs;
        for (const Operand& o : s.args)
            if (o.value >= 0)
                needs.insert(p.needs[static_cast<size_t>(o.value)].begin(), p.needs[static_cast<size_t>(o.value)].end());
        if (s.isReduction()) {
            const int x = s.args[0].value;
            const int first = passOf(p.needs[static_cast<size_t>(x)]) + 1;
            auto add = [&](StatKind k, int pass) {
                p.stats.push_back({static_cast<int>(si), k, x, pass});
                needs.insert(static_cast<int>(p.stats.size() - 1));
            };
            if (s.op == "sum" || s.op == "mean")
                add(StatKind::Sum, first);
            else if (s.op == "amax")
                add(StatKind::Max, first);
            else if (s.op == "softmax" || s.op == "log_softmax")
                add(StatKind::Softmax, first);
            else if (s.op == "rms_norm")
                add(StatKind::SumSq, first);
            else { // layer_norm: the mean, then the variance around it
                add(StatKind::Sum, first);
                add(StatKind::Centered, first + 1);
            }
        }
        p.needs[static_cast<size_t>(s.result)] = needs;
        p.ready[static_cast<size_t>(s.result)] = passOf(needs);
    }
    for (const Stat& s : p.stats)
        p.passes = std::max(p.passes, s.pass);
    for (size_t v = 0; v < tape.values.size(); ++v)
        if (tape.values[v].output >= 0 && tape.values[v].level == Level::Element)
            p.passes = std::max(p.passes, p.ready[v] + 1);
    return p;
}

namespace {

std::pair<long long, long long> extentRange(const Task& task, const std::string& dim)
{
    if (!dim.empty() && std::all_of(dim.begin(), dim.end(), [](char ch) { return ch >= '0' && ch <= '9'; }) &&
        dim.size() < 18) {
        const long long v = std::stoll(dim);
        return {v, v};
    }
    for (const auto& s : task.symbols)
        if (s.name == dim)
            return {s.min, s.max};
    return {1, LLONG_MAX};
}

} // namespace

std::pair<long long, long long> rowRange(const Task& task, const Tape& tape)
{
    long long lo = 1, hi = 1;
    for (auto it = tape.full.end() - tape.rowDims; it != tape.full.end(); ++it) {
        auto [a, b] = extentRange(task, *it);
        lo = lo > LLONG_MAX / std::max(a, 1LL) ? LLONG_MAX : lo * a;
        hi = hi > LLONG_MAX / std::max(b, 1LL) ? LLONG_MAX : hi * b;
    }
    return {lo, hi};
}

PassLayout layoutPasses(const Tape& tape, const Plan& plan, const std::vector<const Value*>& params)
{
    PassLayout l;
    l.closure.resize(static_cast<size_t>(plan.passes) + 1);
    l.writePass.assign(tape.values.size(), 0);
    std::function<void(int, std::set<int>&)> need = [&](int id, std::set<int>& into) {
        const Value& v = tape.values[static_cast<size_t>(id)];
        if ((v.level != Level::Element && v.level != Level::Column) || !into.insert(id).second)
            return;
        if (v.step >= 0)
            for (const Operand& o : tape.steps[static_cast<size_t>(v.step)].args)
                if (o.value >= 0)
                    need(o.value, into);
    };
    for (const Stat& s : plan.stats)
        need(s.input, l.closure[static_cast<size_t>(s.pass)]);
    for (size_t v = 0; v < tape.values.size(); ++v)
        if (tape.values[v].output >= 0 && tape.values[v].level == Level::Element) {
            l.writePass[v] = plan.ready[v] + 1;
            need(static_cast<int>(v), l.closure[static_cast<size_t>(l.writePass[v])]);
        }
    if (plan.passes > 1)
        for (const Value* v : params)
            if (v->input >= 0 && v->level == Level::Element)
                for (int p = 1; p <= plan.passes; ++p)
                    if (l.closure[static_cast<size_t>(p)].count(static_cast<int>(v - tape.values.data()))) {
                        l.cached.push_back(v);
                        break;
                    }
    return l;
}

} // namespace kf::gen::detail
