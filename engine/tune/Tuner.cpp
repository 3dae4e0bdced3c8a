// Stages 2 and 3 of the search (engine/tune/Tuner.h): successive halving with a verify before a
// point's first timing, then the finalists re-measured from scratch, interleaved.
#include "engine/tune/Tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace kf::tune {

namespace {

using Clock = std::chrono::steady_clock;

std::optional<double> geomean(const std::vector<std::optional<double>>& v)
{
    if (v.empty())
        return std::nullopt;
    double logSum = 0;
    for (const auto& x : v) {
        if (!x || *x <= 0)
            return std::nullopt;
        logSum += std::log(*x);
    }
    return std::exp(logSum / double(v.size()));
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// The sentence saying why a run did not pass.
std::string whyNot(const RunOutcome& o)
{
    if (o.failure)
        return o.failure->why;
    const auto& h = o.report.header();
    return h.error ? h.errorSentence() : h.summary;
}

class Search {
public:
    Search(const Task& task, const Candidate& candidate, const Settings& s, const RunFn& run, const ProgressFn& progress,
           const CancelToken* cancel, Outcome& out)
        : m_task(task), m_candidate(candidate), m_s(s), m_run(run), m_progress(progress), m_cancel(cancel), m_out(out)
    {}

    /// An Error only when the runner could not be used at all (the first run's Error).
    Result<void> go(Clock::time_point start);

private:
    bool cancelled() const { return m_cancel && m_cancel->cancelled(); }
    double elapsed() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }
    /// The halving stops at three quarters of the budget: the last quarter is the re-measure's.
    bool searchTimeLeft() const { return elapsed() < 0.75 * m_s.budgetS; }
    Result<RunOutcome> runPlan(PointResult& p, RunKind kind, const RunSettings& settings);
    Result<bool> verify(PointResult& p);
    Result<bool> time(PointResult& p, double capMs);
    Result<std::vector<std::size_t>> halving();
    Result<void> remeasure(std::vector<std::size_t> finalists);
    void say(const char* stage, int done, int total, const PointResult* p) const
    {
        if (m_progress)
            m_progress({stage, done, total, elapsed(), p});
    }

    const Task& m_task;
    const Candidate& m_candidate;
    const Settings& m_s;
    const RunFn& m_run;
    const ProgressFn& m_progress;
    const CancelToken* m_cancel;
    Outcome& m_out;
    Clock::time_point m_start;
    bool m_anyRunWorked = false;
};

Result<RunOutcome> Search::runPlan(PointResult& p, RunKind kind, const RunSettings& settings)
{
    RunPlan plan;
    plan.kind = kind;
    plan.candidateFile = m_candidate.file;
    plan.settings = settings;
    auto r = m_run(taskWithPoint(m_task, m_candidate.file, p.point), plan, m_cancel);
    if (r)
        m_anyRunWorked = true;
    return r;
}

Result<bool> Search::verify(PointResult& p)
{
    const auto t0 = Clock::now();
    auto r = runPlan(p, RunKind::Verify, m_s.verify);
    m_out.cost.verifyS += std::chrono::duration<double>(Clock::now() - t0).count();
    if (!r)
        return r.error();
    ++m_out.cost.verified;
    p.verified = r->passed();
    if (!*p.verified && !r->cancelled) {
        ++m_out.cost.verifyFailed;
        p.stage = Stage::VerifyFailed;
        p.reason = whyNot(*r);
    }
    return *p.verified;
}

Result<bool> Search::time(PointResult& p, double capMs)
{
    RunSettings settings;
    settings.shapes = "benchmarks";
    if (!m_s.shapes.empty()) {
        settings.onlyShapes = m_s.shapes;
        settings.setName = "custom";
    }
    settings.bench.timeCapMs = capMs;
    const auto t0 = Clock::now();
    auto r = runPlan(p, RunKind::Bench, settings);
    m_out.cost.benchS += std::chrono::duration<double>(Clock::now() - t0).count();
    if (!r)
        return r.error();
    ++m_out.cost.benchRuns;
    auto fail = [&](std::string why) {
        if (!r->cancelled) {
            p.stage = Stage::BenchFailed;
            p.reason = std::move(why);
        }
        return false;
    };
    const auto& bench = r->report.bench();
    if (!r->passed() || !bench)
        return fail(whyNot(*r));
    if (bench->shapes.size() != m_out.shapes.size())
        return fail("the bench reported " + std::to_string(bench->shapes.size()) + " shapes, not " +
                    std::to_string(m_out.shapes.size()));
    p.shapeMs.assign(m_out.shapes.size(), std::nullopt);
    p.pctPeak.reset();
    std::vector<std::optional<double>> ratios;
    for (size_t i = 0; i < bench->shapes.size(); ++i) {
        const auto& s = bench->shapes[i];
        if (!s.trustworthy())
            return fail("the time at " + s.id.dimsText() + " cannot be trusted (" +
                        (s.belowFloor ? "below the roofline floor" : "a re-check of the output failed") + ")");
        p.shapeMs[i] = s.candidate.medianMs;
        m_out.eagerMs[i] = s.baseline.medianMs ? s.baseline.medianMs : m_out.eagerMs[i];
        m_out.bytes[i] = s.bytes;
        if (s.pctPeakBandwidth)
            p.pctPeak = std::min(p.pctPeak.value_or(1e9), *s.pctPeakBandwidth);
        ratios.push_back(s.speedup);
    }
    m_out.peakGbs = r->report.header().environment.peakBandwidthGbs;
    p.geomeanMs = geomean(p.shapeMs);
    p.speedupEager = geomean(ratios);
    if (!p.geomeanMs)
        return fail("the bench gave no median for some shape");
    return true;
}

Result<std::vector<std::size_t>> Search::halving()
{
    std::vector<std::size_t> alive;
    for (std::size_t i = 0; i < m_out.points.size(); ++i)
        if (m_out.points[i].compiled && m_out.points[i].stage == Stage::NotReached)
            alive.push_back(i);
    for (int round = 0; !alive.empty(); ++round) {
        const double cap = m_s.roundCapMs.empty() ? 200 : m_s.roundCapMs[std::min<size_t>(round, m_s.roundCapMs.size() - 1)];
        std::vector<std::size_t> timed;
        int done = 0;
        for (std::size_t i : alive) {
            if (cancelled() || !searchTimeLeft()) {
                m_out.cost.budgetSpent = !cancelled();
                break;
            }
            PointResult& p = m_out.points[i];
            if (!p.verified) {
                auto v = verify(p);
                if (!v)
                    return v.error();
                if (!*v) {
                    say("verify", ++done, int(alive.size()), &p);
                    continue;
                }
            }
            auto t = time(p, cap);
            if (!t)
                return t.error();
            if (*t) {
                p.rounds = round + 1;
                p.stage = Stage::Timed;
                timed.push_back(i);
            }
            say("time", ++done, int(alive.size()), &p);
        }
        std::stable_sort(timed.begin(), timed.end(),
                         [&](std::size_t a, std::size_t b) { return *m_out.points[a].geomeanMs < *m_out.points[b].geomeanMs; });
        // Keep the best 1 in eta; once no more than the finalists are left, they go to the re-measure.
        const std::size_t finalists = std::size_t(std::max(1, m_s.finalists));
        const std::size_t eta = std::size_t(std::max(2, m_s.eta));
        const std::size_t keep = std::max(finalists, (timed.size() + eta - 1) / eta);
        const bool last = keep <= finalists || cancelled() || !searchTimeLeft();
        timed.resize(std::min(last ? finalists : keep, timed.size()));
        alive = std::move(timed);
        if (last)
            break;
    }
    return alive;
}

Result<void> Search::remeasure(std::vector<std::size_t> finalists)
{
    for (int round = 0; round < std::max(1, m_s.remeasureRounds) && !finalists.empty(); ++round) {
        // The first round always runs: a winner needs a figure measured from scratch.
        if (cancelled() || (round > 0 && elapsed() > m_s.budgetS)) {
            m_out.cost.budgetSpent = m_out.cost.budgetSpent || !cancelled();
            break;
        }
        std::rotate(finalists.begin(), finalists.begin() + (round % finalists.size()), finalists.end());
        int done = 0;
        for (std::size_t i : finalists) {
            PointResult& p = m_out.points[i];
            if (p.stage != Stage::Finalist)
                continue;
            auto t = time(p, m_s.remeasureCapMs);
            if (!t)
                return t.error();
            ++m_out.cost.remeasureRuns;
            if (*t)
                p.remeasureMs.push_back(*p.geomeanMs);
            say("re-measure", ++done, int(finalists.size()), &p);
        }
    }
    for (std::size_t i : finalists) {
        PointResult& p = m_out.points[i];
        if (p.stage != Stage::Finalist || p.remeasureMs.empty())
            continue;
        p.finalMs = median(p.remeasureMs);
        if (!m_out.winner || *p.finalMs < *m_out.points[*m_out.winner].finalMs)
            m_out.winner = i;
    }
    if (m_out.winner)
        m_out.points[*m_out.winner].stage = Stage::Winner;
    return {};
}

Result<void> Search::go(Clock::time_point start)
{
    m_start = start;
    auto finalists = halving();
    if (!finalists)
        return finalists.error();
    for (std::size_t i : *finalists)
        m_out.points[i].stage = Stage::Finalist;
    auto r = remeasure(*finalists);
    if (!r)
        return r.error();
    for (const PointResult& p : m_out.points)
        m_out.cost.timed += p.timed() ? 1 : 0;
    return {};
}

} // namespace

Result<Outcome> prepare(const Task& task, const std::string& candidateFile, const std::string& arch, const Settings& settings)
{
    const Candidate* candidate = task.findCandidate(candidateFile);
    if (!candidate)
        return Error::inFile((task.directory / "task.json").string(), "/candidates", "tune " + candidateFile,
                             "the task has no candidate " + candidateFile, "add it under \"candidates\" in task.json");
    auto space = enumerate(task, *candidate, settings.maxPoints);
    if (!space)
        return space.error();
    Outcome out;
    out.candidate = candidateFile;
    out.arch = arch;
    out.shapes = settings.shapes.empty() ? task.benchmarkShapes : settings.shapes;
    if (out.shapes.empty())
        return Error::inFile((task.directory / "task.json").string(), "/shapes/benchmarks", "tune " + candidateFile,
                             "the task has no benchmark shapes to time the points on",
                             "add benchmark shapes to task.json, or name shapes with --shapes");
    out.eagerMs.assign(out.shapes.size(), std::nullopt);
    out.bytes.assign(out.shapes.size(), 0.0);
    out.space = std::move(space.value());
    out.cost.points = int(out.space.points.size());
    for (const Point& p : out.space.points)
        out.points.push_back({p});
    return out;
}

Result<Outcome> search(const Task& task, const std::string& candidateFile, const std::string& arch, const Settings& settings,
                       const RunFn& run, const ProgressFn& progress, const CancelToken* cancel)
{
    const auto start = Clock::now();
    auto prepared = prepare(task, candidateFile, arch, settings);
    if (!prepared)
        return prepared.error();
    Outcome out = std::move(prepared.value());
    const Candidate& candidate = *task.findCandidate(candidateFile);
    compilePoints(task, candidate, arch, settings, out, progress, cancel);
    Search s(task, candidate, settings, run, progress, cancel, out);
    if (!(cancel && cancel->cancelled()))
        if (auto r = s.go(start); !r)
            return r.error();
    out.cancelled = cancel && cancel->cancelled();
    out.cost.wallS = std::chrono::duration<double>(Clock::now() - start).count();
    return out;
}

} // namespace kf::tune
