// File ▸ Import Problem… (app/gui/window/ImportDialog): Import is enabled once a problem of the
// chosen format is given; the import runs off the UI thread and ends with the task folder and the
// importer's notes, or the sentence naming what could not be imported (nothing left behind);
// Cancel stops it. Uses the real importer with the build's Python and torch (skipped without).
// Saves docs/screenshots/import-problem.png with KF_SCREENSHOT_DIR.
#include "app/gui/window/ImportDialog.h"
#include "engine/task/Task.h"

#include "testutil.h"

#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using kf::app::ImportDialog;

namespace {
const QString kFixtures = QString(KF_TEST_DATA_DIR) + "/import/";
bool haveTorch() { return !QString(KF_TORCH_PYTHON).isEmpty(); }
} // namespace

class TestImportDialog : public QObject {
    Q_OBJECT

private slots:
    void importEnabledByTheSource();
    void imports_data();
    void imports();
    void cancelLeavesNothing();
    void screenshot();
};

void TestImportDialog::importEnabledByTheSource()
{
    QTemporaryDir tmp;
    ImportDialog d(tmp.path());
    QVERIFY(!d.importButton()->isEnabled());
    d.source()->setText(kFixtures + "kernelbench/row_sum.py");
    QVERIFY(d.importButton()->isEnabled());
    QVERIFY(d.dtype()->isEnabled());
    d.setFormat(ImportDialog::GpuMode);   // a file is not a problem folder
    QVERIFY(!d.importButton()->isEnabled());
    QVERIFY(!d.dtype()->isEnabled());
    d.source()->setText(kFixtures + "gpumode/vecadd_py");
    QVERIFY(d.importButton()->isEnabled());
    d.destination()->setText(tmp.filePath("missing"));
    QVERIFY(!d.importButton()->isEnabled());
}

void TestImportDialog::imports_data()
{
    QTest::addColumn<int>("format");
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<QString>("says");   // in the status line
    QTest::addColumn<QString>("task");   // the folder made; empty: refused
    QTest::newRow("KernelBench linear, fp16") << int(ImportDialog::KernelBench) << "kernelbench/linear_relu.py" << "fp16"
                                              << "test shape(s), 1 benchmark shape(s)" << "linear_relu";
    QTest::newRow("GPU MODE vector add") << int(ImportDialog::GpuMode) << "gpumode/vecadd_py" << ""
                                         << "benchmark shape(s). No candidate yet" << "vecadd_py";
    QTest::newRow("refused: random in forward") << int(ImportDialog::KernelBench) << "kernelbench/rand_in_forward.py" << ""
                                                << "forward calls torch.randn (a random op)" << "";
}

void TestImportDialog::imports()
{
    if (!haveTorch())
        QSKIP("no Python that imports torch was found at configure time: the importer cannot run here");
    QFETCH(int, format);
    QFETCH(QString, source);
    QFETCH(QString, dtype);
    QFETCH(QString, says);
    QFETCH(QString, task);
    QTemporaryDir tmp;
    ImportDialog d(tmp.path());
    d.setFormat(ImportDialog::Format(format));
    d.source()->setText(kFixtures + source);
    d.python()->setText(KF_TORCH_PYTHON);
    if (!dtype.isEmpty())
        d.dtype()->setCurrentIndex(d.dtype()->findData(dtype));
    QSignalSpy imported(&d, &ImportDialog::imported);
    QSignalSpy failed(&d, &ImportDialog::failed);
    QTest::mouseClick(d.importButton(), Qt::LeftButton);
    QVERIFY(d.busy());
    QVERIFY(!d.importButton()->isEnabled());
    QTRY_COMPARE_WITH_TIMEOUT(imported.count() + failed.count(), 1, 120000);
    QVERIFY(!d.busy());
    QVERIFY2(d.status()->text().contains(says), qPrintable(d.status()->text()));
    if (task.isEmpty()) {
        QCOMPARE(failed.count(), 1);
        QCOMPARE(QDir(tmp.path()).entryList(QDir::Dirs | QDir::NoDotAndDotDot | QDir::Hidden), QStringList());
        return;
    }
    QCOMPARE(imported.count(), 1);
    const QString dir = imported.first().at(0).toString();
    QCOMPARE(dir, tmp.filePath(task));
    auto loaded = kf::loadTask(dir.toStdString());
    KF_VERIFY_OK(loaded);
    QVERIFY(loaded->candidates.empty());
    if (!dtype.isEmpty())
        QCOMPARE(loaded->inputs.front().dtype, kf::DType::F16);
    QCOMPARE(d.notes()->isVisibleTo(&d), !imported.first().at(1).toStringList().isEmpty());
}

void TestImportDialog::cancelLeavesNothing()
{
    if (!haveTorch())
        QSKIP("no Python that imports torch was found at configure time: the importer cannot run here");
    QTemporaryDir tmp;
    ImportDialog d(tmp.path());
    d.source()->setText(kFixtures + "kernelbench/scaled_layernorm.py");
    d.python()->setText(KF_TORCH_PYTHON);
    QSignalSpy failed(&d, &ImportDialog::failed);
    d.show();
    d.start();
    QVERIFY(d.cancelButton()->isVisibleTo(&d));
    // Esc while it runs cancels it and keeps the dialog open for the outcome.
    QTest::keyClick(&d, Qt::Key_Escape);
    QVERIFY(d.isVisible());
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 60000);
    QVERIFY2(failed.first().at(0).toString().contains("cancelled"), qPrintable(failed.first().at(0).toString()));
    QCOMPARE(QDir(tmp.path()).entryList(QDir::Dirs | QDir::NoDotAndDotDot | QDir::Hidden), QStringList());
}

void TestImportDialog::screenshot()
{
    const QString dir = qEnvironmentVariable("KF_SCREENSHOT_DIR");
    if (dir.isEmpty() || !haveTorch())
        QSKIP("set KF_SCREENSHOT_DIR (and have the build's Python with torch) to save the dialog's screenshot");
    QTemporaryDir tmp;
    ImportDialog d(tmp.path());
    d.source()->setText(kFixtures + "kernelbench/linear_relu.py");
    d.python()->setText(KF_TORCH_PYTHON);
    QSignalSpy imported(&d, &ImportDialog::imported);
    d.start();
    QTRY_COMPARE_WITH_TIMEOUT(imported.count(), 1, 120000);
    d.resize(900, 520);
    d.show();
    QVERIFY(QTest::qWaitForWindowExposed(&d));
    QDir().mkpath(dir);
    QVERIFY(d.grab().save(QDir(dir).filePath(QStringLiteral("import-problem.png"))));
}

QTEST_MAIN(TestImportDialog)
#include "tst_importdialog.moc"
