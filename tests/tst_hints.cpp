// Hints from profile reports: for each recorded H100 report (tests/data/profile) and a few edits
// of them, which rules speak, which stay silent, and that the evidence quotes the numbers. The
// numbers a hint proposes (__launch_bounds__ caps, shared-memory budgets) are re-derived here
// with the occupancy calculator, including a sweep over register counts and block sizes.
#include "testutil.h"

#include "engine/analysis/Occupancy.h"
#include "engine/core/JsonReader.h"
#include "engine/profile/Hints.h"
#include "engine/protocol/MetricCatalog.h"

#include <QRegularExpression>
#include <QTest>

#include <algorithm>
#include <cmath>

using namespace kf;
using namespace kf::profile;
using Json = nlohmann::json;

namespace {

const QStringList kAllRules = {"no-counters", "launch-bound", "spills", "more-bytes-than-baseline", "small-grid",
                               "achieved-below-theoretical", "latency-bound", "occupancy-registers",
                               "occupancy-shared", "occupancy-blocks", "occupancy-block-size", "dram-bound",
                               "compute-bound", "baseline-without-kernels"};

Json readJson(const QString& file)
{
    auto j = json::readFile((QString(KF_TEST_DATA_DIR) + "/profile/" + file).toStdString());
    if (!j)
        qFatal("%s", j.error().message().c_str());
    return j.value();
}

Occupancy occupancyOf(const ArchInfo& a, int block, int registers, int staticShared, int dynamicShared,
                      int maxThreads = 0)
{
    OccupancyQuery q;
    q.blockSize = block;
    q.registersPerThread = registers;
    q.staticSharedBytes = staticShared;
    q.dynamicSharedBytes = dynamicShared;
    q.maxThreadsPerBlock = maxThreads;
    auto o = computeOccupancy(a, q);
    if (!o)
        qFatal("%s", o.error().message().c_str());
    return o.value();
}

/// Writes the static numbers the runner would record for the kernel's (edited) launch.
void restate(Json& kernel, const ArchInfo& a)
{
    Json& s = kernel["static"];
    const int block = kernel["block"][0].get<int>() * kernel["block"][1].get<int>() * kernel["block"][2].get<int>();
    const Occupancy o = occupancyOf(a, block, s["registers"].get<int>(), s["static_shared_bytes"].get<int>(),
                                    kernel["dynamic_shared_bytes"].get<int>());
    s["theoretical_occupancy_pct"] = o.occupancy * 100;
    s["limiter"] = std::string(limiterName(o.limiter));
    s["active_blocks_per_sm"] = o.activeBlocksPerSm;
    s["active_warps_per_sm"] = o.activeWarpsPerSm;
    s["max_warps_per_sm"] = o.maxWarpsPerSm;
    s["blocks_limit"] = {{"warps", o.blocksLimitWarps}, {"registers", o.blocksLimitRegisters},
                         {"shared", o.blocksLimitShared}, {"blocks", o.blocksLimitBlocks}};
}

/// The edits a row can ask for, each a case a user could hit.
void mutate(Json& j, const QString& mutation)
{
    const ArchInfo* h100 = findArchitecture("sm_90");
    Json& k0 = j["profile"]["candidate"]["kernels"][0];
    if (mutation == "warp-sized blocks") {
        k0["block"] = {32, 1, 1};
        k0["grid"] = {8448, 1, 1};
        restate(k0, *h100);
    } else if (mutation == "blocks of 768") {
        k0["block"] = {768, 1, 1};
        k0["grid"] = {352, 1, 1};
        restate(k0, *h100);
    } else if (mutation == "architecture not in the table") {
        j["environment"]["compute_capability"] = "7.0";
    } else if (mutation == "grid of 300 blocks, 15 % achieved") {
        k0["grid"] = {300, 1, 1};
        k0["metrics"][key::kAchievedOccupancy] = 15.0;
    } else if (mutation == "12 % achieved") {
        k0["metrics"][key::kAchievedOccupancy] = 12.0;
    } else if (mutation == "grid of 2 blocks") {
        k0["grid"] = {2, 1, 1};
    } else if (mutation == "no sm_count") {
        j["environment"].erase("sm_count");
    } else if (mutation == "baseline moves as much") {
        for (Json& k : j["profile"]["baseline"]["kernels"])
            for (const char* m : {key::kDramReadBytes, key::kDramWriteBytes})
                k["metrics"][m] = k["metrics"][m].get<double>() * 1.5;
    } else if (!mutation.isEmpty()) {
        qFatal("unknown mutation %s", qPrintable(mutation));
    }
}

const Hint* find(const std::vector<Hint>& hints, const QString& id)
{
    for (const Hint& h : hints)
        if (qs(h.id) == id)
            return &h;
    return nullptr;
}

QString describe(const std::vector<Hint>& hints)
{
    QString s;
    for (const Hint& h : hints)
        s += "\n  [" + qs(h.id) + "] " + qs(h.evidence) + " -> " + qs(h.suggestion);
    return s;
}

/// Checks "id: phrase" (phrase must appear) and "id: !phrase" (must not) against one field.
void checkPhrases(const std::vector<Hint>& hints, const QStringList& rows, std::string Hint::*field, const char* name)
{
    for (const QString& row : rows) {
        const qsizetype colon = row.indexOf(": ");
        QVERIFY2(colon > 0, qPrintable("malformed row " + row));
        const QString id = row.left(colon);
        QString phrase = row.mid(colon + 2);
        const bool negated = phrase.startsWith('!');
        if (negated)
            phrase.remove(0, 1);
        const Hint* h = find(hints, id);
        QVERIFY2(h, qPrintable("no hint " + id + describe(hints)));
        const QString text = qs(h->*field);
        QVERIFY2(text.contains(phrase) != negated,
                 qPrintable(QString("%1 %2 %3 \"%4\": %5").arg(id, name, negated ? "contains" : "lacks", phrase, text)));
    }
}

int rank(Hint::Severity s)
{
    return s == Hint::Severity::Warning ? 0 : s == Hint::Severity::Advice ? 1 : 2;
}

/// A report with one candidate kernel and no counters: static rules only.
ProfileReport staticReport(const QString& cc, int block, int registers, int staticShared, int dynamicShared)
{
    Json j = readJson("conv1d_no_counters.json");
    j["environment"]["compute_capability"] = cc.toStdString();
    Json& k = j["profile"]["candidate"]["kernels"][0];
    k["block"] = {block, 1, 1};
    k["static"]["registers"] = registers;
    k["static"]["static_shared_bytes"] = staticShared;
    k["dynamic_shared_bytes"] = dynamicShared;
    restate(k, *findArchitecture(cc.toStdString() == "8.6" ? "sm_86" : "sm_90"));
    auto r = ProfileReport::fromJson(j, "synthetic");
    if (!r)
        qFatal("%s", r.error().message().c_str());
    return r.value();
}

/// Re-derives a launch-bounds suggestion: the cap lets K blocks share an SM with the occupancy
/// quoted, one step more registers would not, and no smaller K above today's count is reachable.
void verifyLaunchBounds(const ArchInfo& a, const KernelRecord& k, const QString& suggestion)
{
    static const QRegularExpression re(
        R"(`__launch_bounds__\((\d+), (\d+)\)` caps registers at (\d+)/thread and allows ([\d.]+) %)");
    const QRegularExpressionMatch m = re.match(suggestion);
    QVERIFY2(m.hasMatch(), qPrintable(suggestion));
    const int threads = m.captured(1).toInt(), minBlocks = m.captured(2).toInt(), cap = m.captured(3).toInt();
    const StaticResources& s = k.statics;
    QCOMPARE(threads, int(k.threadsPerBlock()));
    QVERIFY(minBlocks > s.activeBlocksPerSm);
    QVERIFY2(cap < s.registers && cap % 8 == 0 && cap >= 24, qPrintable(suggestion));
    const Occupancy capped = occupancyOf(a, threads, cap, s.staticSharedBytes, int(k.dynamicSharedBytes), threads);
    QVERIFY2(capped.activeBlocksPerSm >= minBlocks, qPrintable(suggestion));
    QVERIFY2(std::fabs(m.captured(4).toDouble() - capped.occupancy * 100) <= 0.05 + 1e-9, qPrintable(suggestion));
    QVERIFY(capped.occupancy * 100 > s.theoreticalOccupancyPct);
    if (cap + 8 < s.registers)
        QVERIFY2(occupancyOf(a, threads, cap + 8, s.staticSharedBytes, int(k.dynamicSharedBytes), threads)
                         .activeBlocksPerSm < minBlocks,
                 "a higher cap would have done");
    for (int fewer = s.activeBlocksPerSm + 1; fewer < minBlocks; ++fewer)
        QVERIFY2(occupancyOf(a, threads, 24, s.staticSharedBytes, int(k.dynamicSharedBytes), threads).activeBlocksPerSm
                     < fewer,
                 "a smaller minimum-blocks was reachable");
}

} // namespace

class TestHints : public QObject {
    Q_OBJECT
private slots:
    void fromRecordedReports_data();
    void fromRecordedReports();
    void launchBoundsSuggestion_data();
    void launchBoundsSuggestion();
    void launchBoundsSweep_data();
    void launchBoundsSweep();
    void sharedMemorySuggestion();
    void silentWithoutNumbers();
};

void TestHints::fromRecordedReports_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("mutation");
    QTest::addColumn<QStringList>("present");
    QTest::addColumn<QStringList>("absent");     // "*": every rule not in `present`
    QTest::addColumn<QString>("first");          // the most important hint
    QTest::addColumn<QStringList>("evidence");   // "id: phrase", "id: !phrase"
    QTest::addColumn<QStringList>("suggestion");

    const QStringList all = {"*"};
    QTest::newRow("streaming copy at 89 % of DRAM")
        << "copy_stream.json" << "" << QStringList{"dram-bound"} << all << "dram-bound"
        << QStringList{"dram-bound: DRAM throughput 89.4 % of peak", "dram-bound: 2996 GB/s of 3350 GB/s",
                       "dram-bound: 2.15 GB in 717 us"}
        << QStringList{"dram-bound: fewer bytes"};
    QTest::newRow("SGEMM at 128 registers/thread")
        << "sgemm_registers.json" << "" << QStringList{"occupancy-registers", "compute-bound", "more-bytes-than-baseline"}
        << all << "occupancy-registers"
        << QStringList{"occupancy-registers: 128 registers/thread x 256 threads/block: 2 blocks per SM, 25.0 % theoretical",
                       "compute-bound: SM throughput 84.6 % of peak, 46.9 TFLOP/s (fp32 peak 66.9 TFLOP/s)",
                       "more-bytes-than-baseline: 285 MB", "more-bytes-than-baseline: 218 MB (1.31x)"}
        << QStringList{"occupancy-registers: `__launch_bounds__(256, 3)` caps registers at 80/thread and allows 37.5 %"};
    QTest::newRow("layernorm that spills")
        << "layernorm_spills.json" << "" << QStringList{"spills", "latency-bound", "occupancy-registers"} << all
        << "spills"
        << QStringList{"spills: 40 B/thread of local memory at 64 registers/thread",
                       "latency-bound: DRAM 34.5 % and SM 27.8 % of peak over 465 us, achieved occupancy 45.1 %",
                       "occupancy-registers: 64 registers/thread x 256 threads/block: 4 blocks per SM, 50.0 %"}
        << QStringList{"occupancy-registers: already spills 40 B/thread", "occupancy-registers: !__launch_bounds__(",
                       "latency-bound: more independent loads"};
    QTest::newRow("16 blocks for 2 us")
        << "scale_tiny.json" << "" << QStringList{"launch-bound", "small-grid", "achieved-below-theoretical"} << all
        << "launch-bound"
        << QStringList{"launch-bound: 2.34 us on the GPU for 1 kernel", "small-grid: 16 blocks for 132 SMs: 116 SMs idle",
                       "achieved-below-theoretical: achieved occupancy 12.4 % of 100.0 % theoretical",
                       "achieved-below-theoretical: 16 blocks / (132 SMs x 8 blocks per SM) = 0.02 waves"}
        << QStringList{"launch-bound: profile a larger shape", "small-grid: at least 132 blocks",
                       "achieved-below-theoretical: grid smaller than one wave"};
    QTest::newRow("no counters: static rules still speak")
        << "conv1d_no_counters.json" << "" << QStringList{"no-counters", "occupancy-registers"} << all << "no-counters"
        << QStringList{"no-counters: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
                       "occupancy-registers: 72 registers/thread x 256 threads/block: 3 blocks per SM, 37.5 %"}
        << QStringList{"no-counters: NVreg_RestrictProfilingToAdminUsers=0",
                       "occupancy-registers: `__launch_bounds__(256, 4)` caps registers at 64/thread and allows 50.0 %"};
    // The main kernel is the longer one (normalize, 88.9 % achieved), not rowstats (58.3 %).
    QTest::newRow("two-pass softmax against LibTorch's one pass")
        << "softmax_two_pass.json" << "" << QStringList{"more-bytes-than-baseline", "dram-bound"} << all
        << "more-bytes-than-baseline"
        << QStringList{"more-bytes-than-baseline: the candidate moves 403 MB to and from DRAM, the baseline 269 MB (1.50x)",
                       "dram-bound: 83.7 %", "dram-bound: 403 MB in 144 us"}
        << QStringList{"more-bytes-than-baseline: second pass"};
    QTest::newRow("72 KiB of shared memory per block")
        << "conv2d_shared.json" << "" << QStringList{"occupancy-shared"} << all << "occupancy-shared"
        << QStringList{"occupancy-shared: 72 KiB of shared memory per block (0 KiB static + 72 KiB dynamic): 3 blocks "
                       "per SM, 37.5 % theoretical"}
        << QStringList{"occupancy-shared: at most 56 KiB per block", "occupancy-shared: lets 4 blocks share an SM: 50.0 %"};

    // Recorded on the H100 (GPU run 18): tests/gpu/tasks/register_pressure and the softmax example.
    QTest::newRow("H100 recorded: copy_deep<32>, 99 registers")
        << "h100_copy_deep.json" << "" << QStringList{"occupancy-registers", "dram-bound", "baseline-without-kernels"} << all
        << "occupancy-registers"
        << QStringList{"occupancy-registers: 99 registers/thread x 256 threads/block: 2 blocks per SM, 25.0 % theoretical",
                       "dram-bound: DRAM throughput 80.5 % of peak"}
        << QStringList{"occupancy-registers: `__launch_bounds__(256, 3)` caps registers at 80/thread and allows 37.5 %",
                       "baseline-without-kernels: cudaMemcpy"};
    QTest::newRow("H100 recorded: the same under __launch_bounds__(256, 4)")
        << "h100_copy_deep_bounded.json" << ""
        << QStringList{"spills", "occupancy-registers", "dram-bound", "baseline-without-kernels"} << all << "spills"
        << QStringList{"spills: 112 B/thread of local memory at 64 registers/thread",
                       "occupancy-registers: 64 registers/thread x 256 threads/block: 4 blocks per SM, 50.0 %"}
        << QStringList{"occupancy-registers: already spills 112 B/thread", "occupancy-registers: !__launch_bounds__("};
    QTest::newRow("H100 recorded: naive softmax against LibTorch")
        << "h100_softmax_naive.json" << ""
        << QStringList{"small-grid", "achieved-below-theoretical", "latency-bound", "more-bytes-than-baseline"} << all
        << "small-grid"
        << QStringList{"small-grid: 64 blocks for 132 SMs: 68 SMs idle",
                       "achieved-below-theoretical: achieved occupancy 6.2 % of 100.0 % theoretical",
                       "more-bytes-than-baseline: (2.05x)"}
        << QStringList{"small-grid: at least 132 blocks"};

    QTest::newRow("warp-sized blocks")
        << "copy_stream.json" << "warp-sized blocks" << QStringList{"occupancy-blocks", "dram-bound"} << all
        << "occupancy-blocks"
        << QStringList{"occupancy-blocks: 32 threads/block: an SM holds at most 32 blocks, so 32 of 64 warp slots are used (50.0 %"}
        << QStringList{"occupancy-blocks: at least 64 threads", "occupancy-blocks: 64 threads allow 100.0 %"};
    QTest::newRow("blocks of 768 threads")
        << "copy_stream.json" << "blocks of 768" << QStringList{"occupancy-block-size", "dram-bound"} << all
        << "occupancy-block-size"
        << QStringList{"occupancy-block-size: 768 threads/block: 2 blocks per SM fill 48 of 64 warp slots (75.0 %"}
        << QStringList{"occupancy-block-size: blocks of 512 threads would allow 100.0 %"};
    QTest::newRow("architecture not in the table: no invented cap")
        << "sgemm_registers.json" << "architecture not in the table" << QStringList{"occupancy-registers"}
        << QStringList{"spills", "occupancy-shared"} << "occupancy-registers"
        << QStringList{"occupancy-registers: 128 registers/thread"}
        << QStringList{"occupancy-registers: !__launch_bounds__(", "occupancy-registers: fewer values live"};
    QTest::newRow("a short tail wave")
        << "sgemm_registers.json" << "grid of 300 blocks, 15 % achieved"
        << QStringList{"achieved-below-theoretical", "occupancy-registers"} << QStringList{"small-grid"}
        << "achieved-below-theoretical"
        << QStringList{"achieved-below-theoretical: achieved occupancy 15.0 % of 25.0 % theoretical",
                       "achieved-below-theoretical: 300 blocks / (132 SMs x 2 blocks per SM) = 1.14 waves"}
        << QStringList{"achieved-below-theoretical: tail effect: the last wave fills only 14 %"};
    QTest::newRow("whole waves, still low: imbalance")
        << "sgemm_registers.json" << "12 % achieved" << QStringList{"achieved-below-theoretical"} << QStringList{}
        << "achieved-below-theoretical" << QStringList{"achieved-below-theoretical: = 3.88 waves"}
        << QStringList{"achieved-below-theoretical: even out the work per block",
                       "achieved-below-theoretical: !tail effect"};
    // Run 21 on the H100 profiled 2 blocks of naive softmax: "0.00 waves" said nothing.
    QTest::newRow("two blocks: a wave fraction with digits")
        << "h100_softmax_naive.json" << "grid of 2 blocks"
        << QStringList{"small-grid", "achieved-below-theoretical", "latency-bound", "more-bytes-than-baseline"} << all
        << "small-grid"
        << QStringList{"small-grid: 2 blocks for 132 SMs: 130 SMs idle",
                       "achieved-below-theoretical: 2 blocks / (132 SMs x 16 blocks per SM) = 0.00095 waves"}
        << QStringList{"achieved-below-theoretical: only 0.095 % of the block slots"};
    QTest::newRow("no SM count: no guessed waves")
        << "scale_tiny.json" << "no sm_count" << QStringList{"launch-bound", "achieved-below-theoretical"}
        << QStringList{"small-grid"} << "launch-bound"
        << QStringList{"achieved-below-theoretical: !waves"} << QStringList{};
    QTest::newRow("baseline moving as many bytes")
        << "softmax_two_pass.json" << "baseline moves as much" << QStringList{"dram-bound"}
        << QStringList{"more-bytes-than-baseline"} << "dram-bound" << QStringList{} << QStringList{};
}

void TestHints::fromRecordedReports()
{
    QFETCH(QString, file);
    QFETCH(QString, mutation);
    QFETCH(QStringList, present);
    QFETCH(QStringList, absent);
    QFETCH(QString, first);
    QFETCH(QStringList, evidence);
    QFETCH(QStringList, suggestion);

    Json j = readJson(file);
    mutate(j, mutation);
    auto r = ProfileReport::fromJson(j, file.toStdString());
    KF_VERIFY_OK(r);
    const std::vector<Hint> hints = hintsFor(r.value());

    if (absent == QStringList{"*"}) {
        absent = kAllRules;
        for (const QString& id : present)
            absent.removeAll(id);
    }
    for (const QString& id : present)
        QVERIFY2(find(hints, id), qPrintable("missing " + id + describe(hints)));
    for (const QString& id : absent)
        QVERIFY2(!find(hints, id), qPrintable("unexpected " + id + describe(hints)));
    QVERIFY(!hints.empty());
    QCOMPARE(qs(hints.front().id), first);
    for (size_t i = 0; i < hints.size(); ++i) {
        const Hint& h = hints[i];
        QVERIFY2(kAllRules.contains(qs(h.id)), h.id.c_str());
        QVERIFY2(!h.title.empty() && !h.evidence.empty() && !h.suggestion.empty(), h.id.c_str());
        if (h.id != "no-counters")
            QVERIFY2(qs(h.evidence).contains(QRegularExpression("\\d")), "evidence must quote numbers");
        if (i > 0)
            QVERIFY2(rank(hints[i - 1].severity) <= rank(h.severity), "most important first");
        QCOMPARE(int(std::count_if(hints.begin(), hints.end(), [&](const Hint& o) { return o.id == h.id; })), 1);
    }
    checkPhrases(hints, evidence, &Hint::evidence, "evidence");
    checkPhrases(hints, suggestion, &Hint::suggestion, "suggestion");
    // Warnings are for numbers that cannot be trusted or cost a lot: these three only.
    for (const Hint& h : hints)
        QCOMPARE(h.severity == Hint::Severity::Warning,
                 h.id == "no-counters" || h.id == "launch-bound" || h.id == "spills");
}

void TestHints::launchBoundsSuggestion_data()
{
    QTest::addColumn<QString>("file");
    QTest::newRow("SGEMM, 128 registers") << "sgemm_registers.json";
    QTest::newRow("depthwise conv, 72 registers") << "conv1d_no_counters.json";
}

void TestHints::launchBoundsSuggestion()
{
    QFETCH(QString, file);
    auto r = ProfileReport::fromJson(readJson(file), file.toStdString());
    KF_VERIFY_OK(r);
    const std::vector<Hint> hints = hintsFor(r.value());
    const Hint* h = find(hints, "occupancy-registers");
    QVERIFY(h);
    verifyLaunchBounds(*findArchitecture(r->arch()), r->candidate->kernels[0], qs(h->suggestion));
}

void TestHints::launchBoundsSweep_data()
{
    QTest::addColumn<QString>("cc");
    QTest::addColumn<int>("block");
    QTest::addColumn<int>("registers");
    for (const char* cc : {"9.0", "8.6"})
        for (int block : {64, 96, 128, 256, 384, 512, 1024})
            for (int registers : {40, 48, 64, 72, 96, 128, 168, 200, 255}) {
                OccupancyQuery q;
                q.blockSize = block;
                q.registersPerThread = registers;
                // Only launches that can happen (255 registers x 1024 threads cannot).
                if (computeOccupancy(*findArchitecture(cc[0] == '8' ? "sm_86" : "sm_90"), q))
                    QTest::addRow("cc %s, %d threads, %d registers", cc, block, registers) << cc << block << registers;
            }
}

// Every launch limited by registers gets either a cap that the calculator confirms, or no cap
// when none of at least 24 registers reaches one more block.
void TestHints::launchBoundsSweep()
{
    QFETCH(QString, cc);
    QFETCH(int, block);
    QFETCH(int, registers);
    const ArchInfo& a = *findArchitecture(cc == "8.6" ? "sm_86" : "sm_90");
    const ProfileReport r = staticReport(cc, block, registers, 0, 0);
    const KernelRecord& k = r.candidate->kernels[0];
    const std::vector<Hint> hints = hintsFor(r);
    const Hint* h = find(hints, "occupancy-registers");
    if (k.statics.limiter != "registers") {
        QVERIFY(!h);
        return;
    }
    QVERIFY(h);
    QVERIFY(qs(h->evidence).contains(QString("%1 registers/thread x %2 threads/block").arg(registers).arg(block)));
    if (qs(h->suggestion).contains("__launch_bounds__")) {
        verifyLaunchBounds(a, k, qs(h->suggestion));
        return;
    }
    const int more = k.statics.activeBlocksPerSm + 1;
    QVERIFY2(more > a.maxBlocksPerSm || occupancyOf(a, block, 24, 0, 0, block).activeBlocksPerSm < more,
             qPrintable("a cap was possible but not offered: " + qs(h->suggestion)));
}

void TestHints::sharedMemorySuggestion()
{
    auto r = ProfileReport::fromJson(readJson("conv2d_shared.json"), "conv2d_shared.json");
    KF_VERIFY_OK(r);
    const std::vector<Hint> hints = hintsFor(r.value());
    const Hint* h = find(hints, "occupancy-shared");
    QVERIFY(h);
    static const QRegularExpression re(R"(at most (\d+) KiB per block .* lets (\d+) blocks share an SM: ([\d.]+) %)");
    const QRegularExpressionMatch m = re.match(qs(h->suggestion));
    QVERIFY2(m.hasMatch(), h->suggestion.c_str());
    const KernelRecord& k = r->candidate->kernels[0];
    const ArchInfo& a = *findArchitecture("sm_90");
    const int kib = m.captured(1).toInt(), blocks = m.captured(2).toInt();
    QCOMPARE(blocks, k.statics.activeBlocksPerSm + 1);
    const Occupancy fits = occupancyOf(a, 256, k.statics.registers, 0, kib * 1024);
    QCOMPARE(fits.activeBlocksPerSm, blocks);
    QVERIFY2(std::fabs(m.captured(3).toDouble() - fits.occupancy * 100) <= 0.05 + 1e-9, h->suggestion.c_str());
    QVERIFY2(occupancyOf(a, 256, k.statics.registers, 0, (kib + 1) * 1024).activeBlocksPerSm < blocks,
             "one KiB more would still fit: the budget is not the largest");
}

void TestHints::silentWithoutNumbers()
{
    // An error report: nothing was measured, nothing is said.
    QVERIFY(hintsFor(ProfileReport{}).empty());

    // A kernel with neither counters nor static numbers (a runner that could not read the cubin).
    Json j = readJson("conv1d_no_counters.json");
    j["profile"]["candidate"]["kernels"][0].erase("static");
    auto r = ProfileReport::fromJson(j, "bare");
    KF_VERIFY_OK(r);
    std::vector<Hint> hints = hintsFor(r.value());
    QCOMPARE(hints.size(), size_t(1));
    QCOMPARE(qs(hints[0].id), QString("no-counters"));

    // Counters present but no static numbers: only the counter rules speak.
    j = readJson("scale_tiny.json");
    j["profile"]["candidate"]["kernels"][0].erase("static");
    r = ProfileReport::fromJson(j, "counters only");
    KF_VERIFY_OK(r);
    hints = hintsFor(r.value());
    QVERIFY(find(hints, "launch-bound") && find(hints, "small-grid"));
    QVERIFY(!find(hints, "achieved-below-theoretical"));
}

QTEST_GUILESS_MAIN(TestHints)
#include "tst_hints.moc"
