// Settings ▸ Runners: the endpoints of runners.json as a user edits them. A good file fills the
// table; a file that does not read is shown with its JSON pointer and never overwritten; add, edit
// and remove go through the engine's reader and come back from the file as they were saved; Check
// starts an endpoint's runner (the real one, in CPU mode) off the UI thread and can be cancelled.
#include "testutil.h"

#include "app/gui/settings/EndpointDialog.h"
#include "app/gui/settings/RunnersPage.h"
#include "app/gui/settings/Settings.h"
#include "app/gui/settings/SettingsDialog.h"

#include "engine/runner/RunnersConfig.h"

#include <QApplication>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

using kf::Endpoint;
using kf::app::EndpointCheck;
using kf::app::EndpointDialog;
using kf::app::RunnersPage;

namespace {

QString fixture(const char* name) { return QString(KF_TEST_DATA_DIR) + "/runners/" + QString::fromLatin1(name); }

// A copy of a fixture in `dir`, so the page may write it.
QString copyOf(const QTemporaryDir& dir, const char* name)
{
    const QString path = dir.filePath(QStringLiteral("runners.json"));
    QFile::remove(path);
    if (!QFile::copy(fixture(name), path))
        qFatal("cannot copy %s", name);
    QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner);
    return path;
}

QByteArray bytesOf(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

int rowOf(const RunnersPage& page, const QString& name)
{
    for (int r = 0; r < page.table()->rowCount(); ++r)
        if (page.table()->item(r, RunnersPage::NameColumn)->text() == name)
            return r;
    return -1;
}

QString cell(const RunnersPage& page, int row, int column) { return page.table()->item(row, column)->text(); }

kf::RunnersConfig reread(const QString& path)
{
    auto c = kf::readRunnersConfig(path.toStdString());
    if (!c)
        qFatal("%s", c.error().message().c_str());
    return c.value();
}

Endpoint sshEndpoint(const std::string& name, const std::string& host)
{
    Endpoint e;
    e.name = name;
    e.kind = Endpoint::Kind::Ssh;
    e.host = host;
    e.sharedFs = true;
    e.launchLatencyMs = 2000;
    return e;
}

// The real runner behind sh, told to run without a GPU: a check sees its hello and its ping.
Endpoint cpuRunnerEndpoint(const std::string& name, const std::string& before = {})
{
    Endpoint e;
    e.name = name;
    e.kind = Endpoint::Kind::Command;
    e.command = {"sh", "-c", before + "exec \"$0\"", "{runner}"};
    e.env = {{"KF_RUNNER_FORCE_CPU", "1"}};
    e.sharedFs = true;
    return e;
}

} // namespace

class TestRunnersPage : public QObject {
    Q_OBJECT
private slots:
    void readsAGoodFile_data();
    void readsAGoodFile();
    void aMissingFileIsTheBuiltInLocal();
    void aFileThatDoesNotReadIsShownAndLeftAlone_data();
    void aFileThatDoesNotReadIsShownAndLeftAlone();
    void addEditRemoveRoundTrip();
    void refusalsNameTheirPointer_data();
    void refusalsNameTheirPointer();
    void gpusEntriesAreEditedInTheFile();
    void defaultEndpoints();
    void editDialogShowsTheReadersSentence();
    void dialogRoundTripsEveryField();
    void checkStartsTheRunnerOffTheUiThread();
    void checkCanBeCancelled();
    void settingsDialogSavesThePageAndTheWorkbenchEndpoint();
};

void TestRunnersPage::readsAGoodFile_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("files");
    QTest::newRow("built-in local") << "local" << "local" << "kforge-runner on this machine" << "shared";
    QTest::newRow("local with a GPU") << "h100-0" << "local" << "kforge-runner on this machine · CUDA_VISIBLE_DEVICES=0" << "shared";
    QTest::newRow("ssh") << "box" << "ssh" << "ssh me@gpu-box.lan:2222 · /opt/kernelforge/bin/kforge-runner" << "shared";
    QTest::newRow("srun") << "cluster" << "srun" << "srun --gres=gpu:1 --time=10" << "shared";
    QTest::newRow("command") << "wrapped" << "command" << "sh -c 'exec \"$0\"' {runner}" << "not shared";
    QTest::newRow("one of a gpus entry") << "node/1" << "local" << "kforge-runner on this machine · CUDA_VISIBLE_DEVICES=1"
                                         << "shared";
}

void TestRunnersPage::readsAGoodFile()
{
    QFETCH(QString, name);
    QFETCH(QString, kind);
    QFETCH(QString, where);
    QFETCH(QString, files);
    RunnersPage page(fixture("good.json"));
    QVERIFY2(page.loadError().isEmpty(), qPrintable(page.loadError()));
    QCOMPARE(page.table()->rowCount(), 7); // local, h100-0, box, cluster, wrapped, node/0, node/1
    const int row = rowOf(page, name);
    QVERIFY2(row >= 0, qPrintable(name));
    QCOMPARE(cell(page, row, RunnersPage::KindColumn), kind);
    QCOMPARE(cell(page, row, RunnersPage::WhereColumn), where);
    QCOMPARE(cell(page, row, RunnersPage::FilesColumn), files);
    QCOMPARE(cell(page, row, RunnersPage::CheckColumn), QString()); // not checked yet
    // The file's default is bold and chosen in its picker; the workbench follows it unless told otherwise.
    QCOMPARE(page.defaultPicker()->currentText(), QString("box"));
    QCOMPARE(page.table()->item(rowOf(page, "box"), RunnersPage::NameColumn)->font().bold(), true);
    QCOMPARE(page.table()->item(rowOf(page, "local"), RunnersPage::NameColumn)->font().bold(), false);
    QCOMPARE(page.workbenchEndpoint(), QString());
    QCOMPARE(page.workbenchPicker()->currentText(), QString("the default endpoint (box)"));
    QVERIFY(!page.isModified());
    QVERIFY(page.validationError().isEmpty());
}

void TestRunnersPage::aMissingFileIsTheBuiltInLocal()
{
    QTemporaryDir dir;
    const QString path = dir.filePath("KernelForge/runners.json");
    RunnersPage page(path);
    QVERIFY(page.loadError().isEmpty());
    QCOMPARE(page.table()->rowCount(), 1);
    QCOMPARE(cell(page, 0, RunnersPage::NameColumn), QString("local"));
    QCOMPARE(page.defaultEndpoint(), QString("local"));
    QString error;
    QVERIFY(page.save(&error)); // nothing changed: nothing written
    QVERIFY(!QFile::exists(path));
}

void TestRunnersPage::aFileThatDoesNotReadIsShownAndLeftAlone_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("said");
    QTest::newRow("not JSON") << "bad_syntax.json" << "runners.json";
    QTest::newRow("a refusal with its pointer") << "bad_pty.json" << "at /endpoints/0/ssh_options/0: a pseudo-terminal rewrites protocol lines";
}

void TestRunnersPage::aFileThatDoesNotReadIsShownAndLeftAlone()
{
    QFETCH(QString, file);
    QFETCH(QString, said);
    QTemporaryDir dir;
    const QString path = copyOf(dir, file.toLatin1().constData());
    const QByteArray before = bytesOf(path);
    RunnersPage page(path);
    QVERIFY(!page.loadError().isEmpty());
    QVERIFY2(page.loadError().contains(path), qPrintable(page.loadError()));
    QVERIFY2(page.loadError().contains(said), qPrintable(page.loadError()));
    QVERIFY2(page.loadError().contains("left as it is"), qPrintable(page.loadError()));
    QCOMPARE(page.problemLabel()->text(), page.loadError());
    // Nothing on the page can change it, and saving leaves it alone.
    QVERIFY(!page.table()->isEnabled());
    QVERIFY(!page.findChild<QPushButton*>("addEndpoint")->isEnabled());
    QVERIFY(!page.checkButton()->isEnabled());
    QString error;
    QVERIFY(!page.addEndpoint(sshEndpoint("gpu2", "gpu2.lan"), &error));
    QVERIFY2(error.contains(path), qPrintable(error));
    QVERIFY(page.validationError().isEmpty());
    QVERIFY(page.save(&error));
    QCOMPARE(bytesOf(path), before);
    // The settings dialog's OK does not write it either.
    kf::app::Settings settings(new QSettings(dir.filePath("kf.ini"), QSettings::IniFormat, this));
    kf::app::SettingsDialog dialog(&settings, nullptr, path);
    QVERIFY2(dialog.validationError().isEmpty(), qPrintable(dialog.validationError()));
    dialog.accept();
    QCOMPARE(dialog.result(), int(QDialog::Accepted));
    QCOMPARE(bytesOf(path), before);
}

void TestRunnersPage::addEditRemoveRoundTrip()
{
    QTemporaryDir dir;
    const QString path = copyOf(dir, "good.json");
    RunnersPage page(path);
    QSignalSpy changed(&page, &RunnersPage::changed);
    QString error;

    QVERIFY2(page.addEndpoint(sshEndpoint("gpu2", "gpu2.lan"), &error), qPrintable(error));
    QVERIFY(page.isModified());
    QVERIFY(changed.count() >= 1);
    QCOMPARE(cell(page, rowOf(page, "gpu2"), RunnersPage::WhereColumn), QString("ssh gpu2.lan"));

    // A rename follows into the default and the pool.
    Endpoint renamed = page.config().endpoints.at(size_t(rowOf(page, "box")));
    renamed.name = "gpu-box";
    renamed.port = 22;
    QVERIFY2(page.setEndpoint(rowOf(page, "box"), renamed, &error), qPrintable(error));
    QCOMPARE(rowOf(page, "box"), -1);
    QCOMPARE(page.defaultEndpoint(), QString("gpu-box"));

    page.removeEndpoint(rowOf(page, "cluster"));
    QCOMPARE(rowOf(page, "cluster"), -1);

    QVERIFY2(page.save(&error), qPrintable(error));
    QVERIFY(!page.isModified());
    kf::RunnersConfig c = reread(path);
    QVERIFY(c.find("gpu2"));
    QCOMPARE(c.find("gpu2")->host, std::string("gpu2.lan"));
    QVERIFY(c.find("gpu-box"));
    QCOMPARE(c.find("gpu-box")->port, 22);
    QCOMPARE(c.find("gpu-box")->runner, std::string("/opt/kernelforge/bin/kforge-runner"));
    QVERIFY(!c.find("box"));
    QVERIFY(!c.find("cluster"));
    QCOMPARE(c.defaultEndpoint, std::string("gpu-box"));
    QVERIFY(c.pools.at("two") == (std::vector<std::string>{"h100-0", "gpu-box"}));
    QVERIFY(c.find("node/0") && c.find("node/1")); // the gpus entry is written back as one entry
    QVERIFY(bytesOf(path).contains("\"gpus\": ["));

    // Removing the default falls back to "local"; an empty pool goes with its last endpoint.
    page.removeEndpoint(rowOf(page, "gpu-box"));
    page.removeEndpoint(rowOf(page, "h100-0"));
    QVERIFY2(page.save(&error), qPrintable(error));
    c = reread(path);
    QCOMPARE(c.defaultEndpoint, std::string("local"));
    QVERIFY(c.pools.empty());
    QCOMPARE(page.table()->rowCount(), 5); // local, wrapped, node/0, node/1, gpu2

    // What the page wrote reads back as the page showed it.
    RunnersPage again(path);
    QCOMPARE(again.table()->rowCount(), page.table()->rowCount());
    for (int r = 0; r < page.table()->rowCount(); ++r)
        for (int col : {int(RunnersPage::NameColumn), int(RunnersPage::KindColumn), int(RunnersPage::WhereColumn)})
            QCOMPARE(cell(again, r, col), cell(page, r, col));
}

void TestRunnersPage::refusalsNameTheirPointer_data()
{
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("said");
    QTest::newRow("ssh asks for a terminal") << 0 << "ssh_options/0: a pseudo-terminal rewrites protocol lines (leave -t out)";
    QTest::newRow("a name used twice") << 1 << "\"box\" is named twice";
    QTest::newRow("srun sets CUDA_VISIBLE_DEVICES itself") << 2 << "env/CUDA_VISIBLE_DEVICES: Slurm sets CUDA_VISIBLE_DEVICES";
    QTest::newRow("a command without {runner}") << 3 << "command has no \"{runner}\" element";
}

void TestRunnersPage::refusalsNameTheirPointer()
{
    QFETCH(int, which);
    QFETCH(QString, said);
    QTemporaryDir dir;
    const QString path = copyOf(dir, "good.json");
    RunnersPage page(path);
    Endpoint e;
    switch (which) {
    case 0: e = sshEndpoint("gpu2", "gpu2.lan"); e.sshOptions = {"-t"}; break;
    case 1: e = sshEndpoint("box", "other.lan"); break;
    case 2: e.name = "slurm2"; e.kind = Endpoint::Kind::Srun; e.env = {{"CUDA_VISIBLE_DEVICES", "0"}}; break;
    default: e.name = "docker"; e.kind = Endpoint::Kind::Command; e.command = {"docker", "exec", "-i", "box"}; break;
    }
    const int rows = page.table()->rowCount();
    QString error;
    QVERIFY(!page.addEndpoint(e, &error));
    QVERIFY2(error.startsWith("the Runners table: at /endpoints/"), qPrintable(error));
    QVERIFY2(error.contains(said), qPrintable(error));
    QCOMPARE(page.table()->rowCount(), rows);
    QVERIFY(!page.isModified());
}

void TestRunnersPage::gpusEntriesAreEditedInTheFile()
{
    RunnersPage page(fixture("good.json"));
    QString why;
    QVERIFY(!page.canEdit(rowOf(page, "node/0"), &why));
    QVERIFY2(why.contains("\"gpus\" entry node"), qPrintable(why));
    QVERIFY(!page.canRemove(rowOf(page, "node/1")));
    QVERIFY(page.canEdit(rowOf(page, "local")));
    why.clear();
    QVERIFY(!page.canRemove(rowOf(page, "local"), &why));
    QVERIFY2(why.contains("always exists"), qPrintable(why));
    page.table()->setCurrentCell(rowOf(page, "node/0"), 0);
    QVERIFY(!page.findChild<QPushButton*>("editEndpoint")->isEnabled());
    QVERIFY(!page.findChild<QPushButton*>("removeEndpoint")->isEnabled());
    page.table()->setCurrentCell(rowOf(page, "box"), 0);
    QVERIFY(page.findChild<QPushButton*>("editEndpoint")->isEnabled());
    QVERIFY(page.findChild<QPushButton*>("removeEndpoint")->isEnabled());
}

void TestRunnersPage::defaultEndpoints()
{
    QTemporaryDir dir;
    const QString path = copyOf(dir, "good.json");
    RunnersPage page(path);
    page.setDefaultEndpoint("cluster");
    QVERIFY(page.isModified());
    QCOMPARE(page.workbenchPicker()->itemText(0), QString("the default endpoint (cluster)"));
    QString error;
    QVERIFY2(page.save(&error), qPrintable(error));
    QCOMPARE(reread(path).defaultEndpoint, std::string("cluster"));

    // The workbench's own choice is a setting, not part of the file.
    page.setWorkbenchEndpoint("wrapped");
    QCOMPARE(page.workbenchEndpoint(), QString("wrapped"));
    QVERIFY(!page.isModified());
    page.setWorkbenchEndpoint("gone");
    QCOMPARE(page.workbenchEndpoint(), QString("gone"));
    QCOMPARE(page.workbenchPicker()->currentText(), QString("gone (not in runners.json)"));
    page.setWorkbenchEndpoint(QString());
    QCOMPARE(page.workbenchPicker()->currentIndex(), 0);
}

// Add… opens the form; OK with an ssh option that asks for a terminal stays open with the
// reader's sentence, and OK again after the fix adds the endpoint.
void TestRunnersPage::editDialogShowsTheReadersSentence()
{
    QTemporaryDir dir;
    const QString path = copyOf(dir, "good.json");
    RunnersPage page(path);
    QString refused;
    bool stayedOpen = false;
    QTimer::singleShot(0, this, [&] {
        auto* d = qobject_cast<EndpointDialog*>(QApplication::activeModalWidget());
        if (!d)
            return;
        d->findChild<QLineEdit*>("endpointName")->setText("gpu2");
        d->findChild<QLineEdit*>("endpointHost")->setText("gpu2.lan");
        d->findChild<QLineEdit*>("endpointSshOptions")->setText("-o ServerAliveInterval=5 -tt");
        d->accept();
        stayedOpen = d->isVisible();
        refused = d->findChild<QLabel*>("endpointProblem")->text();
        d->findChild<QLineEdit*>("endpointSshOptions")->setText("-o ServerAliveInterval=5");
        d->accept();
    });
    page.findChild<QPushButton*>("addEndpoint")->click();
    QVERIFY(stayedOpen);
    QVERIFY2(refused.contains("at /endpoints/5/ssh_options/2: a pseudo-terminal rewrites protocol lines"), qPrintable(refused));
    const int row = rowOf(page, "gpu2");
    QVERIFY(row >= 0);
    QVERIFY(page.config().endpoints.at(size_t(row)).sshOptions == (std::vector<std::string>{"-o", "ServerAliveInterval=5"}));
    QVERIFY(page.isModified());
}

void TestRunnersPage::dialogRoundTripsEveryField()
{
    Endpoint e = sshEndpoint("box", "gpu-box.lan");
    e.user = "me";
    e.port = 2222;
    e.identityFile = "~/.ssh/id kf";
    e.sshOptions = {"-o", "ProxyJump=gate host"};
    e.runner = "/opt/kf/kforge-runner";
    e.env = {{"CUDA_VISIBLE_DEVICES", "1"}, {"KF_NOTE", "a=b"}};
    e.startTimeoutS = 30;
    e.idleTimeoutS = 60;
    e.heartbeatTimeoutS = 7;
    e.launchLatencyMs = 1500;
    e.sanitizer = "/usr/local/cuda/bin/compute-sanitizer";
    e.pool = false;
    EndpointDialog d(e, {});
    QString problem;
    const Endpoint back = d.endpoint(&problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QCOMPARE(back.name, e.name);
    QVERIFY(back.kind == e.kind);
    QCOMPARE(back.host, e.host);
    QCOMPARE(back.user, e.user);
    QCOMPARE(back.port, e.port);
    QCOMPARE(back.identityFile, e.identityFile);
    QVERIFY(back.sshOptions == e.sshOptions);
    QCOMPARE(back.runner, e.runner);
    QVERIFY(back.env == e.env);
    QCOMPARE(back.sharedFs, e.sharedFs);
    QCOMPARE(back.startTimeoutS, e.startTimeoutS);
    QCOMPARE(back.idleTimeoutS, e.idleTimeoutS);
    QCOMPARE(back.heartbeatTimeoutS, e.heartbeatTimeoutS);
    QCOMPARE(back.launchLatencyMs, e.launchLatencyMs);
    QCOMPARE(back.sanitizer, e.sanitizer);
    QCOMPARE(back.pool, e.pool);
    // Fields of another kind are hidden and left out.
    d.findChild<QComboBox*>("endpointKind")->setCurrentIndex(d.findChild<QComboBox*>("endpointKind")->findText("srun"));
    const Endpoint srun = d.endpoint();
    QVERIFY(srun.kind == Endpoint::Kind::Srun);
    QVERIFY(srun.host.empty() && srun.sshOptions.empty());
    QVERIFY(!d.findChild<QLineEdit*>("endpointHost")->isVisibleTo(&d));
    QVERIFY(d.findChild<QLineEdit*>("endpointSrunArgs")->isVisibleTo(&d));
    // What the form cannot read is said before the reader is asked.
    d.findChild<QLineEdit*>("endpointSrunArgs")->setText("--gres='gpu:1");
    QVERIFY2(d.problem().contains("srun arguments: a ' quote is not closed"), qPrintable(d.problem()));
}

void TestRunnersPage::checkStartsTheRunnerOffTheUiThread()
{
    QTemporaryDir dir;
    RunnersPage page(dir.filePath("runners.json"));
    page.setLocalRunner(QString(KF_RUNNER_BIN));
    QString error;
    QVERIFY2(page.addEndpoint(cpuRunnerEndpoint("cpu"), &error), qPrintable(error));
    const int row = rowOf(page, "cpu");
    QSignalSpy finished(&page, &RunnersPage::checkFinished);
    QElapsedTimer clock;
    clock.start();
    QVERIFY(page.check(row));
    // The UI thread is free: the page says it is checking and the button cancels.
    QVERIFY(clock.elapsed() < 1000);
    QVERIFY(page.isChecking());
    QCOMPARE(cell(page, row, RunnersPage::CheckColumn), QString("checking…"));
    QCOMPARE(page.checkButton()->text(), QString("Cancel &Check"));
    QVERIFY(!page.check(row)); // one check at a time
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
    const auto result = finished.first().at(0).value<EndpointCheck>();
    QVERIFY2(result.ok, qPrintable(result.text()));
    QCOMPARE(result.endpoint, QString("cpu"));
    QVERIFY(!result.host.isEmpty());
    QVERIFY(result.gpu.isEmpty());
    QVERIFY2(result.deviceError.contains("KF_RUNNER_FORCE_CPU"), qPrintable(result.deviceError));
    QVERIFY(result.pingMs > 0);
    QVERIFY(!page.isChecking());
    QCOMPARE(page.checkButton()->text(), QString("&Check"));
    QCOMPARE(cell(page, row, RunnersPage::CheckColumn), QString("ok · no GPU"));
    page.table()->setCurrentCell(row, 0);
    const QString shown = page.checkLabel()->text();
    QVERIFY2(shown.startsWith("cpu: " + result.host + " · no GPU: "), qPrintable(shown));
    QVERIFY2(shown.contains(" · round trip "), qPrintable(shown));
    QVERIFY(page.lastCheck("cpu"));

    // A runner that is not there: the supervisor's sentence, not a crash.
    Endpoint missing = cpuRunnerEndpoint("missing");
    missing.runner = dir.filePath("no-such-runner").toStdString();
    QVERIFY(page.addEndpoint(missing));
    QVERIFY(page.check(rowOf(page, "missing")));
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 60000);
    const auto bad = finished.last().at(0).value<EndpointCheck>();
    QVERIFY(!bad.ok);
    QVERIFY2(bad.text().contains("before it said hello"), qPrintable(bad.text()));
    QCOMPARE(cell(page, rowOf(page, "missing"), RunnersPage::CheckColumn), QString("failed"));
}

void TestRunnersPage::checkCanBeCancelled()
{
    QTemporaryDir dir;
    RunnersPage page(dir.filePath("runners.json"));
    page.setLocalRunner(QString(KF_RUNNER_BIN));
    // An endpoint that takes a minute to start (an srun job waiting in the queue, say).
    Endpoint slow = cpuRunnerEndpoint("queued", "sleep 60; ");
    QVERIFY(page.addEndpoint(slow));
    QSignalSpy finished(&page, &RunnersPage::checkFinished);
    QVERIFY(page.check(rowOf(page, "queued")));
    QElapsedTimer clock;
    clock.start();
    page.checkButton()->click(); // "Cancel Check"
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
    QVERIFY2(clock.elapsed() < 20000, "the cancel did not stop the wait for the hello");
    const auto result = finished.first().at(0).value<EndpointCheck>();
    QVERIFY(result.cancelled);
    QVERIFY(!result.ok);
    QCOMPARE(result.text(), QString("check cancelled"));
    QCOMPARE(cell(page, rowOf(page, "queued"), RunnersPage::CheckColumn), QString("cancelled"));
}

void TestRunnersPage::settingsDialogSavesThePageAndTheWorkbenchEndpoint()
{
    QTemporaryDir dir;
    const QString path = copyOf(dir, "good.json");
    kf::app::Settings settings(new QSettings(dir.filePath("kf.ini"), QSettings::IniFormat, this));
    {
        kf::app::SettingsDialog dialog(&settings, nullptr, path);
        RunnersPage* page = dialog.runnersPage();
        QVERIFY(page);
        QCOMPARE(page->file(), path);
        QVERIFY(page->addEndpoint(sshEndpoint("gpu2", "gpu2.lan")));
        page->setWorkbenchEndpoint("gpu2");
        dialog.accept();
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
    }
    QCOMPARE(settings.runnerEndpoint(), QString("gpu2"));
    QVERIFY(reread(path).find("gpu2"));
    // The next dialog shows the choice it stored.
    kf::app::SettingsDialog dialog(&settings, nullptr, path);
    QCOMPARE(dialog.runnersPage()->workbenchEndpoint(), QString("gpu2"));
    QCOMPARE(dialog.runnersPage()->workbenchPicker()->currentText(), QString("gpu2"));
}

QTEST_MAIN(TestRunnersPage)
#include "tst_runnerspage.moc"
