#include "engine/verify/Shrink.h"


#include <algorithm>
#include <map>

namespace kf {

using Json = nlohmann::json;

namespace {

using Values = std::map<std::string, std::int64_t, std::less<>>;

constexpr FailureKind kAllKinds[] = {FailureKind::None,          FailureKind::Launch,   FailureKind::Guard,
                                     FailureKind::ModifiedInput, FailureKind::Unwritten, FailureKind::Mismatch,
                                     FailureKind::Nondeterministic};

// How many steps below a value the 1-minimality proof looks for a legal neighbour when the
// constraints forbid the one just below; beyond that the symbol counts as at its floor.
constexpr int kNeighbourScan = 64;
// Values that keep v's residue modulo 2^j: a kernel that fails for "not a multiple of its block
// size" keeps failing on them.
constexpr int kMaxResidueBits = 62;
// The smallest legal values always sit on the ladder: off-by-one tails live there.
constexpr int kSmallestRungs = 6;

std::int64_t stepOf(const SymbolSpec& s) { return std::max<std::int64_t>(1, s.multipleOf); }

std::int64_t roundDown(std::int64_t v, std::int64_t step) { return v / step * step; }

// The smallest multiple of the step that is at least min (min >= 0, as the validator demands).
std::int64_t lowestValue(const SymbolSpec& s)
{
    const std::int64_t step = stepOf(s);
    return (s.min + step - 1) / step * step;
}


Json valuesJson(const ShapeBinding& b)
{
    Json o = Json::object();
    for (const auto& [k, v] : b.values)
        o[k] = v;
    return o;
}

// The search state: the current smallest failing binding, every outcome seen, and whether the
// budget or a cancel request has stopped it.
class Shrinker {
public:
    Shrinker(const Task& task, FailureKind kind, const ProbeFn& probe, const ShrinkOptions& options, ShrinkResult& result)
        : m_task(task), m_kind(kind), m_probe(probe), m_options(options), m_result(result), m_current(result.start)
    {
        m_seen[m_current.values] = ProbeOutcome{true, kind, {}};
    }

    Result<void> run()
    {
        for (;;) {
            for (;;) {
                auto progressed = descendPass();
                if (!progressed)
                    return progressed.error();
                if (!*progressed || m_stopped)
                    break;
            }
            if (m_stopped)
                break;
            auto proof = proveMinimal();
            if (!proof)
                return proof.error();
            if (*proof == Proof::Proven)
                m_result.minimal = true;
            if (*proof != Proof::Improved)
                break;
        }
        m_result.smallest = m_current;
        m_result.kind = m_seen.at(m_current.values).kind;
        return {};
    }

private:
    enum class Proof { Proven, Improved, Unproven };

    ShapeBinding with(const std::string& symbol, std::int64_t value) const
    {
        ShapeBinding b;
        b.values = m_current.values;
        b.values[symbol] = value;
        return b;
    }

    bool accepted(const ShapeBinding& b) const
    {
        auto it = m_seen.find(b.values);
        return it != m_seen.end() && it->second.failed && (m_options.anyKind || it->second.kind == m_kind);
    }

    bool seen(const ShapeBinding& b) const { return m_seen.count(b.values) > 0; }

    void moveTo(const std::string& symbol, std::int64_t value)
    {
        const std::int64_t from = m_current.values[symbol];
        m_current = with(symbol, value);
        if (m_options.progress)
            m_options.progress(symbol + ": " + std::to_string(from) + " → " + std::to_string(value) + " (" +
                               std::to_string(m_result.probes) + " shapes probed)");
    }

    // Symbols whose lowering would remove the most elements come first: shrinking them first
    // makes every later probe cheaper on the GPU.
    std::vector<const SymbolSpec*> symbolOrder() const
    {
        const std::int64_t now = m_task.totalElements(m_current);
        std::vector<std::pair<std::int64_t, const SymbolSpec*>> order;
        for (const SymbolSpec& s : m_task.symbols)
            order.emplace_back(now - m_task.totalElements(with(s.name, lowestValue(s))), &s);
        std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        std::vector<const SymbolSpec*> out;
        for (const auto& [gain, s] : order)
            out.push_back(s);
        return out;
    }

    // Candidate values below v for one symbol, legal with the other symbols where they are,
    // ascending and without repeats.
    std::vector<std::int64_t> ladder(const SymbolSpec& s, std::int64_t v) const
    {
        const std::int64_t step = stepOf(s), low = lowestValue(s);
        std::vector<std::int64_t> rungs;
        for (int i = 0; i < kSmallestRungs; ++i)
            rungs.push_back(low + i * step);
        rungs.push_back(v - step);
        rungs.push_back(v - 2 * step);
        for (std::int64_t x = v / 2; x > 0 && x >= low; x /= 2)
            rungs.push_back(roundDown(x, step));
        for (int j = 0; j < kMaxResidueBits && (std::int64_t(1) << j) <= v; ++j) {
            const std::int64_t p = std::int64_t(1) << j;
            rungs.push_back(v % p + p);
        }
        std::sort(rungs.begin(), rungs.end());
        rungs.erase(std::unique(rungs.begin(), rungs.end()), rungs.end());
        std::vector<std::int64_t> legal;
        for (std::int64_t x : rungs)
            if (x < v && m_task.admits(with(s.name, x)))
                legal.push_back(x);
        return legal;
    }

    // Probes the shapes not seen yet in one call. When the budget cannot cover them all, an
    // evenly spread subset (smallest and largest included) still brackets the boundary.
    Result<void> probeBatch(const std::vector<ShapeBinding>& shapes)
    {
        std::vector<ShapeBinding> fresh;
        for (const ShapeBinding& b : shapes)
            if (!seen(b) && std::none_of(fresh.begin(), fresh.end(), [&](const ShapeBinding& f) { return f.values == b.values; }))
                fresh.push_back(b);
        if (fresh.empty() || m_stopped)
            return {};
        if (m_options.cancelled && m_options.cancelled()) {
            m_result.cancelled = m_stopped = true;
            return {};
        }
        const std::size_t left = static_cast<std::size_t>(std::max(0, m_options.maxProbes - m_result.probes));
        if (fresh.size() > left) {
            m_result.budgetExhausted = true;
            m_stopped = left == 0;
            fresh = spread(fresh, left);
            if (fresh.empty())
                return {};
        }
        auto outcomes = m_probe(fresh);
        if (!outcomes)
            return outcomes.error();
        if (outcomes->size() != fresh.size())
            return Error::failed("shrink a failing shape", "the probe answered " + std::to_string(outcomes->size()) + " outcomes for " +
                             std::to_string(fresh.size()) + " shapes");
        ++m_result.requests;
        m_result.probes += static_cast<int>(fresh.size());
        for (std::size_t i = 0; i < fresh.size(); ++i) {
            const ProbeOutcome& o = (*outcomes)[i];
            m_seen[fresh[i].values] = o;
            m_result.trace.push_back({fresh[i], o.failed, o.failed ? o.kind : FailureKind::None});
        }
        return {};
    }

    static std::vector<ShapeBinding> spread(const std::vector<ShapeBinding>& v, std::size_t n)
    {
        if (n == 0)
            return {};
        if (n == 1)
            return {v.front()};
        std::vector<ShapeBinding> out;
        for (std::size_t i = 0; i < n; ++i)
            out.push_back(v[i * (v.size() - 1) / (n - 1)]);
        return out;
    }

    // Narrows (lo, hi] over legal values of one symbol: hi fails as wanted, lo does not (or lies
    // below the range). Illegal midpoints count as "not accepted": the search does not go there.
    Result<std::int64_t> bisect(const SymbolSpec& s, std::int64_t lo, std::int64_t hi)
    {
        const std::int64_t step = stepOf(s);
        while (!m_stopped && hi - lo > step) {
            const std::int64_t mid = lo + (hi - lo) / step / 2 * step;
            const ShapeBinding b = with(s.name, mid);
            if (!m_task.admits(b)) {
                lo = mid;
                continue;
            }
            if (auto r = probeBatch({b}); !r)
                return r.error();
            if (!seen(b))
                break;
            (accepted(b) ? hi : lo) = mid;
        }
        return hi;
    }

    // One ladder call, then bisection below the smallest accepted rung. True when v shrank.
    Result<bool> descendSymbol(const SymbolSpec& s)
    {
        const std::int64_t v = m_current.values.at(s.name);
        const std::vector<std::int64_t> rungs = ladder(s, v);
        std::vector<ShapeBinding> shapes;
        for (std::int64_t x : rungs)
            shapes.push_back(with(s.name, x));
        if (auto r = probeBatch(shapes); !r)
            return r.error();
        auto best = std::find_if(rungs.begin(), rungs.end(), [&](std::int64_t x) { return accepted(with(s.name, x)); });
        if (best == rungs.end())
            return false;
        std::int64_t lo = lowestValue(s) - stepOf(s);
        for (auto it = rungs.begin(); it != best; ++it)
            if (seen(with(s.name, *it)))
                lo = *it;
        auto hi = bisect(s, lo, *best);
        if (!hi)
            return hi.error();
        moveTo(s.name, *hi);
        return true;
    }

    Result<bool> descendPass()
    {
        bool progressed = false;
        for (const SymbolSpec* s : symbolOrder()) {
            if (m_stopped)
                break;
            auto r = descendSymbol(*s);
            if (!r)
                return r.error();
            progressed = progressed || *r;
        }
        return progressed;
    }

    // The next legal value below the current one, when there is one close enough.
    std::optional<std::int64_t> nextLower(const SymbolSpec& s) const
    {
        const std::int64_t step = stepOf(s), low = lowestValue(s);
        std::int64_t x = m_current.values.at(s.name) - step;
        for (int i = 0; i < kNeighbourScan && x >= low; ++i, x -= step)
            if (m_task.admits(with(s.name, x)))
                return x;
        return std::nullopt;
    }

    // Probes every one-step-lower neighbour in one call (usually all seen already in the last
    // pass). A neighbour that still fails as wanted becomes the new current shape.
    Result<Proof> proveMinimal()
    {
        std::vector<std::pair<const SymbolSpec*, std::int64_t>> moves;
        std::vector<ShapeBinding> shapes;
        for (const SymbolSpec& s : m_task.symbols)
            if (auto x = nextLower(s)) {
                moves.emplace_back(&s, *x);
                shapes.push_back(with(s.name, *x));
            }
        if (auto r = probeBatch(shapes); !r)
            return r.error();
        for (const auto& [s, x] : moves)
            if (accepted(with(s->name, x))) {
                moveTo(s->name, x);
                return Proof::Improved;
            }
        const bool allSeen = std::all_of(shapes.begin(), shapes.end(), [&](const ShapeBinding& b) { return seen(b); });
        return allSeen ? Proof::Proven : Proof::Unproven;
    }

    const Task& m_task;
    const FailureKind m_kind;
    const ProbeFn& m_probe;
    const ShrinkOptions& m_options;
    ShrinkResult& m_result;
    ShapeBinding m_current;
    std::map<Values, ProbeOutcome> m_seen;
    bool m_stopped = false;
};

} // namespace

std::string_view failureKindName(FailureKind k)
{
    switch (k) {
    case FailureKind::None: return "none";
    case FailureKind::Launch: return "launch";
    case FailureKind::Guard: return "guard";
    case FailureKind::ModifiedInput: return "modified_input";
    case FailureKind::Unwritten: return "unwritten";
    case FailureKind::Mismatch: return "mismatch";
    case FailureKind::Nondeterministic: return "nondeterministic";
    }
    return "none";
}

std::optional<FailureKind> parseFailureKind(std::string_view name)
{
    for (FailureKind k : kAllKinds)
        if (failureKindName(k) == name)
            return k;
    return std::nullopt;
}

Result<ShrinkResult> shrink(const Task& task, const ShapeBinding& failing, FailureKind kind, const ProbeFn& probe,
                            const ShrinkOptions& options)
{
    if (kind == FailureKind::None && !options.anyKind)
        return Error::failed("shrink a failing shape", "the starting shape is not marked as failing (kind none)", "give the kind of failure to preserve, or accept any kind");
    if (auto legal = task.admits(failing); !legal)
        return Error::failed("shrink " + failing.describe(), "the starting shape is not legal for the task: " + legal.error().why);
    ShrinkResult result;
    result.start = failing;
    result.smallest = failing;
    result.kind = kind;
    Shrinker shrinker(task, kind, probe, options, result);
    if (auto r = shrinker.run(); !r)
        return r.error();
    return result;
}

Json toJson(const ShrinkResult& r)
{
    Json trace = Json::array();
    for (const ShrinkStep& s : r.trace)
        trace.push_back({{"shape", valuesJson(s.shape)}, {"failed", s.failed}, {"kind", std::string(failureKindName(s.kind))}});
    return {{"start", valuesJson(r.start)},
            {"smallest", valuesJson(r.smallest)},
            {"kind", std::string(failureKindName(r.kind))},
            {"probes", r.probes},
            {"requests", r.requests},
            {"minimal", r.minimal},
            {"budget_exhausted", r.budgetExhausted},
            {"cancelled", r.cancelled},
            {"trace", trace}};
}

} // namespace kf
