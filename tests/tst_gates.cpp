// The promotion gates: a passing kernel passes all nine, and each way evidence can be missing,
// stale, incomplete or unconvincing is refused by the gate that names it, with what to do. The
// sanitizer gate under each of the registry's policies has a table of its own.
#include "registryfixture.h"
#include "testutil.h"

#include "engine/protocol/RunRequest.h"
#include "engine/protocol/SanitizerReport.h"

#include "engine/registry/Gates.h"

#include <QTemporaryDir>

using namespace kf;
using Json = nlohmann::json;

namespace {

Json& shapeOfSet(Json& report, const char* set, int nth = 0)
{
    for (Json& s : report["shapes"])
        if (s["set"] == set && nth-- == 0)
            return s;
    qFatal("no shape of set %s", set);
}

// Fails `shape` the way the runner records a failure: a trial with mismatches, the shape and the
// report marked failed. (Marking the shape alone would be a report that contradicts itself.)
void failShape(Json& report, Json& shape)
{
    shape["passed"] = false;
    Json& t = shape["trials"][0];
    t["passed"] = false;
    t["failure"] = "y: 5 of 4096 elements outside tolerance";
    t["outputs"][0]["passed"] = false;
    t["outputs"][0]["mismatches"] = 5;
    report["verdict"] = "fail";
}

} // namespace

class TestGates : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void eachRefusalNamesItsGate_data();
    void eachRefusalNamesItsGate();
    void passingEvidenceNamesEveryGate();
    void sanitizerGateUnderEachPolicy_data();
    void sanitizerGateUnderEachPolicy();
    void allowUnsignedPassesTheGateAndSaysSo();
    void heldOutNotRequiredWhenTheTaskAdmitsNone();
    void evidenceIsCollectedFromReportsAndDocuments();
    void malformedEvidenceIsRefusedWithItsPointer_data();
    void malformedEvidenceIsRefusedWithItsPointer();

private:
    QTemporaryDir m_tmp;
    std::filesystem::path m_taskDir;
};

void TestGates::initTestCase()
{
    QVERIFY(m_tmp.isValid());
    m_taskDir = test::copyExample("softmax_fp32", m_tmp.path().toStdString());
}

void TestGates::eachRefusalNamesItsGate_data()
{
    QTest::addColumn<QString>("mutation");
    QTest::addColumn<QString>("gate");       // the first gate that fails; empty: all pass
    QTest::addColumn<QString>("inDetail");   // a phrase the refusal must contain

    QTest::newRow("passing evidence") << "none" << "" << "";
    QTest::newRow("no correctness report") << "drop-correctness" << "evidence" << "no correctness report";
    QTest::newRow("no performance report") << "drop-performance" << "evidence" << "no performance report";
    QTest::newRow("kernel edited after the runs") << "edit-source" << "evidence" << "another version of optimized.cu";
    QTest::newRow("task edited or tolerance override") << "other-task-hash" << "evidence" << "tolerance override";
    QTest::newRow("report of another candidate") << "other-candidate" << "evidence" << "is for naive.cu";
    QTest::newRow("verified on one GPU, timed on another") << "other-gpu" << "evidence" << "but speed on";
    QTest::newRow("verification ended in an error") << "correctness-error" << "evidence" << "ended in an error";
    QTest::newRow("a repro run (inputs from files)") << "repro-inputs" << "evidence" << "inputs saved in files";
    QTest::newRow("a shrink run (chosen shapes)") << "shrink-mode" << "evidence" << "a shrink run";
    // Reports the runner did not sign, or that changed after it signed them (issue 23).
    QTest::newRow("report edited after signing") << "edit-after-signing" << "signed" << "performance report is changed after it was signed";
    QTest::newRow("signature removed") << "unsigned" << "signed" << "correctness report is not signed";
    QTest::newRow("unsigned, with the runner's reason") << "unsigned-with-reason" << "signed" << "the runner said: no libcrypto";
    QTest::newRow("signed with another key") << "other-key" << "signed" << "not this user's key";
    QTest::newRow("signature not hex") << "malformed-signature" << "signed" << "not one KernelForge writes";
    QTest::newRow("no key to check with") << "no-key" << "signed" << "no key here to check it with";
    // The user's key inside the task folder: a candidate's author can read it and sign a forgery.
    QTest::newRow("key inside the task folder") << "key-inside-task" << "signed" << "lies inside the task folder";
    QTest::newRow("a test shape failed") << "test-shape-failed" << "correctness" << "failed";
    QTest::newRow("a test shape was not verified") << "test-shape-missing" << "correctness" << "was not verified";
    QTest::newRow("too few trials") << "two-trials" << "correctness" << "2 trial(s)";
    // Forged or cut-down evidence: the claims disagree with the recorded data (issue 23).
    QTest::newRow("claims 3 trials, lists 1") << "one-trial-claims-three" << "evidence" << "lists 1 trial(s) but the report claims 3";
    QTest::newRow("a trial's passed deleted") << "trial-passed-deleted" << "evidence" << "is marked passed but a trial failed";
    QTest::newRow("a passing trial without its outputs") << "outputs-deleted" << "evidence" << "0 output record(s)";
    QTest::newRow("two trials share a seed") << "seed-repeated" << "evidence" << "repeats 0x9f01";
    QTest::newRow("negative control deleted") << "negative-control-deleted" << "evidence" << "no negative control";
    QTest::newRow("a failed shape under verdict pass") << "shape-failed-verdict-pass" << "evidence" << "verdict is pass but a shape failed";
    // compute-sanitizer (issue 19): every shape right, a tool saw the bug; and the forged pass,
    // a report whose verdict contradicts its own findings (the loophole a pass-only check leaves).
    QTest::newRow("compute-sanitizer found a race") << "sanitizer-finding" << "sanitizer"
                                                    << "compute-sanitizer racecheck: shared-memory race";
    QTest::newRow("a sanitizer finding under verdict pass") << "sanitizer-finding-verdict-pass" << "evidence"
                                                            << "verdict is pass but compute-sanitizer reports";
    QTest::newRow("a clean sanitizer section passes") << "sanitizer-clean" << "" << "";
    QTest::newRow("below the floor, verdict ok") << "below-floor-ok" << "evidence" << "below the roofline floor, yet the verdict is ok";
    QTest::newRow("re-check failed, verdict ok") << "recheck-failed-ok" << "evidence" << "failed its re-check";
    QTest::newRow("re-check result deleted") << "recheck-deleted" << "evidence" << "has no re-check result";
    QTest::newRow("medians 10x slower, speedup kept") << "medians-slower" << "evidence" << "claims 1.30× but its medians give 0.13×";
    QTest::newRow("a benchmark-set shape failed verification") << "all-mode-failure" << "correctness" << "B=8192 D=4096";
    QTest::newRow("a held-out shape failed") << "held-out-failed" << "held_out" << "held-out shape";
    QTest::newRow("no held-out shapes") << "no-held-out" << "held_out" << "no held-out shapes";
    QTest::newRow("zeros would pass") << "zeros-pass" << "negative_control" << "all zeros pass";
    QTest::newRow("a benchmark shape not measured") << "bench-shape-missing" << "benchmarks" << "was not benchmarked";
    QTest::newRow("untrustworthy timing") << "bench-verdict-fail" << "benchmarks" << "verdict is fail";
    QTest::newRow("slower than LibTorch on one shape") << "one-shape-slow" << "per_shape_speedup" << "0.95×";
    QTest::newRow("nan speedup") << "nan-speedup" << "per_shape_speedup" << "nan";
    QTest::newRow("geomean below the threshold") << "geomean-low" << "geomean_speedup" << "1.05× is below the threshold 1.10×";
    QTest::newRow("stricter registry threshold") << "threshold-1.5" << "geomean_speedup" << "below the threshold 1.50×";
    // The eighth gate, on only where the registry asks (compile-gate-* set a threshold of 1.0).
    QTest::newRow("compile gate: beats torch.compile") << "compile-gate-pass" << "" << "";
    QTest::newRow("compile gate: never timed against it") << "compile-gate-no-baseline" << "compile_speedup"
                                                          << "not timed against torch.compile";
    QTest::newRow("compile gate: not measured") << "compile-gate-unmeasured" << "compile_speedup"
                                                << "not measured: Triton is not installed";
    QTest::newRow("compile gate: slower than torch.compile") << "compile-gate-slow" << "compile_speedup"
                                                             << "0.90× torch.compile is below 1.00×";
    QTest::newRow("compile gate: a shape not compared") << "compile-gate-shape-missing" << "compile_speedup"
                                                        << "not compared with torch.compile on";
    QTest::newRow("compile gate: a forged summary is not believed") << "compile-gate-forged-summary" << "compile_speedup"
                                                                   << "0.90× torch.compile is below 1.00×";
    QTest::newRow("compile gate off: slower than torch.compile is fine") << "compile-slow-gate-off" << "" << "";
}


void TestGates::eachRefusalNamesItsGate()
{
    QFETCH(QString, mutation);
    QFETCH(QString, gate);
    QFETCH(QString, inDetail);

    PromotionInput in = test::passingInput(m_taskDir, "optimized.cu");
    auto source = readFileBytes(m_taskDir / "optimized.cu");
    KF_VERIFY_OK(source);
    GateInput g;
    g.task = &in.task;
    g.candidateFile = "optimized.cu";
    g.sourceHash = hashHex(source.value());
    g.taskHash = taskPayload(in.task).hash;
    g.heldOutRequired = heldOutRequiredFor(in.task);
    // The reports as JSON, edited the way a forger or a stale file would, then read as the
    // gates read evidence.
    Json c = in.correctness->document();
    Json p = in.performance->document();

    const std::string m = mutation.toStdString();
    if (m == "drop-correctness") c = Json();
    else if (m == "drop-performance") p = Json();
    else if (m == "edit-source") g.sourceHash = hashHex(source.value() + "\n// tuned after the run\n");
    else if (m == "other-task-hash") c["task"]["hash"] = "00000000000000000000000000000000";
    else if (m == "other-candidate") c["candidate"]["file"] = "naive.cu";
    else if (m == "other-gpu") p["environment"]["gpu"] = "NVIDIA A100-SXM4-80GB";
    else if (m == "correctness-error") c["verdict"] = "error";
    else if (m == "repro-inputs") c["inputs"] = "file";
    else if (m == "shrink-mode") c["mode"] = "shrink";
    else if (m == "test-shape-failed") failShape(c, shapeOfSet(c, "tests", 3));
    else if (m == "test-shape-missing") c["shapes"].erase(0);
    else if (m == "two-trials") {
        for (Json& s : c["shapes"])
            s["trials"].erase(2);
        c["trials_per_shape"] = 2;
    }
    else if (m == "one-trial-claims-three") for (Json& s : c["shapes"]) s["trials"] = Json::array({s["trials"][0]});
    else if (m == "trial-passed-deleted") shapeOfSet(c, "tests", 0)["trials"][1].erase("passed");
    else if (m == "outputs-deleted") shapeOfSet(c, "tests", 0)["trials"][0].erase("outputs");
    else if (m == "seed-repeated") shapeOfSet(c, "tests", 0)["trials"][1]["seed"] = "0x9f01";
    else if (m == "negative-control-deleted") shapeOfSet(c, "tests", 2).erase("negative_control");
    else if (m == "shape-failed-verdict-pass") shapeOfSet(c, "tests", 1)["passed"] = false;
    else if (m.rfind("sanitizer-", 0) == 0) {
        protocol::SanitizerSection san;
        san.ran = true;
        san.toolVersion = "2025.3.1.0";
        san.shapes = {"B=1 D=1"};
        san.durationMs = 2400;
        for (const std::string& t : protocol::SanitizeSettings::allTools()) {
            protocol::SanitizerToolRun run;
            run.tool = t;
            run.ran = true;
            san.tools.push_back(run);
        }
        if (m != "sanitizer-clean") {
            protocol::SanitizerFinding f;
            f.tool = "racecheck";
            f.kind = "shared_race";
            f.severity = "warning";
            f.where = {"write", "block_sum", "race.cu", 9, "0x200", std::nullopt, std::nullopt};
            f.other = protocol::SanitizerAccess{"read", "block_sum", "race.cu", 12, "0x1e0", std::nullopt, std::nullopt};
            san.findings.push_back(f);
            san.tools[1].findings = 1;
            if (m == "sanitizer-finding")
                c["verdict"] = "fail";   // as the runner writes it
        }
        c["sanitizer"] = protocol::toJson(san);
    }
    else if (m == "below-floor-ok") p["shapes"][0]["below_floor"] = true;
    else if (m == "recheck-failed-ok") p["shapes"][1]["recheck"]["passed"] = false;
    else if (m == "recheck-deleted") p["shapes"][0].erase("recheck");
    else if (m == "medians-slower") p["shapes"][0]["candidate"]["median_ms"] = p["shapes"][0]["candidate"]["median_ms"].get<double>() * 10;
    else if (m == "all-mode-failure") {
        Json extra = shapeOfSet(c, "tests", 0);
        extra["shape"] = {{"B", 8192}, {"D", 4096}};
        extra["set"] = "benchmarks";
        c["shapes"].push_back(extra);
        failShape(c, c["shapes"].back());
    }
    else if (m == "held-out-failed") failShape(c, shapeOfSet(c, "held_out", 1));
    else if (m == "no-held-out") c = test::correctnessFor(in.task, "optimized.cu", 0);
    else if (m == "zeros-pass") {
        c["discriminates"] = false;
        shapeOfSet(c, "tests", 0)["negative_control"][0]["zeros_pass"] = true;
        shapeOfSet(c, "tests", 0)["negative_control"][0]["discriminates"] = false;
    }
    else if (m == "bench-shape-missing") p["shapes"].erase(1);
    else if (m == "bench-verdict-fail") p["verdict"] = "fail";
    else if (m == "one-shape-slow") p = test::performanceFor(in.task, "optimized.cu", {1.8, 0.95});
    else if (m == "nan-speedup") {
        p["shapes"][0]["candidate"]["median_ms"] = "nan"; // a timing that failed
        p["shapes"][0]["speedup"] = "nan";
    }
    else if (m == "geomean-low") p = test::performanceFor(in.task, "optimized.cu", {1.05});
    else if (m == "threshold-1.5") g.threshold = 1.5;
    else if (m.rfind("compile-", 0) == 0) {
        if (m.rfind("compile-gate-", 0) == 0)
            g.compileThreshold = 1.0;
        if (m == "compile-gate-pass")
            p = test::withCompile(p, 1.2);
        else if (m == "compile-gate-unmeasured")
            p["compile_baseline"] = {{"measured", false}, {"reason", "Triton is not installed: Inductor needs it"}};
        else if (m == "compile-gate-slow" || m == "compile-slow-gate-off")
            p = test::withCompile(p, 0.9);
        else if (m == "compile-gate-forged-summary") {
            p = test::withCompile(p, 0.9);
            p["compile_baseline"]["geomean_speedup"] = 5.0;   // the shapes' medians still say 0.9
        }
        else if (m == "compile-gate-shape-missing") {
            p = test::withCompile(p, 1.2);
            p["shapes"][1].erase("compile");
        }
    }
    else QVERIFY2(m == "none" || mutation.contains("sign") || mutation.contains("key"), m.c_str()); // after signing, below

    in.correctness = test::asReport(c);
    in.performance = test::asReport(p);
    // After signing: what a forger can do without the key.
    if (m == "edit-after-signing") test::forge(in.performance, [](Json& j) { j["duration_ms"] = 1.0; });
    else if (m == "unsigned") test::forge(in.correctness, [](Json& j) { j.erase("signature"); });
    else if (m == "unsigned-with-reason") {
        test::forge(in.correctness, [](Json& j) {
            j.erase("signature");
            j["unsigned_reason"] = "no libcrypto";
        });
    }
    else if (m == "other-key") test::forge(in.performance, [](Json& j) { j["signature"]["key_id"] = "0123456789abcdef"; });
    else if (m == "malformed-signature") test::forge(in.correctness, [](Json& j) { j["signature"]["value"] = "forged"; });
    g.correctness = in.correctness ? &*in.correctness : nullptr;
    g.performance = in.performance ? &*in.performance : nullptr;
    auto key = protocol::loadSigningKey(false);
    KF_VERIFY_OK(key);
    g.signingKey = m == "no-key" ? nullptr : &key.value();
    protocol::SigningKey inside = key.value();
    inside.file = in.task.directory / "report-key";
    if (m == "key-inside-task")
        g.signingKey = &inside;
    const GateVerdict v = evaluateGates(g);
    const GateCheck* f = v.firstFailure();
    if (gate.isEmpty()) {
        QVERIFY2(!f, f ? v.sentence().c_str() : "");
        QVERIFY(v.passed());
        QCOMPARE(v.checks.size(), size_t(g.compileThreshold ? 10 : 9));
        QVERIFY(!v.firstNotRun());
        QCOMPARE(qs(v.sentence()), QString("all %1 gates passed").arg(v.checks.size()));
        QVERIFY(!v.unsignedAccepted);
        if (m == "compile-gate-pass" || m == "compile-slow-gate-off")   // recorded, gate or not
            QVERIFY2(std::abs(v.compileSpeedup - (m == "compile-gate-pass" ? 1.2 : 0.9)) < 1e-9,
                     std::to_string(v.compileSpeedup).c_str());
        return;
    }
    QVERIFY2(f, "the evidence was accepted");
    QCOMPARE(qs(f->gate), gate);
    QVERIFY2(qs(f->detail).contains(inDetail), f->detail.c_str());
    QVERIFY2(!f->hint.empty(), "a refusal must say what to do");
    QVERIFY(!v.passed());
    QVERIFY(qs(v.sentence()).startsWith("refused: " + qs(f->title)));
}

void TestGates::passingEvidenceNamesEveryGate()
{
    PromotionInput in = test::passingInput(m_taskDir, "optimized.cu", {1.2, 1.4});
    auto source = readFileBytes(m_taskDir / "optimized.cu");
    KF_VERIFY_OK(source);
    auto key = protocol::loadSigningKey(false);
    KF_VERIFY_OK(key);
    GateInput g{&in.task, "optimized.cu", hashHex(source.value()), taskPayload(in.task).hash, &*in.correctness,
                &*in.performance, kDefaultSpeedupThreshold, 1, &key.value()};
    const GateVerdict v = evaluateGates(g);
    QStringList keys;
    for (const GateCheck& c : v.checks)
        keys << qs(c.gate);
    QCOMPARE(keys, QStringList({"evidence", "signed", "correctness", "sanitizer", "held_out", "negative_control", "benchmarks",
                                "per_shape_speedup", "geomean_speedup"}));
    QCOMPARE(qs(v.checks[1].detail), QString("both reports signed with key %1").arg(qs(key->id)));
    QCOMPARE(qs(v.checks[2].detail), QString("%1 of %1 test shapes passed, 3 trials each").arg(in.task.testShapes.size()));
    QCOMPARE(qs(v.checks[3].detail),
             QString("memcheck, racecheck, initcheck, synccheck clean (compute-sanitizer 2025.3.1.0, %1 shape%2, 2.4 s)")
                 .arg(in.correctness->verify()->sanitizer->shapes.size())
                 .arg(in.correctness->verify()->sanitizer->shapes.size() == 1 ? "" : "s"));
    QCOMPARE(qs(v.checks[4].detail), QString("2 of 2 held-out shapes passed"));
    QCOMPARE(qs(v.checks[7].detail), QString("slowest shape 1.20× (B=8192 D=4096)"));
    QCOMPARE(qs(v.checks[8].detail), QString("geometric mean 1.30× ≥ 1.10×")); // sqrt(1.2 * 1.4) = 1.296
    const Json j = v.toJson();
    QVERIFY(j.size() == size_t(9));
    for (const Json& c : j)
        QVERIFY(c["passed"] == true && c["not_run"] == false);
    QCOMPARE(qs(v.sentence()), QString("all 9 gates passed"));
    // What the record keeps of the sanitizer run.
    QVERIFY(v.sanitizer && v.sanitizer->policy == SanitizerPolicy::IfAvailable);
    QCOMPARE(qs(v.sanitizer->toolVersion), QString("2025.3.1.0"));
    QCOMPARE(v.sanitizer->toolsRun, (std::vector<std::string>{"memcheck", "racecheck", "initcheck", "synccheck"}));
}

void TestGates::sanitizerGateUnderEachPolicy_data()
{
    QTest::addColumn<QString>("section");   // the correctness report's compute-sanitizer section
    QTest::addColumn<QString>("policy");    // the registry's sanitizer_policy
    QTest::addColumn<QString>("outcome");   // passed | failed | not_run
    QTest::addColumn<QString>("inDetail");
    QTest::addColumn<QString>("inHint");    // failed: what to do

    const QString fix = "fix the kernel at that line; `kforge verify --sanitize` shows every finding";
    for (const char* p : {"required", "if_available", "off"}) {
        const QString policy = p;
        // The tools ran: clean passes, a finding fails, whatever the policy (a known bug is never promoted).
        QTest::addRow("clean, %s", p) << "clean" << policy << "passed" << "memcheck, racecheck, initcheck, synccheck clean" << "";
        QTest::addRow("a finding, %s", p) << "finding" << policy << "failed" << "compute-sanitizer racecheck: shared-memory race" << fix;
        // A section that says it did not run, yet lists a finding, is judged by the finding.
        QTest::addRow("a finding in a section not run, %s", p) << "finding-not-ran" << policy << "failed"
                                                               << "compute-sanitizer racecheck" << fix;
    }
    QTest::newRow("a tool error, required") << "tool-error" << "required" << "failed"
                                            << "compute-sanitizer memcheck: did not finish within 120 s" << "verify with --sanitize again";
    QTest::newRow("a tool error, if_available") << "tool-error" << "if_available" << "failed"
                                                << "compute-sanitizer memcheck: did not finish within 120 s" << "verify with --sanitize again";
    QTest::newRow("a tool error, off") << "tool-error" << "off" << "not_run"
                                       << "the registry's sanitizer policy is off; compute-sanitizer memcheck: did not finish" << "";
    // The host has the tool, but the verification did not ask for it (`kforge verify` without --sanitize).
    const QString askIt = "verify with --sanitize (kforge promote does this itself)";
    QTest::newRow("not requested, host has it, required") << "not-requested" << "required" << "failed"
                                                          << "not run although the runner's host has compute-sanitizer 2025.3.1.0" << askIt;
    QTest::newRow("not requested, host has it, if_available") << "not-requested" << "if_available" << "failed"
                                                              << "the verification did not ask for it" << askIt;
    QTest::newRow("not requested, host has it, off") << "not-requested" << "off" << "not_run"
                                                     << "the registry's sanitizer policy is off" << "";
    QTest::newRow("requested, host has it, could not start") << "could-not-start" << "if_available" << "failed"
                                                             << "could not make a private temporary folder" << "verify with --sanitize again";
    // The host has no compute-sanitizer.
    const QString setPolicy = "kforge registry set-sanitizer-policy if_available";
    QTest::newRow("no tool on the host, required") << "no-tool" << "required" << "failed"
                                                   << "not run: no compute-sanitizer on gpu-7" << setPolicy;
    QTest::newRow("no tool on the host, if_available") << "no-tool" << "if_available" << "not_run"
                                                       << "no compute-sanitizer on gpu-7" << "";
    QTest::newRow("no tool on the host, off") << "no-tool" << "off" << "not_run" << "the registry's sanitizer policy is off" << "";
    QTest::newRow("asked for, no tool on the host, if_available") << "no-tool-requested" << "if_available" << "not_run"
                                                                  << "compute-sanitizer was not found on gpu-7" << "";
    QTest::newRow("asked for, no tool on the host, required") << "no-tool-requested" << "required" << "failed"
                                                              << "not run: compute-sanitizer was not found on gpu-7" << setPolicy;
    // A report from a runner that wrote the section only when asked: the host is not known.
    QTest::newRow("old report without a section, required") << "absent" << "required" << "failed"
                                                            << "no compute-sanitizer section" << setPolicy;
    QTest::newRow("old report without a section, if_available") << "absent" << "if_available" << "not_run"
                                                                << "whether its host has compute-sanitizer is not known" << "";
    QTest::newRow("old report without a section, off") << "absent" << "off" << "not_run"
                                                       << "the registry's sanitizer policy is off" << "";
}

void TestGates::sanitizerGateUnderEachPolicy()
{
    QFETCH(QString, section);
    QFETCH(QString, policy);
    QFETCH(QString, outcome);
    QFETCH(QString, inDetail);
    QFETCH(QString, inHint);

    PromotionInput in = test::passingInput(m_taskDir, "optimized.cu");
    Json c = in.correctness->document();
    c.erase("signature");
    Json& san = c["sanitizer"];   // the fixture's: the four tools ran clean
    const std::string kind = section.toStdString();
    const Json finding = protocol::toJson([] {
        protocol::SanitizerFinding f;
        f.tool = "racecheck";
        f.kind = "shared_race";
        f.severity = "warning";
        f.where = {"write", "block_sum", "race.cu", 9, "0x200", std::nullopt, std::nullopt};
        f.other = protocol::SanitizerAccess{"read", "block_sum", "race.cu", 12, "0x1e0", std::nullopt, std::nullopt};
        return f;
    }());
    auto notRun = [&](bool requested, const char* reason, bool tool) {
        san = {{"ran", false}, {"requested", requested}, {"reason", reason},
               {"tool_version", tool ? "2025.3.1.0" : ""}, {"tool_path", tool ? "/usr/local/cuda/bin/compute-sanitizer" : ""},
               {"shapes", Json::array()}, {"seed", ""}, {"duration_ms", 0}, {"tools", Json::array()}, {"findings", Json::array()}};
    };
    if (kind == "finding") {
        san["findings"].push_back(finding);
        san["tools"][1]["findings"] = 1;
        c["verdict"] = "fail";   // as the runner writes it
    } else if (kind == "finding-not-ran") {
        notRun(true, "", true);
        san["findings"].push_back(finding);
        c["verdict"] = "fail";
    } else if (kind == "tool-error") {
        san["tools"][0]["ran"] = false;
        san["tools"][0]["error"] = "did not finish within 120 s";
        c["verdict"] = "fail";
    } else if (kind == "not-requested") {
        notRun(false, protocol::kSanitizerNotRequested, true);
    } else if (kind == "could-not-start") {
        notRun(true, "could not make a private temporary folder for the tools' output", true);
    } else if (kind == "no-tool") {
        notRun(false, "no compute-sanitizer on gpu-7", false);
    } else if (kind == "no-tool-requested") {
        notRun(true, "compute-sanitizer was not found on gpu-7 (set KF_COMPUTE_SANITIZER to its path, or install the CUDA "
                     "toolkit's compute-sanitizer)", false);
    } else if (kind == "absent") {
        c.erase("sanitizer");
    } else {
        QCOMPARE(section, QString("clean"));
    }
    in.correctness = test::asReport(c);
    QVERIFY(in.correctness);

    auto source = readFileBytes(m_taskDir / "optimized.cu");
    KF_VERIFY_OK(source);
    auto key = protocol::loadSigningKey(false);
    KF_VERIFY_OK(key);
    GateInput g{&in.task, "optimized.cu", hashHex(source.value()), taskPayload(in.task).hash, &*in.correctness,
                &*in.performance, kDefaultSpeedupThreshold, heldOutRequiredFor(in.task), &key.value()};
    const auto parsed = parseSanitizerPolicy(policy.toStdString());
    QVERIFY(parsed);
    g.sanitizerPolicy = *parsed;
    const GateVerdict v = evaluateGates(g);
    QCOMPARE(v.checks.size(), size_t(9));
    const GateCheck& gate = v.checks[3];
    QCOMPARE(qs(gate.gate), QString("sanitizer"));
    QCOMPARE(qs(gate.title), QString("Clean under compute-sanitizer"));
    QVERIFY2(qs(gate.detail).contains(inDetail), gate.detail.c_str());
    const Json j = v.toJson()[3];
    QVERIFY(j["passed"] == gate.passed && j["not_run"] == gate.notRun);
    QVERIFY(v.sanitizer && v.sanitizer->policy == *parsed);
    if (outcome == "passed") {
        QVERIFY(gate.passed && !gate.notRun);
        QVERIFY2(v.passed(), v.sentence().c_str());
        QCOMPARE(qs(v.sentence()), QString("all 9 gates passed"));
        QCOMPARE(v.sanitizer->toolsRun.size(), size_t(4));
    } else if (outcome == "not_run") {
        // Does not block, is not a pass, and says why everywhere the verdict is shown.
        QVERIFY(!gate.passed && gate.notRun && !gate.blocks());
        QVERIFY2(v.passed(), v.sentence().c_str());
        QCOMPARE(v.firstNotRun(), &gate);
        QCOMPARE(v.passedCount(), 8);
        QCOMPARE(qs(v.sentence()), QString("8 gates passed; not run: Clean under compute-sanitizer (%1)").arg(qs(gate.detail)));
        // The record keeps the tools that did run (the others failed to, under "off").
        QCOMPARE(v.sanitizer->toolsRun.size(), size_t(section == "tool-error" ? 3 : 0));
    } else {
        QCOMPARE(outcome, QString("failed"));
        QVERIFY(gate.blocks());
        QVERIFY(!v.passed());
        QCOMPARE(v.firstFailure(), &gate);
        QVERIFY2(qs(gate.hint).contains(inHint), gate.hint.c_str());
        QVERIFY(qs(v.sentence()).startsWith("refused: Clean under compute-sanitizer: "));
    }
}

void TestGates::allowUnsignedPassesTheGateAndSaysSo()
{
    PromotionInput in = test::passingInput(m_taskDir, "optimized.cu", {1.2, 1.4});
    test::forge(in.performance, [](Json& j) { j.erase("signature"); });
    auto source = readFileBytes(m_taskDir / "optimized.cu");
    KF_VERIFY_OK(source);
    auto key = protocol::loadSigningKey(false);
    KF_VERIFY_OK(key);
    GateInput g{&in.task, "optimized.cu", hashHex(source.value()), taskPayload(in.task).hash, &*in.correctness,
                &*in.performance, kDefaultSpeedupThreshold, 1, &key.value()};
    QVERIFY(!evaluateGates(g).passed());
    g.allowUnsigned = true;
    const GateVerdict v = evaluateGates(g);
    QVERIFY2(v.passed(), v.sentence().c_str());
    QVERIFY(v.unsignedAccepted);
    QCOMPARE(qs(v.checks[1].gate), QString("signed"));
    QVERIFY2(qs(v.checks[1].detail).startsWith("accepted without a valid signature (--allow-unsigned): the performance report "
                                               "is not signed"),
             v.checks[1].detail.c_str());
}

void TestGates::heldOutNotRequiredWhenTheTaskAdmitsNone()
{
    // Every symbol fixed by its range: no shape exists beside the test shapes.
    const Json task = {
        {"schema_version", 1}, {"name", "fixed"}, {"architectures", {"sm_90"}},
        {"symbols", {{"N", {{"min", 1024}, {"max", 1024}}}}},
        {"inputs", {{{"name", "x"}, {"dtype", "fp32"}, {"shape", {"N"}}}}},
        {"outputs", {{{"name", "y"}, {"dtype", "fp32"}, {"shape", {"N"}}}}},
        {"shapes", {{"tests", {{{"N", 1024}}}}, {"benchmarks", {{{"N", 1024}}}}}},
        {"reference", {{"op", "relu"}, {"inputs", {"x"}}}},
        {"candidates", {{{"file", "k.cu"}, {"launches", {{{"kernel", "k"}, {"grid", 4}, {"block", 256}, {"args", {"x", "y"}}}}}}}}};
    auto t = parseTask(task, "fixed task");
    KF_VERIFY_OK(t);
    QCOMPARE(heldOutRequiredFor(t.value()), 0);
    QVERIFY(deriveHeldOutShapes(t.value(), 1, 2).empty());
    auto softmax = loadTask(m_taskDir);
    KF_VERIFY_OK(softmax);
    QCOMPARE(heldOutRequiredFor(softmax.value()), 1);
}

void TestGates::evidenceIsCollectedFromReportsAndDocuments()
{
    PromotionInput in = test::passingInput(m_taskDir, "optimized.cu");
    Json naive = test::correctnessFor(in.task, "naive.cu");
    naive["verdict"] = "fail";
    // A `kforge verify --json` document holding two candidates, and a bare bench report.
    const Json verifyDoc = {{"schema_version", 1}, {"command", "verify"}, {"reports", {naive, in.correctness->document()}}};
    Evidence e = collectEvidence({verifyDoc, in.performance->document()}, "optimized.cu");
    QVERIFY(e.correctness && e.correctness->document() == in.correctness->document());
    QVERIFY(e.performance && e.performance->document() == in.performance->document());
    QVERIFY(e.unreadable.empty());
    e = collectEvidence({verifyDoc}, "naive.cu");
    QVERIFY(e.correctness && e.correctness->header().verdict == kf::protocol::Verdict::Fail);
    QVERIFY(!e.performance);
    e = collectEvidence({Json::array(), Json("garbage")}, "optimized.cu");
    QVERIFY(!e.correctness && !e.performance);
}

// A forged or damaged evidence file is not evidence: it is refused with the JSON pointer of what
// is wrong, and the gates then find no report rather than trusting a half-read one.
void TestGates::malformedEvidenceIsRefusedWithItsPointer_data()
{
    QTest::addColumn<QString>("path");     // a JSON pointer into the correctness report
    QTest::addColumn<QString>("value");    // JSON put there
    QTest::newRow("passed as a string") << "/shapes/0/passed" << R"("yes")";
    QTest::newRow("trials_per_shape as a string") << "/trials_per_shape" << R"("3")";
    QTest::newRow("a shape dim as a float string") << "/shapes/0/shape/B" << R"("8")";
    QTest::newRow("max_abs_error as an object") << "/shapes/0/trials/0/outputs/0/max_abs_error" << R"({"x": 1})";
    QTest::newRow("schema version 9") << "/schema_version" << "9";
}

void TestGates::malformedEvidenceIsRefusedWithItsPointer()
{
    QFETCH(QString, path);
    QFETCH(QString, value);
    PromotionInput in = test::passingInput(m_taskDir, "optimized.cu");
    Json forged = in.correctness->document();
    forged[Json::json_pointer(path.toStdString())] = Json::parse(value.toStdString());
    const Evidence e = collectEvidence({forged, in.performance->document()}, "optimized.cu");
    QVERIFY(!e.correctness);
    QCOMPARE(e.unreadable.size(), size_t(1));
    QCOMPARE(qs(e.unreadable.front().pointer), path);
}

QTEST_GUILESS_MAIN(TestGates)
#include "tst_gates.moc"
