// The runner protocol as values (engine/protocol/, docs/runner-protocol.md, docs/report-schema.md):
// every line either side may write is read into its struct or refused with one sentence and the
// JSON pointer of what is wrong, and every struct written reads back equal. No runner, no GPU.
#include "testutil.h"

#include "engine/protocol/FileTransfer.h"
#include "engine/protocol/Messages.h"
#include "engine/protocol/Protocol.h"
#include "engine/protocol/RunReport.h"
#include "engine/protocol/RunRequest.h"

#include <QStringList>
#include <QTest>
#include <QVector>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

using namespace kf::protocol;
using kf::Error;
using kf::GoldenErrors;
using kf::Mismatch;
using kf::NegativeControl;
using kf::OutputCheck;
using kf::ShapeBinding;
using nlohmann::json;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

json parsed(const QString& text)
{
    return json::parse(text.toStdString());
}

QStringList qsl(const std::vector<std::string>& lines)
{
    QStringList l;
    for (const std::string& s : lines)
        l << qs(s);
    return l;
}

std::vector<std::string> strings(const QStringList& l)
{
    std::vector<std::string> v;
    for (const QString& s : l)
        v.push_back(s.toStdString());
    return v;
}

// "label:N=7,D=3;" for every binding: ShapeBinding has no operator==.
QString bindingsText(const std::vector<ShapeBinding>& shapes)
{
    QString t;
    for (const ShapeBinding& b : shapes) {
        t += qs(b.label) + ":";
        for (const auto& [k, v] : b.values)
            t += qs(k) + "=" + QString::number(v) + ",";
        t += ";";
    }
    return t;
}

ShapeBinding binding(const std::string& label, std::map<std::string, std::int64_t, std::less<>> values)
{
    ShapeBinding b;
    b.label = label;
    b.values = std::move(values);
    return b;
}

// resources/examples/vector_add/task.json, cut down. RunRequest::fromJson only requires an
// object here; the runner parses the task afterwards.
json smallTask()
{
    return json::parse(R"json({"schema_version": 1, "name": "vector_add",
        "symbols": {"N": {"min": 1, "max": 1073741824}},
        "inputs": [{"name": "a", "dtype": "fp32", "shape": ["N"]}, {"name": "b", "dtype": "fp32", "shape": ["N"]}],
        "outputs": [{"name": "c", "dtype": "fp32", "shape": ["N"]}],
        "shapes": {"tests": [{"label": "tail", "N": 4099}], "benchmarks": [{"label": "64M", "N": 67108864}]},
        "reference": {"op": "add", "inputs": ["a", "b"]},
        "candidates": [{"file": "naive.cu", "launches": [{"kernel": "vector_add", "grid": "ceil_div(N, 256)",
                        "block": 256, "args": ["a", "b", "c", {"scalar": "N", "type": "int64"}]}]}]})json");
}

// The smallest request fromJson accepts: "f0VMRg==" is the four bytes of an ELF magic.
json minimalRequest(const std::string& type)
{
    json j = json::parse(R"({"id": 1, "candidate": "naive.cu", "cubin": "f0VMRg==", "seeds": ["0x1", "0x2", "0x3"]})");
    j["type"] = type;
    j["task"] = smallTask();
    return j;
}

// A request of each kind with every field away from its default where the kind allows it.
RunRequest requestFor(const QString& which)
{
    RunRequest r;
    r.id = 7;
    r.taskJson = smallTask();
    r.taskDir = "/work/tasks/vector_add";
    r.candidateFile = "naive.cu";
    r.cubin = std::string("\x7f" "ELF\0\x02\x01\xff", 8); // NUL and high bytes survive base64
    r.loweredNames = {{"vector_add", "_Z10vector_addPKfS0_Pfl"}};
    r.arch = "sm_90";
    r.sourceHash = "5d41402abc4b2a76b9719d911017c592";
    r.taskHash = "7d793037a0760186574b0282f2f435e7";
    r.compileOptions = {"--gpu-architecture=sm_90", "-lineinfo"};
    r.nvrtcVersion = "13.0";
    r.launchTimeoutMs = 5000;
    if (which == "verify") {
        r.kind = RunKind::Verify;
        r.seeds = {0x9f3a, 0xffffffffffffffffull, 0};
        r.trials = 3;
        r.shapes = "all";
        r.onlyShapes = {binding("tail", {{"N", 4099}}), binding("", {{"N", 1}})};
        r.setName = "shrink";
        r.heldOut = {binding("held", {{"N", 12345}})};
        r.firstTrial = 4;
        r.samples = 25;
        r.dump = DumpSettings{"/tmp/kf-dump", std::int64_t(1) << 20, true};
    } else if (which == "verify repro") {
        r.kind = RunKind::Verify;
        r.seeds = {0x1234};
        r.trials = 1;
        r.onlyShapes = {binding("repro", {{"N", 7}})};
        r.setName = "repro";
        r.firstTrial = 2;
        r.inputsDir = "/tmp/kf-case/inputs";
        r.dump = DumpSettings{"/tmp/kf-dump"};
    } else if (which == "verify staged") {
        // A runner elsewhere: the task's files and the repro inputs by content, the dump streamed.
        r.kind = RunKind::Verify;
        r.seeds = {0x1234};
        r.trials = 1;
        r.onlyShapes = {binding("repro", {{"N", 7}})};
        r.setName = "repro";
        r.taskDir.clear();
        r.taskFiles = {{"naive.cu", std::string(64, 'a')}, {"include/util/vec.h", std::string(64, '0')}};
        r.inputsFiles = {{"a.npy", std::string(64, 'b')}, {"b.npy", std::string(64, 'c')}};
        r.dump = DumpSettings{"/home/me/kf-dump", std::int64_t(1) << 20, false, true};
    } else if (which == "bench") {
        r.kind = RunKind::Bench;
        r.seeds = {0x42};
        r.trials = 1;
        r.shapes = "benchmarks";
        r.bench = BenchSettings{500, 5, 50, 0.02, 0.1, 1};
    } else {
        r.kind = RunKind::Profile;
        r.seeds = {0x77};
        r.trials = 1;
        r.shapes = "benchmarks";
        r.onlyShapes = {binding("64M", {{"N", 67108864}})};
        r.setName = "benchmarks";
        r.profile.baseline = false;
    }
    return r;
}

Event eventFor(const QString& which)
{
    if (which == "progress")
        return Event::progress(3, 250, "shape 2 of 5");
    if (which == "launch_begin")
        return Event::launchBegin(3, "launch 1 (softmax<256>) at B=7 D=4099, trial 0 run 1", 10000);
    if (which == "launch_end")
        return Event::launchEnd(3);
    if (which == "log info")
        return Event::log(3, Event::Level::Info, "the cubin was built for sm_90a; running it on sm_90");
    return Event::log(3, Event::Level::Warning, "dump budget spent: later failing trials are not saved");
}

DeviceSummary h100()
{
    DeviceSummary d;
    d.ordinal = 1;
    d.gpu = "NVIDIA H100 80GB HBM3";
    d.arch = "sm_90";
    d.computeCapability = "9.0";
    d.smCount = 132;
    d.memoryBytes = 84929216512;
    d.l2Bytes = 52428800;
    d.persistingL2MaxBytes = 32505856;
    d.clockMhz = 1980;
    d.memoryClockMhz = 2619;
    d.memoryBusBits = 5120;
    d.peakBandwidthGbs = 3352.3;
    d.maxSharedPerBlock = 49152;
    d.maxSharedPerBlockOptin = 232448;
    d.ecc = true;
    d.pageableMemoryAccess = true;
    d.driver = "580.159.04";
    d.cudaDriverApi = 13000;
    return d;
}

// ---- reports built by hand --------------------------------------------------------------------

Header headerOf(ReportKind kind, const std::string& verdict)
{
    Header h;
    h.kind = kind;
    h.verdict = *parseVerdict(verdict);
    h.summary = "1 of 1 shapes failed";
    h.task = {"vector_add", "7d793037a0760186574b0282f2f435e7"};
    h.candidate.file = "naive.cu";
    h.candidate.sourceHash = "5d41402abc4b2a76b9719d911017c592";
    h.candidate.arch = "sm_90";
    h.candidate.compileOptions = {"--gpu-architecture=sm_90", "-lineinfo"};
    h.candidate.loweredNames = {{"vector_add", "_Z10vector_addPKfS0_Pfl"}};
    h.environment.gpu = "NVIDIA H100 80GB HBM3";
    h.environment.computeCapability = "9.0";
    h.environment.smCount = 132;
    h.environment.memoryBytes = 84929216512;
    h.environment.l2Bytes = 52428800;
    h.environment.driver = "580.159.04";
    h.environment.cudaDriverApi = 13000;
    h.environment.nvrtc = "13.0";
    h.environment.torch = "2.11.0";
    h.environment.peakBandwidthGbs = 3352.3;
    h.environment.clockMhz = 1980;
    h.environment.memoryClockMhz = 2619;
    h.startedAt = "2026-11-22T05:10:00Z";
    h.durationMs = 812.5;
    h.mode = "tests";
    h.inputs = "seeded";
    h.dumpDir = "/tmp/kf-dump";
    h.seeds = {"0x9f3a", "0x9f3b"};
    h.editToVerdict = {RoundTiming{1, 120.5, 690.25, 812.5, Verdict::Fail}};
    return h;
}

GoldenErrors golden(double candidateMax, double candidateRms, double libtorchMax, double libtorchRms)
{
    GoldenErrors g;
    g.available = true;
    g.candidateMaxError = candidateMax;
    g.candidateRmsError = candidateRms;
    g.libtorchMaxError = libtorchMax;
    g.libtorchRmsError = libtorchRms;
    return g;
}

// One shape, two trials: trial 0 passes, trial 1 fails with one mismatch. Golden results available.
VerifyReport verifyReport()
{
    OutputCheck pass;
    pass.output = "c";
    pass.passed = true;
    pass.elements = 4099;
    pass.maxAbsError = 1.5e-7;
    pass.maxRelError = 3e-7;
    pass.referenceRms = 1.25;
    pass.atolEffective = 1.25e-5;
    pass.rtol = 1e-5;
    pass.histogram.exact = 4000;
    pass.histogram.bins[3] = 99;
    pass.golden = golden(2e-7, 1e-7, 4e-7, 2e-7);

    OutputCheck fail = pass;
    fail.passed = false;
    fail.mismatches = 1;
    fail.mismatchFraction = 1.0 / 4099;
    fail.maxAbsError = 0.31;
    fail.maxRelError = 0.62;
    fail.firstMismatches = {Mismatch{{4098}, 0.5, 0.19, 0.31, 0.62}};
    fail.histogram = {};
    fail.histogram.exact = 4098;
    fail.histogram.bins[20] = 1;
    fail.columns.count = 4099;
    fail.columns.perEntry = 17;
    fail.columns.maxRatio = {0.5, kInf};
    fail.columns.mismatches = {0, 1};
    fail.golden = golden(0.31, 0.0048, 1e-7, 5e-8);

    Trial t0;
    t0.trial = 0;
    t0.seed = "0x9f3a";
    t0.distributions = {{"a", "normal"}, {"b", "uniform"}};
    t0.passed = true;
    t0.outputs = {pass};
    Trial t1;
    t1.trial = 1;
    t1.seed = "0x9f3b";
    t1.distributions = {{"a", "normal"}, {"b", "uniform"}};
    t1.passed = false;
    t1.failure = "c: 1 of 4099 elements outside tolerance (max abs error 0.31 at [4098])";
    t1.guardViolations = {GuardViolation{"c", "after", 16}};
    t1.outputs = {fail};
    t1.caseDir = "01-tail-N4099-t1";

    CorrectnessShape s;
    s.id.dims = {{"N", 4099}};
    s.id.label = "tail";
    s.id.set = "tests";
    s.passed = false;
    s.negativeControl = {NegativeControl{"c", false, false, true, 0.5}};
    s.trials = {t0, t1};

    VerifyReport r;
    r.header = headerOf(ReportKind::Correctness, "fail");
    r.trialsPerShape = 2;
    r.discriminates = true;
    r.shapes = {s};
    r.phaseMs = {{"inputs", 1.5}, {"candidate", 0.75}, {"reference", 3.25}, {"compare", 2.0}};
    return r;
}

// Two shapes: one with every number, one with the optional ones absent.
BenchReport benchReport()
{
    BenchShape full;
    full.id.dims = {{"N", 67108864}};
    full.id.label = "64M";
    full.id.set = "benchmarks";
    full.candidate = TimingSummary{0.081, 0.079, 0.094, 0.002, 0.082, 120, 0.004};
    full.baseline = TimingSummary{0.102, 0.1, 0.11, 0.003, 0.103, 120, 0.005};
    full.speedup = 1.26;
    full.bytes = 805306368;
    full.flops = 67108864;
    full.achievedGbs = 828.6;
    full.achievedTflops = 0.83;
    full.pctPeakBandwidth = 24.7;
    full.pctPeakFlops = 1.2;
    full.rooflineFloorMs = 0.02;
    full.recheck = Recheck{6, true, ""};
    full.wallGapPct = 3.1;
    full.stoppedBy = "spread";
    full.wallMs = 412;
    full.phaseMs = {{"setup", 35}, {"warmup", 4}, {"rechecks", 12}};
    full.flags = {"event/wall gap 40%"};

    BenchShape sparse;
    sparse.id.dims = {{"N", 268435456}};
    sparse.id.label = "256M";
    sparse.id.set = "benchmarks";
    sparse.candidate.medianMs = 0.3;
    sparse.candidate.samples = 10;
    sparse.bytes = 3221225472.0;
    sparse.belowFloor = true;
    sparse.unstable = true;

    BenchReport r;
    r.header = headerOf(ReportKind::Performance, "fail");
    r.geomeanSpeedup = 1.26;
    r.allShapesAtLeast1x = false;
    r.shapes = {full, sparse};
    return r;
}

// A profile report whose run failed: the smallest one ProfileReport accepts.
json profileErrorReport()
{
    return json::parse(R"({"schema_version": 1, "kind": "profile", "verdict": "error",
        "summary": "the profile could not be done",
        "task": {"name": "vector_add", "hash": "7d793037a0760186574b0282f2f435e7"},
        "candidate": {"file": "naive.cu", "arch": "sm_90"},
        "error": {"what": "profile", "why": "no GPU: no CUDA device", "hint": "run on a machine with an NVIDIA GPU"}})");
}

// The JSON of a report as it arrives: written, sent as text, parsed.
json overTheWire(const json& report)
{
    return json::parse(report.dump());
}

Trial trialWith(const QStringList& tags)
{
    Trial t;
    t.trial = 1;
    OutputCheck y;
    y.output = "y";
    for (const QString& tag : tags) {
        if (tag == "launch error") {
            t.launchError = "an illegal memory access was encountered";
        } else if (tag == "guard violation") {
            t.guardViolations.push_back(GuardViolation{"y", "after", 16});
        } else if (tag == "modified inputs") {
            t.modifiedInputs = {"x", "w"};
        } else if (tag == "6 mismatches") {
            for (int i = 0; i < 6; ++i)
                y.firstMismatches.push_back(Mismatch{{6, i}, 0.5, 0.19, 0.31, 0.62});
        } else if (tag == "NaN mismatch") {
            y.firstMismatches.push_back(Mismatch{{0}, 1.0, kNaN, kInf, kInf});
        } else if (tag == "2 unwritten") {
            y.firstUnwritten = {{1, 3}, {1, 4}};
        } else if (tag == "6 unwritten") {
            for (int i = 0; i < 6; ++i)
                y.firstUnwritten.push_back({i});
        } else if (tag == "runs disagree") {
            t.runsAgree = false;
            t.runDisagreements = 3;
            t.runMaxAbsDiff = 0.25;
        } else {
            qFatal("unknown tag %s", qPrintable(tag));
        }
    }
    t.outputs = {y};
    return t;
}

// GCC 12 warns that `want` may be read uninitialised after has_value() said it holds one.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
bool sameNumber(const std::optional<double>& got, const std::optional<double>& want)
{
    if (!want.has_value() || !got.has_value())
        return want.has_value() == got.has_value();
    const double w = want.value_or(0), g = got.value_or(0);
    return std::isnan(w) ? std::isnan(g) : g == w;
}
#pragma GCC diagnostic pop

QString numberText(const std::optional<double>& v)
{
    return v ? QString::number(*v) : QString("none");
}

} // namespace

class TestProtocol : public QObject {
    Q_OBJECT
private slots:
    // Lines
    void parseLineRefuses_data();
    void parseLineRefuses();
    void parseLineAccepts_data();
    void parseLineAccepts();
    void versionMismatchSaysWhatToDo();
    void toLineIsOneStampedLine_data();
    void toLineIsOneStampedLine();
    void toLineReplacesInvalidUtf8();

    // Runner messages
    void decodeRefuses_data();
    void decodeRefuses();
    void decodesAnError();
    void decodesAnErrorWithoutReason();
    void decodesHello();
    void decodesEventsAndFinals();
    void pathProblem_data();
    void pathProblem();
    void fileMessagesRoundTrip();
    void fileRequestsRefuse_data();
    void fileRequestsRefuse();
    void fileMapLimits();
    void helloRoundTrips();
    void helloWithoutDevice();
    void helloHas();
    void helloArch_data();
    void helloArch();
    void helloEnvironment();
    void eventRoundTrips_data();
    void eventRoundTrips();
    void eventLimits();

    // Requests
    void requestRoundTrips_data();
    void requestRoundTrips();
    void requestDefaults();
    void requestRefuses_data();
    void requestRefuses();
    void seeds_data();
    void seeds();
    void missingFeature_data();
    void missingFeature();

    // Reports
    void verifyReportRoundTrips();
    void benchReportRoundTrips();
    void errorReportRoundTrips();
    void reportRefusesWrongTypes_data();
    void reportRefusesWrongTypes();
    void reportReadsNonFiniteStrings();
    void reportIgnoresUnknownKeys();
    void reportFieldsDefault();
    void headerAndShapeText();
    void shapeSummary();
    void worstErrorNaNWins_data();
    void worstErrorNaNWins();
    void summaryWithoutGolden();
    void firstFailure_data();
    void firstFailure();
    void goldenRatio_data();
    void goldenRatio();
    void trialEvidence_data();
    void trialEvidence();
    void benchFlags_data();
    void benchFlags();
    void runReportPicksKind_data();
    void runReportPicksKind();
    void runReportErrorsNameTheSource();
    void reportsOfDocument();
};

// ---- lines ------------------------------------------------------------------------------------

void TestProtocol::parseLineRefuses_data()
{
    QTest::addColumn<QString>("line");   // "@100MiB": 100 MiB of spaces, then "{}"
    QTest::addColumn<bool>("fromClient");
    QTest::addColumn<QString>("pointer");
    QTest::addColumn<QStringList>("says");
    for (const bool client : {false, true}) {
        const char* side = client ? "from the client" : "from the runner";
        const QString them = client ? "the client" : "the runner";
        const QString us = client ? "this runner" : "this KernelForge";
        QTest::addRow("%s: truncated JSON", side) << R"({"type": "report", "id": 1, "rep)" << client << ""
                                                  << QStringList{"malformed JSON line: "};
        QTest::addRow("%s: not JSON at all", side) << "Segmentation fault (core dumped)" << client << ""
                                                   << QStringList{"malformed JSON line: "};
        QTest::addRow("%s: empty", side) << "" << client << "" << QStringList{"malformed JSON line: "};
        QTest::addRow("%s: an array", side) << "[1, 2]" << client << ""
                                            << QStringList{"the message is an array, not an object"};
        QTest::addRow("%s: a string", side) << R"("hello")" << client << ""
                                            << QStringList{R"(the message is a string ("hello"), not an object)"};
        QTest::addRow("%s: no type", side) << R"({"id": 3, "protocol_version": 3})" << client << "/type"
                                           << QStringList{R"(the message has no string "type")"};
        QTest::addRow("%s: type is a number", side) << R"({"type": 7, "protocol_version": 3})" << client << "/type"
                                                    << QStringList{R"(the message has no string "type")"};
        QTest::addRow("%s: type is null", side) << R"({"type": null, "protocol_version": 3})" << client << "/type"
                                                << QStringList{R"(the message has no string "type")"};
        QTest::addRow("%s: no protocol_version", side)
            << R"({"type": "ping", "id": 1})" << client << "/protocol_version"
            << QStringList{them + " speaks no protocol version and " + us + " speaks protocol 3"};
        QTest::addRow("%s: protocol_version 1", side)
            << R"({"type": "hello", "protocol_version": 1})" << client << "/protocol_version"
            << QStringList{"protocol 1", "protocol 3", them + " speaks protocol 1 and " + us + " speaks protocol 3"};
        QTest::addRow("%s: protocol 1's \"protocol\": 1", side)
            << R"({"type": "hello", "protocol": 1, "device": null})" << client << "/protocol_version"
            << QStringList{"protocol 1", "protocol 3", them + " speaks protocol 1 and " + us + " speaks protocol 3"};
        QTest::addRow("%s: protocol_version 4", side)
            << R"({"type": "verify", "id": 5, "protocol_version": 4})" << client << "/protocol_version"
            << QStringList{"protocol 4", "protocol 3", them + " speaks protocol 4 and " + us + " speaks protocol 3"};
        QTest::addRow("%s: protocol_version a string", side)
            << R"({"type": "ping", "protocol_version": "2"})" << client << "/protocol_version"
            << QStringList{"protocol_version is not an integer"};
        QTest::addRow("%s: protocol_version a fraction", side)
            << R"({"type": "ping", "protocol_version": 3.0})" << client << "/protocol_version"
            << QStringList{"protocol_version is not an integer"};
        QTest::addRow("%s: a line over kMaxLineBytes", side)
            << "@100MiB" << client << "" << QStringList{"a line of 100 MiB, longer than the 64 MiB a message may have"};
    }
}

void TestProtocol::parseLineRefuses()
{
    QFETCH(QString, line);
    QFETCH(bool, fromClient);
    QFETCH(QString, pointer);
    QFETCH(QStringList, says);
    // The long line is valid JSON once parsed: only the length check can refuse it.
    const std::string text = line == "@100MiB" ? std::string(std::size_t(100) << 20, ' ') + "{}" : line.toStdString();
    const auto r = parseLine(text, fromClient ? From::Client : From::Runner);
    QVERIFY(!r.ok());
    const QString why = qs(r.error().why);
    for (const QString& s : says)
        QVERIFY2(why.contains(s), qPrintable("\"" + s + "\" not in: " + why));
    QVERIFY2(!why.contains("[json.exception."), qPrintable(why));
    QCOMPARE(qs(r.error().pointer), pointer);
}

void TestProtocol::parseLineAccepts_data()
{
    QTest::addColumn<QString>("line");
    QTest::addColumn<bool>("fromClient");
    QTest::addColumn<QString>("type");
    QTest::newRow("hello") << R"({"type": "hello", "protocol_version": 3, "device": null})" << false << "hello";
    QTest::newRow("progress") << R"({"type":"progress","id":4,"permille":250,"stage":"reference","protocol_version":3})"
                              << false << "progress";
    QTest::newRow("an unknown type: decode's business") << R"({"type": "telemetry", "protocol_version": 3})" << false
                                                        << "telemetry";
    QTest::newRow("ping") << R"({"type": "ping", "id": 1, "protocol_version": 3})" << true << "ping";
    QTest::newRow("surrounding blanks") << "  {\"type\": \"shutdown\", \"id\": 2, \"protocol_version\": 3}  \r" << true
                                        << "shutdown";
    QTest::newRow("exactly kMaxLineBytes") << "@64MiB" << true << "ping";
}

void TestProtocol::parseLineAccepts()
{
    QFETCH(QString, line);
    QFETCH(bool, fromClient);
    QFETCH(QString, type);
    std::string text = line.toStdString();
    if (line == "@64MiB") {
        text = R"({"type": "ping", "protocol_version": 3})";
        text += std::string(kMaxLineBytes - text.size(), ' ');
        QCOMPARE(text.size(), kMaxLineBytes);
    }
    const auto r = parseLine(text, fromClient ? From::Client : From::Runner);
    KF_VERIFY_OK(r);
    QCOMPARE(qs(r->at("type").get<std::string>()), type);
    QCOMPARE(r->at("protocol_version").get<int>(), kVersion);
}

void TestProtocol::versionMismatchSaysWhatToDo()
{
    const auto r = parseLine(R"({"type": "hello", "protocol": 1})", From::Runner);
    QVERIFY(!r.ok());
    QCOMPARE(qs(r.error().what), QString("talk to the runner"));
    QVERIFY2(qs(r.error().hint).contains("kforge-runner"), qPrintable(qs(r.error().hint)));

    KF_VERIFY_OK(checkVersion(json{{"protocol_version", kVersion}}, From::Client));
    const auto old = checkVersion(json{{"type", "verify"}, {"protocol_version", 1}}, From::Client);
    QVERIFY(!old.ok());
    QCOMPARE(qs(old.error().why), QString("the client speaks protocol 1 and this runner speaks protocol 3"));
    QCOMPARE(qs(old.error().pointer), QString("/protocol_version"));
    const auto none = checkVersion(json::object(), From::Runner);
    QVERIFY(!none.ok());
    QCOMPARE(qs(none.error().why), QString("the runner speaks no protocol version and this KernelForge speaks protocol 3"));
}

void TestProtocol::toLineIsOneStampedLine_data()
{
    QTest::addColumn<QString>("message");
    QTest::newRow("hello") << qs(Hello{}.toJson().dump());
    QTest::newRow("progress") << qs(Event::progress(1, 500, "reference").toJson().dump());
    QTest::newRow("newlines in a string") << R"({"type": "log", "id": 1, "level": "info", "text": "two\nlines\r\n and a tab\t"})";
    QTest::newRow("non-ASCII") << R"({"type": "log", "id": 1, "level": "info", "text": "max error 0.4× LibTorch's …"})";
    QTest::newRow("an old version is restamped") << R"({"type": "ping", "id": 2, "protocol_version": 1})";
    QTest::newRow("a request") << qs(requestFor("verify").toJson().dump());
}

void TestProtocol::toLineIsOneStampedLine()
{
    QFETCH(QString, message);
    const json m = parsed(message);
    const std::string line = toLine(m);
    QCOMPARE(std::count(line.begin(), line.end(), '\n'), std::ptrdiff_t(1));
    QCOMPARE(line.back(), '\n');
    QCOMPARE(std::count(line.begin(), line.end(), '\r'), std::ptrdiff_t(0));
    QVERIFY2(line.find("\"protocol_version\":3") != std::string::npos, line.c_str());

    // Round trip, from either side.
    json expected = m;
    expected["protocol_version"] = kVersion;
    for (const From from : {From::Runner, From::Client}) {
        const auto back = parseLine(line, from);
        KF_VERIFY_OK(back);
        QVERIFY2(*back == expected, back->dump().c_str());
    }
}

void TestProtocol::toLineReplacesInvalidUtf8()
{
    const std::string line = toLine(json{{"type", "log"}, {"id", 1}, {"text", std::string("bad \xff byte")}});
    const auto back = parseLine(line);
    KF_VERIFY_OK(back);
    QCOMPARE(qs(back->at("text").get<std::string>()), QString("bad \xEF\xBF\xBD byte"));
}

// ---- runner messages --------------------------------------------------------------------------

void TestProtocol::decodeRefuses_data()
{
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("pointer");
    QTest::addColumn<QString>("says");
    QTest::newRow("unknown type") << R"({"type": "telemetry", "id": 1})" << "/type"
                                  << R"(the runner sent an unknown message type "telemetry")";
    QTest::newRow("no type") << R"({"id": 1})" << "/type" << "unknown message type";
    QTest::newRow("id a string") << R"({"type": "pong", "id": "3"})" << "/id" << "expected an integer";
    QTest::newRow("permille a string") << R"({"type": "progress", "id": 1, "permille": "500", "stage": "x"})"
                                       << "/permille" << R"(expected an integer, found a string ("500"))";
    QTest::newRow("permille 2000") << R"({"type": "progress", "id": 1, "permille": 2000})" << "/permille"
                                   << "permille must be between 0 and 1000, found 2000";
    QTest::newRow("permille -1") << R"({"type": "progress", "id": 1, "permille": -1})" << "/permille"
                                 << "permille must be between 0 and 1000, found -1";
    QTest::newRow("stage a number") << R"({"type": "progress", "id": 1, "permille": 5, "stage": 3})" << "/stage"
                                    << "expected a string";
    QTest::newRow("label an array") << R"({"type": "launch_begin", "id": 1, "label": ["k"], "timeout_ms": 10})"
                                    << "/label" << "expected a string";
    QTest::newRow("timeout_ms a string") << R"({"type": "launch_begin", "id": 1, "label": "k", "timeout_ms": "10"})"
                                         << "/timeout_ms" << "expected a number";
    QTest::newRow("log level debug") << R"({"type": "log", "id": 1, "level": "debug", "text": "x"})" << "/level"
                                     << R"(expected "info" or "warning", found "debug")";
    QTest::newRow("log text a number") << R"({"type": "log", "id": 1, "text": 5})" << "/text" << "expected a string";
    QTest::newRow("report without an object") << R"({"type": "report", "id": 1})" << "/report"
                                              << "a report message needs a report object";
    QTest::newRow("report an array") << R"({"type": "report", "id": 1, "report": [1]})" << "/report"
                                     << "a report message needs a report object";
    QTest::newRow("fatal a string") << R"({"type": "error", "id": 1, "fatal": "yes", "error": {}})" << "/fatal"
                                    << "expected true or false";
    QTest::newRow("error a string") << R"({"type": "error", "id": 1, "error": "boom"})" << "/error"
                                    << "expected an object";
    QTest::newRow("error.why a number") << R"({"type": "error", "id": 1, "error": {"why": 5}})" << "/error/why"
                                        << "expected a string";
    QTest::newRow("hello features a string") << R"({"type": "hello", "features": "dump"})" << "/features"
                                             << "expected an array";
    QTest::newRow("hello feature a number") << R"({"type": "hello", "features": ["dump", 1]})" << "/features/1"
                                            << "expected a string";
    QTest::newRow("hello device a string") << R"({"type": "hello", "device": "H100"})" << "/device"
                                           << "expected an object";
    QTest::newRow("hello sm_count a string") << R"({"type": "hello", "device": {"sm_count": "132"}})"
                                             << "/device/sm_count" << "expected an integer";
    QTest::newRow("hello cuda_driver_api a string")
        << R"({"type": "hello", "versions": {"cuda_driver_api": "13.0"}})" << "/versions/cuda_driver_api"
        << "expected an integer";
    // Staging's answer and a streamed dump's chunks (docs/runner-protocol.md, "Files").
    QTest::newRow("files without missing") << R"({"type": "files", "id": 1})" << "/" << R"(missing required key "missing")";
    QTest::newRow("files missing a string") << R"({"type": "files", "id": 1, "missing": "x"})" << "/missing" << "expected an array";
    QTest::newRow("files missing a short hash") << R"({"type": "files", "id": 1, "missing": ["abc"]})" << "/missing/0"
                                                << "64 lowercase hex digits";
    auto chunk = [](const char* path, int offset, int size, const char* data, bool last) {
        return qs(json{{"type", "file_chunk"}, {"id", 1}, {"path", path}, {"offset", offset}, {"size", size}, {"data", data}, {"last", last}}
                      .dump());
    };
    QTest::newRow("file_chunk ../x") << chunk("../x", 0, 3, "AAEC", true) << "/path" << "would leave its folder";
    QTest::newRow("file_chunk case/../../x") << chunk("case/../../x", 0, 3, "AAEC", true) << "/path" << "would leave its folder";
    QTest::newRow("file_chunk absolute") << chunk("/etc/cron.d/x", 0, 3, "AAEC", true) << "/path" << "an absolute path";
    QTest::newRow("file_chunk empty path") << chunk("", 0, 3, "AAEC", true) << "/path" << "the path is empty";
    QTest::newRow("file_chunk offset past size") << chunk("a.npy", 5, 3, "", true) << "/offset" << "between 0 and size";
    QTest::newRow("file_chunk negative offset") << chunk("a.npy", -1, 3, "AAEC", true) << "/offset" << "between 0 and size";
    QTest::newRow("file_chunk data past size") << chunk("a.npy", 1, 3, "AAEC", true) << "/data" << "run past the file's size";
    QTest::newRow("file_chunk last too early") << chunk("a.npy", 0, 4, "AAEC", true) << "/last" << "must end at the file's size";
    QTest::newRow("file_chunk not last at the end") << chunk("a.npy", 0, 3, "AAEC", false) << "/last" << "must be the last";
    QTest::newRow("file_chunk data not base64") << chunk("a.npy", 0, 3, "AA=C", true) << "/data" << "not valid base64";
    QTest::newRow("file_chunk size a string")
        << R"({"type": "file_chunk", "id": 1, "path": "a", "offset": 0, "size": "3", "data": "AAEC", "last": true})" << "/size"
        << "expected an integer";
}

void TestProtocol::decodeRefuses()
{
    QFETCH(QString, message);
    QFETCH(QString, pointer);
    QFETCH(QString, says);
    const auto r = RunnerMessage::decode(parsed(message));
    QVERIFY(!r.ok());
    QCOMPARE(qs(r.error().pointer), pointer);
    QVERIFY2(qs(r.error().why).contains(says), qPrintable(qs(r.error().why)));
}

void TestProtocol::decodesAnError()
{
    const auto m = RunnerMessage::decode(json::parse(
        R"({"type": "error", "id": 4, "fatal": true,
            "error": {"what": "launch softmax", "why": "an illegal memory access was encountered", "hint": "check the indexing"}})"));
    KF_VERIFY_OK(m);
    QCOMPARE(int(m->type), int(RunnerMessage::Type::Error));
    QVERIFY(m->id.has_value());
    QCOMPARE(*m->id, std::int64_t(4));
    QCOMPARE(m->fatal, true);
    QCOMPARE(qs(m->error.what), QString("launch softmax"));
    QCOMPARE(qs(m->error.why), QString("an illegal memory access was encountered"));
    QCOMPARE(qs(m->error.hint), QString("check the indexing"));

    // What errorMessage() writes decodes to the same Error.
    const Error e = Error::failed("run verify", "no GPU: no CUDA device", "use a machine with a GPU");
    const auto back = RunnerMessage::decode(errorMessage(9, e, false));
    KF_VERIFY_OK(back);
    QCOMPARE(*back->id, std::int64_t(9));
    QCOMPARE(back->fatal, false);
    QCOMPARE(qs(back->error.what), qs(e.what));
    QCOMPARE(qs(back->error.why), qs(e.why));
    QCOMPARE(qs(back->error.hint), qs(e.hint));
}

void TestProtocol::decodesAnErrorWithoutReason()
{
    const auto m = RunnerMessage::decode(json::parse(R"({"type": "error", "id": 2})"));
    KF_VERIFY_OK(m);
    QCOMPARE(m->fatal, false);
    QCOMPARE(qs(m->error.why), QString("the runner reported an error without a reason"));
    QCOMPARE(qs(errorFromMessage(json{{"type", "error"}}).why), QString("the runner reported an error without a reason"));
}

void TestProtocol::decodesHello()
{
    const auto m = RunnerMessage::decode(json::parse(R"({"type": "hello", "protocol_version": 3,
        "device": {"gpu": "NVIDIA H100 80GB HBM3", "arch": "sm_90", "compute_capability": "9.0", "sm_count": 132},
        "device_error": "", "features": ["dump", "inputs_dir", "profile"],
        "versions": {"torch": "2.11.0", "cuda_driver_api": 13000, "driver": "580.159.04", "nvrtc": "13.0"}})"));
    KF_VERIFY_OK(m);
    QCOMPARE(int(m->type), int(RunnerMessage::Type::Hello));
    QVERIFY(!m->id.has_value());
    QVERIFY(m->hello.device.has_value());
    QCOMPARE(qs(m->hello.device->gpu), QString("NVIDIA H100 80GB HBM3"));
    QCOMPARE(m->hello.device->smCount, std::int64_t(132));
    QCOMPARE(qs(m->hello.arch()), QString("sm_90"));
    QCOMPARE(qsl(m->hello.features), (QStringList{"dump", "inputs_dir", "profile"}));
    QVERIFY(m->hello.has("profile"));
    QVERIFY(!m->hello.has("samples"));
    QCOMPARE(qs(m->hello.torch), QString("2.11.0"));
    QCOMPARE(qs(m->hello.driver), QString("580.159.04"));
    QCOMPARE(m->hello.cudaDriverApi, std::int64_t(13000));
    QCOMPARE(qs(m->hello.nvrtc), QString("13.0"));
}

void TestProtocol::decodesEventsAndFinals()
{
    const auto progress = RunnerMessage::decode(json::parse(R"({"type": "progress", "id": 2, "permille": 250, "stage": "reference"})"));
    KF_VERIFY_OK(progress);
    QCOMPARE(int(progress->type), int(RunnerMessage::Type::Event));
    QCOMPARE(*progress->id, std::int64_t(2));
    QCOMPARE(int(progress->event.kind), int(Event::Kind::Progress));
    QCOMPARE(progress->event.permille, 250);
    QCOMPARE(qs(progress->event.stage), QString("reference"));

    const auto log = RunnerMessage::decode(json::parse(R"({"type": "log", "id": 2, "level": "warning", "text": "fell back"})"));
    KF_VERIFY_OK(log);
    QCOMPARE(int(log->type), int(RunnerMessage::Type::Event));
    QCOMPARE(int(log->event.kind), int(Event::Kind::Log));
    QCOMPARE(int(log->event.level), int(Event::Level::Warning));
    QCOMPARE(qs(log->event.text), QString("fell back"));

    const auto report = RunnerMessage::decode(json::parse(R"({"type": "report", "id": 2, "report": {"kind": "correctness", "verdict": "pass"}})"));
    KF_VERIFY_OK(report);
    QCOMPARE(int(report->type), int(RunnerMessage::Type::Report));
    QCOMPARE(qs(report->report.at("verdict").get<std::string>()), QString("pass"));

    const auto pong = RunnerMessage::decode(json::parse(R"({"type": "pong", "id": 3})"));
    KF_VERIFY_OK(pong);
    QCOMPARE(int(pong->type), int(RunnerMessage::Type::Pong));
    QCOMPARE(*pong->id, std::int64_t(3));

    const std::string sha(64, 'e');
    const auto files = RunnerMessage::decode(json{{"type", "files"}, {"id", 4}, {"missing", {sha}}});
    KF_VERIFY_OK(files);
    QCOMPARE(int(files->type), int(RunnerMessage::Type::Files));
    QCOMPARE(int(files->missing.size()), 1);
    QCOMPARE(qs(files->missing.front()), qs(sha));

    const auto chunk = RunnerMessage::decode(json::parse(
        R"({"type": "file_chunk", "id": 5, "path": "03-tail/inputs/a.npy", "offset": 4, "size": 9, "data": "AAECAwQ=", "last": true})"));
    KF_VERIFY_OK(chunk);
    QCOMPARE(int(chunk->type), int(RunnerMessage::Type::FileChunk));
    QCOMPARE(*chunk->id, std::int64_t(5));
    QCOMPARE(qs(chunk->chunk.path), QString("03-tail/inputs/a.npy"));
    QCOMPARE(chunk->chunk.offset, std::int64_t(4));
    QCOMPARE(chunk->chunk.size, std::int64_t(9));
    QVERIFY(chunk->chunk.data == std::string("\0\1\2\3\4", 5));
    QVERIFY(chunk->chunk.last);
}

void TestProtocol::pathProblem_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("problem");   // empty: the path is accepted
    QTest::newRow("a file") << "naive.cu" << "";
    QTest::newRow("a nested file") << "include/util/vec.h" << "";
    QTest::newRow("dots inside a name") << "a..b/..c" << "";
    QTest::newRow("a hidden file") << ".hidden" << "";
    QTest::newRow("..") << ".." << "would leave its folder";
    QTest::newRow("../x") << "../x" << "would leave its folder";
    QTest::newRow("a/../../x") << "a/../../x" << "would leave its folder";
    QTest::newRow("a/..") << "a/.." << "would leave its folder";
    QTest::newRow("./x") << "./x" << R"(a "." component)";
    QTest::newRow("absolute") << "/etc/passwd" << "an absolute path";
    QTest::newRow("empty") << "" << "the path is empty";
    QTest::newRow("a//b") << "a//b" << "empty component";
    QTest::newRow("trailing slash") << "a/" << "empty component";
    QTest::newRow("backslash") << "..\\x" << "backslash";
    QTest::newRow("NUL") << QString::fromLatin1("a\0b", 3) << "control character";
    QTest::newRow("newline") << "a\nb" << "control character";
    QTest::newRow("1025 bytes") << QString(1025, 'x') << "longer than 1024 bytes";
    QTest::newRow("1024 bytes") << QString(1024, 'x') << "";
}

void TestProtocol::pathProblem()
{
    QFETCH(QString, path);
    QFETCH(QString, problem);
    const QByteArray bytes = path.toUtf8();
    const std::string why = kf::protocol::pathProblem(std::string_view(bytes.constData(), std::size_t(bytes.size())));
    if (problem.isEmpty())
        QVERIFY2(why.empty(), why.c_str());
    else
        QVERIFY2(qs(why).contains(problem), why.c_str());
}

void TestProtocol::fileMessagesRoundTrip()
{
    const std::string a(64, 'a'), b(64, '0');
    HaveFiles have{{a, b}};
    auto haveBack = HaveFiles::fromJson(*parseLine(toLine(have.toJson()), From::Client));
    KF_VERIFY_OK(haveBack);
    QVERIFY(haveBack->sha256 == have.sha256);

    PutFile put;
    put.sha256 = a;
    put.size = 10;
    put.offset = 7;
    put.data = std::string("\0\xff\n", 3);
    put.last = true;
    auto putBack = PutFile::fromJson(*parseLine(toLine(put.toJson()), From::Client));
    KF_VERIFY_OK(putBack);
    QCOMPARE(qs(putBack->sha256), qs(a));
    QCOMPARE(putBack->size, std::int64_t(10));
    QCOMPARE(putBack->offset, std::int64_t(7));
    QVERIFY(putBack->data == put.data);
    QVERIFY(putBack->last);

    // An empty file is one chunk, at offset 0, last.
    PutFile empty;
    empty.sha256 = b;
    empty.last = true;
    KF_VERIFY_OK(PutFile::fromJson(empty.toJson()));

    FilesAnswer answer{{b}};
    auto answerBack = FilesAnswer::fromJson(answer.toJson());
    KF_VERIFY_OK(answerBack);
    QVERIFY(answerBack->missing == answer.missing);

    FileChunk c;
    c.id = 9;
    c.path = "01-one-N1-t0/case.json";
    c.size = 3;
    c.data = "{}\n";
    c.last = true;
    auto cBack = FileChunk::fromJson(*parseLine(toLine(c.toJson()), From::Runner));
    KF_VERIFY_OK(cBack);
    QCOMPARE(cBack->id, std::int64_t(9));
    QCOMPARE(qs(cBack->path), qs(c.path));
    QVERIFY(cBack->data == c.data);
}

void TestProtocol::fileRequestsRefuse_data()
{
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("pointer");
    QTest::addColumn<QString>("says");
    const std::string sha(64, 'a');
    auto put = [&](json patch) {
        json j = {{"type", "put_file"}, {"id", 1}, {"sha256", sha}, {"size", 3}, {"offset", 0}, {"data", "AAEC"}, {"last", true}};
        j.merge_patch(patch);
        return qs(j.dump());
    };
    QTest::newRow("have_files without sha256") << R"({"type": "have_files", "id": 1})" << "/" << R"(missing required key "sha256")";
    QTest::newRow("have_files a bad hash") << R"({"type": "have_files", "id": 1, "sha256": ["xyz"]})" << "/sha256/0"
                                           << "64 lowercase hex digits";
    QTest::newRow("put_file a bad hash") << put({{"sha256", "ABC"}}) << "/sha256" << "64 lowercase hex digits";
    QTest::newRow("put_file over 4 GiB") << put({{"size", (std::int64_t(4) << 30) + 1}, {"last", false}}) << "/size"
                                         << "between 0 and 4 GiB";
    QTest::newRow("put_file a negative size") << put({{"size", -1}}) << "/size" << "between 0 and 4 GiB";
    QTest::newRow("put_file offset past size") << put({{"offset", 4}}) << "/offset" << "between 0 and size";
    QTest::newRow("put_file data past size") << put({{"offset", 1}}) << "/data" << "run past the file's size";
    QTest::newRow("put_file not base64") << put({{"data", "AA\nC"}}) << "/data" << "not valid base64";
    QTest::newRow("put_file last too early") << put({{"size", 4}}) << "/last" << "must end at the file's size";
    QTest::newRow("put_file over 4 MiB") << put({{"size", 5 << 20}, {"data", std::string(((4 << 20) / 3 + 2) * 4, 'A')}, {"last", false}})
                                         << "/data" << "at most 4 MiB";
}

void TestProtocol::fileRequestsRefuse()
{
    QFETCH(QString, message);
    QFETCH(QString, pointer);
    QFETCH(QString, says);
    const json j = parsed(message);
    std::optional<Error> e;
    if (j.at("type") == "have_files") {
        if (auto r = HaveFiles::fromJson(j); !r)
            e = r.error();
    } else if (auto r = PutFile::fromJson(j); !r) {
        e = r.error();
    }
    QVERIFY2(e.has_value(), qPrintable(message.left(200)));
    QCOMPARE(qs(e->pointer), pointer);
    QVERIFY2(qs(e->why).contains(says), qPrintable(qs(e->why)));
}

void TestProtocol::fileMapLimits()
{
    // 4096 files is the most a request may name; one more is refused before any is looked at.
    json files = json::object();
    for (int i = 0; i < int(kMaxStagedFiles); ++i)
        files["include/h" + std::to_string(i) + ".h"] = std::string(64, 'a');
    KF_VERIFY_OK(readFileMap(files, "/task_files"));
    files["naive.cu"] = std::string(64, 'b');
    const auto tooMany = readFileMap(files, "/task_files");
    QVERIFY(!tooMany.ok());
    QCOMPARE(qs(tooMany.error().pointer), QString("/task_files"));
    QVERIFY2(qs(tooMany.error().why).contains("4097 files, more than the 4096"), qPrintable(qs(tooMany.error().why)));
    // The same limit in a request.
    json request = minimalRequest("verify");
    request["task_files"] = files;
    const auto r = RunRequest::fromJson(request);
    QVERIFY(!r.ok());
    QCOMPARE(qs(r.error().pointer), QString("/task_files"));
}

void TestProtocol::helloRoundTrips()
{
    Hello h;
    h.device = h100();
    h.features = {"dump", "inputs_dir", "only_shapes", "samples", "first_trial", "profile"};
    h.torch = "2.11.0";
    h.driver = "580.159.04";
    h.cudaDriverApi = 13000;
    h.nvrtc = "13.0";
    h.devices = {{0, "NVIDIA H100 80GB HBM3", "GPU-ac7d9fee-f3cd-a5ae-df83-585fd377babc"}, {1, "NVIDIA H100 80GB HBM3", "GPU-1"}};
    const json j = h.toJson();
    QCOMPARE(qs(j.at("type").get<std::string>()), QString("hello"));
    QVERIFY2(!j.contains("protocol"), j.dump().c_str()); // protocol 2: the version is "protocol_version", stamped by toLine
    const auto line = parseLine(toLine(j));
    KF_VERIFY_OK(line);
    const auto back = Hello::fromJson(*line);
    KF_VERIFY_OK(back);
    QVERIFY(back->device.has_value());
    const DeviceSummary& d = *back->device;
    const DeviceSummary want = h100();
    QCOMPARE(d.ordinal, want.ordinal);
    QCOMPARE(qs(d.gpu), qs(want.gpu));
    QCOMPARE(qs(d.arch), qs(want.arch));
    QCOMPARE(qs(d.computeCapability), qs(want.computeCapability));
    QCOMPARE(d.smCount, want.smCount);
    QCOMPARE(d.memoryBytes, want.memoryBytes);
    QCOMPARE(d.l2Bytes, want.l2Bytes);
    QCOMPARE(d.persistingL2MaxBytes, want.persistingL2MaxBytes);
    QCOMPARE(d.clockMhz, want.clockMhz);
    QCOMPARE(d.memoryClockMhz, want.memoryClockMhz);
    QCOMPARE(d.memoryBusBits, want.memoryBusBits);
    QCOMPARE(d.peakBandwidthGbs, want.peakBandwidthGbs);
    QCOMPARE(d.maxSharedPerBlock, want.maxSharedPerBlock);
    QCOMPARE(d.maxSharedPerBlockOptin, want.maxSharedPerBlockOptin);
    QCOMPARE(d.ecc, want.ecc);
    QCOMPARE(d.pageableMemoryAccess, want.pageableMemoryAccess);
    QCOMPARE(qs(d.driver), qs(want.driver));
    QCOMPARE(d.cudaDriverApi, want.cudaDriverApi);
    QCOMPARE(qsl(back->features), qsl(h.features));
    QCOMPARE(qs(back->torch), qs(h.torch));
    QCOMPARE(qs(back->driver), qs(h.driver));
    QCOMPARE(back->cudaDriverApi, h.cudaDriverApi);
    QCOMPARE(qs(back->nvrtc), qs(h.nvrtc));
    // Every GPU the runner sees, for a "gpus": "all" endpoint.
    QCOMPARE(int(back->devices.size()), 2);
    QCOMPARE(back->devices[1].ordinal, 1);
    QCOMPARE(qs(back->devices[0].uuid), QString("GPU-ac7d9fee-f3cd-a5ae-df83-585fd377babc"));
    QVERIFY2(back->toJson() == j, back->toJson().dump().c_str());
}

void TestProtocol::helloWithoutDevice()
{
    Hello h;
    h.deviceError = "no CUDA device: CPU mode forced by KF_RUNNER_FORCE_CPU=1";
    h.driver = "580.159.04";
    const json j = h.toJson();
    QVERIFY(j.at("device").is_null());
    const auto back = Hello::fromJson(overTheWire(j));
    KF_VERIFY_OK(back);
    QVERIFY(!back->device.has_value());
    QCOMPARE(qs(back->deviceError), qs(h.deviceError));
    QCOMPARE(qs(back->arch()), QString());

    // Hello::fromJson reads a hello only.
    const auto wrong = Hello::fromJson(json{{"type", "progress"}});
    QVERIFY(!wrong.ok());
    QCOMPARE(qs(wrong.error().pointer), QString("/type"));
}

void TestProtocol::helloHas()
{
    Hello h;
    h.features = {"dump", "inputs_dir"};
    QVERIFY(h.has("dump"));
    QVERIFY(h.has("inputs_dir"));
    QVERIFY(!h.has("profile"));
    QVERIFY(!h.has("Dump"));
    QVERIFY(!h.has(""));
    QVERIFY(!Hello{}.has("dump"));
}

void TestProtocol::helloArch_data()
{
    QTest::addColumn<QString>("device");
    QTest::addColumn<QString>("arch");
    QTest::newRow("named") << R"({"arch": "sm_90", "compute_capability": "9.0"})" << "sm_90";
    QTest::newRow("from the compute capability") << R"({"compute_capability": "8.6"})" << "sm_86";
    QTest::newRow("empty arch, three digits") << R"({"arch": "", "compute_capability": "12.0"})" << "sm_120";
    QTest::newRow("a named arch wins") << R"({"arch": "sm_90a", "compute_capability": "9.0"})" << "sm_90a";
    QTest::newRow("nothing to go by") << R"({"gpu": "?"})" << "";
    QTest::newRow("no device") << "null" << "";
}

void TestProtocol::helloArch()
{
    QFETCH(QString, device);
    QFETCH(QString, arch);
    const auto h = Hello::fromJson(json{{"type", "hello"}, {"device", parsed(device)}});
    KF_VERIFY_OK(h);
    QCOMPARE(qs(h->arch()), arch);
}

void TestProtocol::helloEnvironment()
{
    Hello h;
    h.device = h100();
    h.driver = "570.1";          // what the runner found without a device: the kernel module
    h.cudaDriverApi = 12080;
    h.nvrtc = "13.0";
    h.torch = "2.11.0";
    Environment e = h.environment();
    QCOMPARE(qs(e.gpu), QString("NVIDIA H100 80GB HBM3"));
    QCOMPARE(qs(e.computeCapability), QString("9.0"));
    QCOMPARE(e.smCount, std::int64_t(132));
    QCOMPARE(e.memoryBytes, std::int64_t(84929216512));
    QCOMPARE(e.l2Bytes, std::int64_t(52428800));
    QCOMPARE(e.peakBandwidthGbs, 3352.3);
    QCOMPARE(e.clockMhz, 1980.0);
    QCOMPARE(e.memoryClockMhz, 2619.0);
    QCOMPARE(qs(e.driver), QString("580.159.04"));   // the device's own, when it names one
    QCOMPARE(e.cudaDriverApi, std::int64_t(13000));
    QCOMPARE(qs(e.nvrtc), QString("13.0"));
    QCOMPARE(qs(e.torch), QString("2.11.0"));

    h.device->driver.clear();
    h.device->cudaDriverApi = 0;
    e = h.environment();
    QCOMPARE(qs(e.driver), QString("570.1"));
    QCOMPARE(e.cudaDriverApi, std::int64_t(12080));

    h.device.reset();
    e = h.environment();
    QCOMPARE(qs(e.gpu), QString());
    QCOMPARE(e.smCount, std::int64_t(0));
    QCOMPARE(qs(e.driver), QString("570.1"));
    QCOMPARE(e.cudaDriverApi, std::int64_t(12080));
    QCOMPARE(qs(e.torch), QString("2.11.0"));
}

void TestProtocol::eventRoundTrips_data()
{
    QTest::addColumn<QString>("which");
    QTest::addColumn<QString>("type");
    QTest::newRow("progress") << "progress" << "progress";
    QTest::newRow("launch_begin") << "launch_begin" << "launch_begin";
    QTest::newRow("launch_end") << "launch_end" << "launch_end";
    QTest::newRow("log info") << "log info" << "log";
    QTest::newRow("log warning") << "log warning" << "log";
}

void TestProtocol::eventRoundTrips()
{
    QFETCH(QString, which);
    QFETCH(QString, type);
    const Event e = eventFor(which);
    const json j = e.toJson();
    QCOMPARE(qs(j.at("type").get<std::string>()), type);
    const auto line = parseLine(toLine(j));
    KF_VERIFY_OK(line);
    const auto back = Event::fromJson(*line);
    KF_VERIFY_OK(back);
    QCOMPARE(int(back->kind), int(e.kind));
    QCOMPARE(back->id, std::int64_t(3));
    QCOMPARE(back->permille, e.permille);
    QCOMPARE(qs(back->stage), qs(e.stage));
    QCOMPARE(qs(back->label), qs(e.label));
    QCOMPARE(back->timeoutMs, e.timeoutMs);
    QCOMPARE(int(back->level), int(e.level));
    QCOMPARE(qs(back->text), qs(e.text));
    QVERIFY2(back->toJson() == j, back->toJson().dump().c_str());
    if (e.kind == Event::Kind::Log)
        QCOMPARE(qs(j.at("level").get<std::string>()), QString(levelName(e.level)));

    // The same line decoded as "any runner message".
    const auto m = RunnerMessage::decode(*line);
    KF_VERIFY_OK(m);
    QCOMPARE(int(m->type), int(RunnerMessage::Type::Event));
    QCOMPARE(int(m->event.kind), int(e.kind));
}

void TestProtocol::eventLimits()
{
    QCOMPARE(Event::progress(1, 1500, "").permille, 1000);
    QCOMPARE(Event::progress(1, -5, "").permille, 0);
    QCOMPARE(QString(levelName(Event::Level::Info)), QString("info"));
    QCOMPARE(QString(levelName(Event::Level::Warning)), QString("warning"));

    const auto noLevel = Event::fromJson(json::parse(R"({"type": "log", "id": 1, "text": "t"})"));
    KF_VERIFY_OK(noLevel);
    QCOMPARE(int(noLevel->level), int(Event::Level::Info));
    // A launch_begin without a positive budget leaves only the idle timeout.
    const auto negative = Event::fromJson(json::parse(R"({"type": "launch_begin", "id": 1, "label": "k", "timeout_ms": -5})"));
    KF_VERIFY_OK(negative);
    QCOMPARE(negative->timeoutMs, std::int64_t(0));
    const auto fraction = Event::fromJson(json::parse(R"({"type": "launch_begin", "id": 1, "label": "k", "timeout_ms": 2500.7})"));
    KF_VERIFY_OK(fraction);
    QCOMPARE(fraction->timeoutMs, std::int64_t(2500));
    const auto notAnEvent = Event::fromJson(json::parse(R"({"type": "report", "id": 1})"));
    QVERIFY(!notAnEvent.ok());
    QCOMPARE(qs(notAnEvent.error().pointer), QString("/type"));
}

// ---- requests ---------------------------------------------------------------------------------

void TestProtocol::requestRoundTrips_data()
{
    QTest::addColumn<QString>("which");
    QTest::newRow("verify") << "verify";
    QTest::newRow("verify repro") << "verify repro";
    QTest::newRow("verify staged") << "verify staged";
    QTest::newRow("bench") << "bench";
    QTest::newRow("profile") << "profile";
}

void TestProtocol::requestRoundTrips()
{
    QFETCH(QString, which);
    const RunRequest r = requestFor(which);
    const json j = r.toJson();
    QCOMPARE(qs(j.at("type").get<std::string>()), QString(runKindName(r.kind)));
    QCOMPARE(qs(j.at("seeds").at(0).get<std::string>()), qs(seedText(r.seeds.front())));
    // As the runner reads it: one line from the client.
    const auto line = parseLine(toLine(j), From::Client);
    KF_VERIFY_OK(line);
    const auto back = RunRequest::fromJson(*line);
    KF_VERIFY_OK(back);
    QCOMPARE(back->id, r.id);
    QCOMPARE(int(back->kind), int(r.kind));
    QVERIFY2(back->taskJson == r.taskJson, back->taskJson.dump().c_str());
    QCOMPARE(qs(back->taskDir), qs(r.taskDir));
    QCOMPARE(qs(back->candidateFile), qs(r.candidateFile));
    QCOMPARE(back->cubin.size(), r.cubin.size());
    QVERIFY(back->cubin == r.cubin);
    QVERIFY(back->loweredNames == r.loweredNames);
    QCOMPARE(qs(back->arch), qs(r.arch));
    QCOMPARE(qs(back->sourceHash), qs(r.sourceHash));
    QCOMPARE(qs(back->taskHash), qs(r.taskHash));
    QCOMPARE(qsl(back->compileOptions), qsl(r.compileOptions));
    QCOMPARE(qs(back->nvrtcVersion), qs(r.nvrtcVersion));
    QCOMPARE(back->seeds, r.seeds);
    QCOMPARE(back->trials, r.trials);
    QCOMPARE(qs(back->shapes), qs(r.shapes));
    QCOMPARE(bindingsText(back->onlyShapes), bindingsText(r.onlyShapes));
    QCOMPARE(qs(back->setName), qs(r.setName));
    QCOMPARE(bindingsText(back->heldOut), bindingsText(r.heldOut));
    QCOMPARE(back->firstTrial, r.firstTrial);
    QCOMPARE(back->samples, r.samples);
    QCOMPARE(back->dump.has_value(), r.dump.has_value());
    if (r.dump) {
        QCOMPARE(qs(back->dump->dir), qs(r.dump->dir));
        QCOMPARE(back->dump->maxBytes, r.dump->maxBytes);
        QCOMPARE(back->dump->allFailing, r.dump->allFailing);
        QCOMPARE(back->dump->stream, r.dump->stream);
    }
    QCOMPARE(qs(back->inputsDir), qs(r.inputsDir));
    QVERIFY(back->taskFiles == r.taskFiles);
    QVERIFY(back->inputsFiles == r.inputsFiles);
    // A staged task names no folder the runner could misread as its own.
    QCOMPARE(j.contains("task_dir"), r.taskFiles.empty());
    QCOMPARE(back->launchTimeoutMs, r.launchTimeoutMs);
    QCOMPARE(back->bench.timeCapMs, r.bench.timeCapMs);
    QCOMPARE(back->bench.minSamples, r.bench.minSamples);
    QCOMPARE(back->bench.maxSamples, r.bench.maxSamples);
    QCOMPARE(back->bench.targetSpread, r.bench.targetSpread);
    QCOMPARE(back->bench.recheckFraction, r.bench.recheckFraction);
    QCOMPARE(back->bench.warmup, r.bench.warmup);
    QCOMPARE(back->profile.baseline, r.profile.baseline);
    QVERIFY2(back->toJson() == j, back->toJson().dump().c_str());
}

void TestProtocol::requestDefaults()
{
    json v = minimalRequest("verify");
    auto r = RunRequest::fromJson(v);
    KF_VERIFY_OK(r);
    QCOMPARE(int(r->kind), int(RunKind::Verify));
    QCOMPARE(r->id, std::int64_t(1));
    QVERIFY(r->cubin == std::string("\x7f" "ELF", 4));
    QCOMPARE(r->seeds, (std::vector<std::uint64_t>{1, 2, 3}));
    QCOMPARE(r->trials, 3);
    QCOMPARE(qs(r->shapes), QString("tests"));
    QCOMPARE(qs(r->setName), QString("custom"));
    QCOMPARE(r->firstTrial, 0);
    QCOMPARE(r->samples, 10);
    QVERIFY(!r->dump.has_value());
    QCOMPARE(qs(r->inputsDir), QString());
    QCOMPARE(r->launchTimeoutMs, std::int64_t(10000));
    QCOMPARE(r->bench.timeCapMs, 2000.0);
    QCOMPARE(r->bench.minSamples, 10);
    QCOMPARE(r->bench.maxSamples, 500);
    QCOMPARE(r->bench.warmup, 3);
    QCOMPARE(r->profile.baseline, true);

    for (const char* type : {"bench", "profile"}) {
        const auto other = RunRequest::fromJson(minimalRequest(type));
        KF_VERIFY_OK(other);
        QCOMPARE(other->trials, 1);
        QCOMPARE(qs(other->shapes), QString("benchmarks"));
    }

    // A dump with only its folder gets the default budget: 2 GiB, the same as DumpSettings{}.
    v["dump"] = {{"dir", "/tmp/kf-dump"}};
    r = RunRequest::fromJson(v);
    KF_VERIFY_OK(r);
    QVERIFY(r->dump.has_value());
    QCOMPARE(r->dump->maxBytes, std::int64_t(2) << 30);
    QCOMPARE(r->dump->maxBytes, DumpSettings{}.maxBytes);
    QCOMPARE(r->dump->allFailing, false);

    // Unknown keys are ignored: a client asks hello's features before sending optional ones.
    v["colour"] = "red";
    v["protocol_version"] = kVersion;
    KF_VERIFY_OK(RunRequest::fromJson(v));
}

void TestProtocol::requestRefuses_data()
{
    // Each row merges `patch` into a minimal verify request (RFC 7386: null removes a key).
    QTest::addColumn<QString>("patch");
    QTest::addColumn<QString>("pointer");
    QTest::addColumn<QString>("says");
    QTest::newRow("unknown type") << R"({"type": "run"})" << "/type" << R"(expected "verify", "bench" or "profile")";
    QTest::newRow("id a string") << R"({"id": "1"})" << "/id" << "expected an integer";
    QTest::newRow("no task") << R"({"task": null})" << "/" << R"(missing required key "task")";
    QTest::newRow("task a string") << R"({"task": "vector_add"})" << "/task" << "expected the task as an object";
    QTest::newRow("no candidate") << R"({"candidate": null})" << "/" << R"(missing required key "candidate")";
    QTest::newRow("no cubin") << R"({"cubin": null})" << "/" << R"(missing required key "cubin")";
    QTest::newRow("cubin not base64") << R"({"cubin": "not base64!"})" << "/cubin" << "not valid base64";
    QTest::newRow("cubin with a line break") << R"({"cubin": "f0VM\nRg=="})" << "/cubin" << "not valid base64";
    QTest::newRow("cubin empty") << R"({"cubin": ""})" << "/cubin" << "not valid base64";
    QTest::newRow("cubin a number") << R"({"cubin": 7})" << "/cubin" << "expected a string";
    QTest::newRow("lowered_names an array") << R"({"lowered_names": ["x"]})" << "/lowered_names" << "expected an object";
    QTest::newRow("lowered name a number") << R"({"lowered_names": {"vector_add": 1}})" << "/lowered_names/vector_add"
                                           << "expected a string";
    QTest::newRow("compile option a number") << R"({"compile_options": ["-lineinfo", 1]})" << "/compile_options/1"
                                             << "expected a string";
    QTest::newRow("nvrtc a number") << R"({"nvrtc": 13})" << "/nvrtc" << "expected a string";
    QTest::newRow("no seeds key") << R"({"seeds": null})" << "/" << R"(missing required key "seeds")";
    QTest::newRow("seeds a string") << R"({"seeds": "0x1"})" << "/seeds" << "expected an array";
    QTest::newRow("seeds not strings") << R"({"seeds": [1, 2, 3]})" << "/seeds/0" << "expected a string, found an integer (1)";
    QTest::newRow("seed 0xZZ") << R"({"seeds": ["0xZZ", "0x2", "0x3"]})" << "/seeds/0" << R"(found "0xZZ")";
    QTest::newRow("seed 0xZZ second") << R"({"seeds": ["0x1", "0xZZ", "0x3"]})" << "/seeds/1" << R"(found "0xZZ")";
    QTest::newRow("seed of 17 digits") << R"({"seeds": ["0x1", "0x2", "0x11112222333344445"]})" << "/seeds/2"
                                       << "a seed is a hexadecimal string";
    QTest::newRow("no seeds") << R"({"seeds": []})" << "/seeds" << "give at least one seed";
    QTest::newRow("fewer seeds than trials") << R"({"seeds": ["0x1"]})" << "/seeds" << "3 trials but 1 seeds";
    QTest::newRow("trials 0") << R"({"trials": 0})" << "/trials" << "trials must be between 1 and 1000";
    QTest::newRow("trials 1001") << R"({"trials": 1001})" << "/trials" << "trials must be between 1 and 1000";
    QTest::newRow("trials a string") << R"({"trials": "3"})" << "/trials" << "expected an integer";
    QTest::newRow("shapes some") << R"({"shapes": "some"})" << "/shapes" << R"(expected "tests", "benchmarks" or "all")";
    QTest::newRow("only_shapes empty") << R"({"only_shapes": []})" << "/only_shapes" << "give between 1 and 256 shapes";
    QTest::newRow("only_shapes entry a number") << R"({"only_shapes": [7]})" << "/only_shapes/0" << "expected an object";
    QTest::newRow("only_shapes value a string") << R"({"only_shapes": [{"N": "7"}]})" << "/only_shapes/0/N"
                                                << "expected an integer";
    QTest::newRow("only_shapes label a number") << R"({"only_shapes": [{"label": 3, "N": 7}]})" << "/only_shapes/0/label"
                                                << "expected a string";
    QTest::newRow("held_out value a fraction") << R"({"held_out_shapes": [{"N": 1}, {"N": 1.5}]})"
                                               << "/held_out_shapes/1/N" << "expected an integer";
    QTest::newRow("set_name tests for verify") << R"({"only_shapes": [{"N": 7}], "set_name": "tests"})" << "/set_name"
                                               << R"(expected "custom", "repro" or "shrink")";
    QTest::newRow("first_trial -1") << R"({"first_trial": -1})" << "/first_trial" << "between 0 and 1000000";
    QTest::newRow("samples 0") << R"({"samples": 0})" << "/samples" << "samples must be between 1 and 1000";
    QTest::newRow("samples 1001") << R"({"samples": 1001})" << "/samples" << "samples must be between 1 and 1000";
    QTest::newRow("dump a string") << R"({"dump": "/tmp/kf-dump"})" << "/dump" << "expected an object";
    QTest::newRow("dump without dir") << R"({"dump": {}})" << "/dump" << R"(missing required key "dir")";
    QTest::newRow("dump.dir relative") << R"({"dump": {"dir": "cases"}})" << "/dump/dir" << "give an absolute folder path";
    QTest::newRow("dump.max_bytes -1") << R"({"dump": {"dir": "/tmp/d", "max_bytes": -1}})" << "/dump/max_bytes"
                                       << "max_bytes must be between 0 and 64 GiB";
    QTest::newRow("dump.max_bytes over 64 GiB") << R"({"dump": {"dir": "/tmp/d", "max_bytes": 68719476737}})"
                                                << "/dump/max_bytes" << "max_bytes must be between 0 and 64 GiB";
    QTest::newRow("dump.trials some") << R"({"dump": {"dir": "/tmp/d", "trials": "some"}})" << "/dump/trials"
                                      << R"(expected "first_failing" or "all_failing")";
    QTest::newRow("dump unknown key") << R"({"dump": {"dir": "/tmp/d", "keep": true}})" << "/dump/keep"
                                      << R"(unknown key "keep")";
    QTest::newRow("inputs_dir without only_shapes") << R"({"inputs_dir": "/tmp/in", "trials": 1})" << "/inputs_dir"
                                                    << "inputs_dir needs exactly one shape in only_shapes and trials 1";
    QTest::newRow("inputs_dir with two shapes")
        << R"({"inputs_dir": "/tmp/in", "trials": 1, "only_shapes": [{"N": 1}, {"N": 2}]})" << "/inputs_dir"
        << "inputs_dir needs exactly one shape in only_shapes and trials 1";
    QTest::newRow("inputs_dir with three trials") << R"({"inputs_dir": "/tmp/in", "only_shapes": [{"N": 1}]})"
                                                  << "/inputs_dir" << "inputs_dir needs exactly one shape";
    QTest::newRow("inputs_dir relative") << R"({"inputs_dir": "in", "trials": 1, "only_shapes": [{"N": 1}]})"
                                         << "/inputs_dir" << "give an absolute folder path";
    const std::string sha(64, 'a');
    auto staged = [&](const char* key, const std::string& value = std::string(64, 'a')) {
        return qs(json{{"task_dir", nullptr}, {"task_files", {{key, value}}}}.dump());
    };
    QTest::newRow("task_files ../x") << staged("../x") << "/task_files/..~1x" << "would leave its folder";
    QTest::newRow("task_files inner ..") << staged("include/../../x.h") << "/task_files/include~1..~1..~1x.h"
                                         << "would leave its folder";
    QTest::newRow("task_files absolute") << staged("/etc/passwd") << "/task_files/~1etc~1passwd" << "an absolute path";
    QTest::newRow("task_files empty component") << staged("include//a.h") << "/task_files/include~1~1a.h" << "empty component";
    QTest::newRow("task_files backslash") << staged("include\\a.h") << "/task_files/include\\a.h" << "backslash";
    QTest::newRow("task_files a control character") << staged("a\nb.cu") << "/task_files/a\nb.cu" << "control character";
    QTest::newRow("task_files dot") << staged("./naive.cu") << "/task_files/.~1naive.cu" << R"(a "." component)";
    QTest::newRow("task_files sha upper case") << staged("naive.cu", std::string(64, 'A')) << "/task_files/naive.cu"
                                               << "64 lowercase hex digits";
    QTest::newRow("task_files sha short") << staged("naive.cu", "abc") << "/task_files/naive.cu" << "64 lowercase hex digits";
    QTest::newRow("task_files sha a number") << R"({"task_dir": null, "task_files": {"naive.cu": 5}})" << "/task_files/naive.cu"
                                             << "expected a string";
    QTest::newRow("task_files an array") << R"({"task_dir": null, "task_files": ["naive.cu"]})" << "/task_files"
                                         << "expected an object";
    QTest::newRow("task_files and task_dir") << qs(json{{"task_dir", "/work/t"}, {"task_files", {{"naive.cu", sha}}}}.dump()) << "/task_files"
                                             << "give task_dir or task_files, not both";
    QTest::newRow("inputs_files without only_shapes") << qs(json{{"trials", 1}, {"inputs_files", {{"a.npy", sha}}}}.dump())
                                                      << "/inputs_files" << "inputs_files needs exactly one shape";
    QTest::newRow("inputs_files and inputs_dir")
        << qs(json{{"trials", 1}, {"only_shapes", {{{"N", 1}}}}, {"inputs_dir", "/tmp/in"}, {"inputs_files", {{"a.npy", sha}}}}.dump())
        << "/inputs_files" << "give inputs_dir or inputs_files, not both";
    QTest::newRow("inputs_files ..") << qs(json{{"trials", 1}, {"only_shapes", {{{"N", 1}}}}, {"inputs_files", {{"..", sha}}}}.dump())
                                     << "/inputs_files/.." << "would leave its folder";
    QTest::newRow("dump.stream a string") << R"({"dump": {"dir": "/tmp/d", "stream": "yes"}})" << "/dump/stream"
                                          << "expected true or false";
    QTest::newRow("launch_timeout_ms 0") << R"({"launch_timeout_ms": 0})" << "/launch_timeout_ms" << "must be positive";
    QTest::newRow("launch_timeout_ms a string") << R"({"launch_timeout_ms": "10s"})" << "/launch_timeout_ms"
                                                << "expected an integer";
    QTest::newRow("profile.baseline a string") << R"({"type": "profile", "profile": {"baseline": "yes"}})"
                                               << "/profile/baseline" << "expected true or false";
    QTest::newRow("profile unknown key") << R"({"type": "profile", "profile": {"kernels": 2}})" << "/profile/kernels"
                                         << R"(unknown key "kernels")";
    QTest::newRow("time_cap_ms -1") << R"({"time_cap_ms": -1})" << "/time_cap_ms" << "time_cap_ms must be positive";
    QTest::newRow("time_cap_ms 0") << R"({"time_cap_ms": 0})" << "/time_cap_ms" << "time_cap_ms must be positive";
    QTest::newRow("time_cap_ms a string") << R"({"time_cap_ms": "fast"})" << "/time_cap_ms" << "expected a number";
    QTest::newRow("max_samples below min_samples") << R"({"min_samples": 10, "max_samples": 5})" << "/max_samples"
                                                   << "need 1 <= min_samples <= max_samples <= 100000";
    QTest::newRow("target_spread 0") << R"({"target_spread": 0})" << "/target_spread" << "must be positive";
    QTest::newRow("recheck_fraction 1.5") << R"({"recheck_fraction": 1.5})" << "/recheck_fraction"
                                          << "between 0 and 1";
    QTest::newRow("warmup -1") << R"({"warmup": -1})" << "/warmup" << "warmup must be between 0 and 1000";
}

void TestProtocol::requestRefuses()
{
    QFETCH(QString, patch);
    QFETCH(QString, pointer);
    QFETCH(QString, says);
    json j = minimalRequest("verify");
    KF_VERIFY_OK(RunRequest::fromJson(j)); // the row's patch alone makes it wrong
    j.merge_patch(parsed(patch));
    const auto r = RunRequest::fromJson(j);
    QVERIFY2(!r.ok(), j.dump().c_str());
    QCOMPARE(qs(r.error().pointer), pointer);
    QVERIFY2(qs(r.error().why).contains(says), qPrintable(qs(r.error().why)));
    QCOMPARE(qs(r.error().what), QString("read the request"));
    QVERIFY(qs(r.error().hint).contains("docs/runner-protocol.md"));
}

void TestProtocol::seeds_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<quint64>("value");
    QTest::addColumn<QString>("written");
    QTest::newRow("0x9f3a") << "0x9f3a" << true << quint64(0x9f3a) << "0x9f3a";
    QTest::newRow("no prefix, upper case") << "9F3A" << true << quint64(0x9f3a) << "0x9f3a";
    QTest::newRow("0X prefix") << "0X1" << true << quint64(1) << "0x1";
    QTest::newRow("zero") << "0x0" << true << quint64(0) << "0x0";
    QTest::newRow("16 digits") << "0xffffffffffffffff" << true << quint64(0xffffffffffffffffull) << "0xffffffffffffffff";
    QTest::newRow("leading zeros") << "0x0000000000000001" << true << quint64(1) << "0x1";
    QTest::newRow("17 digits") << "0x11112222333344445" << false << quint64(0) << "";
    QTest::newRow("just the prefix") << "0x" << false << quint64(0) << "";
    QTest::newRow("empty") << "" << false << quint64(0) << "";
    QTest::newRow("0xZZ") << "0xZZ" << false << quint64(0) << "";
    QTest::newRow("negative") << "-1" << false << quint64(0) << "";
    QTest::newRow("leading blank") << " 0x1" << false << quint64(0) << "";
}

void TestProtocol::seeds()
{
    QFETCH(QString, text);
    QFETCH(bool, valid);
    QFETCH(quint64, value);
    QFETCH(QString, written);
    const auto s = parseSeed(text.toStdString());
    QCOMPARE(s.has_value(), valid);
    if (!valid)
        return;
    QCOMPARE(quint64(*s), value);
    QCOMPARE(qs(seedText(*s)), written);
    QCOMPARE(quint64(*parseSeed(seedText(*s))), value);
}

void TestProtocol::missingFeature_data()
{
    QTest::addColumn<QStringList>("uses");
    QTest::addColumn<QStringList>("features");
    QTest::addColumn<QString>("missing");
    const QStringList all{"dump", "inputs_dir", "only_shapes", "samples", "first_trial", "profile"};
    QTest::newRow("a plain verify needs nothing") << QStringList{} << QStringList{} << "";
    QTest::newRow("only_shapes") << QStringList{"only_shapes"} << QStringList{} << "only_shapes";
    QTest::newRow("only_shapes, listed") << QStringList{"only_shapes"} << QStringList{"only_shapes"} << "";
    QTest::newRow("first_trial") << QStringList{"first_trial"} << QStringList{"dump"} << "first_trial";
    QTest::newRow("samples") << QStringList{"samples"} << QStringList{"first_trial"} << "samples";
    QTest::newRow("dump") << QStringList{"dump"} << QStringList{"inputs_dir"} << "dump";
    QTest::newRow("inputs_dir after only_shapes") << QStringList{"only_shapes", "inputs_dir"}
                                                  << QStringList{"only_shapes"} << "inputs_dir";
    QTest::newRow("profile") << QStringList{"profile", "only_shapes"} << QStringList{"only_shapes"} << "profile";
    QTest::newRow("the first missing, in order") << QStringList{"dump", "samples"} << QStringList{} << "samples";
    QTest::newRow("task_files") << QStringList{"task_files"} << all << "stage";
    QTest::newRow("inputs_files") << QStringList{"only_shapes", "inputs_files"} << all << "stage";
    QTest::newRow("task_files, listed") << QStringList{"task_files"} << QStringList{"stage"} << "";
    QTest::newRow("a streamed dump") << QStringList{"dump", "dump_stream"} << (all + QStringList{"stage"}) << "dump_stream";
    QTest::newRow("a streamed dump, listed") << QStringList{"dump", "dump_stream"} << (all + QStringList{"dump_stream"}) << "";
    QTest::newRow("everything, all listed") << all << all << "";
}

void TestProtocol::missingFeature()
{
    QFETCH(QStringList, uses);
    QFETCH(QStringList, features);
    QFETCH(QString, missing);
    RunRequest r;
    r.seeds = {1};
    r.trials = 1;
    for (const QString& u : uses) {
        if (u == "only_shapes")
            r.onlyShapes = {binding("", {{"N", 7}})};
        else if (u == "first_trial")
            r.firstTrial = 2;
        else if (u == "samples")
            r.samples = 20;
        else if (u == "dump")
            r.dump = DumpSettings{"/tmp/kf-dump"};
        else if (u == "inputs_dir")
            r.inputsDir = "/tmp/kf-case/inputs";
        else if (u == "profile")
            r.kind = RunKind::Profile;
        else if (u == "task_files")
            r.taskFiles = {{"naive.cu", std::string(64, 'a')}};
        else if (u == "inputs_files")
            r.inputsFiles = {{"a.npy", std::string(64, 'a')}};
        else if (u == "dump_stream")
            r.dump->stream = true;
    }
    QCOMPARE(qs(r.missingFeature(strings(features))), missing);
}

// ---- reports ----------------------------------------------------------------------------------

void TestProtocol::verifyReportRoundTrips()
{
    const VerifyReport r = verifyReport();
    const json j = r.toJson();
    const auto back = VerifyReport::fromJson(overTheWire(j));
    KF_VERIFY_OK(back);
    QVERIFY2(back->toJson() == j, back->toJson().dump().c_str());

    const Header& h = back->header;
    QCOMPARE(h.schemaVersion, 1);
    QCOMPARE(int(h.kind), int(ReportKind::Correctness));
    QCOMPARE(qs(h.verdict), QString("fail"));
    QCOMPARE(qs(h.summary), QString("1 of 1 shapes failed"));
    QCOMPARE(qs(h.task.name), QString("vector_add"));
    QCOMPARE(qs(h.task.hash), QString("7d793037a0760186574b0282f2f435e7"));
    QCOMPARE(qs(h.candidate.file), QString("naive.cu"));
    QCOMPARE(qs(h.candidate.arch), QString("sm_90"));
    QCOMPARE(qsl(h.candidate.compileOptions), (QStringList{"--gpu-architecture=sm_90", "-lineinfo"}));
    QCOMPARE(qs(h.candidate.loweredNames.at("vector_add")), QString("_Z10vector_addPKfS0_Pfl"));
    QCOMPARE(qs(h.environment.gpu), QString("NVIDIA H100 80GB HBM3"));
    QCOMPARE(h.environment.smCount, std::int64_t(132));
    QCOMPARE(h.environment.peakBandwidthGbs, 3352.3);
    QCOMPARE(qs(h.startedAt), QString("2026-11-22T05:10:00Z"));
    QCOMPARE(h.durationMs, 812.5);
    QVERIFY(!h.error.has_value());
    QCOMPARE(qs(h.mode), QString("tests"));
    QCOMPARE(qs(h.inputs), QString("seeded"));
    QCOMPARE(qs(h.dumpDir), QString("/tmp/kf-dump"));
    QCOMPARE(qsl(h.seeds), (QStringList{"0x9f3a", "0x9f3b"}));
    QCOMPARE(h.editToVerdict.size(), std::size_t(1));
    QCOMPARE(h.editToVerdict[0].runnerMs, 690.25);
    QCOMPARE(qs(h.editToVerdict[0].verdict), QString("fail"));

    QCOMPARE(back->trialsPerShape, std::int64_t(2));
    QVERIFY(back->discriminates.has_value() && *back->discriminates);
    QCOMPARE(back->phaseMs.size(), std::size_t(4));
    QCOMPARE(back->phaseMs.at("reference"), 3.25);

    QCOMPARE(back->shapes.size(), std::size_t(1));
    const CorrectnessShape& s = back->shapes[0];
    QVERIFY((s.id.dims == std::vector<std::pair<std::string, std::int64_t>>{{"N", 4099}}));
    QCOMPARE(qs(s.id.label), QString("tail"));
    QCOMPARE(qs(s.id.set), QString("tests"));
    QCOMPARE(s.passed, false);
    QCOMPARE(s.negativeControl.size(), std::size_t(1));
    QCOMPARE(s.negativeControl[0].constant, 0.5);
    QVERIFY(s.negativeControl[0].discriminates());
    QCOMPARE(s.trials.size(), std::size_t(2));
    QCOMPARE(s.trials[0].passed, true);
    QCOMPARE(qs(s.trials[0].distributions.at("b")), QString("uniform"));
    const Trial& t = s.trials[1];
    QCOMPARE(t.trial, std::int64_t(1));
    QCOMPARE(t.passed, false);
    QCOMPARE(qs(t.failure), qs(r.shapes[0].trials[1].failure));
    QCOMPARE(t.guardViolations.size(), std::size_t(1));
    QCOMPARE(t.guardViolations[0].offsetBytes, std::int64_t(16));
    QCOMPARE(qs(t.caseDir), QString("01-tail-N4099-t1"));
    QCOMPARE(t.outputs.size(), std::size_t(1));
    const OutputCheck& o = t.outputs[0];
    QCOMPARE(o.mismatches, std::int64_t(1));
    QCOMPARE(o.mismatchFraction, 1.0 / 4099);
    QCOMPARE(o.maxAbsError, 0.31);
    QCOMPARE(o.firstMismatches.size(), std::size_t(1));
    QCOMPARE(o.firstMismatches[0].index, (std::vector<std::int64_t>{4098}));
    QCOMPARE(o.firstMismatches[0].actual, 0.19);
    QCOMPARE(o.histogram.bins[20], std::int64_t(1));
    QCOMPARE(o.histogram.exact, std::int64_t(4098));
    QCOMPARE(o.columns.perEntry, std::int64_t(17));
    QCOMPARE(o.columns.maxRatio.size(), std::size_t(2));
    QVERIFY(std::isinf(o.columns.maxRatio[1]));
    QCOMPARE(o.rows.count, std::int64_t(0));
    QVERIFY(o.golden.available);
    QCOMPARE(o.golden.libtorchRmsError, 5e-8);
    QCOMPARE(o.golden.ratio(), 0.0048 / 5e-8);
}

void TestProtocol::benchReportRoundTrips()
{
    const BenchReport r = benchReport();
    const json j = r.toJson();
    const auto back = BenchReport::fromJson(overTheWire(j));
    KF_VERIFY_OK(back);
    QVERIFY2(back->toJson() == j, back->toJson().dump().c_str());

    QCOMPARE(int(back->header.kind), int(ReportKind::Performance));
    QCOMPARE(qs(back->header.environment.gpu), QString("NVIDIA H100 80GB HBM3"));
    QVERIFY(sameNumber(back->geomeanSpeedup, 1.26));
    QVERIFY(back->allShapesAtLeast1x.has_value());
    QCOMPARE(*back->allShapesAtLeast1x, false);
    QCOMPARE(back->shapes.size(), std::size_t(2));

    const BenchShape& full = back->shapes[0];
    QCOMPARE(qs(full.id.label), QString("64M"));
    QVERIFY(sameNumber(full.candidate.medianMs, 0.081));
    QVERIFY(sameNumber(full.candidate.iqrMs, 0.002));
    QCOMPARE(full.candidate.samples, std::int64_t(120));
    QVERIFY(sameNumber(full.baseline.medianMs, 0.102));
    QVERIFY(sameNumber(full.speedup, 1.26));
    QCOMPARE(full.bytes, 805306368.0);
    QVERIFY(sameNumber(full.rooflineFloorMs, 0.02));
    QCOMPARE(full.recheck.checked, std::int64_t(6));
    QVERIFY(full.recheck.passed.has_value() && *full.recheck.passed);
    QVERIFY(sameNumber(full.wallGapPct, 3.1));
    QCOMPARE(qs(full.stoppedBy), QString("spread"));
    QVERIFY(sameNumber(full.wallMs, 412.0));
    QCOMPARE(full.phaseMs.at("rechecks"), 12.0);
    QCOMPARE(qsl(full.flags), QStringList{"event/wall gap 40%"});
    QVERIFY(full.trustworthy());

    const BenchShape& sparse = back->shapes[1];
    QVERIFY(sameNumber(sparse.candidate.medianMs, 0.3));
    QVERIFY(!sparse.candidate.minMs.has_value());
    QVERIFY(!sparse.baseline.medianMs.has_value());
    QCOMPARE(sparse.baseline.samples, std::int64_t(0));
    QVERIFY(!sparse.speedup.has_value());
    QVERIFY(!sparse.achievedGbs.has_value());
    QVERIFY(!sparse.recheck.passed.has_value());
    QCOMPARE(sparse.belowFloor, true);
    QCOMPARE(sparse.unstable, true);
    QVERIFY(!sparse.wallMs.has_value());
    QVERIFY(sparse.phaseMs.empty());
    QVERIFY(!sparse.trustworthy());
}

void TestProtocol::errorReportRoundTrips()
{
    VerifyReport r;
    r.header = headerOf(ReportKind::Correctness, "error");
    r.header.summary = "the run could not be done";
    r.header.error = Error::failed("run verify", "no GPU: no CUDA device", "run verify on a machine with an NVIDIA GPU");
    const auto back = VerifyReport::fromJson(overTheWire(r.toJson()));
    KF_VERIFY_OK(back);
    QVERIFY(back->header.isError());
    QVERIFY(back->header.error.has_value());
    QCOMPARE(qs(back->header.error->what), QString("run verify"));
    QCOMPARE(qs(back->header.errorSentence()), QString("no GPU: no CUDA device"));
    QCOMPARE(qs(back->header.errorLine()), QString("ERROR: no GPU: no CUDA device (run verify on a machine with an NVIDIA GPU)"));
    QVERIFY(back->shapes.empty());

    // Without an error object the summary explains the verdict.
    r.header.error.reset();
    QCOMPARE(qs(r.header.errorSentence()), QString("the run could not be done"));
    QCOMPARE(qs(r.header.errorLine()), QString("ERROR: the run could not be done"));
}

void TestProtocol::reportRefusesWrongTypes_data()
{
    QTest::addColumn<QString>("kind");     // the fixture and reader: correctness or performance
    QTest::addColumn<QString>("at");       // where the row's value is written
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("pointer");  // where the error says the problem is
    QTest::addColumn<QString>("says");
    const QString out = "/shapes/0/trials/1/outputs/0";
    auto same = [](const char* name, const char* kind, const QString& at, const char* value, const char* says) {
        QTest::newRow(name) << kind << at << value << at << says;
    };
    same("max_abs_error an object", "correctness", out + "/max_abs_error", "{}",
         R"(expected a number (or "nan", "inf", "-inf"), found an object)");
    same("max_abs_error \"NaN\"", "correctness", out + "/max_abs_error", R"("NaN")", R"(found a string ("NaN"))");
    same("a dim a string", "correctness", "/shapes/0/shape/N", R"("4099")", "expected an integer, found a string");
    same("a dim a fraction", "correctness", "/shapes/0/shape/N", "4099.5", "expected an integer, found a number");
    same("schema_version 2", "correctness", "/schema_version", "2", "reads report schema version 1, not 2");
    same("kind weird", "correctness", "/kind", R"("weird")", R"(found "weird")");
    same("kind missing", "correctness", "/kind", "null", R"(found "")");
    same("kind of another report", "correctness", "/kind", R"("performance")",
         "expected a correctness report, found a performance report");
    same("shapes an object", "correctness", "/shapes", "{}", "expected an array");
    same("a shape an array", "correctness", "/shapes/0", "[]", "expected an object");
    same("seed a number", "correctness", "/shapes/0/trials/0/seed", "7", "expected a string");
    same("passed a string", "correctness", "/shapes/0/trials/1/passed", R"("false")", "expected true or false");
    same("offset_bytes a string", "correctness", "/shapes/0/trials/1/guard_violations/0/offset_bytes", R"("16")",
         "expected an integer");
    same("distribution a number", "correctness", "/shapes/0/trials/0/distributions/a", "3", "expected a string");
    same("mismatch index a string", "correctness", out + "/first_mismatches/0/index/0", R"("4098")", "expected an integer");
    same("golden.available a number", "correctness", out + "/golden/available", "1", "expected true or false");
    same("histogram of 2 bins", "correctness", out + "/error_histogram/bins", "[1, 2]", "expected 32 bins, found 2");
    same("negative control constant", "correctness", "/shapes/0/negative_control/0/constant", R"("half")",
         "expected a number");
    same("lowered name a number", "correctness", "/candidate/lowered_names/vector_add", "1", "expected a string");
    same("compile option true", "correctness", "/candidate/compile_options/0", "true", "expected a string");
    same("sm_count a string", "correctness", "/environment/sm_count", R"("132")", "expected an integer");
    same("task a string", "correctness", "/task", R"("vector_add")", "expected an object");
    same("error a string", "correctness", "/error", R"("boom")", "expected an object");
    same("total_ms an array", "correctness", "/edit_to_verdict/0/total_ms", "[]", "expected a number");
    same("phase a boolean", "correctness", "/phase_ms/reference", "true", "expected a number");
    same("discriminates a string", "correctness", "/discriminates", R"("yes")", "expected true or false");
    same("trials_per_shape a fraction", "correctness", "/trials_per_shape", "2.5", "expected an integer");
    QTest::newRow("an unwritten index a string") << "correctness" << out + "/first_unwritten" << R"([[1, "x"]])"
                                                 << out + "/first_unwritten/0/1" << "expected an integer";
    QTest::newRow("axis summary lengths differ") << "correctness" << out + "/col_summary/mismatches" << "[0]"
                                                 << out + "/col_summary" << "must have the same length";

    same("median_ms a word", "performance", "/shapes/0/candidate/median_ms", R"("fast")", "expected a number");
    same("samples a fraction", "performance", "/shapes/0/baseline/samples", "1.5", "expected an integer");
    same("recheck.passed a string", "performance", "/shapes/0/recheck/passed", R"("yes")", "expected true or false");
    same("recheck an array", "performance", "/shapes/0/recheck", "[]", "expected an object");
    same("a flag a number", "performance", "/shapes/0/flags/0", "3", "expected a string");
    same("a phase a word", "performance", "/shapes/0/phase_ms/setup", R"("x")", "expected a number");
    same("geomean an array", "performance", "/geomean_speedup", "[]", "expected a number");
    same("all_shapes_at_least_1x a number", "performance", "/all_shapes_at_least_1x", "0", "expected true or false");
    same("below_floor a string", "performance", "/shapes/0/below_floor", R"("no")", "expected true or false");
    same("kind of a correctness report", "performance", "/kind", R"("correctness")",
         "expected a performance report, found a correctness report");
    same("kind weird (performance)", "performance", "/kind", R"("weird")", R"(found "weird")");
    same("schema_version a string", "performance", "/schema_version", R"("1")", "expected an integer");
    same("schema_version 2 (performance)", "performance", "/schema_version", "2", "schema version 1, not 2");
}

void TestProtocol::reportRefusesWrongTypes()
{
    QFETCH(QString, kind);
    QFETCH(QString, at);
    QFETCH(QString, value);
    QFETCH(QString, pointer);
    QFETCH(QString, says);
    const bool correctness = kind == "correctness";
    json j = overTheWire(correctness ? verifyReport().toJson() : benchReport().toJson());
    j[json::json_pointer(at.toStdString())] = parsed(value);
    Error e;
    if (correctness) {
        const auto r = VerifyReport::fromJson(j);
        QVERIFY2(!r.ok(), j.dump().c_str());
        e = r.error();
    } else {
        const auto r = BenchReport::fromJson(j);
        QVERIFY2(!r.ok(), j.dump().c_str());
        e = r.error();
    }
    QCOMPARE(qs(e.pointer), pointer);
    QVERIFY2(qs(e.why).contains(says), qPrintable(qs(e.why)));
    QCOMPARE(qs(e.what), correctness ? QString("read a correctness report") : QString("read a performance report"));
    QVERIFY(qs(e.hint).contains("docs/report-schema.md"));
    // RunReport reads the same JSON the same way, unless the row made it a valid report of the
    // other kind (then RunReport reads it as that kind, leniently).
    if (at == "/kind" && (value == R"("performance")" || value == R"("correctness")"))
        return;
    const auto any = RunReport::fromJson(j, "report.json");
    QVERIFY(!any.ok());
    QCOMPARE(qs(any.error().pointer), pointer);
    QCOMPARE(qs(any.error().file), QString("report.json"));
}

void TestProtocol::reportReadsNonFiniteStrings()
{
    json v = overTheWire(verifyReport().toJson());
    const std::string out = "/shapes/0/trials/1/outputs/0";
    v[json::json_pointer(out + "/max_abs_error")] = "nan";
    v[json::json_pointer(out + "/max_rel_error")] = "inf";
    v[json::json_pointer(out + "/first_mismatches/0/actual")] = "nan";
    v[json::json_pointer("/duration_ms")] = "-inf";
    v[json::json_pointer("/phase_ms/compare")] = "inf";
    const auto r = VerifyReport::fromJson(v);
    KF_VERIFY_OK(r);
    const OutputCheck& o = r->shapes[0].trials[1].outputs[0];
    QVERIFY(std::isnan(o.maxAbsError));
    QVERIFY(std::isinf(o.maxRelError) && o.maxRelError > 0);
    QVERIFY(std::isnan(o.firstMismatches[0].actual));
    QVERIFY(std::isinf(r->header.durationMs) && r->header.durationMs < 0);
    QVERIFY(std::isinf(r->phaseMs.at("compare")));
    // The worst error of the shape is then NaN.
    const ShapeSummary sum = r->shapes[0].summary();
    QVERIFY(sum.maxAbsError && std::isnan(*sum.maxAbsError));

    json b = overTheWire(benchReport().toJson());
    b[json::json_pointer("/shapes/0/speedup")] = "inf";
    b[json::json_pointer("/shapes/0/candidate/min_ms")] = "-inf";
    b[json::json_pointer("/geomean_speedup")] = "nan";
    const auto br = BenchReport::fromJson(b);
    KF_VERIFY_OK(br);
    QVERIFY(br->shapes[0].speedup && std::isinf(*br->shapes[0].speedup) && *br->shapes[0].speedup > 0);
    QVERIFY(br->shapes[0].candidate.minMs && std::isinf(*br->shapes[0].candidate.minMs) && *br->shapes[0].candidate.minMs < 0);
    QVERIFY(br->geomeanSpeedup && std::isnan(*br->geomeanSpeedup));

    // Written non-finite, read back non-finite: a bench report's optional numbers go out as strings.
    BenchReport nonFinite = benchReport();
    nonFinite.shapes[0].wallGapPct = kNaN;
    nonFinite.shapes[0].speedup = kInf;
    const json written = overTheWire(nonFinite.toJson());
    QCOMPARE(qs(written.at("shapes").at(0).at("wall_gap_pct").get<std::string>()), QString("nan"));
    const auto nb = BenchReport::fromJson(written);
    KF_VERIFY_OK(nb);
    QVERIFY(nb->shapes[0].wallGapPct && std::isnan(*nb->shapes[0].wallGapPct));
    QVERIFY(nb->shapes[0].speedup && std::isinf(*nb->shapes[0].speedup));
}

void TestProtocol::reportIgnoresUnknownKeys()
{
    const json original = verifyReport().toJson();
    json v = overTheWire(original);
    v["future_top"] = {{"a", 1}};
    v["environment"]["future"] = 1;
    v["shapes"][0]["future"] = "x";
    v["shapes"][0]["trials"][1]["future"] = nullptr;
    v["shapes"][0]["trials"][1]["outputs"][0]["future"] = {1, 2};
    v["shapes"][0]["trials"][1]["outputs"][0]["golden"]["future"] = json::object();
    const auto r = VerifyReport::fromJson(v);
    KF_VERIFY_OK(r);
    QVERIFY2(r->toJson() == original, r->toJson().dump().c_str());

    const json bench = benchReport().toJson();
    json b = overTheWire(bench);
    b["shapes"][0]["candidate"]["p99_ms"] = 0.1;
    b["shapes"][0]["recheck"]["future"] = 1;
    b["future"] = "x";
    const auto br = BenchReport::fromJson(b);
    KF_VERIFY_OK(br);
    QVERIFY2(br->toJson() == bench, br->toJson().dump().c_str());
}

void TestProtocol::reportFieldsDefault()
{
    // Missing fields (and nulls) take their defaults; only the kind and the verdict must be there.
    const auto r = VerifyReport::fromJson(json::parse(R"({"kind": "correctness", "verdict": "fail", "trials_per_shape": null,
        "shapes": [{"shape": {"N": 1}, "trials": [{"trial": 3, "outputs": [{"output": "y"}]}],
                    "negative_control": [{"output": "y"}]}]})"));
    KF_VERIFY_OK(r);
    QCOMPARE(r->header.schemaVersion, kReportSchemaVersion);
    QCOMPARE(qs(r->header.verdict), QString("fail"));
    QCOMPARE(r->trialsPerShape, std::int64_t(0));
    QVERIFY(!r->discriminates.has_value());
    QVERIFY(r->phaseMs.empty());
    QCOMPARE(r->shapes.size(), std::size_t(1));
    const CorrectnessShape& s = r->shapes[0];
    QCOMPARE(qs(s.id.text(true)), QString("N=1"));
    QCOMPARE(s.negativeControl[0].constantApplicable, true);
    const Trial& t = s.trials[0];
    QCOMPARE(t.trial, std::int64_t(3));
    QCOMPARE(t.passed, false);
    QCOMPARE(t.runsAgree, true);
    QCOMPARE(t.outputs[0].rows.perEntry, std::int64_t(1));
    QCOMPARE(t.outputs[0].golden.available, false);

    const auto b = BenchReport::fromJson(json::parse(R"({"kind": "performance", "verdict": "ok", "shapes": [{}]})"));
    KF_VERIFY_OK(b);
    QVERIFY(!b->geomeanSpeedup.has_value());
    QCOMPARE(b->shapes.size(), std::size_t(1));
    QVERIFY(!b->shapes[0].candidate.medianMs.has_value());
    QVERIFY(!b->shapes[0].recheck.passed.has_value());
    QVERIFY(b->shapes[0].trustworthy());
    QVERIFY(b->shapes[0].allFlags().empty());
}

void TestProtocol::headerAndShapeText()
{
    ShapeId id;
    id.dims = {{"B", 7}, {"D", 4099}};
    id.label = "tail";
    id.set = "tests";
    QCOMPARE(qs(id.dimsText()), QString("B=7 D=4099"));
    QCOMPARE(qs(id.text(false)), QString("tail (B=7 D=4099)"));
    QCOMPARE(qs(id.text(true)), QString("tail (B=7 D=4099) [tests]"));
    QCOMPARE(id.size(), 28693.0);
    QVERIFY(id.sameDims({{"B", 7}, {"D", 4099}}));
    QVERIFY(!id.sameDims({{"B", 7}}));
    QVERIFY(!id.sameDims({{"B", 7}, {"D", 4098}}));
    id.label.clear();
    QCOMPARE(qs(id.text(false)), QString("B=7 D=4099"));
    QCOMPARE(ShapeId{}.size(), 1.0);

    const Header h = headerOf(ReportKind::Correctness, "pass");
    QCOMPARE(qs(h.title()), QString("vector_add/naive.cu [sm_90] — correctness on NVIDIA H100 80GB HBM3"));
    QCOMPARE(QString(reportKindName(ReportKind::Performance)), QString("performance"));
    QCOMPARE(QString(runKindName(RunKind::Profile)), QString("profile"));
}

void TestProtocol::shapeSummary()
{
    OutputCheck y0;
    y0.output = "y";
    y0.passed = true;
    y0.maxAbsError = 0.1;
    y0.maxRelError = 0.2;
    y0.elements = 100;
    y0.golden = golden(0, 1, 0, 2);           // ratio 0.5
    OutputCheck z0;
    z0.output = "z";
    z0.passed = true;
    z0.maxAbsError = 0.3;
    z0.maxRelError = 0.05;
    z0.elements = 50;
    z0.golden.note = "integer output";
    Trial t0;
    t0.trial = 4;
    t0.passed = true;
    t0.outputs = {y0, z0};

    OutputCheck y1 = y0;
    y1.passed = false;
    y1.maxAbsError = kNaN;                    // NaN wins over 0.3 before and 0.2 after it
    y1.maxRelError = 0.4;
    y1.mismatches = 3;
    y1.unwritten = 2;
    y1.golden = golden(0, 3, 0, 2);           // ratio 1.5, the worst
    OutputCheck z1 = z0;
    z1.maxAbsError = 0.2;
    z1.mismatches = 1;
    z1.unwritten = 1;
    z1.golden.note = "the reference refused .double()"; // the first note is kept
    Trial t1;
    t1.trial = 5;
    t1.passed = false;
    t1.failure = "y: 3 of 100 elements outside tolerance";
    t1.outputs = {y1, z1};

    Trial t2;
    t2.trial = 6;
    t2.passed = false;
    t2.launchError = "an illegal memory access was encountered";

    CorrectnessShape s;
    s.passed = false;
    s.trials = {t0, t1, t2};
    const ShapeSummary sum = s.summary();
    QCOMPARE(sum.passed, false);
    QCOMPARE(sum.trials, 3);
    QVERIFY2(sum.maxAbsError && std::isnan(*sum.maxAbsError), qPrintable(numberText(sum.maxAbsError)));
    QVERIFY2(sameNumber(sum.maxRelError, 0.4), qPrintable(numberText(sum.maxRelError)));
    QVERIFY2(sameNumber(sum.errorRatio, 1.5), qPrintable(numberText(sum.errorRatio)));
    QCOMPARE(qs(sum.goldenNote), QString("integer output"));
    QCOMPARE(sum.mismatches, std::int64_t(4));
    QCOMPARE(sum.elements, std::int64_t(300));
    QCOMPARE(sum.unwritten, std::int64_t(3));
    QCOMPARE(qs(sum.firstFailure), QString("trial 5: y: 3 of 100 elements outside tolerance"));
    QVERIFY(s.firstFailingTrial() == &s.trials[1]);

    s.passed = true;
    s.trials = {t0};
    const ShapeSummary passing = s.summary();
    QCOMPARE(passing.passed, true);
    QCOMPARE(qs(passing.firstFailure), QString());
    QVERIFY(sameNumber(passing.maxAbsError, 0.3));
    QVERIFY(s.firstFailingTrial() == nullptr);
}

void TestProtocol::worstErrorNaNWins_data()
{
    QTest::addColumn<QVector<double>>("errors"); // one trial of one output each
    QTest::addColumn<double>("worst");           // -1: none
    QTest::newRow("the largest") << QVector<double>{0.1, 0.3, 0.2} << 0.3;
    QTest::newRow("NaN first") << QVector<double>{kNaN, 0.5} << kNaN;
    QTest::newRow("NaN last") << QVector<double>{0.5, kNaN} << kNaN;
    QTest::newRow("NaN beats inf") << QVector<double>{kInf, kNaN, 1.0} << kNaN;
    QTest::newRow("inf") << QVector<double>{1.0, kInf, 2.0} << kInf;
    QTest::newRow("zero") << QVector<double>{0.0} << 0.0;
    QTest::newRow("no trials") << QVector<double>{} << -1.0;
}

void TestProtocol::worstErrorNaNWins()
{
    QFETCH(QVector<double>, errors);
    QFETCH(double, worst);
    CorrectnessShape s;
    std::int64_t n = 0;
    for (double e : errors) {
        OutputCheck o;
        o.output = "y";
        o.maxAbsError = e;
        o.maxRelError = e;
        o.golden = golden(0, e, 0, 1); // ratio e
        Trial t;
        t.trial = n++;
        t.passed = true;
        t.outputs = {o};
        s.trials.push_back(t);
    }
    const ShapeSummary sum = s.summary();
    const std::optional<double> want = worst == -1.0 ? std::nullopt : std::optional<double>(worst);
    QVERIFY2(sameNumber(sum.maxAbsError, want), qPrintable(numberText(sum.maxAbsError)));
    QVERIFY2(sameNumber(sum.maxRelError, want), qPrintable(numberText(sum.maxRelError)));
    QVERIFY2(sameNumber(sum.errorRatio, want), qPrintable(numberText(sum.errorRatio)));
    QCOMPARE(sum.trials, int(errors.size()));
}

void TestProtocol::summaryWithoutGolden()
{
    OutputCheck o;
    o.output = "idx";
    o.elements = 10;
    o.golden.note = "integer output";
    Trial t;
    t.trial = 0;
    t.passed = true;
    t.outputs = {o, o};
    CorrectnessShape s;
    s.passed = true;
    s.trials = {t};
    const ShapeSummary sum = s.summary();
    QVERIFY(!sum.errorRatio.has_value());
    QCOMPARE(qs(sum.goldenNote), QString("integer output"));
    QCOMPARE(sum.elements, std::int64_t(20));
}

void TestProtocol::firstFailure_data()
{
    QTest::addColumn<QString>("failure");
    QTest::addColumn<QString>("launchError");
    QTest::addColumn<QString>("first");
    QTest::newRow("the failure") << "y: 1 of 4 elements outside tolerance" << "an illegal memory access"
                                 << "trial 2: y: 1 of 4 elements outside tolerance";
    QTest::newRow("the launch error") << "" << "an illegal memory access" << "trial 2: an illegal memory access";
    QTest::newRow("neither") << "" << "" << "trial 2: failed";
}

void TestProtocol::firstFailure()
{
    QFETCH(QString, failure);
    QFETCH(QString, launchError);
    QFETCH(QString, first);
    Trial passing;
    passing.trial = 1;
    passing.passed = true;
    passing.failure = "ignored: this trial passed";
    Trial t;
    t.trial = 2;
    t.failure = failure.toStdString();
    t.launchError = launchError.toStdString();
    Trial later = t;
    later.trial = 3;
    later.failure = "not the first";
    CorrectnessShape s;
    s.trials = {passing, t, later};
    QCOMPARE(qs(s.summary().firstFailure), first);
    QCOMPARE(qs(t.why()), first.mid(QString("trial 2: ").size()));
}

void TestProtocol::goldenRatio_data()
{
    QTest::addColumn<double>("candidateRms");
    QTest::addColumn<double>("libtorchRms");
    QTest::addColumn<double>("ratio");
    QTest::newRow("better than LibTorch") << 0.4 << 1.0 << 0.4;
    QTest::newRow("worse") << 3.0 << 2.0 << 1.5;
    QTest::newRow("both exact") << 0.0 << 0.0 << 1.0;
    QTest::newRow("only LibTorch exact") << 1e-7 << 0.0 << kInf;
    QTest::newRow("only the candidate exact") << 0.0 << 1e-7 << 0.0;
}

void TestProtocol::goldenRatio()
{
    QFETCH(double, candidateRms);
    QFETCH(double, libtorchRms);
    QFETCH(double, ratio);
    QCOMPARE(golden(0, candidateRms, 0, libtorchRms).ratio(), ratio);
}

void TestProtocol::trialEvidence_data()
{
    QTest::addColumn<QStringList>("tags");
    QTest::addColumn<QStringList>("lines");
    const QString mismatch = "y[6, %1]: expected 0.5, got 0.19 (abs error 0.31, rel error 0.62)";
    QTest::newRow("a passing trial") << QStringList{} << QStringList{};
    QTest::newRow("a launch error") << QStringList{"launch error"}
                                    << QStringList{"launch error: an illegal memory access was encountered"};
    QTest::newRow("a guard violation") << QStringList{"guard violation"}
                                       << QStringList{"out-of-bounds write: y, after the buffer, at byte offset 16"};
    QTest::newRow("modified inputs") << QStringList{"modified inputs"}
                                     << QStringList{"inputs modified by the candidate: x, w"};
    QTest::newRow("6 mismatches: 5 shown") << QStringList{"6 mismatches"}
                                           << QStringList{mismatch.arg(0), mismatch.arg(1), mismatch.arg(2),
                                                          mismatch.arg(3), mismatch.arg(4)};
    QTest::newRow("a NaN mismatch") << QStringList{"NaN mismatch"}
                                    << QStringList{"y[0]: expected 1, got nan (abs error inf, rel error inf)"};
    QTest::newRow("unwritten indices") << QStringList{"2 unwritten"}
                                       << QStringList{"y: never written at [1, 3], [1, 4]"};
    QTest::newRow("6 unwritten: 5 shown") << QStringList{"6 unwritten"}
                                          << QStringList{"y: never written at [0], [1], [2], [3], [4], …"};
    QTest::newRow("runs disagreeing") << QStringList{"runs disagree"}
                                      << QStringList{"two runs of the candidate disagreed on 3 element(s) (max difference 0.25)"};
    QTest::newRow("everything, in order")
        << QStringList{"runs disagree", "2 unwritten", "NaN mismatch", "modified inputs", "guard violation", "launch error"}
        << QStringList{"launch error: an illegal memory access was encountered",
                       "out-of-bounds write: y, after the buffer, at byte offset 16",
                       "inputs modified by the candidate: x, w",
                       "y[0]: expected 1, got nan (abs error inf, rel error inf)",
                       "y: never written at [1, 3], [1, 4]",
                       "two runs of the candidate disagreed on 3 element(s) (max difference 0.25)"};
}

void TestProtocol::trialEvidence()
{
    QFETCH(QStringList, tags);
    QFETCH(QStringList, lines);
    QCOMPARE(qsl(trialWith(tags).evidence()), lines);
}

void TestProtocol::benchFlags_data()
{
    QTest::addColumn<QStringList>("flags");
    QTest::addColumn<bool>("belowFloor");
    QTest::addColumn<int>("recheck");   // -1: not run, 0: failed, 1: passed
    QTest::addColumn<QString>("failure");
    QTest::addColumn<QStringList>("all");
    QTest::addColumn<bool>("trustworthy");
    QTest::newRow("clean") << QStringList{} << false << 1 << "" << QStringList{} << true;
    QTest::newRow("no re-check run") << QStringList{} << false << -1 << "" << QStringList{} << true;
    QTest::newRow("the runner's flags alone") << QStringList{"event/wall gap 40%"} << false << 1 << ""
                                              << QStringList{"event/wall gap 40%"} << true;
    QTest::newRow("below the floor") << QStringList{} << true << 1 << "" << QStringList{"below roofline floor"} << false;
    QTest::newRow("below the floor, flagged already") << QStringList{"below roofline floor"} << true << 1 << ""
                                                      << QStringList{"below roofline floor"} << false;
    QTest::newRow("re-check failed") << QStringList{} << false << 0 << "why" << QStringList{"re-check failed: why"} << false;
    QTest::newRow("re-check failed, no reason") << QStringList{} << false << 0 << "" << QStringList{"re-check failed"}
                                                << false;
    QTest::newRow("re-check failed, flagged already") << QStringList{"re-check failed: why"} << false << 0 << "why"
                                                      << QStringList{"re-check failed: why"} << false;
    QTest::newRow("both after the runner's")
        << QStringList{"unstable: time cap reached"} << true << 0 << "why"
        << QStringList{"unstable: time cap reached", "below roofline floor", "re-check failed: why"} << false;
}

void TestProtocol::benchFlags()
{
    QFETCH(QStringList, flags);
    QFETCH(bool, belowFloor);
    QFETCH(int, recheck);
    QFETCH(QString, failure);
    QFETCH(QStringList, all);
    QFETCH(bool, trustworthy);
    BenchShape s;
    s.flags = strings(flags);
    s.belowFloor = belowFloor;
    if (recheck >= 0)
        s.recheck.passed = recheck == 1;
    s.recheck.failure = failure.toStdString();
    QCOMPARE(qsl(s.allFlags()), all);
    QCOMPARE(s.trustworthy(), trustworthy);
    QCOMPARE(qsl(s.flags), flags); // allFlags() adds to a copy
}

void TestProtocol::runReportPicksKind_data()
{
    QTest::addColumn<QString>("which");
    QTest::addColumn<int>("kind");
    QTest::newRow("correctness") << "correctness" << int(ReportKind::Correctness);
    QTest::newRow("performance") << "performance" << int(ReportKind::Performance);
    QTest::newRow("profile") << "profile" << int(ReportKind::Profile);
}

void TestProtocol::runReportPicksKind()
{
    QFETCH(QString, which);
    QFETCH(int, kind);
    const json j = which == "correctness" ? overTheWire(verifyReport().toJson())
                   : which == "performance" ? overTheWire(benchReport().toJson())
                                            : profileErrorReport();
    const auto r = RunReport::fromJson(j, "the runner");
    KF_VERIFY_OK(r);
    QCOMPARE(int(r->kind()), kind);
    QCOMPARE(r->verify().has_value(), kind == int(ReportKind::Correctness));
    QCOMPARE(r->bench().has_value(), kind == int(ReportKind::Performance));
    QCOMPARE(r->profile().has_value(), kind == int(ReportKind::Profile));
    QVERIFY(r->document() == j);
    QCOMPARE(qs(r->header().task.name), QString("vector_add"));
    QCOMPARE(qs(r->header().candidate.file), QString("naive.cu"));
    if (r->verify())
        QCOMPARE(r->verify()->shapes.size(), std::size_t(1));
    if (r->bench())
        QCOMPARE(r->bench()->shapes.size(), std::size_t(2));
    if (r->profile()) {
        QVERIFY(r->isError());
        QCOMPARE(qs(r->profile()->verdict), QString("error"));
        QCOMPARE(qs(r->header().errorSentence()), QString("no GPU: no CUDA device"));
    }
}

void TestProtocol::runReportErrorsNameTheSource()
{
    const auto weird = RunReport::fromJson(json{{"schema_version", 1}, {"kind", "weird"}}, "report.json");
    QVERIFY(!weird.ok());
    QCOMPARE(qs(weird.error().pointer), QString("/kind"));
    QCOMPARE(qs(weird.error().file), QString("report.json"));

    json profile = profileErrorReport();
    profile["verdict"] = "ok"; // an "ok" profile must say what was measured
    const auto p = RunReport::fromJson(profile, "report.json");
    QVERIFY(!p.ok());
    QCOMPARE(qs(p.error().file), QString("report.json"));
    QVERIFY2(qs(p.error().why).contains("counters"), qPrintable(qs(p.error().why)));
}

void TestProtocol::reportsOfDocument()
{
    const json verify = overTheWire(verifyReport().toJson());
    const json bench = overTheWire(benchReport().toJson());
    json document = {{"schema_version", 1}, {"command", "verify"}, {"ok", false}, {"reports", json::array()}};
    document["reports"].push_back(verify);
    document["reports"].push_back(json{{"schema_version", 1}, {"kind", "weird"}});
    document["reports"].push_back(bench);

    std::vector<Error> errors;
    const std::vector<RunReport> reports = kf::protocol::reportsOfDocument(document, &errors);
    QCOMPARE(reports.size(), std::size_t(2));
    QCOMPARE(int(reports[0].kind()), int(ReportKind::Correctness));
    QCOMPARE(int(reports[1].kind()), int(ReportKind::Performance));
    QVERIFY(reports[1].document() == bench);
    QCOMPARE(errors.size(), std::size_t(1));
    QCOMPARE(qs(errors[0].pointer), QString("/reports/1/kind")); // where in the document
    QVERIFY2(qs(errors[0].why).contains(R"(found "weird")"), qPrintable(qs(errors[0].why)));

    // Without an error list the broken entry is skipped all the same.
    QCOMPARE(kf::protocol::reportsOfDocument(document).size(), std::size_t(2));
    // One bare report is a document of one.
    const std::vector<RunReport> bare = kf::protocol::reportsOfDocument(verify);
    QCOMPARE(bare.size(), std::size_t(1));
    QCOMPARE(int(bare[0].kind()), int(ReportKind::Correctness));
    // No reports: nothing, and no errors.
    errors.clear();
    QVERIFY(kf::protocol::reportsOfDocument(json{{"reports", json::array()}}, &errors).empty());
    QVERIFY(errors.empty());
}

QTEST_GUILESS_MAIN(TestProtocol)
#include "tst_protocol.moc"
