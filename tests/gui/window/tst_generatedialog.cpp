// File ▸ New Candidate from Reference… (app/gui/window/GenerateDialog): the preview is the
// generator's source with the launch plan and the first free file name; Add to Task waits for the
// NVRTC check (off the UI thread), then writes the
// candidate into the task (which still loads, one candidate more) and says which file; a taken
// name is shown and nothing changes; an unsupported reference shows the generator's sentence and
// cannot be added. Saves docs/screenshots/generate-preview.png with KF_SCREENSHOT_DIR.
#include "app/gui/window/GenerateDialog.h"
#include "engine/task/Task.h"

#include "testutil.h"

#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using kf::app::GenerateDialog;

namespace {
QString copyExample(const QTemporaryDir& tmp, const QString& name)
{
    const QString from = QString(KF_SOURCE_DIR) + "/resources/examples/" + name;
    const QString to = tmp.filePath(name);
    QDir().mkpath(to);
    for (const QString& f : QDir(from).entryList(QDir::Files))
        QFile::copy(from + "/" + f, to + "/" + f);
    return to;
}
} // namespace

class TestGenerateDialog : public QObject {
    Q_OBJECT

private slots:
    void previewAndAdd_data();
    void previewAndAdd();
    void unsupportedReferenceCannotBeAdded();
    void screenshot();
};

void TestGenerateDialog::previewAndAdd_data()
{
    QTest::addColumn<QString>("example");
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<QString>("name");      // typed into the field; empty keeps the proposal
    QTest::addColumn<QString>("written");
    QTest::newRow("softmax, proposed name") << "softmax_fp32" << "generated_softmax_fp32" << "" << "generated.cu";
    QTest::newRow("fused add + rms_norm, own name") << "fused_add_rms_norm_fp16" << "generated_fused_add_rms_norm_fp16"
                                                   << "mine" << "mine.cu";
}

void TestGenerateDialog::previewAndAdd()
{
    QFETCH(QString, example);
    QFETCH(QString, kernel);
    QFETCH(QString, name);
    QFETCH(QString, written);
    QTemporaryDir tmp;
    const QString task = copyExample(tmp, example);
    GenerateDialog d;
    QSignalSpy checked(&d, &GenerateDialog::compileChecked);
    QVERIFY(d.prepare(task));
    // Add waits for the NVRTC check, which runs off the UI thread.
    QVERIFY(!d.addButton()->isEnabled());
    QTRY_COMPARE_WITH_TIMEOUT(checked.count(), 1, 60000);
    QVERIFY(checked.first().at(0).toBool());
    QVERIFY2(d.compileStatus()->text().startsWith("Compiles cleanly for sm_90: ") ||
                 d.compileStatus()->text().startsWith("Not compiled: "),
             qPrintable(d.compileStatus()->text()));
    QVERIFY(d.source().contains("    __launch_bounds__(kBlockThreads, KF_MIN_BLOCKS) // bandwidth needs rows in flight\n#else\n"
                                "    __launch_bounds__(kBlockThreads)\n#endif\n    " + kernel + "("));
    QCOMPARE(d.fileName()->text(), QString("generated.cu"));
    QVERIFY(d.addButton()->isEnabled());
    if (!name.isEmpty())
        d.fileName()->setText(name);
    QSignalSpy added(&d, &GenerateDialog::candidateAdded);
    QTest::mouseClick(d.addButton(), Qt::LeftButton);
    QCOMPARE(added.count(), 1);
    QCOMPARE(added.first().at(1).toString(), QDir(task).filePath(written));
    QCOMPARE(d.result(), int(QDialog::Accepted));
    auto t = kf::loadTask(task.toStdString());
    KF_VERIFY_OK(t);
    QVERIFY(t->findCandidate(written.toStdString()));

    // A second dialog proposes the next free name, and a taken one is refused in the dialog.
    GenerateDialog again;
    QSignalSpy againChecked(&again, &GenerateDialog::compileChecked);
    QVERIFY(again.prepare(task));
    QTRY_COMPARE_WITH_TIMEOUT(againChecked.count(), 1, 60000);
    QCOMPARE(again.fileName()->text(), QString(written == "generated.cu" ? "generated_2.cu" : "generated.cu"));
    again.fileName()->setText(written);
    QSignalSpy none(&again, &GenerateDialog::candidateAdded);
    again.addToTask();
    QCOMPARE(none.count(), 0);
    const auto labels = again.findChildren<QLabel*>();
    QVERIFY(std::any_of(labels.begin(), labels.end(), [&](QLabel* l) {
        return l->isVisibleTo(&again) && l->text().contains(written + " already exists in the task folder");
    }));
}

void TestGenerateDialog::unsupportedReferenceCannotBeAdded()
{
    QTemporaryDir tmp;
    const QString task = copyExample(tmp, "gemm_fp16");
    GenerateDialog d;
    QVERIFY(!d.prepare(task));
    QVERIFY2(d.problem().contains("step 1 (C = matmul(A, B)) cannot be fused: matmul is not supported"), qPrintable(d.problem()));
    QVERIFY(!d.addButton()->isEnabled());
    QVERIFY(d.source().isEmpty());
}

void TestGenerateDialog::screenshot()
{
    const QString dir = qEnvironmentVariable("KF_SCREENSHOT_DIR");
    if (dir.isEmpty())
        QSKIP("set KF_SCREENSHOT_DIR to save the dialog's screenshot");
    QTemporaryDir tmp;
    GenerateDialog d;
    QSignalSpy checked(&d, &GenerateDialog::compileChecked);
    QVERIFY(d.prepare(copyExample(tmp, "fused_add_rms_norm_fp16")));
    QTRY_COMPARE_WITH_TIMEOUT(checked.count(), 1, 60000);
    d.resize(1100, 760);
    d.show();
    QVERIFY(QTest::qWaitForWindowExposed(&d));
    QDir().mkpath(dir);
    QVERIFY(d.grab().save(QDir(dir).filePath(QStringLiteral("generate-preview.png"))));
}

QTEST_MAIN(TestGenerateDialog)
#include "tst_generatedialog.moc"
