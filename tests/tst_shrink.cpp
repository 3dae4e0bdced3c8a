// Shrinking a failure: from a failing shape the search reaches the smallest legal shape that
// fails the same way, proves it 1-minimal, never probes a shape twice, stays in its budget, and
// hands probe errors back. The "GPU" is a predicate on the binding.
#include "testutil.h"

#include "engine/protocol/VerifyReport.h"
#include "engine/verify/Shrink.h"

#include <QStringList>

#include <map>
#include <set>

using namespace kf;
using Json = nlohmann::json;

namespace {

using Values = std::map<std::string, std::int64_t, std::less<>>;
// How a fake kernel fails on a binding; nullopt when it passes.
using Predicate = std::function<std::optional<FailureKind>(const Values&)>;

// One input and one output of shape `shape`, symbols and constraints as given; the test shape
// is where shrinking starts.
Task makeTask(const Json& symbols, const Json& shape, const Json& constraints, const Json& start)
{
    const Json j = {
        {"schema_version", 1}, {"name", "shrink"}, {"architectures", {"sm_90"}},
        {"symbols", symbols}, {"constraints", constraints},
        {"inputs", {{{"name", "x"}, {"dtype", "fp32"}, {"shape", shape}}}},
        {"outputs", {{{"name", "y"}, {"dtype", "fp32"}, {"shape", shape}}}},
        {"shapes", {{"tests", {start}}, {"benchmarks", Json::array()}}},
        {"reference", {{"op", "relu"}, {"inputs", {"x"}}}},
        {"candidates", {{{"file", "k.cu"}, {"launches", {{{"kernel", "k"}, {"grid", 1}, {"block", 32}, {"args", {"x", "y"}}}}}}}}};
    auto t = parseTask(j, "shrink");
    if (!t)
        qFatal("test task rejected: %s", t.error().message().c_str());
    return t.value();
}

Task taskN(std::int64_t min)
{
    return makeTask({{"N", {{"min", min}, {"max", 1000000}}}}, {"N"}, Json::array(), {{"N", 4099}});
}

ShapeBinding binding(const QString& text)
{
    ShapeBinding b;
    for (const QString& kv : text.split(' ', Qt::SkipEmptyParts))
        b.values[kv.section('=', 0, 0).toStdString()] = kv.section('=', 1).toLongLong();
    return b;
}

// The predicates the rows name.
const std::map<QString, Predicate>& predicates()
{
    static const std::map<QString, Predicate> p = {
        {"N % 256 != 0",
         [](const Values& v) -> std::optional<FailureKind> {
             if (v.at("N") % 256 != 0)
                 return FailureKind::Mismatch;
             return std::nullopt;
         }},
        {"N % 256 != 0 && N >= 1000",
         [](const Values& v) -> std::optional<FailureKind> {
             if (v.at("N") % 256 != 0 && v.at("N") >= 1000)
                 return FailureKind::Mismatch;
             return std::nullopt;
         }},
        {"D % 4 != 0",
         [](const Values& v) -> std::optional<FailureKind> {
             if (v.at("D") % 4 != 0)
                 return FailureKind::Unwritten;
             return std::nullopt;
         }},
        // A kernel that cannot launch on small sizes and has a tail bug on the others.
        {"launch below 256, else N % 256 != 0",
         [](const Values& v) -> std::optional<FailureKind> {
             if (v.at("N") < 256)
                 return FailureKind::Launch;
             if (v.at("N") % 256 != 0)
                 return FailureKind::Mismatch;
             return std::nullopt;
         }},
        {"launch below 100, else N % 256 != 0",
         [](const Values& v) -> std::optional<FailureKind> {
             if (v.at("N") < 100)
                 return FailureKind::Launch;
             if (v.at("N") % 256 != 0)
                 return FailureKind::Mismatch;
             return std::nullopt;
         }},
    };
    return p;
}

// A probe that answers from a predicate and records what it was asked.
struct FakeProbe {
    Predicate predicate;
    int calls = 0;
    int shapes = 0;
    int failOnCall = -1;            ///< answer this call (1-based) with an Error
    std::set<Values> probed;
    bool repeated = false;

    ProbeFn fn()
    {
        return [this](const std::vector<ShapeBinding>& batch) -> Result<std::vector<ProbeOutcome>> {
            if (++calls == failOnCall)
                return Error::failed("run the probe", "the runner crashed");
            std::vector<ProbeOutcome> out;
            for (const ShapeBinding& b : batch) {
                ++shapes;
                repeated = repeated || !probed.insert(b.values).second;
                const auto kind = predicate(b.values);
                out.push_back({kind.has_value(), kind.value_or(FailureKind::None), kind ? "wrong" : ""});
            }
            return out;
        };
    }
};

} // namespace

class TestShrink : public QObject {
    Q_OBJECT

private slots:
    void reachesSmallestFailingShape_data();
    void reachesSmallestFailingShape();
    void budgetIsNeverExceeded_data();
    void budgetIsNeverExceeded();
    void probeErrorAbortsTheShrink();
    void cancelStopsAtTheNextProbe();
    void progressNamesEachImprovement();
    void rejectsAnIllegalStartOrNoKind();
    void resultAsJson();
    void failureKindOfTrial_data();
    void failureKindOfTrial();
    void kindNamesRoundTrip();
};

void TestShrink::reachesSmallestFailingShape_data()
{
    QTest::addColumn<QString>("task");       // JSON: [symbols, shape, constraints]
    QTest::addColumn<QString>("predicate");
    QTest::addColumn<QString>("start");
    QTest::addColumn<QString>("kind");
    QTest::addColumn<bool>("anyKind");
    QTest::addColumn<QString>("smallest");

    const char* oneD = R"([{"N": {"min": 1, "max": 1000000}}, ["N"], []])";
    const char* oneDmin256 = R"([{"N": {"min": 256, "max": 1000000}}, ["N"], []])";
    const char* multipleOf3 = R"([{"N": {"min": 1, "max": 1000000, "multiple_of": 3}}, ["N"], []])";
    const char* twoD = R"([{"B": {"min": 1, "max": 4096}, "D": {"min": 1, "max": 1000000}}, ["B", "D"], ["B * D <= 1000000"]])";
    const char* twoDmins = R"([{"B": {"min": 2, "max": 4096}, "D": {"min": 8, "max": 1000000}}, ["B", "D"], ["B * D <= 1000000"]])";

    QTest::newRow("tail bug shrinks to N=1") << oneD << "N % 256 != 0" << "N=4099" << "mismatch" << false << "N=1";
    QTest::newRow("min 256 keeps the tail: N=257") << oneDmin256 << "N % 256 != 0" << "N=4099" << "mismatch" << false << "N=257";
    QTest::newRow("multiple_of 3 above 1000: N=1002")
        << multipleOf3 << "N % 256 != 0 && N >= 1000" << "N=4098" << "mismatch" << false << "N=1002";
    QTest::newRow("2-D: both symbols reach their floor")
        << twoD << "D % 4 != 0" << "B=37 D=4099" << "unwritten" << false << "B=1 D=1";
    QTest::newRow("2-D: D stays a non-multiple of 4 above its min")
        << twoDmins << "D % 4 != 0" << "B=37 D=4099" << "unwritten" << false << "B=2 D=9";
    QTest::newRow("mismatch kind kept past launch failures")
        << oneD << "launch below 256, else N % 256 != 0" << "N=4099" << "mismatch" << false << "N=257";
    QTest::newRow("any kind accepts launch failures")
        << oneD << "launch below 256, else N % 256 != 0" << "N=4099" << "mismatch" << true << "N=1";
    QTest::newRow("mismatch kind stops at the launch boundary")
        << oneD << "launch below 100, else N % 256 != 0" << "N=4099" << "mismatch" << false << "N=100";
}

void TestShrink::reachesSmallestFailingShape()
{
    QFETCH(QString, task);
    QFETCH(QString, predicate);
    QFETCH(QString, start);
    QFETCH(QString, kind);
    QFETCH(bool, anyKind);
    QFETCH(QString, smallest);

    const Json spec = Json::parse(task.toStdString());
    const ShapeBinding from = binding(start);
    Json startJson = Json::object();
    for (const auto& [k, v] : from.values)
        startJson[k] = v;
    const Task t = makeTask(spec[0], spec[1], spec[2], startJson);
    FakeProbe fake{predicates().at(predicate)};
    ShrinkOptions options;
    options.anyKind = anyKind;
    const FailureKind wanted = *parseFailureKind(kind.toStdString());

    auto r = shrink(t, from, wanted, fake.fn(), options);
    KF_VERIFY_OK(r);
    QCOMPARE(qs(r->smallest.describe()), smallest);
    QVERIFY2(r->minimal, "the result must be proven 1-minimal");
    QVERIFY(!r->budgetExhausted);
    QVERIFY(!r->cancelled);
    QVERIFY2(!fake.repeated, "a shape was probed twice");
    const auto outcome = fake.predicate(r->smallest.values);
    QVERIFY2(outcome.has_value(), "the smallest shape must still fail");
    QCOMPARE(r->kind, *outcome);
    if (!anyKind)
        QCOMPARE(r->kind, wanted);
    QCOMPARE(r->probes, fake.shapes);
    QCOMPARE(r->requests, fake.calls);
    QVERIFY(r->probes <= ShrinkOptions{}.maxProbes);
    QCOMPARE(int(r->trace.size()), r->probes);
    QVERIFY(r->start.values == from.values);
    QVERIFY(t.admits(r->smallest).ok());
    qInfo("%d shapes in %d requests", r->probes, r->requests);
}

void TestShrink::budgetIsNeverExceeded_data()
{
    QTest::addColumn<int>("maxProbes");
    QTest::newRow("5 probes") << 5;
    QTest::newRow("1 probe") << 1;
    QTest::newRow("0 probes") << 0;
}

void TestShrink::budgetIsNeverExceeded()
{
    QFETCH(int, maxProbes);
    const Task t = taskN(256);
    FakeProbe fake{predicates().at("N % 256 != 0")};
    ShrinkOptions options;
    options.maxProbes = maxProbes;
    auto r = shrink(t, binding("N=4099"), FailureKind::Mismatch, fake.fn(), options);
    KF_VERIFY_OK(r);
    QVERIFY(r->budgetExhausted);
    QVERIFY(!r->minimal);
    QVERIFY(r->probes <= maxProbes);
    QCOMPARE(fake.shapes, r->probes);
    QVERIFY(!fake.repeated);
    QVERIFY2(fake.predicate(r->smallest.values).has_value(), "the smallest shape must still fail");
    QVERIFY(r->smallest.values.at("N") <= 4099);
}

void TestShrink::probeErrorAbortsTheShrink()
{
    // Ladder, then bisection: this shrink makes several calls.
    for (int call : {1, 2}) {
        FakeProbe fake{predicates().at("launch below 100, else N % 256 != 0")};
        fake.failOnCall = call;
        auto r = shrink(taskN(1), binding("N=4099"), FailureKind::Mismatch, fake.fn());
        QVERIFY(!r);
        QCOMPARE(qs(r.error().why), QStringLiteral("the runner crashed"));
        QCOMPARE(fake.calls, call);
    }
}

void TestShrink::cancelStopsAtTheNextProbe()
{
    FakeProbe fake{predicates().at("launch below 100, else N % 256 != 0")};
    ShrinkOptions options;
    options.cancelled = [&] { return fake.calls >= 1; };
    auto r = shrink(taskN(1), binding("N=4099"), FailureKind::Mismatch, fake.fn(), options);
    KF_VERIFY_OK(r);
    QVERIFY(r->cancelled);
    QVERIFY(!r->minimal);
    QCOMPARE(fake.calls, 1);
    QCOMPARE(r->requests, 1);
    QVERIFY2(fake.predicate(r->smallest.values).has_value(), "a cancelled shrink still answers a failing shape");
}

void TestShrink::progressNamesEachImprovement()
{
    FakeProbe fake{predicates().at("N % 256 != 0")};
    QStringList lines;
    ShrinkOptions options;
    options.progress = [&](const std::string& s) { lines << qs(s); };
    auto r = shrink(taskN(256), binding("N=4099"), FailureKind::Mismatch, fake.fn(), options);
    KF_VERIFY_OK(r);
    QVERIFY(!lines.isEmpty());
    QVERIFY2(lines.first().startsWith("N: 4099 → "), qPrintable(lines.first()));
    QVERIFY2(lines.last().startsWith("N: ") && lines.last().contains("→ 257 ("), qPrintable(lines.last()));
}

void TestShrink::rejectsAnIllegalStartOrNoKind()
{
    FakeProbe fake{predicates().at("N % 256 != 0")};
    auto below = shrink(taskN(256), binding("N=100"), FailureKind::Mismatch, fake.fn());
    QVERIFY(!below);
    QVERIFY2(below.error().why.find("N = 100 is outside its range [256, 1000000]") != std::string::npos,
             below.error().why.c_str());
    auto none = shrink(taskN(256), binding("N=4099"), FailureKind::None, fake.fn());
    QVERIFY(!none);
    QCOMPARE(fake.calls, 0);
}

void TestShrink::resultAsJson()
{
    FakeProbe fake{predicates().at("N % 256 != 0")};
    auto r = shrink(taskN(256), binding("N=4099"), FailureKind::Mismatch, fake.fn());
    KF_VERIFY_OK(r);
    const Json j = toJson(*r);
    QVERIFY(j["start"] == Json({{"N", 4099}}));
    QVERIFY(j["smallest"] == Json({{"N", 257}}));
    QVERIFY(j["kind"] == Json("mismatch"));
    QCOMPARE(j["probes"].get<int>(), r->probes);
    QCOMPARE(j["requests"].get<int>(), r->requests);
    QVERIFY(j["minimal"] == Json(true));
    QVERIFY(j["budget_exhausted"] == Json(false));
    QVERIFY(j["cancelled"] == Json(false));
    QCOMPARE(int(j["trace"].size()), r->probes);
    const Json& first = j["trace"][0];
    QVERIFY(first.contains("shape") && first.contains("failed") && first.contains("kind"));
    QVERIFY(first["kind"] == Json(first["failed"].get<bool>() ? "mismatch" : "none"));
}

void TestShrink::failureKindOfTrial_data()
{
    QTest::addColumn<QString>("trial");
    QTest::addColumn<QString>("kind");
    const char* clean = R"("launch_error": "", "guard_violations": [], "modified_inputs": [], "runs_agree": true)";
    auto row = [&](const char* name, const std::string& fields, const char* kind) {
        QTest::newRow(name) << qs("{" + fields + "}") << kind;
    };
    row("passed", std::string(R"("passed": true, )") + clean + R"(, "outputs": [{"mismatches": 0, "unwritten": 0}])", "none");
    row("launch error, runs never compared",
        R"("passed": false, "launch_error": "illegal memory access", "runs_agree": false, "outputs": [])", "launch");
    row("guard before modified input",
        R"("passed": false, "guard_violations": [{"buffer": "y", "side": "after"}], "modified_inputs": ["x"])", "guard");
    row("modified input", R"("passed": false, "launch_error": "", "guard_violations": [], "modified_inputs": ["x"])",
        "modified_input");
    row("unwritten counts as mismatches too",
        std::string(R"("passed": false, )") + clean + R"(, "outputs": [{"mismatches": 5, "unwritten": 5}])", "unwritten");
    row("mismatch in the second output",
        std::string(R"("passed": false, )") + clean +
            R"(, "outputs": [{"mismatches": 0, "unwritten": 0}, {"mismatches": 12, "unwritten": 0}])",
        "mismatch");
    row("runs disagree", R"("passed": false, "launch_error": "", "runs_agree": false, "outputs": [{"mismatches": 0}])",
        "nondeterministic");
    row("failed without a visible cause", std::string(R"("passed": false, )") + clean, "none");
}

void TestShrink::failureKindOfTrial()
{
    QFETCH(QString, trial);
    QFETCH(QString, kind);
    // The report trial as the protocol reads it (engine/protocol/VerifyReport.h).
    const Json j = Json::parse(trial.toStdString());
    auto t = kf::protocol::Trial::fromJson(j);
    KF_VERIFY_OK(t);
    QCOMPARE(qs(std::string(failureKindName(t->failureKind()))), kind);
}

void TestShrink::kindNamesRoundTrip()
{
    for (FailureKind k : {FailureKind::None, FailureKind::Launch, FailureKind::Guard, FailureKind::ModifiedInput,
                          FailureKind::Unwritten, FailureKind::Mismatch, FailureKind::Nondeterministic})
        QVERIFY(parseFailureKind(failureKindName(k)) == k);
    QCOMPARE(qs(std::string(failureKindName(FailureKind::ModifiedInput))), QStringLiteral("modified_input"));
    QVERIFY(!parseFailureKind("Mismatch"));
    QVERIFY(!parseFailureKind(""));
}

QTEST_GUILESS_MAIN(TestShrink)
#include "tst_shrink.moc"
