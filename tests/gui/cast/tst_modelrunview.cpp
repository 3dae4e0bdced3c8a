// The model run view (widgets/cast/ModelRunView): what a recorded or fresh model run shows — the
// substitution table, the with/without box plot, the end-to-end speedup labelled model-level,
// fallbacks loudly, the output checks — and that it refuses evidence that is not a model run.
#include "widgets/cast/ModelRunView.h"

#include "testutil.h"

#include <QBoxPlotSeries>
#include <QBoxSet>
#include <QChartView>
#include <QDir>
#include <QLabel>
#include <QTableWidget>
#include <QTest>

using Json = nlohmann::json;
using kf::ui::ModelRunView;

namespace {

Json sampleRun()
{
    Json run = Json::parse(R"json({
      "scope": "model-level, end to end", "model": "block", "package": {"name": "model", "version": "1.0.0"},
      "created_at": "2026-11-27T02:53:04Z", "device": "cuda:0", "gpu": "NVIDIA H200", "torch": "2.11.0+cu130",
      "cuda_driver": "13.0", "runtime": "kernelforge_cast (Python 3.11.7)",
      "inputs": [{"name": "x", "dtype": "float16", "shape": [16384, 4096]}, {"name": "r", "dtype": "float16", "shape": [16384, 4096]}],
      "runs": 30, "warmup": 10,
      "with_kernels_ms": {"median": 1.8055, "min": 1.79, "max": 1.85, "p10": 1.795, "p90": 1.82},
      "without_kernels_ms": {"median": 1.8746, "min": 1.86, "max": 1.92, "p10": 1.865, "p90": 1.89},
      "speedup": 1.038,
      "substitution": [
        {"node": "add", "op": "add", "status": "substituted", "cast_op": "fused_add_rms_norm_fp16", "reason": ""},
        {"node": "rms_norm", "op": "rms_norm", "status": "substituted", "cast_op": "fused_add_rms_norm_fp16", "reason": ""},
        {"node": "matmul", "op": "matmul", "status": "kept", "cast_op": "", "reason": "no packaged kernel implements matmul"},
        {"node": "gelu", "op": "gelu", "status": "kept", "cast_op": "", "reason": "no packaged kernel implements gelu"}],
      "fallbacks": {},
      "check": {"fp64": "ran", "outputs": [
        {"index": 0, "dtype": "float32", "shape": [16384, 4096],
         "kernels_vs_original": {"max_abs": 0.000336, "rms": 1.47e-07, "finite_alike": true},
         "kernels_vs_fp64": {"max_abs": 0.0021, "rms": 3.88e-06, "finite_alike": true},
         "original_vs_fp64": {"max_abs": 0.0021, "rms": 3.88e-06, "finite_alike": true}}]}})json");
    run["speedup"] = 1.8746 / 1.8055;   // what the medians say: a reader checks it
    return run;
}

} // namespace

class TestModelRunView : public QObject {
    Q_OBJECT

private slots:
    void showsARun();
    void fallbacksAreLoud();
    void refusesWhatIsNotAModelRun_data();
    void refusesWhatIsNotAModelRun();
    void valuesFromTheFileAreText();
    void runWithoutKernels();
    void screenshot();
};

void TestModelRunView::showsARun()
{
    ModelRunView v;
    QVERIFY(v.setEvidence(sampleRun()));
    const QString summary = v.summary()->text();
    for (const char* text : {"block", "NVIDIA H200", "1.038×", "model-level, end to end", "op-level microbenchmarks",
                             "2 of 4 candidate call sites", "no fallback"})
        QVERIFY2(summary.contains(QString::fromUtf8(text)), text);
    QCOMPARE(v.sites()->rowCount(), 4);
    QCOMPARE(v.sites()->item(0, 2)->text(), QString("substituted"));
    QCOMPARE(v.sites()->item(0, 3)->text(), QString("cast::fused_add_rms_norm_fp16"));
    QCOMPARE(v.sites()->item(2, 3)->text(), QString("no packaged kernel implements matmul"));
    QCOMPARE(v.boxes()->count(), 2);
    QCOMPARE(v.boxes()->boxSets()[0]->at(QBoxSet::Median), 1.8055);
    QCOMPARE(v.boxes()->boxSets()[1]->at(QBoxSet::UpperExtreme), 1.92);
    QCOMPARE(v.checks()->rowCount(), 1);
    QVERIFY(v.checks()->item(0, 3)->text().contains("max 0.0021"));
}

void TestModelRunView::fallbacksAreLoud()
{
    Json run = sampleRun();
    run["fallbacks"] = {{"fused_add_rms_norm_fp16", 40}};
    ModelRunView v;
    QVERIFY(v.setEvidence(run));
    QVERIFY(v.summary()->text().contains("cast::fused_add_rms_norm_fp16 fell back 40 time(s)"));
    QVERIFY(!v.summary()->text().contains("no fallback"));
}

void TestModelRunView::refusesWhatIsNotAModelRun_data()
{
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("message");
    QTest::newRow("op-level scope") << "scope" << "\"op-level, microbenchmark\"" << "model-level, end to end";
    QTest::newRow("unknown key") << "op_speedup" << "1.5" << "op_speedup";
    QTest::newRow("speedup a string") << "speedup" << "\"fast\"" << "speedup";
    QTest::newRow("speedup not the medians'") << "speedup" << "1.5" << "ratio of the two medians";
    QTest::newRow("check without outputs") << "check" << "{\"fp64\": \"ran\"}" << "/check";
    QTest::newRow("fallback of an op that did not run") << "fallbacks" << "{\"softmax_fp32\": 2}" << "substituted in this run";
}

void TestModelRunView::refusesWhatIsNotAModelRun()
{
    QFETCH(QString, key);
    QFETCH(QString, value);
    QFETCH(QString, message);
    Json run = sampleRun();
    run[key.toStdString()] = Json::parse(value.toStdString());
    ModelRunView v;
    QVERIFY(v.setEvidence(sampleRun()));
    QVERIFY(!v.setEvidence(run));
    QVERIFY2(v.summary()->text().contains("Not a model run"), qPrintable(v.summary()->text()));
    QVERIFY2(v.summary()->text().contains(message), qPrintable(v.summary()->text()));
    QCOMPARE(v.sites()->rowCount(), 0);   // nothing of the earlier run stays on screen
    QCOMPARE(v.boxes()->count(), 0);
}

void TestModelRunView::valuesFromTheFileAreText()
{
    Json run = sampleRun();
    run["created_at"] = "%9 <b>%1</b>";   // placeholders and markup from the file stay literal text
    ModelRunView v;
    QVERIFY(v.setEvidence(run));
    QVERIFY2(v.summary()->text().contains("recorded %9 &lt;b&gt;%1&lt;/b&gt;"), qPrintable(v.summary()->text()));
    QVERIFY(v.summary()->text().contains("1.038×"));
}

void TestModelRunView::runWithoutKernels()
{
    Json run = sampleRun();
    run.erase("with_kernels_ms");
    run["speedup"] = nullptr;
    run["check"] = nullptr;
    ModelRunView v;
    QVERIFY(v.setEvidence(run));
    QCOMPARE(v.boxes()->count(), 1);
    QVERIFY(v.summary()->text().contains("not measured"));
    QCOMPARE(v.checks()->rowCount(), 0);
}

void TestModelRunView::screenshot()
{
    const QString dir = qEnvironmentVariable("KF_SCREENSHOT_DIR");
    if (dir.isEmpty())
        QSKIP("set KF_SCREENSHOT_DIR to save the model run view's screenshot");
    QDir().mkpath(dir);
    ModelRunView v;
    v.resize(1100, 560);
    QVERIFY(v.setEvidence(sampleRun()));
    v.show();
    QVERIFY(QTest::qWaitForWindowExposed(&v));
    QVERIFY(v.grab().save(QDir(dir).filePath(QStringLiteral("model-run-view.png"))));
}

QTEST_MAIN(TestModelRunView)
#include "tst_modelrunview.moc"
