// The torch.compile baseline as kforge sees it (engine/protocol/CompileBaseline.h,
// engine/cast/CompileBaselineRun.h): the harness's result read as outside input, merged into a
// performance report, read back by the product's reader; and the plumbing to the harness process,
// driven by a scripted stand-in (tests/data/harness/scripted_harness.py). The harness itself is
// tested by tests/baseline (CPU) and gpu.baseline.compile (H100).
#include "registryfixture.h"
#include "testutil.h"

#include "engine/cast/CompileBaselineRun.h"
#include "engine/compile/Compiler.h"
#include "engine/compile/TaskCompile.h"
#include "engine/protocol/RunReport.h"
#include "engine/protocol/BenchReport.h"
#include "engine/protocol/CompileBaseline.h"
#include "engine/task/Task.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cstdlib>

using namespace kf;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

json harnessShape(const std::string& label, double eager, double cand, double best, bool measured = true)
{
    return {{"label", label},
            {"measured", measured},
            {"reason", measured ? "" : "the harness failed: boom"},
            {"eager", {{"median_ms", eager}, {"samples", 30}}},
            {"candidate", {{"median_ms", cand}, {"samples", 30}}},
            {"compiled",
             {{"default", {{"measured", true}, {"reason", ""}, {"compile_s", 1.0}, {"timing", {{"median_ms", best * 1.1}, {"samples", 30}}}}},
              {"max-autotune-no-cudagraphs",
               {{"measured", true}, {"reason", ""}, {"compile_s", 4.0}, {"timing", {{"median_ms", best}, {"samples", 30}}}}}}}};
}

json harness(json shapes, bool measured = true, const std::string& reason = "")
{
    return {{"schema_version", 1}, {"measured", measured}, {"reason", reason}, {"device", "cuda"},
            {"gpu", "NVIDIA H100 80GB HBM3"}, {"modes", {"default", "max-autotune-no-cudagraphs"}},
            {"torch", "2.11.0+cu130"}, {"triton", "3.6.0"}, {"python", "3.12.3"},
            {"candidate_image", "cubin sm_90 (forced)"}, {"shapes", shapes}};
}

} // namespace

class TestCompileBaseline : public QObject {
    Q_OBJECT

    Task m_task;
    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        const fs::path folder = test::copyExample("fused_add_rms_norm_fp16", m_dir.path().toStdString());
        auto t = loadTask(folder);
        QVERIFY2(t, t ? "" : t.error().message().c_str());
        m_task = std::move(t.value());
        QCOMPARE(m_task.benchmarkShapes.size(), size_t(2));
    }

    // The runner's report for optimized.cu: baseline 0.1 ms, candidate 0.1/speedup.
    json runnerReport() const { return test::performanceFor(m_task, "optimized.cu", {1.25, 1.1}); }
    std::string key(size_t i) const
    {
        auto r = protocol::BenchReport::fromJson(runnerReport());
        return r.value().shapes.at(i).id.text(true);
    }

    void merge_data()
    {
        QTest::addColumn<QString>("harnessJson");
        QTest::addColumn<bool>("measured");
        QTest::addColumn<double>("geomean");
        QTest::addColumn<int>("flags");
        QTest::addColumn<QString>("reason");
        const std::string a = key(0), b = key(1);
        auto row = [](const char* name, const json& h, bool m, double g, int f, const char* why) {
            QTest::newRow(name) << QString::fromStdString(h.dump()) << m << g << f << why;
        };
        // Runner medians: baseline 0.1 on both; candidate 0.08 and 0.0909.
        row("both shapes, harness agrees", harness({harnessShape(a, 0.1, 0.08, 0.072), harnessShape(b, 0.1, 0.0909, 0.1)}), true,
            std::sqrt(0.9 * 1.1), 0, "");
        row("eager 10 % off: flagged", harness({harnessShape(a, 0.11, 0.08, 0.08), harnessShape(b, 0.1, 0.0909, 0.0909)}), true, 1.0,
            1, "");
        row("one shape failed in the harness", harness({harnessShape(a, 0.1, 0.08, 0.08), harnessShape(b, 0.1, 0.09, 0.09, false)}),
            true, 1.0, 0, "");
        row("harness not measured", harness(json::array(), false, "Triton is not installed"), false, 0.0, 0,
            "Triton is not installed");
        row("labels that match no shape", harness({harnessShape("other (B=1 D=1) [benchmarks]", 0.1, 0.1, 0.1)}), false, 0.0, 0,
            "no shape was timed against torch.compile");
        json eagerOnly = harnessShape(a, 0.1, 0.08, 0.08);
        eagerOnly["flags"] = {"checked against eager, not a float64 result: integer outputs are compared exactly with eager's"};
        row("checked against eager: the harness's flag is kept", harness({eagerOnly, harnessShape(b, 0.1, 0.0909, 0.0909)}), true,
            1.0, 1, "");
        json zero = harnessShape(a, 0.1, 0.08, 0.0);
        row("a compiled time of zero is no speedup", harness({zero}), false, 0.0, 0, "no shape was timed");
    }

    void merge()
    {
        QFETCH(QString, harnessJson);
        QFETCH(bool, measured);
        QFETCH(double, geomean);
        QFETCH(int, flags);
        QFETCH(QString, reason);
        auto h = protocol::readHarnessResult(harnessJson.toStdString(), "test");
        QVERIFY2(h, h ? "" : h.error().message().c_str());
        json report = runnerReport();
        protocol::mergeCompileBaseline(report, h.value());
        // What the product reads back: the same reader as for the runner's fields.
        auto back = protocol::BenchReport::fromJson(report);
        QVERIFY2(back, back ? "" : back.error().message().c_str());
        QVERIFY(back->compileBaseline);
        QCOMPARE(back->compileBaseline->measured, measured);
        QVERIFY2(QString::fromStdString(back->compileBaseline->reason).contains(reason),
                 back->compileBaseline->reason.c_str());
        if (measured) {
            QVERIFY(back->compileSpeedup());
            QVERIFY2(std::abs(*back->compileSpeedup() - geomean) < 2e-3, std::to_string(*back->compileSpeedup()).c_str());
            QCOMPARE(back->compileBaseline->torch, std::string("2.11.0+cu130"));
            const protocol::CompileComparison& c = *back->shapes.at(0).compile;
            QCOMPARE(c.bestMode, std::string("max-autotune-no-cudagraphs"));   // the faster mode
            QCOMPARE(c.modes.size(), size_t(2));
            QVERIFY(c.eagerGapPct && c.candidateGapPct);
            int flagged = 0;
            for (const auto& s : back->shapes)
                flagged += s.compile ? int(s.compile->flags.size()) : 0;
            QCOMPARE(flagged, flags);
            // toJson and back keeps every field the tables and the registry show.
            auto again = protocol::BenchReport::fromJson(back->toJson());
            QVERIFY(again);
            QCOMPARE(again->compileSpeedup(), back->compileSpeedup());
            QCOMPARE(again->shapes.at(0).compile->speedup, c.speedup);
        } else {
            QVERIFY(!back->compileSpeedup());
        }
    }

    void readerRefuses_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("error");
        QTest::newRow("not JSON") << "{\"schema_version\": 1," << "the harness's result";
        QTest::newRow("another schema") << R"({"schema_version": 2, "measured": true})" << "/schema_version";
        QTest::newRow("no label") << R"({"schema_version": 1, "shapes": [{"label": "", "measured": false}]})" << "/shapes/0/label";
        QTest::newRow("negative samples")
            << R"({"schema_version": 1, "shapes": [{"label": "a", "eager": {"samples": -1}}]})" << "/shapes/0/eager/samples";
        QTest::newRow("negative time")
            << R"({"schema_version": 1, "shapes": [{"label": "a", "eager": {"median_ms": -3, "samples": 2}}]})"
            << "/shapes/0/eager/median_ms";
        QTest::newRow("measured without eager") << R"({"schema_version": 1, "shapes": [{"label": "a", "measured": true}]})"
                                                << "/shapes/0/eager";
        QTest::newRow("measured mode without a time")
            << R"({"schema_version": 1, "shapes": [{"label": "a", "compiled": {"default": {"measured": true}}}]})"
            << "/shapes/0/compiled/default/timing";
        QTest::newRow("modes not a list") << R"({"schema_version": 1, "modes": "default"})" << "/modes";
    }

    void readerRefuses()
    {
        QFETCH(QString, text);
        QFETCH(QString, error);
        auto h = protocol::readHarnessResult(text.toStdString(), "the harness's result");
        QVERIFY(!h);
        QVERIFY2(QString::fromStdString(h.error().message()).contains(error), h.error().message().c_str());
    }

    void reportRefusesAForgedComparison()
    {
        json report = runnerReport();
        report["compile_baseline"] = {{"measured", false}, {"reason", ""}};
        QVERIFY(!protocol::BenchReport::fromJson(report));        // not measured, and no reason
        report = runnerReport();
        report["shapes"][0]["compile"] = {{"measured", true}, {"speedup", 0}};
        QVERIFY(!protocol::BenchReport::fromJson(report));        // measured, and no speedup
        report["shapes"][0]["compile"] = {{"measured", true}, {"speedup", 2.0}, {"best_ms", 0.09}, {"candidate_ms", 0.1}};
        auto forged = protocol::BenchReport::fromJson(report);   // a claim the medians do not give
        QVERIFY(!forged);
        QVERIFY2(forged.error().message().find("not best_ms / candidate_ms") != std::string::npos, forged.error().message().c_str());
    }

    void runsTheHarness_data()
    {
        QTest::addColumn<QString>("behaviour");
        QTest::addColumn<QString>("python");
        QTest::addColumn<bool>("measured");
        QTest::addColumn<QString>("reason");
        const QString script = QString(KF_TEST_DATA_DIR) + "/harness/scripted_harness.py";
        QTest::newRow("measured") << "measured" << script << true << "";
        QTest::newRow("the harness is killed") << "crash" << script << false << "the harness was killed";
        QTest::newRow("a result that does not read") << "garbage" << script << false << "/shapes/0/label";
        QTest::newRow("no such python") << "measured" << "/nonexistent/python3" << false << "cannot start /nonexistent/python3";
    }

    void runsTheHarness()
    {
        QFETCH(QString, behaviour);
        QFETCH(QString, python);
        QFETCH(bool, measured);
        QFETCH(QString, reason);
        qputenv("KF_SCRIPTED_HARNESS", behaviour.toUtf8());
        const auto report = protocol::RunReport::fromJson(runnerReport());
        KF_VERIFY_OK(report);
        cast::CompileBaselineOptions opts;
        opts.python = python.toStdString();
        opts.pythonPath = {std::string(KF_SOURCE_DIR) + "/device/baseline/python"};
        const Candidate* c = m_task.findCandidate("optimized.cu");
        QVERIFY(c);
        const protocol::RunReport merged = compared(*report, *c, opts);
        const auto& back = merged.bench();
        QVERIFY(back);
        QVERIFY(back->compileBaseline);
        QVERIFY2(back->compileBaseline->measured == measured, back->compileBaseline->reason.c_str());
        QVERIFY2(QString::fromStdString(back->compileBaseline->reason).contains(reason), back->compileBaseline->reason.c_str());
        if (measured) {
            // The scripted harness checked the spec (task, cubin, launches, PYTHONPATH) and answered
            // for both shapes, matched back by their labels.
            for (const auto& s : back->shapes) {
                QVERIFY(s.compile && s.compile->measured);
                QCOMPARE(s.compile->bestMode, std::string("max-autotune-no-cudagraphs"));
            }
            QCOMPARE(back->compileBaseline->candidateImage, std::string("cubin sm_90 (forced)"));
        }
    }

    void notMeasuredWhenTheBenchmarkFailed()
    {
        json failed = runnerReport();
        failed["verdict"] = "fail";
        const auto report = protocol::RunReport::fromJson(failed);
        KF_VERIFY_OK(report);
        const protocol::RunReport merged = compared(*report, *m_task.findCandidate("optimized.cu"), {});
        const json& j = merged.document();
        QCOMPARE(j["compile_baseline"]["measured"], json(false));
        QVERIFY(j["compile_baseline"]["reason"].get<std::string>().find("did not finish (verdict fail)") != std::string::npos);
    }

    // A TorchScript reference goes to the harness as the op tape read from the scripted module,
    // which the harness compiles in its place (device/baseline/python: spec_task).
    void aTorchScriptReferenceGoesAsItsOpTape()
    {
        QTemporaryDir dir;
        const fs::path folder = fs::path(dir.path().toStdString()) / "task";
        fs::copy(fs::path(KF_TEST_DATA_DIR) / "generate" / "gen_script_scale_softmax_fp32", folder, fs::copy_options::recursive);
        auto task = loadTask(folder);
        KF_VERIFY_OK(task);
        const fs::path specCopy = fs::path(dir.path().toStdString()) / "spec.json";
        qputenv("KF_SCRIPTED_HARNESS", "measured");
        qputenv("KF_SCRIPTED_HARNESS_SPEC", QByteArray::fromStdString(specCopy.string()));
        const auto report = protocol::RunReport::fromJson(test::performanceFor(*task, "generated.cu", {1.25, 1.1}));
        KF_VERIFY_OK(report);
        cast::CompileBaselineOptions opts;
        opts.python = std::string(KF_TEST_DATA_DIR) + "/harness/scripted_harness.py";
        opts.pythonPath = {std::string(KF_SOURCE_DIR) + "/device/baseline/python"};
        const protocol::RunReport merged = compared(*task, *report, *task->findCandidate("generated.cu"), opts);
        qunsetenv("KF_SCRIPTED_HARNESS_SPEC");
        QVERIFY(merged.bench() && merged.bench()->compileBaseline);
        QVERIFY2(merged.bench()->compileBaseline->measured, merged.bench()->compileBaseline->reason.c_str());
        auto spec = readFileBytes(specCopy);
        KF_VERIFY_OK(spec);
        const json tape = json::parse(*spec).at("reference_tape");
        QCOMPARE(tape.size(), size_t(2));
        QCOMPARE(tape[0]["op"], json("mul"));
        QCOMPARE(tape[0]["attrs"]["scalar"].get<double>(), 0.125);
        QCOMPARE(tape[1]["op"], json("softmax"));
        QCOMPARE(tape[1]["output"], json("y"));
    }

private:
    /// What the pipeline does after a benchmark (engine/pipeline/RunPipeline.cpp): the cubin the
    /// runner timed goes to the harness, and the report gains the comparison or its reason.
    protocol::RunReport compared(const protocol::RunReport& report, const Candidate& c, const cast::CompileBaselineOptions& opts)
    {
        return compared(m_task, report, c, opts);
    }
    protocol::RunReport compared(const Task& task, const protocol::RunReport& report, const Candidate& c,
                                 const cast::CompileBaselineOptions& opts)
    {
        CompileResult built;
        if (auto req = compileRequestFor(task, c, "sm_90"))
            if (auto r = compile(req.value()))
                built = r.value();
        auto measured = cast::measureCompileBaseline(report, task, task.directory / "task.json", c, built, opts);
        return measured ? report.withCompileBaseline(measured.value()) : report.withCompileNotMeasured(measured.error().why);
    }
};

QTEST_GUILESS_MAIN(TestCompileBaseline)
#include "tst_compilebaseline.moc"
