// RunPool: candidates fanned out over several endpoints, merged back in task order. The endpoints
// run the fixture runner tests/fixtures/endpoints/fake-pool-runner (a scripted stand-in that
// echoes each request's candidate, seeds and placement into its report and logs when it ran), so
// the pool's scheduling is checked on a machine without a GPU. The candidates are compiled with
// the real NVRTC; rows skip, saying so, where there is none.
#include "engine/pipeline/RunPool.h"
#include "engine/runner/RunnersConfig.h"
#include "fakerunner.h"
#include "testutil.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <thread>

using namespace kf;
using nlohmann::json;

namespace {

const std::string kFixture = std::string(KF_SOURCE_DIR) + "/tests/fixtures/endpoints/fake-pool-runner";

struct LogLine {
    std::string endpoint;
    std::string candidate;
    int attempt = 0;
    long long start = 0;
    long long end = 0;
    std::string threads;            ///< the runner's OMP_NUM_THREADS ("-" when unset)
};

class PoolFixture {
public:
    PoolFixture() { QVERIFY(m_dir.isValid()); }

    /// A local endpoint running the fixture runner, on the fake GPU `uuid` of host "fakehost".
    Endpoint endpoint(const std::string& name, const std::string& uuid, std::map<std::string, std::string> env = {},
                      bool wrapped = false)
    {
        Endpoint e;
        e.name = name;
        if (wrapped) {   // a template endpoint (remote semantics) around the same program
            e.kind = Endpoint::Kind::Command;
            e.command = {"sh", "-c", "exec \"$0\"", "{runner}"};
        }
        e.runner = kFixture;
        e.env = std::move(env);
        e.env["FAKE_HOST"] = "fakehost";
        e.env["FAKE_GPU_UUID"] = uuid;
        e.env["FAKE_LOG"] = logPath();
        if (!e.env.count("FAKE_SLEEP_MS"))
            e.env["FAKE_SLEEP_MS"] = "40";
        return e;
    }

    std::string path(const char* name) const { return m_dir.filePath(name).toStdString(); }
    std::string logPath() const { return path("requests.log"); }

    std::vector<LogLine> log() const
    {
        std::vector<LogLine> out;
        QFile f(QString::fromStdString(logPath()));
        if (!f.open(QIODevice::ReadOnly))
            return out;
        for (const QByteArray& line : f.readAll().split('\n')) {
            const QList<QByteArray> w = line.split(' ');
            if (w.size() < 5)
                continue;
            out.push_back({w[0].toStdString(), w[1].toStdString(), w[2].toInt(), w[3].toLongLong(), w[4].toLongLong(),
                           w.size() > 6 ? w[6].toStdString() : std::string()});
        }
        return out;
    }

    /// Makes every endpoint hold its first item until all of them hold one (or, `atHello`, hold
    /// its hello until all have started), so each takes a share however slowly the machine starts
    /// them. Timings on one GPU need `atHello`: the others wait for the GPU before they take an item.
    std::vector<Endpoint> together(std::vector<Endpoint> endpoints, bool atHello = false)
    {
        const QString dir = m_dir.filePath("barrier-" + QString::number(++m_barriers));
        if (!QDir().mkpath(dir))
            qFatal("cannot create %s", qPrintable(dir));
        for (Endpoint& e : endpoints)
            e.env[atHello ? "FAKE_HELLO_BARRIER" : "FAKE_BARRIER"] = dir.toStdString() + ":" + std::to_string(endpoints.size());
        return endpoints;
    }

    RunPool::Options options(std::vector<Endpoint> endpoints) const
    {
        RunPool::Options o;
        o.endpoints = std::move(endpoints);
        o.cacheDir = path("cache");
        return o;
    }

private:
    QTemporaryDir m_dir;
    int m_barriers = 0;
};

std::vector<PoolItem> items(int count, std::optional<std::uint64_t> seed = std::nullopt)
{
    std::vector<PoolItem> out;
    for (int i = 0; i < count; ++i) {
        PoolItem item;
        item.candidateFile = i % 2 == 0 ? "naive.cu" : "optimized.cu";
        item.label = "vector_add/" + item.candidateFile;
        item.settings.trials = 1;
        if (seed)
            item.settings.seed = *seed + static_cast<std::uint64_t>(i) * 1000;
        out.push_back(std::move(item));
    }
    return out;
}

/// A report without what legitimately differs between two runs of the same request: when and
/// where it ran, how long it took, the signature.
json comparable(json report)
{
    for (const char* key : {"placement", "started_at", "duration_ms", "signature"})
        report.erase(key);
    return report;
}

/// Skips the row when NVRTC is missing: the pool's sessions compile every candidate.
#define RUN_OR_SKIP(result)                                                                                 \
    do {                                                                                                   \
        KF_VERIFY_OK(result);                                                                              \
        for (const auto& o_ : (result)->outcomes)                                                          \
            if (o_ && o_->failure && o_->failure->why.find("NVRTC") != std::string::npos)                  \
                QSKIP(qPrintable("NVRTC unavailable: " + qs(o_->failure->message())));                     \
        for (const auto& e_ : (result)->endpoints)                                                         \
            if (e_.why.find("NVRTC") != std::string::npos)                                                 \
                QSKIP(qPrintable("NVRTC unavailable: " + qs(e_.why)));                                     \
    } while (0)

bool overlaps(const LogLine& a, const LogLine& b) { return a.start < b.end && b.start < a.end; }

} // namespace

class TestRunPool : public QObject {
    Q_OBJECT
private slots:
    void fansOutAndMergesInOrder_data();
    void fansOutAndMergesInOrder();
    void poolMatchesOneEndpoint();
    void timingsNeverShareAGpu_data();
    void timingsNeverShareAGpu();
    void lostEndpointRestartsOnce_data();
    void lostEndpointRestartsOnce();
    void endpointLostTwiceLeavesThePool_data();
    void endpointLostTwiceLeavesThePool();
    void everyEndpointLost();
    void candidateFailureIsNotALoss();
    void oldRunnerLeavesThePool();
    void cancelStopsTakingItems();
    void builtInLocalJoinsOnlyWhenListed();
    void localRunnersShareTheCores();
};

void TestRunPool::fansOutAndMergesInOrder_data()
{
    QTest::addColumn<int>("endpoints");
    QTest::addColumn<int>("count");
    QTest::addColumn<bool>("wrapped");
    QTest::addColumn<bool>("bench");
    QTest::addColumn<int>("lastStartMs");   ///< how long the last endpoint's runner takes to start
    QTest::newRow("1 endpoint, verify") << 1 << 6 << false << false << 0;
    QTest::newRow("3 endpoints, verify") << 3 << 32 << false << false << 0;
    QTest::newRow("3 endpoints, one slow to start") << 3 << 12 << false << false << 800;
    QTest::newRow("3 template endpoints, verify") << 3 << 12 << true << false << 0;
    QTest::newRow("3 GPUs, bench") << 3 << 12 << false << true << 0;
}

void TestRunPool::fansOutAndMergesInOrder()
{
    QFETCH(int, endpoints);
    QFETCH(int, count);
    QFETCH(bool, wrapped);
    QFETCH(bool, bench);
    QFETCH(int, lastStartMs);
    PoolFixture fx;
    std::vector<Endpoint> eps;
    for (int i = 0; i < endpoints; ++i)   // one GPU each
        eps.push_back(fx.endpoint("ep" + std::to_string(i), "GPU-" + std::to_string(i),
                                  {{"FAKE_START_MS", i + 1 == endpoints ? std::to_string(lastStartMs) : "0"}}, wrapped));
    RunPool pool(fx.options(fx.together(eps)));
    const auto list = items(count);
    std::vector<std::size_t> order;
    auto result = pool.run(bench ? RunKind::Bench : RunKind::Verify, kf::test::vectorAddTask(), list, nullptr,
                           [&](std::size_t i, const RunSession::Outcome&, const std::string&) { order.push_back(i); });
    RUN_OR_SKIP(result);
    // Handed back in task order, each item exactly once, with its own candidate's report.
    std::vector<std::size_t> expected(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < expected.size(); ++i)
        expected[i] = i;
    QCOMPARE(order, expected);
    QVERIFY(!result->allLost && !result->cancelled);
    for (int i = 0; i < count; ++i) {
        const auto& o = result->outcomes[static_cast<std::size_t>(i)];
        QVERIFY(o);
        QVERIFY2(!o->failure, o->failure ? o->failure->message().c_str() : "");
        QCOMPARE(qs(o->report.header().candidate.file), qs(list[static_cast<std::size_t>(i)].candidateFile));
        QCOMPARE(qs(o->report.header().verdict), QString(bench ? "ok" : "pass"));
        // The runner was told where it runs, and the report says so.
        QCOMPARE(qs(o->report.header().placement.endpoint), qs(result->endpointOf[static_cast<std::size_t>(i)]));
        QCOMPARE(o->report.header().placement.attempt, 1);
    }
    const auto log = fx.log();
    QCOMPARE(int(log.size()), count);
    // Every endpoint took a share.
    for (const PoolEndpointSummary& e : result->endpoints) {
        QVERIFY2(e.items > 0, e.name.c_str());
        QCOMPARE(qs(e.host), QString("fakehost"));
        QVERIFY(!e.lost);
        QCOMPARE(e.restarts, 0);
    }
}

void TestRunPool::poolMatchesOneEndpoint()
{
    // With fixed seeds the pool's reports are the ones a single endpoint makes, in the same
    // order: where an item ran changes its placement and nothing else.
    PoolFixture one;
    PoolFixture three;
    const auto list = items(9, 0x9f3a5c);
    const Task task = kf::test::vectorAddTask();
    auto a = RunPool(one.options({one.endpoint("solo", "GPU-0")})).run(RunKind::Verify, task, list, nullptr);
    RUN_OR_SKIP(a);
    auto b = RunPool(three.options(three.together({three.endpoint("a", "GPU-0"), three.endpoint("b", "GPU-1"), three.endpoint("c", "GPU-2")})))
                 .run(RunKind::Verify, task, list, nullptr);
    RUN_OR_SKIP(b);
    std::set<std::string> used;
    for (std::size_t i = 0; i < list.size(); ++i) {
        QVERIFY(a->outcomes[i] && b->outcomes[i]);
        QVERIFY2(comparable(a->outcomes[i]->report.document()) == comparable(b->outcomes[i]->report.document()),
                 (a->outcomes[i]->report.document().dump() + "\n" + b->outcomes[i]->report.document().dump()).c_str());
        QCOMPARE(a->outcomes[i]->report.header().seeds, b->outcomes[i]->report.header().seeds);
        used.insert(b->endpointOf[i]);
    }
    QCOMPARE(int(used.size()), 3);
}

void TestRunPool::timingsNeverShareAGpu_data()
{
    QTest::addColumn<bool>("bench");
    QTest::newRow("bench: serialised") << true;
    QTest::newRow("verify: may overlap") << false;
}

void TestRunPool::timingsNeverShareAGpu()
{
    QFETCH(bool, bench);
    // Two endpoints on one GPU (the same host and UUID), as two local endpoints on one H100.
    PoolFixture fx;
    const std::map<std::string, std::string> slow{{"FAKE_SLEEP_MS", "400"}};
    RunPool pool(fx.options(fx.together({fx.endpoint("x", "GPU-same", slow), fx.endpoint("y", "GPU-same", slow)}, bench)));
    auto result = pool.run(bench ? RunKind::Bench : RunKind::Verify, kf::test::vectorAddTask(), items(8), nullptr);
    RUN_OR_SKIP(result);
    const auto log = fx.log();
    QCOMPARE(int(log.size()), 8);
    int overlapping = 0;
    for (std::size_t i = 0; i < log.size(); ++i)
        for (std::size_t j = i + 1; j < log.size(); ++j)
            if (log[i].endpoint != log[j].endpoint && overlaps(log[i], log[j]))
                ++overlapping;
    if (bench) {
        QCOMPARE(overlapping, 0);
    } else {
        // Verifications of one GPU overlap: both endpoints worked at once for most of the run.
        QVERIFY2(overlapping > 0, "two endpoints on one GPU never verified at the same time");
    }
    QVERIFY(result->endpoints[0].items > 0 && result->endpoints[1].items > 0);
    QCOMPARE(result->endpoints[0].gpuKey, result->endpoints[1].gpuKey);
}

void TestRunPool::lostEndpointRestartsOnce_data()
{
    QTest::addColumn<bool>("wrapped");
    QTest::addColumn<int>("startMs");
    QTest::newRow("local endpoint killed") << false << 0;
    QTest::newRow("template endpoint killed") << true << 0;
    QTest::newRow("local endpoint killed, slow starts") << false << 600;
}

void TestRunPool::lostEndpointRestartsOnce()
{
    QFETCH(bool, wrapped);
    QFETCH(int, startMs);
    // "flaky" dies (SIGKILL, as if its machine vanished) on its second request, once. "steady"
    // holds its first item until then, so flaky gets its two requests however slowly it starts.
    PoolFixture fx;
    const std::string marker = fx.path("died-once");
    const std::string start = std::to_string(startMs);
    RunPool pool(fx.options(
        {fx.endpoint("flaky", "GPU-0", {{"FAKE_DIE_AFTER", "2"}, {"FAKE_DIE_ONCE", marker}, {"FAKE_START_MS", start}}, wrapped),
         fx.endpoint("steady", "GPU-1", {{"FAKE_AWAIT", marker}}, wrapped)}));
    const auto list = items(10);
    auto result = pool.run(RunKind::Verify, kf::test::vectorAddTask(), list, nullptr);
    RUN_OR_SKIP(result);
    QVERIFY(QFile::exists(QString::fromStdString(marker)));
    const PoolEndpointSummary& flaky = result->endpoints[0];
    QCOMPARE(flaky.restarts, 1);
    QVERIFY(!flaky.lost);
    QVERIFY2(!flaky.why.empty(), "the loss is recorded with its sentence");
    // Every item has its report, and the one that was lost ran again (attempt 2), elsewhere or
    // on the restarted endpoint.
    int retried = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
        QVERIFY(result->outcomes[i]);
        QVERIFY2(!result->outcomes[i]->failure, result->outcomes[i]->failure ? result->outcomes[i]->failure->message().c_str() : "");
        if (result->attemptOf[i] == 2) {
            ++retried;
            QCOMPARE(result->outcomes[i]->report.header().placement.attempt, 2);
        }
    }
    QCOMPARE(retried, 1);
}

void TestRunPool::endpointLostTwiceLeavesThePool_data()
{
    QTest::addColumn<int>("startMs");
    QTest::newRow("quick starts") << 0;
    QTest::newRow("slow starts") << 600;   // slower than steady's six items
}

void TestRunPool::endpointLostTwiceLeavesThePool()
{
    QFETCH(int, startMs);
    // "doomed" dies on every first request; "steady" holds its first item until doomed died
    // twice, so doomed's restart finds work to take (and lose) however slowly it starts.
    PoolFixture fx;
    const std::string deaths = fx.path("deaths");
    RunPool pool(fx.options({fx.endpoint("doomed", "GPU-0",
                                         {{"FAKE_DIE_AFTER", "1"}, {"FAKE_DEATHS", deaths}, {"FAKE_START_MS", std::to_string(startMs)}}),
                             fx.endpoint("steady", "GPU-1", {{"FAKE_AWAIT", deaths + ":2"}})}));
    const auto list = items(6);
    auto result = pool.run(RunKind::Verify, kf::test::vectorAddTask(), list, nullptr);
    RUN_OR_SKIP(result);
    const PoolEndpointSummary& doomed = result->endpoints[0];
    QVERIFY(doomed.lost);
    QCOMPARE(doomed.restarts, 1);
    QCOMPARE(doomed.items, 0);
    QCOMPARE(result->endpoints[1].items, 6);
    for (std::size_t i = 0; i < list.size(); ++i) {
        QVERIFY(result->outcomes[i]);
        QCOMPARE(qs(result->outcomes[i]->report.header().verdict), QString("pass"));
        QCOMPARE(qs(result->endpointOf[i]), QString("steady"));
    }
}

void TestRunPool::everyEndpointLost()
{
    PoolFixture fx;
    RunPool pool(fx.options({fx.endpoint("a", "GPU-0", {{"FAKE_DIE_AFTER", "1"}}), fx.endpoint("b", "GPU-1", {{"FAKE_DIE_AFTER", "1"}})}));
    const auto list = items(5);
    auto result = pool.run(RunKind::Verify, kf::test::vectorAddTask(), list, nullptr);
    RUN_OR_SKIP(result);
    QVERIFY(result->endpoints[0].lost && result->endpoints[1].lost);
    QVERIFY(result->allLost);
    QVERIFY(result->allLostWhy.find("every endpoint of the pool was lost") != std::string::npos);
    // No item passed; an item lost on both endpoints says so, the others were never run.
    int lostTwice = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (result->outcomes[i]) {
            QVERIFY(result->outcomes[i]->failure);
            QVERIFY2(result->outcomes[i]->failure->why.find("lost with endpoints") != std::string::npos,
                     result->outcomes[i]->failure->why.c_str());
            QCOMPARE(qs(result->outcomes[i]->report.header().verdict), QString("error"));
            ++lostTwice;
        } else if (!result->missingWhy[i].empty()) {
            ++lostTwice;
        }
    }
    QVERIFY(lostTwice >= 1);
}

void TestRunPool::candidateFailureIsNotALoss()
{
    PoolFixture fx;
    RunPool pool(fx.options({fx.endpoint("a", "GPU-0", {{"FAKE_FAIL", "naive"}}), fx.endpoint("b", "GPU-1", {{"FAKE_FAIL", "naive"}})}));
    const auto list = items(6);
    auto result = pool.run(RunKind::Verify, kf::test::vectorAddTask(), list, nullptr);
    RUN_OR_SKIP(result);
    for (std::size_t i = 0; i < list.size(); ++i)
        QCOMPARE(qs(result->outcomes[i]->report.header().verdict), QString(i % 2 == 0 ? "fail" : "pass"));
    for (const auto& e : result->endpoints) {
        QCOMPARE(e.restarts, 0);
        QVERIFY(!e.lost);
    }
}

void TestRunPool::oldRunnerLeavesThePool()
{
    // A runner of another protocol version is refused at its hello with the version sentence;
    // that endpoint leaves the pool and the others do the work.
    PoolFixture fx;
    RunPool pool(fx.options({fx.endpoint("old", "GPU-0", {{"FAKE_PROTOCOL", "2"}}), fx.endpoint("new", "GPU-1")}));
    auto result = pool.run(RunKind::Verify, kf::test::vectorAddTask(), items(4), nullptr);
    RUN_OR_SKIP(result);
    QVERIFY(result->endpoints[0].lost);
    QVERIFY2(result->endpoints[0].why.find("protocol") != std::string::npos, result->endpoints[0].why.c_str());
    QCOMPARE(result->endpoints[1].items, 4);
}

void TestRunPool::cancelStopsTakingItems()
{
    PoolFixture fx;
    const std::map<std::string, std::string> slow{{"FAKE_SLEEP_MS", "200"}};
    RunPool::Options o = fx.options({fx.endpoint("a", "GPU-0", slow), fx.endpoint("b", "GPU-1", slow)});
    CancelToken cancel;
    std::atomic<int> started{0};
    o.onStart = [&](std::size_t, const std::string&, int) {
        if (++started == 3)
            cancel.cancel();
    };
    RunPool pool(o);
    const auto list = items(20);
    auto result = pool.run(RunKind::Verify, kf::test::vectorAddTask(), list, &cancel);
    RUN_OR_SKIP(result);
    QVERIFY(result->cancelled);
    QVERIFY(!result->allLost);
    QVERIFY2(started.load() <= 4, qPrintable(QString::number(started.load())));
    int finished = 0;
    for (const auto& out : result->outcomes)
        finished += out ? 1 : 0;
    QVERIFY(finished < 20);
}

void TestRunPool::builtInLocalJoinsOnlyWhenListed()
{
    auto without = parseRunnersConfig("{\"schema_version\":1,\"endpoints\":[{\"name\":\"box\",\"kind\":\"ssh\",\"host\":\"gpu-box\"}]}", "runners.json");
    KF_VERIFY_OK(without);
    auto members = without->poolEndpoints("");
    KF_VERIFY_OK(members);
    QCOMPARE(int(members->size()), 1);
    QCOMPARE(qs(members->front().name), QString("box"));
    QVERIFY(without->find("local"));   // still there for --runner-endpoint local
    auto with = parseRunnersConfig("{\"schema_version\":1,\"endpoints\":[{\"name\":\"local\",\"kind\":\"local\"},"
                                   "{\"name\":\"box\",\"kind\":\"ssh\",\"host\":\"gpu-box\"}]}",
                                   "runners.json");
    KF_VERIFY_OK(with);
    QCOMPARE(int(with->poolEndpoints("")->size()), 2);
    // The file written back from a configuration without "local" still has none.
    const json written = json::parse(without->toJson());
    QCOMPARE(int(written.at("endpoints").size()), 1);
    QVERIFY(written.at("endpoints")[0].at("name") == "box");
}

void TestRunPool::localRunnersShareTheCores()
{
    // Two local runners split the cores between their CPU thread pools; an endpoint that sets
    // OMP_NUM_THREADS keeps its own; a template endpoint (maybe another host) is left alone.
    PoolFixture fx;
    RunPool pool(fx.options({fx.endpoint("a", "GPU-0"), fx.endpoint("b", "GPU-1", {{"OMP_NUM_THREADS", "3"}}),
                             fx.endpoint("c", "GPU-2"), fx.endpoint("t", "GPU-3", {}, true)}));
    auto result = pool.run(RunKind::Verify, kf::test::vectorAddTask(), items(12), nullptr);
    RUN_OR_SKIP(result);
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const std::string share = std::to_string(std::max(1u, cores / 3));
    for (const LogLine& l : fx.log()) {
        const std::string want = l.endpoint == "b" ? "3" : l.endpoint == "t" ? "-" : share;
        QVERIFY2(l.threads == want, (l.endpoint + ": " + l.threads + ", expected " + want).c_str());
    }
}

QTEST_GUILESS_MAIN(TestRunPool)
#include "tst_runpool.moc"
