// The sanitizer section of a correctness report (engine/protocol/SanitizerReport.h): written and
// read back equal, read leniently about missing fields and strictly about types (the JSON pointer
// of the culprit named), the one-line summaries, and when a section counts as clean.
#include "testutil.h"

#include "engine/protocol/SanitizerReport.h"

#include <QTest>

using namespace kf;
using namespace kf::protocol;
using Json = nlohmann::json;

namespace {

SanitizerFinding oobRead()
{
    SanitizerFinding f;
    f.tool = "memcheck";
    f.kind = "oob_read";
    f.description = "Invalid __global__ read of size 4 bytes is out of bounds";
    f.where = {"read", "shift_add", "tests/gpu/sanitizer_probe/oob_read.cu", 8, "0xc0",
               std::array<std::int64_t, 3>{3, 0, 0}, std::array<std::int64_t, 3>{231, 0, 0}};
    f.space = "__global__";
    f.size = 4;
    f.address = "0x7fc234800fa0";
    return f;
}

SanitizerFinding race()
{
    SanitizerFinding f;
    f.tool = "racecheck";
    f.kind = "shared_race";
    f.severity = "warning";
    f.description = "Race condition";
    f.where = {"write", "block_sum", "tests/gpu/sanitizer_probe/smem_race.cu", 12, "0x200", std::nullopt, std::nullopt};
    f.other = SanitizerAccess{"read", "block_sum", "tests/gpu/sanitizer_probe/smem_race.cu", 12, "0x1e0",
                              std::nullopt, std::nullopt};
    f.space = "__shared__";
    f.count = 6144;
    return f;
}

SanitizerToolRun toolRun(const std::string& tool)
{
    SanitizerToolRun t;
    t.tool = tool;
    t.ran = true;
    t.durationMs = 950;
    return t;
}

SanitizerSection cleanSection()
{
    SanitizerSection s;
    s.ran = true;
    s.toolVersion = "2025.3.1.0";
    s.toolPath = "/usr/local/cuda/bin/compute-sanitizer";
    s.shapes = {"N=1000"};
    s.seed = "0x5eed";
    s.durationMs = 4000;
    s.tools = {toolRun("memcheck"), toolRun("racecheck"), toolRun("initcheck"), toolRun("synccheck")};
    return s;
}

Json parsed(const char* text) { return Json::parse(text); }

} // namespace

class TestSanitizerReport : public QObject {
    Q_OBJECT
private slots:
    void roundTrip();
    void lenientAboutPresence();
    void notRunSectionsSayWhetherTheHostHasTheTool();
    void typeErrors_data();
    void typeErrors();
    void summary_data();
    void summary();
    void clean_data();
    void clean();
    void firstProblem();
};

void TestSanitizerReport::roundTrip()
{
    SanitizerSection s = cleanSection();
    s.tools[0].exitCode = 86;
    s.tools[0].findings = 1;
    s.tools[0].ignored = 3;
    s.tools[1].truncated = true;
    s.tools[2].ran = false;
    s.tools[2].skipped = "no global memory is read";
    s.tools[3].error = "did not finish within 120 s";
    s.findings = {oobRead(), race()};
    SanitizerFinding host;
    host.tool = "initcheck";
    host.kind = "uninit_global_read";
    host.hostSide = true;
    host.description = "Host API memory access error at host access to 0x7f54c7220400 of size 4 bytes";
    s.findings.push_back(host);

    const Json j = toJson(s);
    const auto back = sanitizerSectionFromJson(j, "/sanitizer");
    KF_VERIFY_OK(back);
    QVERIFY(toJson(*back) == j);
    QCOMPARE(back->findings.size(), size_t(3));
    QCOMPARE(back->findings[0].where.thread, oobRead().where.thread);
    QVERIFY(!back->findings[0].other);
    QVERIFY(back->findings[1].other);
    QVERIFY(!back->findings[1].where.block);
    QCOMPARE(back->findings[1].count, std::int64_t(6144));
    QVERIFY(back->findings[2].hostSide);
    QCOMPARE(back->tools[3].error, std::string("did not finish within 120 s"));
    QCOMPARE(back->tools[0].exitCode, 86);
    // Through text too, as a report file carries it.
    const auto again = sanitizerSectionFromJson(Json::parse(j.dump()), "/sanitizer");
    KF_VERIFY_OK(again);
    QVERIFY(toJson(*again) == j);
}

// Every verify report carries a section (docs/report-schema.md): one the run did not ask for
// names the tool when the host has it, so the sanitizer gate can tell "not asked" from "not there".
void TestSanitizerReport::notRunSectionsSayWhetherTheHostHasTheTool()
{
    SanitizerSection asked;
    asked.requested = false;
    asked.reason = kSanitizerNotRequested;
    asked.toolVersion = "2025.3.1.0";
    asked.toolPath = "/usr/local/cuda/bin/compute-sanitizer";
    SanitizerSection absent;
    absent.requested = false;
    absent.reason = "no compute-sanitizer on gpu-7";
    for (const SanitizerSection& s : {asked, absent}) {
        const Json j = toJson(s);
        QVERIFY(j["ran"] == false && j["requested"] == false);
        const auto back = sanitizerSectionFromJson(j, "/sanitizer");
        KF_VERIFY_OK(back);
        QVERIFY(toJson(*back) == j);
        QVERIFY(!back->requested);
        QCOMPARE(back->toolFound(), !s.toolVersion.empty());
        QVERIFY(!back->clean());
        QCOMPARE(back->firstProblem(), std::string());
    }
}

void TestSanitizerReport::lenientAboutPresence()
{
    const auto empty = sanitizerSectionFromJson(Json::object(), "/sanitizer");
    KF_VERIFY_OK(empty);
    QVERIFY(!empty->ran);
    QVERIFY(empty->requested);   // a section without the field is from a runner that wrote one only when asked
    QVERIFY(!empty->toolFound());
    QVERIFY(empty->tools.empty());
    const auto sparse = sanitizerSectionFromJson(
        parsed("{\"ran\": true, \"newer_field\": [1, 2], \"tools\": [{\"tool\": \"memcheck\", \"ran\": true}],"
               " \"findings\": [{\"kind\": \"oob_write\", \"where\": {\"kernel\": \"k\"}, \"later\": {}}]}"),
        "/sanitizer");
    KF_VERIFY_OK(sparse);
    QCOMPARE(sparse->findings.size(), size_t(1));
    const SanitizerFinding& f = sparse->findings[0];
    QCOMPARE(f.severity, std::string("error"));
    QCOMPARE(f.count, std::int64_t(1));
    QCOMPARE(f.where.line, 0);
    QVERIFY(!f.where.thread);
    QVERIFY(!f.hostSide);
    QVERIFY(!f.other);
    QCOMPARE(sparse->tools[0].exitCode, 0);
}

void TestSanitizerReport::typeErrors_data()
{
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("pointer");

    QTest::newRow("not an object") << "[]" << "/sanitizer";
    QTest::newRow("ran") << "{\"ran\": \"yes\"}" << "/sanitizer/ran";
    QTest::newRow("requested") << "{\"requested\": \"no\"}" << "/sanitizer/requested";
    QTest::newRow("shapes") << "{\"shapes\": [\"N=1\", 2]}" << "/sanitizer/shapes/1";
    QTest::newRow("duration") << "{\"duration_ms\": 1.5}" << "/sanitizer/duration_ms";
    QTest::newRow("tools not an array") << "{\"tools\": {}}" << "/sanitizer/tools";
    QTest::newRow("tool not an object") << "{\"tools\": [\"memcheck\"]}" << "/sanitizer/tools/0";
    QTest::newRow("exit code") << "{\"tools\": [{}, {\"exit_code\": \"86\"}]}" << "/sanitizer/tools/1/exit_code";
    QTest::newRow("exit code range") << "{\"tools\": [{\"exit_code\": 10000000000}]}" << "/sanitizer/tools/0/exit_code";
    QTest::newRow("truncated") << "{\"tools\": [{\"truncated\": 1}]}" << "/sanitizer/tools/0/truncated";
    QTest::newRow("finding kind") << "{\"findings\": [{\"kind\": 3}]}" << "/sanitizer/findings/0/kind";
    QTest::newRow("count") << "{\"findings\": [{\"count\": \"4096\"}]}" << "/sanitizer/findings/0/count";
    QTest::newRow("host side") << "{\"findings\": [{\"host_side\": \"true\"}]}" << "/sanitizer/findings/0/host_side";
    QTest::newRow("where") << "{\"findings\": [{\"where\": \"shift_add\"}]}" << "/sanitizer/findings/0/where";
    QTest::newRow("line") << "{\"findings\": [{\"where\": {\"line\": \"8\"}}]}" << "/sanitizer/findings/0/where/line";
    QTest::newRow("negative line") << "{\"findings\": [{\"where\": {\"line\": -1}}]}" << "/sanitizer/findings/0/where/line";
    QTest::newRow("block of two") << "{\"findings\": [{\"where\": {\"block\": [1, 2]}}]}"
                                  << "/sanitizer/findings/0/where/block";
    QTest::newRow("thread element") << "{\"findings\": [{}, {\"where\": {\"thread\": [1, \"2\", 3]}}]}"
                                    << "/sanitizer/findings/1/where/thread/1";
    QTest::newRow("other") << "{\"findings\": [{\"other\": [1]}]}" << "/sanitizer/findings/0/other";
    QTest::newRow("other's pc") << "{\"findings\": [{\"other\": {\"pc\": 480}}]}" << "/sanitizer/findings/0/other/pc";
}

void TestSanitizerReport::typeErrors()
{
    QFETCH(QString, json);
    QFETCH(QString, pointer);
    const auto r = sanitizerSectionFromJson(Json::parse(json.toStdString()), "/sanitizer");
    QVERIFY(!r.ok());
    QCOMPARE(qs(r.error().pointer), pointer);
    QVERIFY2(qs(r.error().message()).contains(pointer), r.error().message().c_str());
}

void TestSanitizerReport::summary_data()
{
    QTest::addColumn<QString>("tool");
    QTest::addColumn<QString>("kind");
    QTest::addColumn<int>("variant");   // 0: as found, 1: no line info, 2: host side
    QTest::addColumn<QString>("expected");

    QTest::newRow("out-of-bounds read") << "memcheck" << "oob_read" << 0
        << "compute-sanitizer memcheck: out-of-bounds read of 4 bytes in shift_add at oob_read.cu:8, block (3,0,0) thread (231,0,0)";
    QTest::newRow("out-of-bounds write") << "memcheck" << "oob_write" << 0
        << "compute-sanitizer memcheck: out-of-bounds write of 4 bytes in shift_add at oob_read.cu:8, block (3,0,0) thread (231,0,0)";
    QTest::newRow("misaligned") << "memcheck" << "misaligned" << 0
        << "compute-sanitizer memcheck: misaligned read of 4 bytes in shift_add at oob_read.cu:8, block (3,0,0) thread (231,0,0)";
    QTest::newRow("uninitialised") << "initcheck" << "uninit_global_read" << 0
        << "compute-sanitizer initcheck: uninitialised global-memory read of 4 bytes in shift_add at oob_read.cu:8, block (3,0,0) thread (231,0,0)";
    QTest::newRow("no line info") << "memcheck" << "oob_read" << 1
        << "compute-sanitizer memcheck: out-of-bounds read of 4 bytes in shift_add, block (3,0,0) thread (231,0,0)";
    QTest::newRow("host side") << "initcheck" << "uninit_global_read" << 2
        << "compute-sanitizer initcheck: uninitialised global memory read by the host: Host API memory access error";
    QTest::newRow("API error") << "memcheck" << "api_error" << 2
        << "compute-sanitizer memcheck: CUDA API error: Host API memory access error";
    QTest::newRow("barrier") << "synccheck" << "barrier_divergent" << 0
        << "compute-sanitizer synccheck: barrier reached by divergent threads in shift_add at oob_read.cu:8, block (3,0,0) thread (231,0,0)";
    QTest::newRow("other") << "memcheck" << "other" << 0
        << "compute-sanitizer memcheck: finding in shift_add at oob_read.cu:8, block (3,0,0) thread (231,0,0): Invalid __global__ read of size 4 bytes is out of bounds";
    QTest::newRow("race") << "racecheck" << "shared_race" << 0
        << "compute-sanitizer racecheck: shared-memory race (write at line 12 / read at line 12) in block_sum";
    QTest::newRow("race without line info") << "racecheck" << "shared_race" << 1
        << "compute-sanitizer racecheck: shared-memory race (write / read at line 12) in block_sum";
}

void TestSanitizerReport::summary()
{
    QFETCH(QString, tool);
    QFETCH(QString, kind);
    QFETCH(int, variant);
    QFETCH(QString, expected);
    SanitizerFinding f = kind == "shared_race" ? race() : oobRead();
    f.tool = tool.toStdString();
    f.kind = kind.toStdString();
    if (variant == 1) {
        f.where.line = 0;
        f.where.file.clear();
    } else if (variant == 2) {
        f = SanitizerFinding{};
        f.tool = tool.toStdString();
        f.kind = kind.toStdString();
        f.hostSide = true;
        f.size = 4;
        f.description = "Host API memory access error";
    }
    QCOMPARE(qs(f.summary()), expected);
}

void TestSanitizerReport::clean_data()
{
    QTest::addColumn<int>("change");
    QTest::addColumn<bool>("clean");
    QTest::addColumn<QString>("firstProblem");

    QTest::newRow("all four ran, nothing found") << 0 << true << "";
    QTest::newRow("not run") << 1 << false << "";
    QTest::newRow("ran without a tool") << 2 << false << "";
    QTest::newRow("skipped with a reason") << 3 << true << "";
    QTest::newRow("skipped without a reason") << 4 << false << "";
    QTest::newRow("a tool failed") << 5 << false << "compute-sanitizer racecheck: did not finish within 120 s";
    QTest::newRow("a finding") << 6 << false
        << "compute-sanitizer racecheck: shared-memory race (write at line 12 / read at line 12) in block_sum";
    QTest::newRow("a tool counts findings the section lacks") << 7 << false << "";
    QTest::newRow("truncated") << 8 << false << "";
}

void TestSanitizerReport::clean()
{
    QFETCH(int, change);
    QFETCH(bool, clean);
    QFETCH(QString, firstProblem);
    SanitizerSection s = cleanSection();
    switch (change) {
    case 1: s.ran = false; s.reason = "not requested"; s.tools.clear(); break;
    case 2: s.tools.clear(); break;
    case 3: s.tools[1].ran = false; s.tools[1].skipped = "the kernel uses no shared memory"; break;
    case 4: s.tools[1].ran = false; break;
    case 5: s.tools[1].error = "did not finish within 120 s"; break;
    case 6: s.findings.push_back(race()); s.tools[1].findings = 1; break;
    case 7: s.tools[0].findings = 2; break;
    case 8: s.tools[0].truncated = true; break;
    default: break;
    }
    QCOMPARE(s.clean(), clean);
    QCOMPARE(qs(s.firstProblem()), firstProblem);
}

void TestSanitizerReport::firstProblem()
{
    // A finding comes before a tool's error; the first of each.
    SanitizerSection s = cleanSection();
    s.tools[2].error = "exited with 1 and wrote no XML";
    s.tools[3].error = "did not finish within 120 s";
    QCOMPARE(qs(s.firstProblem()), QStringLiteral("compute-sanitizer initcheck: exited with 1 and wrote no XML"));
    s.findings = {oobRead(), race()};
    QCOMPARE(qs(s.firstProblem()), qs(oobRead().summary()));
}

QTEST_GUILESS_MAIN(TestSanitizerReport)
#include "tst_sanitizerreport.moc"
