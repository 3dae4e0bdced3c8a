#include "engine/pipeline/RunPool.h"

#include "engine/runner/RunnersConfig.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace kf {

namespace {

using Clock = std::chrono::steady_clock;

double msBetween(Clock::time_point a, Clock::time_point b)
{
    return std::chrono::duration<double, std::milli>(b - a).count();
}

bool isLossKind(const std::string& kind)
{
    return kind == kRunnerLost || kind == kConnectionLost || kind == kRunnerStart;
}

std::string joinNames(const std::vector<std::string>& names)
{
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i)
        out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
    return out;
}

/// Turns at one GPU, first come first served: a runner that just finished a timing queues
/// behind the ones already waiting, however the threads are scheduled. (A plain mutex let one
/// endpoint take every turn on a loaded machine while the other on the same GPU sat idle.)
class GpuTurn {
public:
    void lock()
    {
        std::unique_lock<std::mutex> g(m_mutex);
        const unsigned long long ticket = m_next++;
        m_changed.wait(g, [&] { return m_serving == ticket; });
    }

    void unlock()
    {
        {
            std::lock_guard<std::mutex> g(m_mutex);
            ++m_serving;
        }
        m_changed.notify_all();
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_changed;
    unsigned long long m_next = 0;
    unsigned long long m_serving = 0;
};

/// One turn queue per GPU (Hello::gpuKey), shared by every endpoint that reaches that GPU.
class GpuTurns {
public:
    GpuTurn& forKey(const std::string& key)
    {
        std::lock_guard<std::mutex> g(m_mutex);
        auto& slot = m_turns[key];
        if (!slot)
            slot = std::make_unique<GpuTurn>();
        return *slot;
    }

private:
    std::mutex m_mutex;
    std::map<std::string, std::unique_ptr<GpuTurn>> m_turns;
};

/// The queue and the results, under one mutex.
struct PoolState {
    std::mutex mutex;
    std::condition_variable changed;
    std::deque<std::size_t> queue;                       ///< items to run; a lost item goes back to the front
    std::vector<std::vector<std::string>> lostOn;        ///< per item: the endpoints it was lost with
    std::vector<int> attempts;                           ///< per item: attempts so far
    std::vector<bool> done;
    int inFlight = 0;
    int alive = 0;                                       ///< workers still taking items
    std::vector<std::string> liveNames;
    PoolOutcome result;
    Clock::time_point started;

    bool finished() const { return queue.empty() && inFlight == 0; }

    /// The first queued item `name` may take: one it was not lost with, unless no other endpoint
    /// is alive to take it.
    std::optional<std::size_t> takeable(const std::string& name) const
    {
        for (std::size_t i = 0; i < queue.size(); ++i) {
            const auto& lost = lostOn[queue[i]];
            if (std::find(lost.begin(), lost.end(), name) == lost.end() || alive <= 1)
                return i;
        }
        return std::nullopt;
    }
};

class Worker {
public:
    Worker(const RunPool::Options& options, std::size_t index, RunKind kind, const Task& task, const std::vector<PoolItem>& items,
           const CancelToken* cancel, PoolState& state, GpuTurns& gpus)
        : m_options(options), m_index(index), m_endpoint(options.endpoints[index]), m_kind(kind), m_task(task), m_items(items),
          m_cancel(cancel), m_state(state), m_gpus(gpus)
    {
    }

    void operator()()
    {
        RunPipeline::Options o;
        o.runnerPath = m_options.runnerPath;
        o.archOverride = m_options.archOverride;
        o.cacheDir = m_options.cacheDir;
        o.endpoint = m_endpoint;
        if (m_endpoint.remote() && m_options.onLog) {
            const auto log = m_options.onLog;
            const std::string name = m_endpoint.name;
            o.onStartLog = [log, name](const std::string& line) { log(name, line); };
        }
        RunPipeline session(o);
        if (startSession(session))
            takeItems(session);
        std::lock_guard<std::mutex> g(m_state.mutex);
        --m_state.alive;
        m_state.liveNames.erase(std::remove(m_state.liveNames.begin(), m_state.liveNames.end(), m_endpoint.name),
                                m_state.liveNames.end());
        m_state.changed.notify_all();
    }

private:
    PoolEndpointSummary& summary() { return m_state.result.endpoints[m_index]; }

    bool cancelled() const { return m_cancel && m_cancel->cancelled(); }

    void log(const std::string& line) const
    {
        if (m_options.onLog)
            m_options.onLog(m_endpoint.name, line);
    }

    /// Records a loss; returns whether the endpoint may go on (it was lost fewer than twice).
    bool lose(const std::string& why)
    {
        std::lock_guard<std::mutex> g(m_state.mutex);
        ++m_losses;
        summary().why = why;
        if (m_losses >= 2) {
            summary().lost = true;
            return false;
        }
        ++summary().restarts;
        return true;
    }

    bool startSession(RunPipeline& session)
    {
        while (!cancelled()) {
            auto hello = session.start();
            if (hello) {
                std::lock_guard<std::mutex> g(m_state.mutex);
                PoolEndpointSummary& s = summary();
                s.host = hello->host;
                if (hello->device) {
                    s.gpu = hello->device->gpu;
                    s.gpuUuid = hello->device->uuid;
                }
                s.gpuKey = hello->gpuKey();
                return true;
            }
            // No GPU there is the endpoint's state, not a passing loss: starting again would not help.
            const bool passing = isLossKind(hello.error().kind);
            const std::string why = hello.error().message();
            if (!lose(why) || !passing) {
                std::lock_guard<std::mutex> g(m_state.mutex);
                summary().lost = true;
                log("left the pool: " + why);
                return false;
            }
            log("did not start (" + why + "); starting it again");
        }
        return false;
    }

    void takeItems(RunPipeline& session)
    {
        GpuTurn& gpu = m_gpus.forKey(summary().gpuKey);
        // Timings never share a GPU; verifications do (every item of a run is of one kind, so
        // a verification never waits for a timing here).
        const bool exclusive = m_kind != RunKind::Verify;
        while (true) {
            {
                std::unique_lock<std::mutex> q(m_state.mutex);
                while (!cancelled() && !m_state.finished() && !m_state.takeable(m_endpoint.name))
                    m_state.changed.wait_for(q, std::chrono::milliseconds(100));
                if (cancelled() || m_state.finished())
                    return;
            }
            std::unique_lock<GpuTurn> alone(gpu, std::defer_lock);
            if (exclusive)
                alone.lock();
            std::size_t item = 0;
            int attempt = 1;
            {
                std::lock_guard<std::mutex> q(m_state.mutex);
                auto at = m_state.takeable(m_endpoint.name);
                if (!at)
                    continue;   // taken meanwhile: wait again without holding the GPU
                item = m_state.queue[*at];
                m_state.queue.erase(m_state.queue.begin() + static_cast<std::ptrdiff_t>(*at));
                attempt = ++m_state.attempts[item];
                ++m_state.inFlight;
            }
            if (!runItem(session, item, attempt))
                return;
        }
    }

    /// Runs `item`; returns whether this endpoint takes more items.
    bool runItem(RunPipeline& session, std::size_t item, int attempt)
    {
        if (m_options.onStart)
            m_options.onStart(item, m_endpoint.name, attempt);
        RunSettings settings = m_items[item].settings;
        settings.attempt = attempt;
        const auto begin = Clock::now();
        const Task& task = m_items[item].task ? *m_items[item].task : m_task;
        auto outcome = session.run(task, RunPlan{m_kind, m_items[item].candidateFile, settings, {}, {}}, {}, m_cancel);
        const auto end = Clock::now();

        std::unique_lock<std::mutex> q(m_state.mutex);
        const std::pair<double, double> ran{msBetween(m_state.started, begin), msBetween(m_state.started, end)};
        summary().intervals.push_back(ran);
        m_state.result.intervalOf[item] = ran;
        --m_state.inFlight;
        if (cancelled() || (outcome && outcome->cancelled)) {
            m_state.changed.notify_all();
            return false;
        }
        // RunPipeline::run returns an Error only when nothing could be tried: here, that the runner
        // did not start again. Both that and a lost runner are the endpoint's, not the candidate's.
        const bool loss = !outcome || RunPool::isEndpointLoss(*outcome);
        if (!loss) {
            m_state.result.outcomes[item] = std::move(outcome.value());
            m_state.result.endpointOf[item] = m_endpoint.name;
            m_state.result.attemptOf[item] = attempt;
            m_state.done[item] = true;
            ++summary().items;
            m_state.changed.notify_all();
            return true;
        }
        const std::string why = outcome ? outcome->failure->message() : outcome.error().message();
        auto& lostOn = m_state.lostOn[item];
        lostOn.push_back(m_endpoint.name);
        if (lostOn.size() >= 2) {
            // Lost twice: the item ends as an error that names both endpoints.
            if (outcome) {
                RunOutcome ended = std::move(outcome.value());
                Error e = *ended.failure;
                e.why = "lost with endpoints " + joinNames(lostOn) + ": " + e.why;
                ended.failure = e;
                m_state.result.outcomes[item] = std::move(ended);
            } else {
                m_state.result.missingWhy[item] = "lost with endpoints " + joinNames(lostOn) + ": " + why;
            }
            m_state.result.endpointOf[item] = m_endpoint.name;
            m_state.result.attemptOf[item] = attempt;
            m_state.done[item] = true;
        } else {
            m_state.queue.push_front(item);
        }
        m_state.changed.notify_all();
        q.unlock();
        log("lost during " + m_items[item].label + ": " + why);
        if (!lose(why)) {
            log("lost a second time: it leaves the pool");
            return false;
        }
        log("starting it again");
        return startSession(session);
    }

    const RunPool::Options& m_options;
    std::size_t m_index;
    const Endpoint& m_endpoint;
    RunKind m_kind;
    const Task& m_task;
    const std::vector<PoolItem>& m_items;
    const CancelToken* m_cancel;
    PoolState& m_state;
    GpuTurns& m_gpus;
    int m_losses = 0;
};

/// Every item queued and not done, every endpoint alive with an empty summary.
void startState(PoolState& state, std::size_t items, const std::vector<Endpoint>& endpoints)
{
    for (std::size_t i = 0; i < items; ++i)
        state.queue.push_back(i);
    state.lostOn.resize(items);
    state.attempts.assign(items, 0);
    state.done.assign(items, false);
    state.result.outcomes.resize(items);
    state.result.endpointOf.resize(items);
    state.result.attemptOf.assign(items, 0);
    state.result.missingWhy.resize(items);
    state.result.intervalOf.assign(items, {0.0, 0.0});
    for (const Endpoint& e : endpoints) {
        PoolEndpointSummary s;
        s.name = e.name;
        s.description = e.describe();
        state.result.endpoints.push_back(std::move(s));
        state.liveNames.push_back(e.name);
    }
    state.alive = static_cast<int>(endpoints.size());
}

} // namespace

RunPool::RunPool(Options options) : m_options(std::move(options)) {}

bool RunPool::isEndpointLoss(const RunOutcome& outcome)
{
    return outcome.failure && isLossKind(outcome.failure->kind);
}

Result<PoolOutcome> RunPool::run(RunKind kind, const Task& task, const std::vector<PoolItem>& items, const CancelToken* cancel,
                                 const std::function<void(std::size_t, const RunOutcome&, const std::string&)>& onDone)
{
    if (m_options.endpoints.empty())
        return Error::failed("run on a pool of runners", "the pool has no endpoints", "list endpoints in runners.json (docs/runners.md)");
    PoolState state;
    state.started = Clock::now();
    startState(state, items.size(), m_options.endpoints);

    // Runners on this machine share its cores: LibTorch sizes its CPU thread pool to every core,
    // and k runners at once would each start that many threads (measured on two H200s: each
    // verification four times slower with two runners than with one). Each local runner gets
    // its share unless its endpoint sets OMP_NUM_THREADS itself.
    Options options = m_options;
    const int locals = static_cast<int>(std::count_if(options.endpoints.begin(), options.endpoints.end(),
                                                      [](const Endpoint& e) { return e.kind == Endpoint::Kind::Local; }));
    if (locals > 1) {
        const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        const std::string share = std::to_string(std::max(1, cores / locals));
        for (Endpoint& e : options.endpoints)
            if (e.kind == Endpoint::Kind::Local && !e.env.count("OMP_NUM_THREADS"))
                e.env["OMP_NUM_THREADS"] = share;
    }
    GpuTurns gpus;
    std::vector<std::thread> threads;
    threads.reserve(m_options.endpoints.size());
    for (std::size_t w = 0; w < m_options.endpoints.size(); ++w)
        threads.emplace_back(Worker(options, w, kind, task, items, cancel, state, gpus));

    // Hand finished items to the caller in item order, as soon as each and all before it are done.
    std::size_t next = 0;
    {
        std::unique_lock<std::mutex> q(state.mutex);
        while (true) {
            while (next < items.size() && state.done[next]) {
                const std::size_t i = next++;
                if (!state.result.outcomes[i])
                    continue;
                q.unlock();
                if (onDone)
                    onDone(i, *state.result.outcomes[i], state.result.endpointOf[i]);
                q.lock();
            }
            if (next >= items.size() || state.alive == 0)
                break;
            state.changed.wait_for(q, std::chrono::milliseconds(100));
        }
    }
    for (std::thread& t : threads)
        t.join();
    // Items done after the last worker left (none is expected), in order.
    for (; next < items.size() && state.done[next]; ++next)
        if (state.result.outcomes[next] && onDone)
            onDone(next, *state.result.outcomes[next], state.result.endpointOf[next]);

    PoolOutcome out = std::move(state.result);
    out.wallMs = msBetween(state.started, Clock::now());
    out.cancelled = cancel && cancel->cancelled();
    if (!out.cancelled && !state.queue.empty()) {
        out.allLost = true;
        std::vector<std::string> whys;
        for (const PoolEndpointSummary& s : out.endpoints)
            whys.push_back(s.name + ": " + (s.why.empty() ? std::string("stopped") : s.why));
        out.allLostWhy = "every endpoint of the pool was lost (" + joinNames(whys) + ")";
    }
    return out;
}

} // namespace kf
