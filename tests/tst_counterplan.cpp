// The host half of profiling (device/CounterPlan) without a GPU: CUPTI's Profiler Host API
// knows our metric catalogue for the chips we validate on, builds configuration images and
// counts replay passes. A chip CUPTI does not know is refused with the list of known ones.
#include "device/CounterPlan.h"
#include "device/Cupti.h"
#include "engine/protocol/MetricCatalog.h"
#include "testutil.h"

#include <QTest>

#include <set>

using namespace kf;
using namespace kf::device;

class TestCounterPlan : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void knownChips();
    void plan_data();
    void plan();
    void samePlanTwice();
    void unknownChip();
};

void TestCounterPlan::initTestCase()
{
    const auto& t = Cupti::get();
    if (!t)
        QSKIP(qPrintable("libcupti cannot be loaded here: " + qs(t.error().message())));
    QVERIFY(!t.value()->path.empty());
}

void TestCounterPlan::knownChips()
{
    auto chips = CounterHost::supportedChips();
    KF_VERIFY_OK(chips);
    const std::set<std::string> set(chips->begin(), chips->end());
    for (const char* c : {"GA100", "GH100", "AD102"})
        QVERIFY2(set.count(c), c);
}

void TestCounterPlan::plan_data()
{
    QTest::addColumn<QString>("chip");
    QTest::addColumn<int>("minPasses");
    QTest::addColumn<int>("maxPasses");
    // Pass counts move with the CUPTI release; the range keeps the test honest without pinning
    // one toolkit: more than one pass (the catalogue does not fit one), and few enough that
    // kernel replay of a large launch stays seconds, not minutes.
    QTest::newRow("H100 (GH100)") << "GH100" << 2 << 24;
    QTest::newRow("A100 (GA100)") << "GA100" << 2 << 24;
    QTest::newRow("L40 (AD102)") << "AD102" << 2 << 24;
}

void TestCounterPlan::plan()
{
    QFETCH(QString, chip);
    QFETCH(int, minPasses);
    QFETCH(int, maxPasses);
    auto host = CounterHost::create(chip.toStdString());
    KF_VERIFY_OK(host);
    auto p = host->plan();
    KF_VERIFY_OK(p);
    QCOMPARE(qs(p->chip), chip);
    QVERIFY(!p->configImage.empty());
    QVERIFY2(static_cast<int>(p->passes) >= minPasses && static_cast<int>(p->passes) <= maxPasses,
             qPrintable(QString::number(p->passes) + " passes"));

    // Every required metric is collected; every catalogue metric is either collected or listed
    // as unsupported, never both and never silently dropped.
    std::set<std::string> collected, unsupported(p->unsupported.begin(), p->unsupported.end());
    for (const auto* m : p->metrics)
        QVERIFY2(collected.insert(m->key).second, m->key);
    for (const auto& m : profile::metricCatalog()) {
        const bool in = collected.count(m.key) > 0, out = unsupported.count(m.key) > 0;
        QVERIFY2(in != out, m.key);
        if (m.required)
            QVERIFY2(in, m.key);
    }
    // The metrics the panel and the hints stand on are there on the chips we validate on.
    for (const char* k : {profile::key::kAchievedOccupancy, profile::key::kDramThroughput, profile::key::kSmThroughput,
                          profile::key::kDuration, profile::key::kL2HitRate, profile::key::kFfma, profile::key::kDramClock})
        QVERIFY2(collected.count(k), k);
    QCOMPARE(p->cuptiNames().size(), p->metrics.size());
    qInfo("%s: %zu metrics collected, %zu unsupported, %zu replay passes", qPrintable(chip), p->metrics.size(),
          p->unsupported.size(), p->passes);
    QVERIFY(host->supports("sm__warps_active.avg.pct_of_peak_sustained_active"));
    QVERIFY(!host->supports("sm__no_such_metric.sum"));
}

void TestCounterPlan::samePlanTwice()
{
    auto a = CounterHost::create("GH100");
    auto b = CounterHost::create("GH100");
    KF_VERIFY_OK(a);
    KF_VERIFY_OK(b);
    auto pa = a->plan(), pb = b->plan();
    KF_VERIFY_OK(pa);
    KF_VERIFY_OK(pb);
    QCOMPARE(pa->passes, pb->passes);
    QCOMPARE(pa->metrics.size(), pb->metrics.size());
}

void TestCounterPlan::unknownChip()
{
    auto host = CounterHost::create("GX999");
    QVERIFY(!host);
    QVERIFY2(host.error().why.find("GX999") != std::string::npos, host.error().why.c_str());
    QVERIFY2(host.error().hint.find("GH100") != std::string::npos, host.error().hint.c_str());
}

QTEST_GUILESS_MAIN(TestCounterPlan)
#include "tst_counterplan.moc"
