// The registry browser as a user drives it, over a real registry promoted on disk (no GPU): the
// buttons follow the selection and emit the selected ID, an empty registry says how to fill it,
// the details pane shows the entry's evidence, source, reports and one bar per benchmark shape,
// and the Diff tab asks for the right other version and shows its diff.
#include "testutil.h"

#include "registrysample.h"

#include "widgets/editor/KernelEditor.h"
#include "widgets/registry/DiffView.h"
#include "widgets/registry/ExportCastDialog.h"
#include "widgets/registry/RegistryBrowser.h"
#include "widgets/registry/RegistryFilterModel.h"
#include "widgets/registry/RegistryModel.h"
#include "widgets/registry/SpeedupChart.h"
#include "widgets/runs/ResultsModel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QTableWidget>
#include <QDialogButtonBox>
#include <QItemSelectionModel>
#include <QListWidget>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBrowser>

#include <cmath>
#include <memory>

using kf::ui::RegistryBrowser;
using kf::ui::RegistryModel;
using nlohmann::json;

class TestRegistryBrowser : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void buttonsFollowTheSelection_data();
    void buttonsFollowTheSelection();
    void buttonsEmitTheSelectedId_data();
    void buttonsEmitTheSelectedId();
    void placeholderSaysHowToFillAnEmptyRegistry();
    void placeholderWhenTheFilterHidesEverything();
    void detailsFillEveryTab();
    void detailsForAnotherEntryAreIgnored();
    void sanitizerGateNotRunIsShownAsNotRun();
    void chartHasOneBarPerShape_data();
    void chartHasOneBarPerShape();
    void secondBaselineShowsBesideTheFirst();
    void diffAsksForThePreviousVersion();
    void refreshKeepsTheSelectionAndUpdatesButtons();
    void directoryIsShownWithTooltip();
    void exportDialogOffersVersionsAndTargets_data();
    void exportDialogOffersVersionsAndTargets();
    void modelRunsBesideTheOpsEvidence();
    void exportDialogModels_data();
    void exportDialogModels();
    void screenshots();

private:
    void load(RegistryBrowser& b) const;

    std::unique_ptr<QTemporaryDir> m_tmp;
    kf::test::SampleRegistry m_sample;
    kf::RegistryIndex m_index;
};

void TestRegistryBrowser::initTestCase()
{
    m_tmp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_tmp->isValid());
    m_sample = kf::test::makeSampleRegistry(m_tmp->path().toStdString());
    QVERIFY2(m_sample.error.isEmpty(), qPrintable(m_sample.error));
    auto index = kf::Registry(m_sample.directory).load();
    KF_VERIFY_OK(index);
    m_index = index.value();
    QCOMPARE(int(m_index.kernels.size()), 4);
}

void TestRegistryBrowser::load(RegistryBrowser& b) const
{
    b.setDirectory(QString::fromStdString(m_sample.directory.string()));
    b.setIndex(m_index);
}

void TestRegistryBrowser::buttonsFollowTheSelection_data()
{
    QTest::addColumn<QString>("id");
    QTest::addColumn<bool>("deprecate");
    QTest::addColumn<bool>("others");
    QTest::newRow("nothing selected: nothing to act on") << QString() << false << false;
    QTest::newRow("active version: every action") << m_sample.softmaxV2 << true << true;
    QTest::newRow("deprecated version: all but Deprecate") << m_sample.softmaxV1 << false << true;
}

void TestRegistryBrowser::buttonsFollowTheSelection()
{
    QFETCH(QString, id);
    QFETCH(bool, deprecate);
    QFETCH(bool, others);
    RegistryBrowser b;
    load(b);
    if (!id.isEmpty())
        QVERIFY(b.selectId(id));
    QCOMPARE(b.currentId(), id);
    QCOMPARE(b.deprecateButton()->isEnabled(), deprecate);
    QCOMPARE(b.openButton()->isEnabled(), others);
    QCOMPARE(b.reverifyButton()->isEnabled(), others);
    QCOMPARE(b.removeButton()->isEnabled(), others);
}

void TestRegistryBrowser::buttonsEmitTheSelectedId_data()
{
    QTest::addColumn<QString>("button");
    QTest::newRow("Open as candidate") << "open";
    QTest::newRow("Re-verify on this GPU") << "reverify";
    QTest::newRow("Deprecate…") << "deprecate";
    QTest::newRow("Remove…") << "remove";
}

void TestRegistryBrowser::buttonsEmitTheSelectedId()
{
    QFETCH(QString, button);
    RegistryBrowser b;
    load(b);
    QSignalSpy open(&b, &RegistryBrowser::openAsCandidateRequested);
    QSignalSpy reverify(&b, &RegistryBrowser::reverifyRequested);
    QSignalSpy deprecate(&b, &RegistryBrowser::deprecateRequested);
    QSignalSpy remove(&b, &RegistryBrowser::removeRequested);
    QVERIFY(b.selectId(m_sample.layerNorm));
    const QMap<QString, std::pair<QPushButton*, QSignalSpy*>> buttons = {{"open", {b.openButton(), &open}},
                                                                        {"reverify", {b.reverifyButton(), &reverify}},
                                                                        {"deprecate", {b.deprecateButton(), &deprecate}},
                                                                        {"remove", {b.removeButton(), &remove}}};
    QTest::mouseClick(buttons[button].first, Qt::LeftButton);
    for (auto it = buttons.begin(); it != buttons.end(); ++it) {
        QCOMPARE(it.value().second->count(), it.key() == button ? 1 : 0);
    }
    QCOMPARE(buttons[button].second->takeFirst().at(0).toString(), m_sample.layerNorm);
}

void TestRegistryBrowser::placeholderSaysHowToFillAnEmptyRegistry()
{
    RegistryBrowser b;
    QVERIFY(b.placeholderShown());
    QCOMPARE(b.placeholderText(), QStringLiteral("Loading the registry…"));
    b.setIndex(kf::RegistryIndex{});
    QVERIFY(b.placeholderShown());
    QCOMPARE(b.placeholderText(), QStringLiteral("No verified kernels yet: verify (F5) and benchmark (F6) a candidate, then Promote."));
    QVERIFY(!b.openButton()->isEnabled());
    b.setIndex(m_index);
    QVERIFY(!b.placeholderShown());
    QCOMPARE(b.table()->model()->rowCount(), 4);
}

void TestRegistryBrowser::placeholderWhenTheFilterHidesEverything()
{
    RegistryBrowser b;
    load(b);
    QVERIFY(b.selectId(m_sample.softmaxV2));
    QSignalSpy current(&b, &RegistryBrowser::currentChanged);
    QTest::keyClicks(b.filterEdit(), QStringLiteral("gemm"));
    QVERIFY(b.placeholderShown());
    QCOMPARE(b.placeholderText(), QStringLiteral("No kernel matches the filter: change or clear it."));
    // The selection went with the row: nothing to act on.
    QCOMPARE(b.currentId(), QString());
    QCOMPARE(current.count(), 1);
    QCOMPARE(current.first().at(0).toString(), QString());
    QVERIFY(!b.removeButton()->isEnabled());
    b.filterEdit()->clear();
    QVERIFY(!b.placeholderShown());
    b.showDeprecatedBox()->setChecked(false);
    QTest::keyClicks(b.filterEdit(), QStringLiteral("softmax h100"));
    QCOMPARE(b.table()->model()->rowCount(), 1); // v2; v1 is deprecated and hidden
}

void TestRegistryBrowser::detailsFillEveryTab()
{
    RegistryBrowser b;
    load(b);
    QSignalSpy current(&b, &RegistryBrowser::currentChanged);
    QVERIFY(b.selectId(m_sample.softmaxV2));
    QCOMPARE(current.count(), 1);
    QCOMPARE(current.first().at(0).toString(), m_sample.softmaxV2);

    const kf::ui::RegistryDetails d = kf::test::readDetails(m_sample.directory, m_sample.softmaxV2);
    QVERIFY(d.error.isEmpty());
    b.setDetails(d);
    const QString evidence = b.evidenceView()->toPlainText();
    // The scope sentence, every gate with its mark, and the environment.
    QVERIFY2(evidence.contains(QStringLiteral("op-level microbenchmark of softmax (fp32) on NVIDIA H100 80GB HBM3")), qPrintable(evidence));
    QVERIFY(evidence.contains(QStringLiteral("not an end-to-end model speedup")));
    QVERIFY(d.promotion);
    QCOMPARE(d.promotion->gates.size(), size_t(9));
    for (const kf::GateCheck& g : d.promotion->gates) {
        QVERIFY2(evidence.contains(QString::fromStdString(g.title)), g.title.c_str());
        QVERIFY2(evidence.contains(QString::fromStdString(g.detail)), g.detail.c_str());
    }
    QCOMPARE(evidence.count(QStringLiteral("✓")), int(d.promotion->gates.size()));
    QVERIFY(!evidence.contains(QStringLiteral("✗")));
    for (const char* fact : {"580.159.04", "13.0", "2.11.0", "0x9f01, 0x9f02, 0x9f03", "threshold at promotion 1.10×",
                             "Sanitizer policy at promotion: if_available · compute-sanitizer 2025.3.1.0 ran memcheck, racecheck, "
                             "initcheck, synccheck"})
        QVERIFY2(evidence.contains(QString::fromUtf8(fact)), fact);

    QCOMPARE(b.sourceView()->text(), d.source);
    QVERIFY(b.sourceView()->isReadOnly());
    QVERIFY(b.sourceView()->text().contains(QStringLiteral("expf again")));
    // Both reports in the table: test, held-out and benchmark shapes.
    QVERIFY(b.reportsModel()->rowCount() >= 4);
    QCOMPARE(b.chart()->barCount(), 2);
}

// A kernel promoted where the runner's host had no compute-sanitizer (the default policy lets it
// through): its gate is marked as not run, never with the pass mark.
void TestRegistryBrowser::sanitizerGateNotRunIsShownAsNotRun()
{
    RegistryBrowser b;
    load(b);
    QVERIFY(b.selectId(m_sample.softmaxV2));
    kf::ui::RegistryDetails d = kf::test::readDetails(m_sample.directory, m_sample.softmaxV2);
    QVERIFY(d.error.isEmpty() && d.promotion);
    kf::GateCheck& g = d.promotion->gates.at(3);
    QCOMPARE(QString::fromStdString(g.gate), QStringLiteral("sanitizer"));
    g.passed = false;
    g.notRun = true;
    g.detail = "no compute-sanitizer on gpu-7";
    d.promotion->sanitizer->outcome = "not_run";
    d.promotion->sanitizer->tools.clear();
    b.setDetails(d);
    const QString evidence = b.evidenceView()->toPlainText();
    QVERIFY2(evidence.contains(QStringLiteral("Clean under compute-sanitizer (not run)")), qPrintable(evidence));
    QVERIFY(evidence.contains(QStringLiteral("no compute-sanitizer on gpu-7")));
    QCOMPARE(evidence.count(QStringLiteral("✓")), int(d.promotion->gates.size()) - 1);
    QCOMPARE(evidence.count(QStringLiteral("–")), 1);
    QVERIFY(!evidence.contains(QStringLiteral("✗")));
    QVERIFY(evidence.contains(QStringLiteral("Sanitizer policy at promotion: if_available")));
    QVERIFY(!evidence.contains(QStringLiteral("ran memcheck")));
}

void TestRegistryBrowser::detailsForAnotherEntryAreIgnored()
{
    RegistryBrowser b;
    load(b);
    QVERIFY(b.selectId(m_sample.layerNorm));
    b.setDetails(kf::test::readDetails(m_sample.directory, m_sample.softmaxV2)); // a late answer for an old selection
    QVERIFY(b.sourceView()->text().isEmpty());
    QCOMPARE(b.chart()->barCount(), 0);
    QVERIFY(b.evidenceView()->toPlainText().startsWith(QStringLiteral("Loading the evidence of ") + m_sample.layerNorm));
}

void TestRegistryBrowser::chartHasOneBarPerShape_data()
{
    QTest::addColumn<QList<double>>("speedups");
    QTest::addColumn<QStringList>("suffixes");
    const double nan = std::nan("");
    const double inf = INFINITY;
    QTest::newRow("two shapes") << QList<double>{1.48, 1.61} << QStringList{"1.48×", "1.61×"};
    QTest::newRow("nan and inf from the runner") << QList<double>{nan, inf} << QStringList{"nan", "inf"};
    QTest::newRow("one slower than LibTorch") << QList<double>{0.93, 1.4} << QStringList{"0.93×", "1.40×"};
}

void TestRegistryBrowser::chartHasOneBarPerShape()
{
    QFETCH(QList<double>, speedups);
    QFETCH(QStringList, suffixes);
    json perf = kf::test::readDetails(m_sample.directory, m_sample.softmaxV2).performance->document();
    QCOMPARE(int(perf.at("shapes").size()), int(speedups.size()));
    for (int i = 0; i < speedups.size(); ++i) {
        const double v = speedups[i];
        perf["shapes"][size_t(i)]["speedup"] = std::isnan(v) ? json("nan") : std::isinf(v) ? json("inf") : json(v);
    }
    kf::ui::SpeedupChart chart;
    const kf::protocol::RunReport edited = kf::test::report(perf);
    chart.setReport(&*edited.bench(), 1.10);
    QCOMPARE(chart.barCount(), int(speedups.size()));
    const QStringList categories = chart.categories();
    QCOMPARE(categories.size(), int(speedups.size()));
    QVERIFY(categories[0].startsWith(QStringLiteral("8k-rows-of-4k")));
    for (int i = 0; i < categories.size(); ++i)
        QVERIFY2(categories[i].endsWith(suffixes[i]), qPrintable(categories[i]));
    QCOMPARE(chart.referenceLines(), (QList<double>{1.0, 1.10}));
    QCOMPARE(chart.threshold(), 1.10);
    for (int i = 0; i < speedups.size(); ++i)
        QCOMPARE(std::isnan(chart.speedups()[i]), std::isnan(speedups[i]));
    chart.setReport(nullptr, 1.10);
    QCOMPARE(chart.barCount(), 0);
    QVERIFY(chart.referenceLines().isEmpty());
}

void TestRegistryBrowser::secondBaselineShowsBesideTheFirst()
{
    // softmax v2 was compared with torch.compile (0.92x); the A100 version was not.
    const kf::ui::RegistryDetails v2 = kf::test::readDetails(m_sample.directory, m_sample.softmaxV2);
    QVERIFY(v2.promotion && v2.promotion->compileSpeedup);
    QVERIFY(std::abs(*v2.promotion->compileSpeedup - 0.92) < 1e-9);
    QVERIFY(v2.entry.compileSpeedup);
    kf::ui::SpeedupChart chart;
    chart.setReport(&*v2.performance->bench(), 1.10);
    QCOMPARE(chart.barCount(), 2);
    QCOMPARE(chart.compileSpeedups().size(), 2);
    for (double v : chart.compileSpeedups())
        QVERIFY(std::abs(v - 0.92) < 1e-9);
    QVERIFY2(chart.chart()->title().contains(QStringLiteral("0.92× torch.compile")), qPrintable(chart.chart()->title()));
    const kf::ui::RegistryDetails a100 = kf::test::readDetails(m_sample.directory, m_sample.softmaxA100);
    chart.setReport(&*a100.performance->bench(), 1.10);
    QVERIFY(chart.compileSpeedups().isEmpty());
    QVERIFY(!chart.chart()->title().contains(QStringLiteral("torch.compile")));

    RegistryBrowser b;
    load(b);
    QVERIFY(b.selectId(m_sample.softmaxV2));
    b.setDetails(v2);
    const QString text = b.evidenceView()->toPlainText();
    QVERIFY2(text.contains(QStringLiteral("Against torch.compile: 0.92× geometric mean over its faster mode")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("0.92× (max-autotune-no-cudagraphs)")), qPrintable(text));
    QVERIFY(b.selectId(m_sample.softmaxA100));
    b.setDetails(a100);
    QVERIFY(b.evidenceView()->toPlainText().contains(QStringLiteral("Against torch.compile: not compared")));
}

void TestRegistryBrowser::diffAsksForThePreviousVersion()
{
    RegistryBrowser b;
    load(b);
    QSignalSpy diff(&b, &RegistryBrowser::diffRequested);
    QVERIFY(b.selectId(m_sample.softmaxV2));
    QCOMPARE(diff.count(), 0); // not before the details (and this version's source) are in
    b.setDetails(kf::test::readDetails(m_sample.directory, m_sample.softmaxV2));
    QCOMPARE(diff.count(), 1);
    QCOMPARE(diff.first().at(0).toString(), m_sample.softmaxV2);
    QCOMPARE(diff.first().at(1).toString(), m_sample.softmaxV1);
    // Same prefix first, then the same op on another GPU; never the layer norm.
    QCOMPARE(b.diffCombo()->count(), 2);
    QCOMPARE(b.diffCombo()->itemData(0).toString(), m_sample.softmaxV1);
    QCOMPARE(b.diffCombo()->itemData(1).toString(), m_sample.softmaxA100);

    const QString v1Source = kf::test::readDetails(m_sample.directory, m_sample.softmaxV1).source;
    b.setDiff(m_sample.softmaxV2, m_sample.softmaxA100, QStringLiteral("stale"), {}); // not what the tab asks for
    QVERIFY(b.diffView()->summaryText().startsWith(QStringLiteral("Reading the source of")));
    b.setDiff(m_sample.softmaxV2, m_sample.softmaxV1, v1Source);
    // v1 is older: it is the left side. v1 used __expf (4 lines), v2 expf plus a note.
    QCOMPARE(b.diffView()->summaryText(), m_sample.softmaxV1 + " → " + m_sample.softmaxV2 + ": 6 lines added, 4 removed");

    b.diffCombo()->setCurrentIndex(1);
    QCOMPARE(diff.count(), 2);
    QCOMPARE(diff.last().at(1).toString(), m_sample.softmaxA100);
    b.setDiff(m_sample.softmaxV2, m_sample.softmaxA100, QString(), QStringLiteral("The source could not be read: run `kforge registry check`."));
    QCOMPARE(b.diffView()->summaryText(), QStringLiteral("The source could not be read: run `kforge registry check`."));
}

void TestRegistryBrowser::refreshKeepsTheSelectionAndUpdatesButtons()
{
    RegistryBrowser b;
    load(b);
    QVERIFY(b.selectId(m_sample.softmaxA100));
    b.setDetails(kf::test::readDetails(m_sample.directory, m_sample.softmaxA100));
    QSignalSpy current(&b, &RegistryBrowser::currentChanged);
    QVERIFY(b.deprecateButton()->isEnabled());

    // Another process deprecates the selected version.
    kf::RegistryIndex next = m_index;
    for (kf::RegistryEntry& e : next.kernels)
        if (QString::fromStdString(e.id) == m_sample.softmaxA100) {
            e.status = "deprecated";
            e.deprecatedAt = "2026-11-24T10:00:00Z";
            e.deprecationReason = "driver 590 made LibTorch faster";
        }
    b.setIndex(next);
    QCOMPARE(b.currentId(), m_sample.softmaxA100);
    QCOMPARE(current.count(), 0);
    QVERIFY(!b.deprecateButton()->isEnabled());
    QVERIFY(b.evidenceView()->toPlainText().contains(QStringLiteral("driver 590 made LibTorch faster")));
    QVERIFY(!b.sourceView()->text().isEmpty()); // the details stay

    // ...and then removes it: the neighbouring row is selected, and its details are asked for.
    next.kernels.erase(std::remove_if(next.kernels.begin(), next.kernels.end(),
                                      [&](const kf::RegistryEntry& e) { return QString::fromStdString(e.id) == m_sample.softmaxA100; }),
                       next.kernels.end());
    b.setIndex(next);
    QCOMPARE(b.model()->rowCount(), 3);
    QVERIFY(!b.currentId().isEmpty());
    QVERIFY(b.currentId() != m_sample.softmaxA100);
    QCOMPARE(current.count(), 1);
    QCOMPARE(current.first().at(0).toString(), b.currentId());
    QVERIFY(b.sourceView()->text().isEmpty());
    QVERIFY(b.evidenceView()->toPlainText().startsWith(QStringLiteral("Loading the evidence of ") + b.currentId()));
}

void TestRegistryBrowser::directoryIsShownWithTooltip()
{
    RegistryBrowser b;
    load(b);
    QCOMPARE(b.directory(), QString::fromStdString(m_sample.directory.string()));
    bool found = false;
    for (const QWidget* w : b.findChildren<QWidget*>())
        found = found || w->toolTip().contains(QDir::toNativeSeparators(QString::fromStdString((m_sample.directory / "verified_kernels.json").string())));
    QVERIFY(found);
}

void TestRegistryBrowser::exportDialogOffersVersionsAndTargets_data()
{
    QTest::addColumn<int>("uncheckArchs");   // how many architecture boxes to clear, from the first
    QTest::addColumn<bool>("uncheckVersion");
    QTest::addColumn<QString>("ptx");
    QTest::addColumn<QString>("problem");
    QTest::newRow("defaults") << 0 << false << "" << "";
    QTest::newRow("no version") << 0 << true << "" << "Check at least one version";
    QTest::newRow("no architecture") << 6 << false << "" << "Choose at least one architecture";
    QTest::newRow("PTX of an unchosen arch") << 1 << false << "compute_80" << "PTX of compute_80 needs sm_80";
    QTest::newRow("no PTX") << 0 << false << "none" << "";
}

void TestRegistryBrowser::exportDialogOffersVersionsAndTargets()
{
    QFETCH(int, uncheckArchs);
    QFETCH(bool, uncheckVersion);
    QFETCH(QString, ptx);
    QFETCH(QString, problem);
    auto index = kf::Registry(m_sample.directory).load();
    QVERIFY(index.ok());
    kf::ui::ExportCastDialog d(index.value(), m_sample.softmaxV2, QStringLiteral("/work/space"));
    // Active versions only (v1 is deprecated), the selected one checked.
    QCOMPARE(d.versions()->count(), 3);
    QCOMPARE(d.choice().ids, QStringList{m_sample.softmaxV2});
    QCOMPARE(d.choice().architectures, (QStringList{"sm_80", "sm_86", "sm_89", "sm_90"}));
    QCOMPARE(d.choice().output, QStringLiteral("/work/space/softmax_fp32.cast"));
    for (int i = 0; i < uncheckArchs; ++i)
        d.architectureBoxes()[i]->setChecked(false);
    if (uncheckVersion)
        for (int i = 0; i < d.versions()->count(); ++i)
            d.versions()->item(i)->setCheckState(Qt::Unchecked);
    d.ptxCombo()->setCurrentIndex(d.ptxCombo()->findData(ptx));
    QCOMPARE(d.choice().ptx, ptx);
    QVERIFY2(problem.isEmpty() ? d.problem().isEmpty() : d.problem().contains(problem), qPrintable(d.problem()));
    QCOMPARE(d.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->isEnabled(), problem.isEmpty());
}

void TestRegistryBrowser::modelRunsBesideTheOpsEvidence()
{
    RegistryBrowser b;
    load(b);
    QVERIFY(b.selectId(m_sample.softmaxV2));
    kf::ui::RegistryDetails d = kf::test::readDetails(m_sample.directory, m_sample.softmaxV2);
    b.setDetails(d);
    QVERIFY(!b.evidenceView()->toPlainText().contains(QStringLiteral("Model-level evidence")));   // none stored
    d.modelRuns.push_back(nlohmann::json::parse(R"json({
      "scope": "model-level, end to end", "model": "block", "package": {"name": "model", "version": "1.0.0"},
      "created_at": "2026-11-27T02:53:04Z", "device": "cuda:0", "gpu": "NVIDIA H200", "torch": "2.11.0+cu130",
      "cuda_driver": "13.0", "runtime": "kernelforge_cast (Python 3.11.7)", "inputs": [], "runs": 30, "warmup": 10,
      "with_kernels_ms": {"median": 1.8055, "min": 1.79, "max": 1.85, "p10": 1.795, "p90": 1.82},
      "without_kernels_ms": {"median": 1.8746, "min": 1.86, "max": 1.92, "p10": 1.865, "p90": 1.89},
      "speedup": 1.038,
      "substitution": [{"node": "softmax", "op": "softmax", "status": "substituted", "cast_op": "softmax_fp32", "reason": ""},
                       {"node": "gelu", "op": "gelu", "status": "kept", "cast_op": "", "reason": "no packaged kernel implements gelu"}],
      "fallbacks": {"softmax_fp32": 3}, "check": null})json"));
    d.modelRuns.back()["speedup"] = 1.8746 / 1.8055;
    b.setDetails(d);
    const QString evidence = b.evidenceView()->toPlainText();
    for (const char* text : {"Model-level evidence (end to end)", "not this kernel's microbenchmark", "block (model 1.0.0)",
                             "NVIDIA H200", "1.04×", "1 of 2 substituted", "3 fallbacks"})
        QVERIFY2(evidence.contains(QString::fromUtf8(text)), text);
    // The op's own speedup section is still there, above it, with its own scope.
    QVERIFY(evidence.indexOf(QStringLiteral("Speedup over LibTorch")) < evidence.indexOf(QStringLiteral("Model-level evidence")));
    if (const QString dir = qEnvironmentVariable("KF_SCREENSHOT_DIR"); !dir.isEmpty()) {
        QDir().mkpath(dir);
        b.resize(1200, 900);
        b.tabs()->setCurrentIndex(RegistryBrowser::EvidenceTab);
        b.show();
        QVERIFY(QTest::qWaitForWindowExposed(&b));
        b.evidenceView()->scrollToAnchor(QString());
        QVERIFY(b.grab().save(QDir(dir).filePath(QStringLiteral("registry-model-runs.png"))));
    }
}

void TestRegistryBrowser::exportDialogModels_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("fileExists");
    QTest::addColumn<bool>("twice");
    QTest::addColumn<QString>("problem");
    QTest::newRow("a model") << "" << true << false << "";
    QTest::newRow("renamed") << "block" << true << false << "";
    QTest::newRow("not an identifier") << "2block" << true << false << "cannot name a model";
    QTest::newRow("missing file") << "" << false << false << "does not exist";
    QTest::newRow("same name twice") << "" << true << true << "Two models are named";
}

void TestRegistryBrowser::exportDialogModels()
{
    QFETCH(QString, name);
    QFETCH(bool, fileExists);
    QFETCH(bool, twice);
    QFETCH(QString, problem);
    auto index = kf::Registry(m_sample.directory).load();
    QVERIFY(index.ok());
    kf::ui::ExportCastDialog d(index.value(), m_sample.softmaxV2, QStringLiteral("/work/space"));
    const QString file = m_tmp->filePath(QStringLiteral("my-block.pt2"));
    if (fileExists) {
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
    }
    const int row = d.addModel(fileExists ? file : m_tmp->filePath(QStringLiteral("gone.pt2")),
                               QStringLiteral(""));
    QCOMPARE(d.modelTable()->item(row, 0)->text(), fileExists ? QString("my_block") : QString("gone"));
    if (!name.isEmpty())
        d.modelTable()->item(row, 0)->setText(name);
    if (twice)
        d.addModel(file);
    QVERIFY2(problem.isEmpty() ? d.problem().isEmpty() : d.problem().contains(problem), qPrintable(d.problem()));
    QCOMPARE(d.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->isEnabled(), problem.isEmpty());
    if (problem.isEmpty()) {
        QCOMPARE(d.choice().models.size(), 1);
        QCOMPARE(d.choice().models[0].name, name.isEmpty() ? QString("my_block") : name);
        QCOMPARE(d.choice().models[0].file, file);
    }
}

void TestRegistryBrowser::screenshots()
{
    const QString dir = qEnvironmentVariable("KF_SCREENSHOT_DIR");
    if (dir.isEmpty())
        QSKIP("set KF_SCREENSHOT_DIR to save registry browser screenshots");
    QDir().mkpath(dir);
    RegistryBrowser b;
    b.resize(1200, 700);
    load(b);
    b.show();
    QVERIFY(QTest::qWaitForWindowExposed(&b));
    QVERIFY(b.grab().save(QDir(dir).filePath(QStringLiteral("registry-table.png"))));
    QVERIFY(b.selectId(m_sample.softmaxV2));
    b.setDetails(kf::test::readDetails(m_sample.directory, m_sample.softmaxV2));
    b.setDiff(m_sample.softmaxV2, m_sample.softmaxV1, kf::test::readDetails(m_sample.directory, m_sample.softmaxV1).source);
    const char* names[] = {"registry-evidence.png", "registry-source.png", "registry-reports.png", "registry-chart.png", "registry-diff.png"};
    for (int tab = 0; tab < b.tabs()->count(); ++tab) {
        b.tabs()->setCurrentIndex(tab);
        QVERIFY(b.grab().save(QDir(dir).filePath(QLatin1String(names[tab]))));
    }
    // The whole evidence page, as a tall dock shows it.
    b.resize(1200, 1500);
    b.tabs()->setCurrentIndex(RegistryBrowser::EvidenceTab);
    QVERIFY(b.grab().save(QDir(dir).filePath(QStringLiteral("registry-evidence-tall.png"))));
    b.resize(1200, 700);
    b.selectId(m_sample.softmaxV1);
    b.setDetails(kf::test::readDetails(m_sample.directory, m_sample.softmaxV1));
    b.tabs()->setCurrentIndex(RegistryBrowser::EvidenceTab);
    QVERIFY(b.grab().save(QDir(dir).filePath(QStringLiteral("registry-deprecated.png"))));
    RegistryBrowser empty;
    empty.resize(1200, 700);
    empty.setDirectory(QString::fromStdString(m_sample.directory.string()));
    empty.setIndex(kf::RegistryIndex{});
    empty.show();
    QVERIFY(QTest::qWaitForWindowExposed(&empty));
    QVERIFY(empty.grab().save(QDir(dir).filePath(QStringLiteral("registry-empty.png"))));

    auto index = kf::Registry(m_sample.directory).load();
    QVERIFY(index.ok());
    kf::ui::ExportCastDialog d(index.value(), m_sample.softmaxV2, QStringLiteral("/home/you/workspace"));
    d.versions()->item(2)->setCheckState(Qt::Checked);
    const QString model = m_tmp->filePath(QStringLiteral("block.pt2"));
    const QString inputs = m_tmp->filePath(QStringLiteral("block-inputs.json"));
    for (const QString& f : {model, inputs}) {
        QFile file(f);
        QVERIFY(file.open(QIODevice::WriteOnly));
    }
    d.addModel(model, inputs);
    d.show();
    QVERIFY(QTest::qWaitForWindowExposed(&d));
    QVERIFY(d.grab().save(QDir(dir).filePath(QStringLiteral("export-cast.png"))));
}

QTEST_MAIN(TestRegistryBrowser)
#include "tst_registrybrowser.moc"
