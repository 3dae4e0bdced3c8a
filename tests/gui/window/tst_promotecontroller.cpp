// The Promote button's brain: enabled only when the candidate on screen has evidence that passes
// every gate against its saved files; otherwise the tooltip names the blocking gate. Promoting
// confirms with a summary of the evidence and writes the registry off the UI thread.
#include "registryfixture.h"
#include "testutil.h"

#include "app/gui/window/PromoteController.h"

#include <QDir>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <fstream>

using kf::app::PromoteController;
using Json = nlohmann::json;
namespace fs = std::filesystem;

class TestPromoteController : public QObject {
    Q_OBJECT

private slots:
    void init();
    void stateFollowsTheEvidence_data();
    void stateFollowsTheEvidence();
    void promoteConfirmsThenWritesTheRegistry();
    void declinedConfirmationWritesNothing();
    void evidenceSurvivesARestart_data();
    void evidenceSurvivesARestart();

private:
    std::unique_ptr<QTemporaryDir> m_tmp;
    fs::path m_taskDir, m_regDir;
};

void TestPromoteController::init()
{
    m_tmp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_tmp->isValid());
    m_taskDir = kf::test::copyExample("softmax_fp32", m_tmp->path().toStdString());
    m_regDir = fs::path(m_tmp->path().toStdString()) / "registry";
}

void TestPromoteController::stateFollowsTheEvidence_data()
{
    QTest::addColumn<QString>("situation");
    QTest::addColumn<bool>("enabled");
    QTest::addColumn<QString>("tooltip");
    QTest::newRow("no evidence") << "none" << false << "No evidence for optimized.cu yet";
    QTest::newRow("verified, not benchmarked") << "verify-only" << false << "there is no performance report";
    QTest::newRow("verified and benchmarked") << "both" << true << "it passed all 9 gates";
    QTest::newRow("unsaved edits") << "modified" << false << "has unsaved edits";
    QTest::newRow("edited and saved after the runs") << "edited-on-disk" << false << "another version of optimized.cu";
    QTest::newRow("slower on one shape") << "slow" << false << "Blocked by the gate \"At least 1.00× on every benchmark shape\"";
    // The sanitizer gate (docs/registry.md): under the default policy a host without the tool
    // lets the kernel through, said as "not run"; a host with it that was not asked blocks.
    QTest::newRow("no compute-sanitizer on the runner's host") << "no-sanitizer" << true
        << "it passed 8 gates; not run: Clean under compute-sanitizer (no compute-sanitizer on gpu-7)";
    QTest::newRow("verified without the sanitizer the host has") << "sanitizer-not-asked" << false
        << "Blocked by the gate \"Clean under compute-sanitizer\": not run although the runner's host has compute-sanitizer";
    QTest::newRow("evidence of another candidate") << "naive-evidence" << false << "No evidence for optimized.cu yet";
    QTest::newRow("task.json opened, not a kernel") << "task-json" << false << "Open a candidate kernel";
}

void TestPromoteController::stateFollowsTheEvidence()
{
    QFETCH(QString, situation);
    QFETCH(bool, enabled);
    QFETCH(QString, tooltip);
    PromoteController c(nullptr);
    QSignalSpy spy(&c, &PromoteController::stateChanged);
    c.setRegistryDirectory(qs(m_regDir.string()));
    const QString taskDir = qs(m_taskDir.string());
    const kf::PromotionInput in = kf::test::passingInput(m_taskDir, "optimized.cu");
    c.setCurrent(taskDir, situation == "task-json" ? "task.json" : "optimized.cu", situation == "modified");
    if (situation == "naive-evidence") {
        c.addReport(taskDir, *kf::test::asReport(kf::test::correctnessFor(in.task, "naive.cu")));
        c.addReport(taskDir, *kf::test::asReport(kf::test::performanceFor(in.task, "naive.cu")));
    } else if (situation == "no-sanitizer" || situation == "sanitizer-not-asked") {
        Json corr = in.correctness->document();
        corr.erase("signature");
        const bool tool = situation == "sanitizer-not-asked";
        corr["sanitizer"] = {{"ran", false}, {"requested", false}, {"reason", tool ? "not requested" : "no compute-sanitizer on gpu-7"},
                             {"tool_version", tool ? "2025.3.1.0" : ""}, {"tool_path", tool ? "/usr/bin/compute-sanitizer" : ""},
                             {"tools", Json::array()}, {"findings", Json::array()}};
        c.addReport(taskDir, *kf::test::asReport(corr));
        c.addReport(taskDir, *in.performance);
    } else if (situation != "none") {
        c.addReport(taskDir, *in.correctness);
        if (situation != "verify-only")
            c.addReport(taskDir, situation == "slow" ? *kf::test::asReport(kf::test::performanceFor(in.task, "optimized.cu", {2.0, 0.9}))
                                                     : *in.performance);
    }
    if (situation == "edited-on-disk") {
        std::ofstream(m_taskDir / "optimized.cu", std::ios::app) << "// tweak\n";
        c.reevaluate();
    }
    QCOMPARE(c.canPromote(), enabled);
    QVERIFY2(c.stateText().contains(tooltip), qPrintable(c.stateText()));
    if (!spy.isEmpty()) {
        QCOMPARE(spy.last().at(0).toBool(), enabled);
        QCOMPARE(spy.last().at(1).toString(), c.stateText());
    }
}

void TestPromoteController::promoteConfirmsThenWritesTheRegistry()
{
    PromoteController c(nullptr);
    QString asked;
    c.setConfirm([&](const QString& title, const QString& html) {
        asked = title + "\n" + html;
        return true;
    });
    c.setRegistryDirectory(qs(m_regDir.string()));
    const QString taskDir = qs(m_taskDir.string());
    const kf::PromotionInput in = kf::test::passingInput(m_taskDir, "optimized.cu");
    c.setCurrent(taskDir, "optimized.cu", false);
    c.addReport(taskDir, *in.correctness);
    c.addReport(taskDir, *in.performance);
    QVERIFY(c.canPromote());
    QSignalSpy promoted(&c, &PromoteController::promoted);
    QSignalSpy failed(&c, &PromoteController::failed);
    c.promote();
    QVERIFY(!c.canPromote()); // busy while the registry is written
    QTRY_COMPARE(promoted.count(), 1);
    QCOMPARE(failed.count(), 0);
    QCOMPARE(promoted.at(0).at(0).toString(), QString("cuda_softmax_h100_fp32_b8192-d4096_v1"));
    QVERIFY(fs::is_regular_file(fs::path(promoted.at(0).at(1).toString().toStdString()) / "promotion.json"));
    for (const char* s : {"Promote optimized.cu?", "NVIDIA H100 80GB HBM3", "LibTorch 2.11.0", "✓ Correct on held-out shapes",
                          "not an end-to-end model speedup", "registry"})
        QVERIFY2(asked.contains(QString::fromUtf8(s)), s);
    QTRY_VERIFY(c.canPromote()); // the same evidence may promote again (a new version)
    auto index = kf::Registry(m_regDir).load();
    KF_VERIFY_OK(index);
    QCOMPARE(index->kernels.size(), size_t(1));
}

void TestPromoteController::declinedConfirmationWritesNothing()
{
    PromoteController c(nullptr);
    c.setConfirm([](const QString&, const QString&) { return false; });
    c.setRegistryDirectory(qs(m_regDir.string()));
    const QString taskDir = qs(m_taskDir.string());
    const kf::PromotionInput in = kf::test::passingInput(m_taskDir, "optimized.cu");
    c.setCurrent(taskDir, "optimized.cu", false);
    c.addReport(taskDir, *in.correctness);
    c.addReport(taskDir, *in.performance);
    QSignalSpy promoted(&c, &PromoteController::promoted);
    c.promote();
    QVERIFY(!c.isBusy());
    QCOMPARE(promoted.count(), 0);
    QVERIFY(!fs::exists(m_regDir / kf::kRegistryIndexFile));
}

void TestPromoteController::evidenceSurvivesARestart_data()
{
    QTest::addColumn<QString>("between");   // what happens between the two sessions
    QTest::addColumn<bool>("enabled");
    QTest::addColumn<QString>("tooltip");
    QTest::newRow("nothing") << "nothing" << true << "it passed all 9 gates";
    QTest::newRow("kernel edited in another editor") << "edit" << false << "another version of optimized.cu";
    QTest::newRow("evidence file damaged") << "damage" << false << "No evidence for optimized.cu yet";
}

void TestPromoteController::evidenceSurvivesARestart()
{
    QFETCH(QString, between);
    QFETCH(bool, enabled);
    QFETCH(QString, tooltip);
    const QString evidenceDir = m_tmp->path() + "/evidence";
    const QString taskDir = qs(m_taskDir.string());
    const kf::PromotionInput in = kf::test::passingInput(m_taskDir, "optimized.cu");
    {
        PromoteController first(nullptr);
        first.setEvidenceDirectory(evidenceDir);
        first.setRegistryDirectory(qs(m_regDir.string()));
        first.setCurrent(taskDir, "optimized.cu", false);
        first.addReport(taskDir, *in.correctness);
        first.addReport(taskDir, *in.performance);
        QVERIFY(first.canPromote());
    }
    if (between == "edit")
        std::ofstream(m_taskDir / "optimized.cu", std::ios::app) << "// edited elsewhere\n";
    if (between == "damage")
        for (const QString& f : QDir(evidenceDir).entryList(QDir::Files))
            std::ofstream((evidenceDir + "/" + f).toStdString(), std::ios::trunc) << "{ not json";
    PromoteController second(nullptr);
    second.setEvidenceDirectory(evidenceDir);
    second.setRegistryDirectory(qs(m_regDir.string()));
    second.setCurrent(taskDir, "optimized.cu", false);
    QCOMPARE(second.canPromote(), enabled);
    QVERIFY2(second.stateText().contains(tooltip), qPrintable(second.stateText()));
}

QTEST_MAIN(TestPromoteController)
#include "tst_promotecontroller.moc"
