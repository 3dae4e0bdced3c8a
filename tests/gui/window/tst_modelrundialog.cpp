// Run ▸ Run Model from .cast Package… (app/gui/window/ModelRunDialog): opening a package off the
// UI thread lists its models and recorded runs; Run starts the real `kforge cast run` (CPU: the
// ops run their reference ops) and shows the result; Record stores it in the package; a package
// without a model, a kforge that is missing, or one that prints something that is not a model
// run's evidence, says so. Uses the model package tst_cast exports.
#include "app/gui/window/ModelRunDialog.h"
#include "widgets/cast/ModelRunView.h"

#include "testutil.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

using kf::app::ModelRunDialog;

class TestModelRunDialog : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void listsModelsAndRecordedRuns();
    void runsAndRecords();
    void packageWithoutModel();
    void missingKforgeIsSaid();
    void outputThatIsNotEvidenceIsSaid();

private:
    QTemporaryDir m_tmp;
    QString m_package;
};

void TestModelRunDialog::initTestCase()
{
    const QString fixture = QString(KF_CAST_FIXTURE_DIR) + "/model.cast";
    if (!QFile::exists(fixture))
        QSKIP("needs the model package tst_cast exports (CTest fixtures cast_package and cast_models)");
    m_package = m_tmp.filePath(QStringLiteral("model.cast"));
    QVERIFY(QFile::copy(fixture, m_package));
    if (!QByteArray(KF_TORCH_PYTHON).isEmpty())
        qputenv("KF_CAST_PYTHON", KF_TORCH_PYTHON);
}

void TestModelRunDialog::listsModelsAndRecordedRuns()
{
    ModelRunDialog d;
    d.setKforge(QString(KF_KFORGE_BIN));
    QSignalSpy opened(&d, &ModelRunDialog::packageOpened);
    d.openPackage(m_package);
    QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 30000);
    QVERIFY2(opened.first().at(0).toBool(), qPrintable(opened.first().at(1).toString()));
    QCOMPARE(d.models()->count(), 3);
    QCOMPARE(d.models()->itemData(0).toString(), QString("toy16"));
    QVERIFY(d.models()->itemText(2).contains("torchscript"));
    QVERIFY(!d.recorded()->isEnabled());   // nothing recorded yet
    QVERIFY(d.runButton()->isEnabled());
}

void TestModelRunDialog::runsAndRecords()
{
    if (QByteArray(KF_TORCH_PYTHON).isEmpty())
        QSKIP("no Python with torch: the Python runtime cannot run the model");
    ModelRunDialog d;
    d.setKforge(QString(KF_KFORGE_BIN));
    QSignalSpy opened(&d, &ModelRunDialog::packageOpened);
    QSignalSpy finished(&d, &ModelRunDialog::runFinished);
    d.openPackage(m_package);
    QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 30000);
    d.device()->setCurrentIndex(d.device()->findData(QStringLiteral("cpu")));
    d.runs()->setValue(2);
    d.recordBox()->setChecked(true);
    d.run();
    QVERIFY(d.running());
    QVERIFY(!d.runButton()->isEnabled());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 300000);
    QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
    QVERIFY(finished.first().at(1).toString().contains("end to end (model-level)"));
    QCOMPARE(d.view()->sites()->rowCount(), 4);
    QVERIFY(d.view()->summary()->text().contains("model-level, end to end"));
    // Recorded: the package is read again and lists the run.
    QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 2, 30000);
    QVERIFY(d.recorded()->isEnabled());
    QCOMPARE(d.recorded()->count(), 1);
    QVERIFY(d.recorded()->itemText(0).contains("CPU"));

    const QString dir = qEnvironmentVariable("KF_SCREENSHOT_DIR");
    if (!dir.isEmpty()) {
        QDir().mkpath(dir);
        d.show();
        QVERIFY(QTest::qWaitForWindowExposed(&d));
        QVERIFY(d.grab().save(QDir(dir).filePath(QStringLiteral("model-run-dialog.png"))));
    }
}

void TestModelRunDialog::packageWithoutModel()
{
    ModelRunDialog d;
    QSignalSpy opened(&d, &ModelRunDialog::packageOpened);
    d.openPackage(QString(KF_CAST_FIXTURE_DIR) + "/fixture.cast");
    QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 30000);
    QVERIFY(!opened.first().at(0).toBool());
    QVERIFY(opened.first().at(1).toString().contains("carries no model"));
    QVERIFY(!d.runButton()->isEnabled());
    d.openPackage(m_tmp.filePath(QStringLiteral("nope.cast")));
    QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 2, 30000);
    QVERIFY(!opened.last().at(0).toBool());
}

void TestModelRunDialog::missingKforgeIsSaid()
{
    ModelRunDialog d;
    d.setKforge(m_tmp.filePath(QStringLiteral("no-such-kforge")));
    QSignalSpy opened(&d, &ModelRunDialog::packageOpened);
    QSignalSpy finished(&d, &ModelRunDialog::runFinished);
    d.openPackage(m_package);
    QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 30000);
    d.run();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
    QVERIFY(!finished.first().at(0).toBool());
    QVERIFY2(finished.first().at(1).toString().contains("Cannot start"), qPrintable(finished.first().at(1).toString()));
    QVERIFY(d.runButton()->isEnabled());
}

// A kforge stand-in (a shell script, not the product) that prints op-level evidence: the dialog
// names what is wrong instead of showing a run.
void TestModelRunDialog::outputThatIsNotEvidenceIsSaid()
{
    const QString script = m_tmp.filePath(QStringLiteral("kforge-prints-op-level"));
    QFile f(script);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("#!/bin/sh\necho '{\"scope\": \"op-level, microbenchmark\", \"model\": \"toy16\"}'\n");
    f.close();
    f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    ModelRunDialog d;
    d.setKforge(script);
    QSignalSpy opened(&d, &ModelRunDialog::packageOpened);
    QSignalSpy finished(&d, &ModelRunDialog::runFinished);
    d.openPackage(m_package);
    QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 30000);
    d.run();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
    QVERIFY(!finished.first().at(0).toBool());
    const QString sentence = finished.first().at(1).toString();
    QVERIFY2(sentence.startsWith("kforge printed something that is not a model run's evidence: ") && sentence.contains("at /scope: "),
             qPrintable(sentence));
}

QTEST_MAIN(TestModelRunDialog)
#include "tst_modelrundialog.moc"
