// Theoretical occupancy through cuda_occupancy.h with our architecture table (no GPU): hand-
// computed cases per architecture for each limiter, launches that cannot happen and the sentence
// that says why, the table kept in step with the toolkit's calculator, and the block-size curve.
#include "engine/analysis/Occupancy.h"
#include "testutil.h"

#include <QTest>

#include <set>

using namespace kf;

namespace {

const ArchInfo& archOrFail(const QString& name)
{
    const ArchInfo* a = findArchitecture(name.toStdString());
    if (!a)
        qFatal("architecture %s is missing from the table", qPrintable(name));
    return *a;
}

Occupancy::Limiter limiterFromName(const QString& name)
{
    using L = Occupancy::Limiter;
    for (L l : {L::None, L::Warps, L::Blocks, L::Registers, L::SharedMemory, L::BlockSize})
        if (qs(std::string(limiterName(l))) == name)
            return l;
    qFatal("unknown limiter %s", qPrintable(name));
}

} // namespace

class TestOccupancy : public QObject {
    Q_OBJECT
private slots:
    void handCheck();
    void occupancy_data();
    void occupancy();
    void cannotLaunch_data();
    void cannotLaunch();
    void tableMatchesToolkit_data();
    void tableMatchesToolkit();
    void findArchitectureAliases_data();
    void findArchitectureAliases();
    void knownArchitecturesComplete();
    void curve();
    void curveMarksUnlaunchableSizes();
    void json();
};

// The case from the design review: 80 registers x 256 threads on sm_90. 80 x 32 = 2560 registers
// per warp; each of the 4 sub-partitions holds 16384 / 2560 = 6 warps, 24 per SM, so 3 blocks.
void TestOccupancy::handCheck()
{
    OccupancyQuery q;
    q.blockSize = 256;
    q.registersPerThread = 80;
    auto o = computeOccupancy(archOrFail("sm_90"), q);
    KF_VERIFY_OK(o);
    QCOMPARE(o->activeBlocksPerSm, 3);
    QCOMPARE(o->activeWarpsPerSm, 24);
    QCOMPARE(o->maxWarpsPerSm, 64);
    QCOMPARE(o->occupancy, 0.375);
    QCOMPARE(o->limiter, Occupancy::Limiter::Registers);
    QCOMPARE(o->blocksLimitRegisters, 3);
    QCOMPARE(o->blocksLimitWarps, 8);
    QCOMPARE(o->blocksLimitBlocks, 32);
    QCOMPARE(o->allocatedRegistersPerBlock, 2560 * 8);
    QCOMPARE(o->allocatedSharedPerBlock, 1024); // the reserved 1 KiB alone
}

void TestOccupancy::occupancy_data()
{
    QTest::addColumn<QString>("arch");
    QTest::addColumn<int>("blockSize");
    QTest::addColumn<int>("registers");
    QTest::addColumn<int>("staticShared");
    QTest::addColumn<int>("dynamicShared");
    QTest::addColumn<int>("launchBounds");
    QTest::addColumn<int>("blocks");
    QTest::addColumn<int>("warps");
    QTest::addColumn<double>("percent");
    QTest::addColumn<QString>("limiter");

    // Registers: 2048 per warp, 8 warps per sub-partition -> 32 warps -> 2 blocks of 16 warps.
    QTest::newRow("sm_100 registers 64 x 512") << "sm_100" << 512 << 64 << 0 << 0 << 0 << 2 << 32 << 50.0 << "registers";
    // 4096 per warp -> 4 warps per sub-partition -> 16 of Turing's 32 warps -> 2 blocks.
    QTest::newRow("sm_75 registers 128 x 256") << "sm_75" << 256 << 128 << 0 << 0 << 0 << 2 << 16 << 50.0 << "registers";
    QTest::newRow("sm_100 registers 64 x 128") << "sm_100" << 128 << 64 << 0 << 0 << 0 << 8 << 32 << 50.0 << "registers";
    // 1536 per warp -> 10 per sub-partition -> 40 of 48 warps -> 5 blocks.
    QTest::newRow("sm_87 registers 48 x 256") << "sm_87" << 256 << 48 << 0 << 0 << 0 << 5 << 40 << 83.33 << "registers";
    // 72 x 32 = 2304 (a multiple of the 256 granule) -> 7 per sub-partition -> 28 warps -> 9 blocks of 3.
    QTest::newRow("sm_90 registers 72 x 96") << "sm_90" << 96 << 72 << 0 << 0 << 0 << 9 << 27 << 42.19 << "registers";

    // Shared memory: (48 KiB + 1 KiB reserved) per block, 228 KiB per SM -> 4 blocks.
    QTest::newRow("sm_90 static 48 KiB") << "sm_90" << 256 << 32 << 48 * 1024 << 0 << 0 << 4 << 32 << 50.0 << "shared_memory";
    // 100 KiB dynamic (opt-in) + 1 KiB reserved, 164 KiB per SM -> 1 block.
    QTest::newRow("sm_80 dynamic 100 KiB") << "sm_80" << 128 << 32 << 0 << 100 * 1024 << 0 << 1 << 4 << 6.25 << "shared_memory";
    // 17 KiB per block in 100 KiB -> 5 blocks (registers would allow 12).
    QTest::newRow("sm_120 static 16 KiB") << "sm_120" << 128 << 40 << 16 * 1024 << 0 << 0 << 5 << 20 << 41.67 << "shared_memory";
    // Turing reserves nothing: 64 KiB dynamic fills its 64 KiB exactly -> 1 block.
    QTest::newRow("sm_75 dynamic 64 KiB") << "sm_75" << 256 << 32 << 0 << 64 * 1024 << 0 << 1 << 8 << 25.0 << "shared_memory";

    // Warps: a 32-warp block fits once in 48 warp slots.
    QTest::newRow("sm_86 warps 1024 threads") << "sm_86" << 1024 << 32 << 0 << 0 << 0 << 1 << 32 << 66.67 << "warps";
    // Full occupancy: only the warp slots bind.
    QTest::newRow("sm_90 full 32 x 256") << "sm_90" << 256 << 32 << 0 << 0 << 0 << 8 << 64 << 100.0 << "warps";
    QTest::newRow("sm_90 within launch bounds") << "sm_90" << 128 << 32 << 0 << 0 << 128 << 16 << 64 << 100.0 << "warps";

    // Block slots: one-warp blocks run out of block slots before warps.
    QTest::newRow("sm_90 blocks 32 threads") << "sm_90" << 32 << 16 << 0 << 0 << 0 << 32 << 32 << 50.0 << "blocks";
    QTest::newRow("sm_89 blocks 32 threads") << "sm_89" << 32 << 16 << 0 << 0 << 0 << 24 << 24 << 50.0 << "blocks";
    QTest::newRow("sm_86 blocks 64 threads") << "sm_86" << 64 << 16 << 0 << 0 << 0 << 16 << 32 << 66.67 << "blocks";
}

void TestOccupancy::occupancy()
{
    QFETCH(QString, arch);
    QFETCH(int, blockSize);
    QFETCH(int, registers);
    QFETCH(int, staticShared);
    QFETCH(int, dynamicShared);
    QFETCH(int, launchBounds);
    QFETCH(int, blocks);
    QFETCH(int, warps);
    QFETCH(double, percent);
    QFETCH(QString, limiter);

    OccupancyQuery q;
    q.blockSize = blockSize;
    q.registersPerThread = registers;
    q.staticSharedBytes = staticShared;
    q.dynamicSharedBytes = dynamicShared;
    q.maxThreadsPerBlock = launchBounds;
    auto o = computeOccupancy(archOrFail(arch), q);
    KF_VERIFY_OK(o);
    QCOMPARE(o->activeBlocksPerSm, blocks);
    QCOMPARE(o->activeWarpsPerSm, warps);
    QVERIFY2(qAbs(o->occupancy * 100.0 - percent) < 0.01,
             qPrintable(QString("occupancy %1 %").arg(o->occupancy * 100.0)));
    QCOMPARE(qs(std::string(limiterName(o->limiter))), limiter);
    // The reported per-limit block counts are consistent with the answer.
    const int tightest = std::min({o->blocksLimitWarps, o->blocksLimitRegisters, o->blocksLimitShared, o->blocksLimitBlocks});
    QCOMPARE(tightest, blocks);
}

void TestOccupancy::cannotLaunch_data()
{
    QTest::addColumn<QString>("arch");
    QTest::addColumn<int>("blockSize");
    QTest::addColumn<int>("registers");
    QTest::addColumn<int>("staticShared");
    QTest::addColumn<int>("dynamicShared");
    QTest::addColumn<int>("launchBounds");
    QTest::addColumn<QString>("because");

    QTest::newRow("block of 2048 threads") << "sm_90" << 2048 << 32 << 0 << 0 << 0 << "exceeds the limit of 1024 threads per block on sm_90";
    QTest::newRow("block above launch bounds") << "sm_90" << 256 << 32 << 0 << 0 << 128 << "exceeds the kernel's __launch_bounds__ of 128 threads";
    QTest::newRow("block of zero threads") << "sm_80" << 0 << 32 << 0 << 0 << 0 << "at least one thread";
    QTest::newRow("256 registers per thread") << "sm_90" << 128 << 256 << 0 << 0 << 0 << "exceed the limit of 255 registers per thread";
    // 128 x 32 x 32 warps = 131072 registers > 65536 per block.
    QTest::newRow("800 threads x 80 registers") << "sm_90" << 800 << 80 << 0 << 0 << 0 << "needs 71680 registers, more than the 65536 registers per block";
    QTest::newRow("1024 threads x 128 registers") << "sm_90" << 1024 << 128 << 0 << 0 << 0 << "needs 131072 registers, more than the 65536 registers per block";
    QTest::newRow("sm_80 dynamic 200 KiB") << "sm_80" << 128 << 32 << 0 << 200 * 1024 << 0 << "exceed the opt-in limit of 163 KiB per block on sm_80";
    QTest::newRow("sm_75 one byte over 64 KiB") << "sm_75" << 128 << 32 << 0 << 64 * 1024 + 1 << 0 << "exceed the opt-in limit of 64 KiB per block on sm_75";
    QTest::newRow("sm_86 48 KiB static + 52 KiB dynamic") << "sm_86" << 128 << 32 << 48 * 1024 << 52 * 1024 << 0 << "exceed the opt-in limit of 99 KiB per block on sm_86";
    QTest::newRow("sm_90 static 64 KiB") << "sm_90" << 128 << 32 << 64 * 1024 << 0 << 0 << "64 KiB of static shared memory exceed the limit of 48 KiB";
}

void TestOccupancy::cannotLaunch()
{
    QFETCH(QString, arch);
    QFETCH(int, blockSize);
    QFETCH(int, registers);
    QFETCH(int, staticShared);
    QFETCH(int, dynamicShared);
    QFETCH(int, launchBounds);
    QFETCH(QString, because);

    OccupancyQuery q;
    q.blockSize = blockSize;
    q.registersPerThread = registers;
    q.staticSharedBytes = staticShared;
    q.dynamicSharedBytes = dynamicShared;
    q.maxThreadsPerBlock = launchBounds;
    auto o = computeOccupancy(archOrFail(arch), q);
    QVERIFY2(!o.ok(), "a configuration that cannot launch got an occupancy");
    const QString message = qs(o.error().message());
    QVERIFY2(message.contains(because), qPrintable(message));
}

void TestOccupancy::tableMatchesToolkit_data()
{
    QTest::addColumn<QString>("arch");
    for (const ArchInfo& a : knownArchitectures())
        QTest::newRow(a.arch.c_str()) << qs(a.arch);
}

// Our table feeds cuda_occupancy.h, which hard-codes some limits of its own (block slots,
// shared-memory carve-out steps). A mismatch would give answers no GPU produces.
void TestOccupancy::tableMatchesToolkit()
{
    QFETCH(QString, arch);
    const ArchInfo& a = archOrFail(arch);

    OccupancyQuery tiny;
    tiny.blockSize = a.warpSize;
    tiny.registersPerThread = 16;
    auto o = computeOccupancy(a, tiny);
    KF_VERIFY_OK(o);
    QCOMPARE(o->blocksLimitBlocks, a.maxBlocksPerSm);
    QCOMPARE(o->maxWarpsPerSm, a.maxThreadsPerSm / a.warpSize);

    // The whole opt-in budget launches exactly one block; one granule more does not.
    OccupancyQuery big;
    big.blockSize = 128;
    big.registersPerThread = 32;
    big.dynamicSharedBytes = a.sharedPerBlockOptin;
    auto one = computeOccupancy(a, big);
    KF_VERIFY_OK(one);
    QCOMPARE(one->activeBlocksPerSm, 1);
    QCOMPARE(one->limiter, Occupancy::Limiter::SharedMemory);
    QCOMPARE(one->allocatedSharedPerBlock, a.sharedPerBlockOptin + a.reservedSharedPerBlock);
    big.dynamicSharedBytes += 128;
    QVERIFY(!computeOccupancy(a, big).ok());

    // Per-SM shared memory is what the SM can hold: opt-in + reserved never exceeds it.
    QVERIFY(a.sharedPerBlockOptin + a.reservedSharedPerBlock <= a.sharedPerSm);
    QCOMPARE(a.reservedSharedPerBlock, a.major >= 8 ? 1024 : 0);
}

void TestOccupancy::findArchitectureAliases_data()
{
    QTest::addColumn<QString>("input");
    QTest::addColumn<QString>("expected"); // empty: unknown
    QTest::newRow("sm_90") << "sm_90" << "sm_90";
    QTest::newRow("sm90") << "sm90" << "sm_90";
    QTest::newRow("90") << "90" << "sm_90";
    QTest::newRow("compute_80") << "compute_80" << "sm_80";
    QTest::newRow("sm_90a") << "sm_90a" << "sm_90";
    QTest::newRow("sm_100f") << "sm_100f" << "sm_100";
    QTest::newRow("sm_120") << "sm_120" << "sm_120";
    QTest::newRow("unknown sm_91") << "sm_91" << "";
    QTest::newRow("empty") << "" << "";
    QTest::newRow("bare prefix") << "sm_" << "";
    QTest::newRow("AMD name") << "gfx90a" << "";
    QTest::newRow("garbage digits") << "sm_9x0" << "";
}

void TestOccupancy::findArchitectureAliases()
{
    QFETCH(QString, input);
    QFETCH(QString, expected);
    const ArchInfo* a = findArchitecture(input.toStdString());
    if (expected.isEmpty()) {
        QVERIFY2(!a, a ? a->arch.c_str() : "");
    } else {
        QVERIFY(a);
        QCOMPARE(qs(a->arch), expected);
    }
}

void TestOccupancy::knownArchitecturesComplete()
{
    std::set<std::string> names;
    for (const ArchInfo& a : knownArchitectures()) {
        QVERIFY2(names.insert(a.arch).second, a.arch.c_str());
        QCOMPARE(qs(a.arch), QString("sm_%1%2").arg(a.major).arg(a.minor));
        QVERIFY2(!a.exampleGpu.empty() && a.smCount > 0, a.arch.c_str());
        QVERIFY2(a.peakDramGBs > 0 && a.peakFp32Tflops > 0 && a.peakFp16TensorTflops > 0, a.arch.c_str());
        QVERIFY2(a.l2Bytes >= 4 * 1024 * 1024, a.arch.c_str());
        QCOMPARE(a.maxThreadsPerBlock, 1024);
        QCOMPARE(a.maxRegsPerThread, 255);
        QCOMPARE(a.sharedPerBlock, 48 * 1024);
    }
    for (const char* required : {"sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_120"})
        QVERIFY2(names.count(required), required);
    QCOMPARE(archOrFail("sm_90").smCount, 132);
    QCOMPARE(archOrFail("sm_80").smCount, 108);
    QCOMPARE(archOrFail("sm_90").l2Bytes, 50 * 1024 * 1024);   // the prompt's hardware section quotes it
}

void TestOccupancy::curve()
{
    const ArchInfo& a = archOrFail("sm_90");
    OccupancyQuery q;
    q.registersPerThread = 80;
    auto points = occupancyCurve(a, q);
    QCOMPARE(points.size(), size_t(32));
    QCOMPARE(points.front().blockSize, 32);
    QCOMPARE(points.back().blockSize, 1024);
    for (const OccupancyPoint& p : points) {
        OccupancyQuery single = q;
        single.blockSize = p.blockSize;
        auto o = computeOccupancy(a, single);
        // Above 24 warps the launch check counts 28 warps x 2560 = 71680 registers > 65536.
        QCOMPARE(o.ok(), p.blockSize <= 768);
        if (!o)
            continue;
        QCOMPARE(p.occupancy, o->occupancy);
        QCOMPARE(p.activeBlocksPerSm, o->activeBlocksPerSm);
        QCOMPARE(p.limiter, o->limiter);
    }
    QCOMPARE(points[24].blockSize, 800);
    QCOMPARE(points[24].occupancy, 0.0);
    QCOMPARE(points[24].limiter, Occupancy::Limiter::Registers);
    QCOMPARE(points[7].blockSize, 256);
    QCOMPARE(points[7].occupancy, 0.375);
}

void TestOccupancy::curveMarksUnlaunchableSizes()
{
    OccupancyQuery q;
    q.registersPerThread = 128;
    q.maxThreadsPerBlock = 768;
    auto points = occupancyCurve(archOrFail("sm_80"), q);
    QCOMPARE(points.size(), size_t(32));
    for (const OccupancyPoint& p : points) {
        if (p.blockSize <= 512) { // 128 x 32 x 16 warps = 65536 registers: still one block
            QVERIFY2(p.occupancy > 0, qPrintable(QString::number(p.blockSize)));
            QCOMPARE(p.limiter, Occupancy::Limiter::Registers);
        } else if (p.blockSize <= 768) {
            QCOMPARE(p.occupancy, 0.0);
            QCOMPARE(p.limiter, Occupancy::Limiter::Registers);
        } else {
            QCOMPARE(p.occupancy, 0.0);
            QCOMPARE(p.limiter, Occupancy::Limiter::BlockSize);
        }
    }
}

void TestOccupancy::json()
{
    OccupancyQuery q;
    q.blockSize = 256;
    q.registersPerThread = 80;
    auto o = computeOccupancy(archOrFail("sm_90"), q);
    KF_VERIFY_OK(o);
    const nlohmann::json j = toJson(*o);
    std::set<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it)
        keys.insert(it.key());
    const std::set<std::string> expected = {"active_blocks_per_sm", "active_warps_per_sm", "max_warps_per_sm", "occupancy",
                                            "limiter", "blocks_limit_warps", "blocks_limit_registers", "blocks_limit_shared",
                                            "blocks_limit_blocks", "allocated_registers_per_block",
                                            "allocated_shared_per_block"};
    QVERIFY(keys == expected);
    QCOMPARE(j.at("limiter").get<std::string>(), std::string("registers"));
    QCOMPARE(j.at("active_blocks_per_sm").get<int>(), 3);
    QCOMPARE(j.at("occupancy").get<double>(), 0.375);
    QCOMPARE(limiterFromName("shared_memory"), Occupancy::Limiter::SharedMemory);
    QCOMPARE(limiterFromName("block_size"), Occupancy::Limiter::BlockSize);
}

QTEST_GUILESS_MAIN(TestOccupancy)
#include "tst_occupancy.moc"
