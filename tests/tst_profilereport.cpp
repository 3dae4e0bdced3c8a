// The profile report: the metric catalogue the runner and the readers share, totals derived from
// the kernels (sums, duration-weighted means, nothing invented when a metric is missing), the
// JSON round trip, every way a damaged report is refused with the JSON pointer of the culprit,
// and the recorded reports in tests/data/profile agreeing with our occupancy calculator.
#include "testutil.h"

#include "engine/analysis/Occupancy.h"
#include "engine/core/JsonReader.h"
#include "engine/protocol/MetricCatalog.h"
#include "engine/protocol/ProfileReport.h"

#include <QDir>
#include <QTest>

#include <cmath>
#include <limits>
#include <set>

using namespace kf;
using namespace kf::profile;
using Json = nlohmann::json;

namespace {

const QString kDataDir = QString(KF_TEST_DATA_DIR) + "/profile";

QStringList recordedReports()
{
    return QDir(kDataDir).entryList({"*.json"}, QDir::Files, QDir::Name);
}

Json readJson(const QString& file)
{
    auto j = json::readFile((kDataDir + "/" + file).toStdString());
    if (!j)
        qFatal("%s", j.error().message().c_str());
    return j.value();
}

/// Kernels from `[{metric: value, ...}, ...]`; a value of null stands for NaN.
std::vector<KernelRecord> kernelsFrom(const QString& text)
{
    std::vector<KernelRecord> kernels;
    for (const Json& m : Json::parse(text.toStdString())) {
        KernelRecord k;
        k.name = "k" + std::to_string(kernels.size());
        for (auto it = m.begin(); it != m.end(); ++it)
            k.metrics[it.key()] = it->is_null() ? std::numeric_limits<double>::quiet_NaN() : it->get<double>();
        kernels.push_back(std::move(k));
    }
    return kernels;
}

/// NaN in a test row stands for "no value" (nullopt).
void compareMean(const std::optional<double>& actual, double expected, const char* what)
{
    if (std::isnan(expected)) {
        QVERIFY2(!actual, qPrintable(QString("%1 should be unknown, is %2").arg(what).arg(actual.value_or(0))));
        return;
    }
    QVERIFY2(actual, qPrintable(QString("%1 should be %2, is unknown").arg(what).arg(expected)));
    QVERIFY2(std::fabs(*actual - expected) < 1e-9 * std::max(1.0, std::fabs(expected)),
             qPrintable(QString("%1: %2, expected %3").arg(what).arg(*actual).arg(expected)));
}

bool near(double a, double b)
{
    return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b));
}

} // namespace

class TestProfileReport : public QObject {
    Q_OBJECT
private slots:
    void catalogueKeysAreUniqueAndKnown();
    void totals_data();
    void totals();
    void roundTrip_data();
    void roundTrip();
    void totalsInTheFileAreRecomputed();
    void nonFiniteNumbers();
    void unknownMetricsAreKept();
    void errorReportNeedsNoProfile();
    void rejects_data();
    void rejects();
    void archAndGpu_data();
    void archAndGpu();
    void recordedReportsAgreeWithTheCalculator_data();
    void recordedReportsAgreeWithTheCalculator();
};

void TestProfileReport::catalogueKeysAreUniqueAndKnown()
{
    std::set<std::string> keys, cuptiNames;
    for (const MetricInfo& m : metricCatalog()) {
        QVERIFY2(keys.insert(m.key).second, m.key);
        QVERIFY2(cuptiNames.insert(m.cuptiName).second, m.cuptiName);
        QVERIFY2(*m.unit && *m.meaning, m.key);
        QCOMPARE(findMetric(m.key), &m);
        QCOMPARE(findMetric(m.cuptiName), &m);
    }
    using namespace key;
    for (const char* k : {kAchievedOccupancy, kSmThroughput, kDramThroughput, kMemoryThroughput, kDramReadBytes,
                          kDramWriteBytes, kDuration, kL1HitRate, kL2HitRate, kFfma, kFadd, kFmul, kDfma, kDadd,
                          kDmul, kHfma, kHadd, kHmul, kTensorInstructions, kSmClock, kDramPeakBytesPerCycle,
                          kDramClock})
        QVERIFY2(findMetric(k) && std::string(findMetric(k)->key) == k, k);
    QVERIFY(!findMetric("sm__warps_active"));
    QVERIFY(!findMetric(""));
    // Without these three a profile says nothing; the runner refuses chips that lack them.
    for (const char* k : {kDuration, kDramReadBytes, kAchievedOccupancy})
        QVERIFY2(findMetric(k)->required, k);
}

void TestProfileReport::totals_data()
{
    QTest::addColumn<QString>("kernels");
    QTest::addColumn<int>("count");
    QTest::addColumn<double>("durationNs");
    QTest::addColumn<double>("dramBytes");
    QTest::addColumn<double>("fp32");
    QTest::addColumn<double>("fp64");
    QTest::addColumn<double>("fp16");
    QTest::addColumn<double>("occupancy");   // NaN: unknown
    QTest::addColumn<double>("dramPct");
    QTest::addColumn<double>("l1HitRate");
    QTest::addColumn<double>("gflops");
    QTest::addColumn<double>("gbs");
    QTest::addColumn<bool>("hasCounters");

    const double nan = std::numeric_limits<double>::quiet_NaN();
    // FMAs count twice: fp32 = 2*100 + 10 + 5, fp64 = 2*7 + 1 + 2, fp16 = 2*3 + 4 + 5.
    QTest::newRow("one kernel")
        << R"([{"duration_ns":1000,"dram_read_bytes":3000,"dram_write_bytes":1000,"fp32_ffma":100,"fp32_fadd":10,
                "fp32_fmul":5,"fp64_dfma":7,"fp64_dadd":1,"fp64_dmul":2,"fp16_hfma":3,"fp16_hadd":4,"fp16_hmul":5,
                "achieved_occupancy_pct":80,"dram_throughput_pct":70}])"
        << 1 << 1000.0 << 4000.0 << 215.0 << 17.0 << 15.0 << 80.0 << 70.0 << nan << 0.247 << 4.0 << true;
    // 3 us at 90 % and 1 us at 50 %: (3*90 + 1*50) / 4 = 80, not the plain mean 70.
    QTest::newRow("two kernels, weighted by duration")
        << R"([{"duration_ns":3000,"dram_read_bytes":1e6,"achieved_occupancy_pct":90,"dram_throughput_pct":80},
               {"duration_ns":1000,"dram_write_bytes":1e6,"achieved_occupancy_pct":50,"dram_throughput_pct":40}])"
        << 2 << 4000.0 << 2e6 << 0.0 << 0.0 << 0.0 << 80.0 << 70.0 << nan << 0.0 << 500.0 << true;
    // The L1 hit rate exists on one kernel only: its value, not a mean diluted by a missing one.
    QTest::newRow("metric on one kernel only")
        << R"([{"duration_ns":1000,"l1_hit_rate_pct":60},{"duration_ns":3000}])"
        << 2 << 4000.0 << 0.0 << 0.0 << 0.0 << 0.0 << nan << nan << 60.0 << 0.0 << 0.0 << true;
    QTest::newRow("no durations: plain mean")
        << R"([{"achieved_occupancy_pct":30},{"achieved_occupancy_pct":70}])"
        << 2 << 0.0 << 0.0 << 0.0 << 0.0 << 0.0 << 50.0 << nan << nan << 0.0 << 0.0 << false;
    QTest::newRow("a zero-length kernel weighs nothing")
        << R"([{"duration_ns":0,"achieved_occupancy_pct":10},{"duration_ns":1000,"achieved_occupancy_pct":90}])"
        << 2 << 1000.0 << 0.0 << 0.0 << 0.0 << 0.0 << 90.0 << nan << nan << 0.0 << 0.0 << true;
    QTest::newRow("no counters") << R"([{},{}])" << 2 << 0.0 << 0.0 << 0.0 << 0.0 << 0.0 << nan << nan << nan << 0.0
                                 << 0.0 << false;
    QTest::newRow("a NaN counter is no measurement")
        << R"([{"duration_ns":1000,"achieved_occupancy_pct":null,"dram_read_bytes":null}])"
        << 1 << 1000.0 << 0.0 << 0.0 << 0.0 << 0.0 << nan << nan << nan << 0.0 << 0.0 << true;
    QTest::newRow("no kernels") << "[]" << 0 << 0.0 << 0.0 << 0.0 << 0.0 << 0.0 << nan << nan << nan << 0.0 << 0.0 << false;
}

void TestProfileReport::totals()
{
    QFETCH(QString, kernels);
    QFETCH(int, count);
    QFETCH(double, durationNs);
    QFETCH(double, dramBytes);
    QFETCH(double, fp32);
    QFETCH(double, fp64);
    QFETCH(double, fp16);
    QFETCH(double, occupancy);
    QFETCH(double, dramPct);
    QFETCH(double, l1HitRate);
    QFETCH(double, gflops);
    QFETCH(double, gbs);
    QFETCH(bool, hasCounters);

    const Totals t = totalsOf(kernelsFrom(kernels));
    QCOMPARE(t.kernels, count);
    QCOMPARE(t.durationNs, durationNs);
    QCOMPARE(t.dramBytes, dramBytes);
    QCOMPARE(t.fp32Flops, fp32);
    QCOMPARE(t.fp64Flops, fp64);
    QCOMPARE(t.fp16Flops, fp16);
    QCOMPARE(t.flops, fp32 + fp64 + fp16);
    compareMean(t.achievedOccupancyPct, occupancy, "achieved occupancy");
    compareMean(t.dramThroughputPct, dramPct, "DRAM throughput");
    compareMean(t.l1HitRatePct, l1HitRate, "L1 hit rate");
    QVERIFY(!t.memoryThroughputPct); // no row has it
    QVERIFY2(near(t.achievedGflops, gflops), qPrintable(QString::number(t.achievedGflops)));
    QVERIFY2(near(t.achievedDramGbs, gbs), qPrintable(QString::number(t.achievedDramGbs)));
    QVERIFY(near(t.arithmeticIntensity, dramBytes > 0 ? t.flops / dramBytes : 0.0));
    QCOMPARE(t.hasCounters, hasCounters);
}

void TestProfileReport::roundTrip_data()
{
    QTest::addColumn<QString>("file");
    for (const QString& f : recordedReports())
        QTest::newRow(qPrintable(f)) << f;
}

void TestProfileReport::roundTrip()
{
    QFETCH(QString, file);
    const Json original = readJson(file);
    auto r = ProfileReport::fromJson(original, file.toStdString());
    KF_VERIFY_OK(r);
    const Json written = r->toJson();
    auto again = ProfileReport::fromJson(written, "written");
    KF_VERIFY_OK(again);
    QCOMPARE(qs(again->toJson().dump(1)), qs(written.dump(1)));
    // Everything in the recorded file survives, and the totals appear beside the kernels.
    for (auto it = original.begin(); it != original.end(); ++it)
        if (it.key() != "profile")
            QVERIFY2(written.at(it.key()) == it.value(), it.key().c_str());
    for (const char* side : {"candidate", "baseline"}) {
        if (!original["profile"].contains(side))
            continue;
        QVERIFY2(written["profile"][side]["kernels"] == original["profile"][side]["kernels"], side);
        QCOMPARE(written["profile"][side]["totals"]["kernels"].get<int>(),
                 int(original["profile"][side]["kernels"].size()));
    }
}

void TestProfileReport::totalsInTheFileAreRecomputed()
{
    Json j = readJson("softmax_two_pass.json");
    j["profile"]["candidate"]["totals"] = {{"duration_ns", 1}, {"dram_bytes", 1}, {"achieved_occupancy_pct", 100}};
    auto r = ProfileReport::fromJson(j, "edited");
    KF_VERIFY_OK(r);
    const Totals& t = r->candidate->totals;
    QCOMPARE(t.kernels, 2);
    QCOMPARE(t.durationNs, 49792.0 + 94336.0);
    QCOMPARE(t.dramBytes, 134283264.0 + 65536 + 134348800 + 134217728);
    // (58.3 * 49792 + 88.9 * 94336) / 144128
    compareMean(t.achievedOccupancyPct, (58.3 * 49792 + 88.9 * 94336) / 144128, "achieved occupancy");
    const Json written = r->toJson()["profile"]["candidate"]["totals"];
    QCOMPARE(written["duration_ns"].get<double>(), t.durationNs);
    QCOMPARE(written["dram_bytes"].get<double>(), t.dramBytes);
    QCOMPARE(written["fp64_flops"].get<double>(), 0.0);
    QVERIFY(r->baseline);
    QCOMPARE(r->baseline->totals.kernels, 1);
}

void TestProfileReport::nonFiniteNumbers()
{
    Json j = readJson("copy_stream.json");
    Json& metrics = j["profile"]["candidate"]["kernels"][0]["metrics"];
    metrics["l1_hit_rate_pct"] = "nan";
    metrics["l2_hit_rate_pct"] = "inf";
    j["ceilings"]["fp16_tensor_gflops"] = "inf";
    j["duration_ms"] = "nan";
    auto r = ProfileReport::fromJson(j, "non-finite");
    KF_VERIFY_OK(r);
    const KernelRecord& k = r->candidate->kernels[0];
    QVERIFY(!k.metric(key::kL1HitRate));
    QVERIFY(!k.metric(key::kL2HitRate));
    QCOMPARE(k.metric(key::kAchievedOccupancy).value_or(0), 87.1);
    QCOMPARE(r->ceilings.fp16TensorGflops, 0.0); // unknown: the roofline leaves the line out
    QCOMPARE(r->ceilings.dramGbs, 3349.8);

    // Written back: no non-finite number anywhere, even one set in memory by the runner.
    ProfileReport p = r.value();
    p.candidate->kernels[0].metrics[key::kSmThroughput] = std::numeric_limits<double>::infinity();
    p.ceilings.dramGbs = std::numeric_limits<double>::quiet_NaN();
    const Json w = p.toJson();
    const Json& wm = w["profile"]["candidate"]["kernels"][0]["metrics"];
    QVERIFY(!wm.contains("sm_throughput_pct") && !wm.contains("l1_hit_rate_pct"));
    QCOMPARE(w["ceilings"]["dram_gbs"].get<double>(), 0.0);
    QVERIFY(w["duration_ms"] == "nan"); // the header is kept as written
    QVERIFY(!w["profile"]["candidate"]["totals"].contains("l1_hit_rate_pct"));
    QVERIFY(!w["profile"]["candidate"]["totals"].contains("sm_throughput_pct"));
}

void TestProfileReport::unknownMetricsAreKept()
{
    Json j = readJson("copy_stream.json");
    j["profile"]["candidate"]["kernels"][0]["metrics"]["lts_throughput_pct"] = 41.5;
    j["a_field_from_a_newer_runner"] = {{"x", 1}};
    auto r = ProfileReport::fromJson(j, "newer");
    KF_VERIFY_OK(r);
    QCOMPARE(r->candidate->kernels[0].metric("lts_throughput_pct").value_or(0), 41.5);
    QCOMPARE(r->toJson()["profile"]["candidate"]["kernels"][0]["metrics"]["lts_throughput_pct"].get<double>(), 41.5);
}

void TestProfileReport::errorReportNeedsNoProfile()
{
    const Json j = {{"schema_version", 1}, {"kind", "profile"}, {"verdict", "error"},
                    {"summary", "the runner crashed"},
                    {"error", {{"what", "profile"}, {"why", "illegal memory access"}, {"hint", "verify first"}}}};
    auto r = ProfileReport::fromJson(j, "error.json");
    KF_VERIFY_OK(r);
    QCOMPARE(qs(r->verdict), QString("error"));
    QVERIFY(!r->candidate && !r->baseline);
    QVERIFY(r->header["error"]["why"] == "illegal memory access");
    const Json w = r->toJson();
    QVERIFY(w["error"] == j["error"]);
    QVERIFY(!w.contains("profile"));
}

void TestProfileReport::rejects_data()
{
    QTest::addColumn<QString>("path");     // JSON pointer to change in copy_stream.json
    QTest::addColumn<QString>("value");    // new JSON value; empty: remove the key
    QTest::addColumn<QString>("pointer");  // the pointer the error must name
    QTest::addColumn<QString>("phrase");   // and a phrase of its sentence

    const QString k0 = "/profile/candidate/kernels/0";
    QTest::newRow("not an object") << "" << "[]" << "/" << "expected an object";
    QTest::newRow("a performance report") << "/kind" << R"("performance")" << "/kind" << "not a profile report";
    QTest::newRow("schema version 2") << "/schema_version" << "2" << "/schema_version" << "schema version 1";
    QTest::newRow("schema version as text") << "/schema_version" << R"("1")" << "/schema_version" << "integer";
    QTest::newRow("no verdict") << "/verdict" << "" << "/" << "\"verdict\"";
    QTest::newRow("unknown verdict") << "/verdict" << R"("pass")" << "/verdict" << "\"no_counters\"";
    QTest::newRow("error verdict without an error") << "/verdict" << R"("error")" << "/" << "\"error\" object";
    QTest::newRow("environment not an object") << "/environment" << R"("H100")" << "/environment" << "object";
    QTest::newRow("shape extent not an integer") << "/shape/N" << "1.5" << "/shape/N" << "integer";
    QTest::newRow("no counters section") << "/counters" << "" << "/" << "\"counters\"";
    QTest::newRow("counters.available as text") << "/counters/available" << R"("yes")" << "/counters/available"
                                                << "true or false";
    QTest::newRow("unsupported metric not a string") << "/counters/unsupported" << "[1]" << "/counters/unsupported/0"
                                                     << "string";
    QTest::newRow("ceiling as a word") << "/ceilings/dram_gbs" << R"("fast")" << "/ceilings/dram_gbs" << "number";
    QTest::newRow("no profile") << "/profile" << "" << "/" << "\"profile\"";
    QTest::newRow("no candidate side") << "/profile/candidate" << "" << "/profile" << "\"candidate\"";
    QTest::newRow("candidate with no kernel") << "/profile/candidate/kernels" << "[]" << "/profile/candidate/kernels"
                                              << "no kernel";
    QTest::newRow("kernels not a list") << "/profile/candidate/kernels" << "{}" << "/profile/candidate/kernels"
                                        << "array";
    QTest::newRow("kernel without a name") << k0 + "/name" << "" << k0 << "\"name\"";
    QTest::newRow("kernel with an empty name") << k0 + "/name" << R"("")" << k0 + "/name" << "needs a name";
    QTest::newRow("grid of two") << k0 + "/grid" << "[1056, 1]" << k0 + "/grid" << "three integers";
    QTest::newRow("grid of a fraction") << k0 + "/grid" << "[1056.5, 1, 1]" << k0 + "/grid/0" << "integer";
    QTest::newRow("negative block") << k0 + "/block" << "[-256, 1, 1]" << k0 + "/block/0" << "negative";
    QTest::newRow("grid y beyond CUDA's limit") << k0 + "/grid" << "[1, 65536, 1]" << k0 + "/grid/1" << "at most 65535";
    QTest::newRow("dynamic shared memory negative") << k0 + "/dynamic_shared_bytes" << "-1"
                                                    << k0 + "/dynamic_shared_bytes" << "count";
    QTest::newRow("metrics a list") << k0 + "/metrics" << "[87.1]" << k0 + "/metrics" << "object";
    QTest::newRow("metric as a word") << k0 + "/metrics/duration_ns" << R"("fast")" << k0 + "/metrics/duration_ns"
                                      << "number";
    QTest::newRow("metric as a boolean") << k0 + "/metrics/achieved_occupancy_pct" << "true"
                                         << k0 + "/metrics/achieved_occupancy_pct" << "number";
    QTest::newRow("static without registers") << k0 + "/static/registers" << "" << k0 + "/static" << "\"registers\"";
    QTest::newRow("negative registers") << k0 + "/static/registers" << "-1" << k0 + "/static/registers" << "count";
    QTest::newRow("theoretical occupancy not a number") << k0 + "/static/theoretical_occupancy_pct" << R"("nan")"
                                                        << k0 + "/static/theoretical_occupancy_pct" << "number";
    QTest::newRow("limiter not text") << k0 + "/static/limiter" << "3" << k0 + "/static/limiter" << "string";
    QTest::newRow("blocks_limit not an object") << k0 + "/static/blocks_limit" << "8"
                                                << k0 + "/static/blocks_limit" << "object";
    QTest::newRow("bad baseline metric") << "/profile/baseline/kernels/0/metrics/dram_read_bytes" << R"("lots")"
                                         << "/profile/baseline/kernels/0/metrics/dram_read_bytes" << "number";
    QTest::newRow("baseline not an object") << "/profile/baseline" << "[]" << "/profile/baseline" << "object";
}

void TestProfileReport::rejects()
{
    QFETCH(QString, path);
    QFETCH(QString, value);
    QFETCH(QString, pointer);
    QFETCH(QString, phrase);

    Json j = readJson("copy_stream.json");
    KF_VERIFY_OK(ProfileReport::fromJson(j, "intact"));
    const Json::json_pointer at(path.toStdString());
    if (value.isEmpty()) {
        QVERIFY2(j.contains(at), "the row removes a key the fixture lacks");
        j[at.parent_pointer()].erase(at.back());
    } else {
        j[at] = Json::parse(value.toStdString());
    }
    auto r = ProfileReport::fromJson(j, "damaged.json");
    QVERIFY2(!r.ok(), "a damaged report was accepted");
    const Error& e = r.error();
    QCOMPARE(qs(e.what), QString("read profile report"));
    QCOMPARE(qs(e.file), QString("damaged.json"));
    QCOMPARE(qs(e.pointer), pointer);
    QVERIFY2(qs(e.why).contains(phrase), e.why.c_str());
    QVERIFY2(!e.hint.empty(), "a refusal must say what to do");
}

void TestProfileReport::archAndGpu_data()
{
    QTest::addColumn<QString>("environment");
    QTest::addColumn<QString>("arch");
    QTest::addColumn<QString>("gpu");
    QTest::newRow("H100") << R"({"gpu":"NVIDIA H100 80GB HBM3","compute_capability":"9.0"})" << "sm_90"
                          << "NVIDIA H100 80GB HBM3";
    QTest::newRow("two-digit major") << R"({"compute_capability":"12.0"})" << "sm_120" << "";
    QTest::newRow("minor kept") << R"({"compute_capability":"8.6"})" << "sm_86" << "";
    QTest::newRow("no dot") << R"({"compute_capability":"90"})" << "" << "";
    QTest::newRow("not digits") << R"({"compute_capability":"9.x"})" << "" << "";
    QTest::newRow("a number, not text") << R"({"compute_capability":9.0,"gpu":7})" << "" << "";
    QTest::newRow("no environment") << "null" << "" << "";
}

void TestProfileReport::archAndGpu()
{
    QFETCH(QString, environment);
    QFETCH(QString, arch);
    QFETCH(QString, gpu);
    ProfileReport r;
    const Json env = Json::parse(environment.toStdString());
    if (!env.is_null())
        r.header["environment"] = env;
    QCOMPARE(qs(r.arch()), arch);
    QCOMPARE(qs(r.gpu()), gpu);
}

void TestProfileReport::recordedReportsAgreeWithTheCalculator_data()
{
    QTest::addColumn<QString>("file");
    const QStringList files = recordedReports();
    QVERIFY2(files.size() >= 7, qPrintable("recorded profile reports missing from " + kDataDir));
    for (const QString& f : files)
        QTest::newRow(qPrintable(f)) << f;
}

// The runner takes the static numbers from engine/analysis/Occupancy; a recorded report whose
// numbers the calculator does not reproduce was edited by hand or came from a drifted runner.
void TestProfileReport::recordedReportsAgreeWithTheCalculator()
{
    QFETCH(QString, file);
    auto r = ProfileReport::fromJson(readJson(file), file.toStdString());
    KF_VERIFY_OK(r);
    QVERIFY(r->verdict == kf::protocol::Verdict::Ok || r->verdict == kf::protocol::Verdict::NoCounters);
    QCOMPARE(r->counters.available, r->verdict == kf::protocol::Verdict::Ok);
    QCOMPARE(r->candidate->totals.hasCounters, r->counters.available);
    QCOMPARE(qs(r->gpu()), QString("NVIDIA H100 80GB HBM3"));
    const ArchInfo* arch = findArchitecture(r->arch());
    QVERIFY(arch);
    for (const KernelRecord& k : r->candidate->kernels) {
        QVERIFY2(k.statics.known, k.name.c_str());
        OccupancyQuery q;
        q.blockSize = int(k.threadsPerBlock());
        q.registersPerThread = k.statics.registers;
        q.staticSharedBytes = k.statics.staticSharedBytes;
        q.dynamicSharedBytes = int(k.dynamicSharedBytes);
        auto o = computeOccupancy(*arch, q);
        KF_VERIFY_OK(o);
        QCOMPARE(k.statics.activeBlocksPerSm, o->activeBlocksPerSm);
        QCOMPARE(k.statics.activeWarpsPerSm, o->activeWarpsPerSm);
        QCOMPARE(k.statics.maxWarpsPerSm, o->maxWarpsPerSm);
        QCOMPARE(k.statics.theoreticalOccupancyPct, o->occupancy * 100);
        QCOMPARE(qs(k.statics.limiter), qs(std::string(limiterName(o->limiter))));
        QCOMPARE(k.statics.blocksLimitRegisters, o->blocksLimitRegisters);
        QCOMPARE(k.statics.blocksLimitShared, o->blocksLimitShared);
        QCOMPARE(k.statics.blocksLimitWarps, o->blocksLimitWarps);
        QCOMPARE(k.statics.blocksLimitBlocks, o->blocksLimitBlocks);
    }
    if (r->baseline)
        for (const KernelRecord& k : r->baseline->kernels)
            QVERIFY2(!k.statics.known, "LibTorch's kernels are not ours to read");
}

QTEST_GUILESS_MAIN(TestProfileReport)
#include "tst_profilereport.moc"
