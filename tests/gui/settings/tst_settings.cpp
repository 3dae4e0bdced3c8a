// Preferences: what is written comes back after a restart, stale or hand-edited values fall back
// to sane defaults, and the dialog refuses what would break every compile.
#include "testutil.h"

#include "app/gui/settings/Settings.h"
#include "app/gui/settings/SettingsDialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

using kf::app::Settings;
using kf::app::SettingsDialog;

Q_DECLARE_METATYPE(Settings::ToleranceOverride)

class TestSettings : public QObject {
    Q_OBJECT
private slots:
    void init();
    void freshSettingsHaveDefaults();
    void valuesSurviveARestart();
    void toleranceOverrideRoundTrips_data();
    void toleranceOverrideRoundTrips();
    void nvrtcOptionsRoundTrip_data();
    void nvrtcOptionsRoundTrip();
    void handEditedNonsenseFallsBack_data();
    void handEditedNonsenseFallsBack();
    void recentWorkspacesAreMostRecentFirstAndUnique();
    void recentWorkspacesKeepAtMostEight();
    void settersAnnounceTheChange();
    void dialogShowsTheStoredValues();
    void dialogRefusesBadNvrtcOptions_data();
    void dialogRefusesBadNvrtcOptions();
    void dialogWritesOnOkOnly();

private:
    std::unique_ptr<QSettings> reopen() const
    {
        return std::make_unique<QSettings>(m_ini, QSettings::IniFormat);
    }
    std::unique_ptr<QTemporaryDir> m_tmp;
    QString m_ini;
};

void TestSettings::init()
{
    m_tmp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_tmp->isValid());
    m_ini = m_tmp->filePath("kernelforge.ini");
}

void TestSettings::freshSettingsHaveDefaults()
{
    auto qs = reopen();
    Settings s(qs.get());
    QCOMPARE(s.defaultArchitecture(), QString("sm_90"));
    QCOMPARE(s.compileDebounceMs(), 300);
    QCOMPARE(s.nvrtcExtraOptions(), QStringList());
    QCOMPARE(s.toleranceOverride(), Settings::ToleranceOverride{});
    QCOMPARE(s.runnerPath(), QString());
    QCOMPARE(s.launchTimeoutMs(), 10000);
    QCOMPARE(s.trials(), 3);
    QCOMPARE(s.theme(), Settings::Theme::System);
    QCOMPARE(s.recentWorkspaces(), QStringList());
    QVERIFY(s.windowGeometry().isEmpty());
}

void TestSettings::valuesSurviveARestart()
{
    const QByteArray geometry("\x01\x02\x00\xffgeometry", 12);
    {
        auto qs = reopen();
        Settings s(qs.get());
        s.setDefaultArchitecture("sm_80");
        s.setCompileDebounceMs(750);
        s.setRunnerPath("/opt/kf/bin/kforge-runner");
        s.setLaunchTimeoutMs(2500);
        s.setTrials(7);
        s.setTheme(Settings::Theme::Dark);
        s.setWindowGeometry(geometry);
        s.setWindowState("state-bytes");
        s.sync();
    }
    auto qs = reopen();
    Settings s(qs.get());
    QCOMPARE(s.defaultArchitecture(), QString("sm_80"));
    QCOMPARE(s.compileDebounceMs(), 750);
    QCOMPARE(s.runnerPath(), QString("/opt/kf/bin/kforge-runner"));
    QCOMPARE(s.launchTimeoutMs(), 2500);
    QCOMPARE(s.trials(), 7);
    QCOMPARE(s.theme(), Settings::Theme::Dark);
    QCOMPARE(s.windowGeometry(), geometry);
    QCOMPARE(s.windowState(), QByteArray("state-bytes"));
}

void TestSettings::toleranceOverrideRoundTrips_data()
{
    QTest::addColumn<Settings::ToleranceOverride>("tol");
    QTest::newRow("task's own") << Settings::ToleranceOverride{};
    QTest::newRow("loose rtol only") << Settings::ToleranceOverride{1e-2, std::nullopt};
    QTest::newRow("both, tiny atol") << Settings::ToleranceOverride{1.3e-6, 1e-12};
    QTest::newRow("exact match wanted") << Settings::ToleranceOverride{0.0, 0.0};
}

void TestSettings::toleranceOverrideRoundTrips()
{
    QFETCH(Settings::ToleranceOverride, tol);
    {
        auto qs = reopen();
        Settings s(qs.get());
        s.setToleranceOverride({0.5, 0.5}); // an earlier value must be replaced, unset included
        s.setToleranceOverride(tol);
        s.sync();
    }
    auto qs = reopen();
    QCOMPARE(Settings(qs.get()).toleranceOverride(), tol);
}

void TestSettings::nvrtcOptionsRoundTrip_data()
{
    QTest::addColumn<QStringList>("options");
    QTest::newRow("none") << QStringList();
    QTest::newRow("one option") << QStringList{"-lineinfo"};
    QTest::newRow("two options") << QStringList{"-lineinfo", "-maxrregcount=64"};
    QTest::newRow("define with a space") << QStringList{"-DGREETING=hello world", "--use_fast_math"};
}

void TestSettings::nvrtcOptionsRoundTrip()
{
    QFETCH(QStringList, options);
    {
        auto qs = reopen();
        Settings(qs.get()).setNvrtcExtraOptions(options);
    }
    auto qs = reopen();
    QCOMPARE(Settings(qs.get()).nvrtcExtraOptions(), options);
    // The dialog shows them as one line and reads that line back to the same list.
    QStringList parsed;
    QString error;
    QVERIFY2(SettingsDialog::parseNvrtcOptions(SettingsDialog::joinNvrtcOptions(options), &parsed, &error),
             qPrintable(error));
    QCOMPARE(parsed, options);
}

void TestSettings::handEditedNonsenseFallsBack_data()
{
    QTest::addColumn<QString>("key");
    QTest::addColumn<QVariant>("value");
    QTest::newRow("unknown architecture") << "compile/default_architecture" << QVariant("sm_999");
    QTest::newRow("architecture not an sm_ name") << "compile/default_architecture" << QVariant("compute_80");
    QTest::newRow("negative debounce") << "compile/debounce_ms" << QVariant(-5);
    QTest::newRow("debounce is text") << "compile/debounce_ms" << QVariant("soon");
    QTest::newRow("zero trials") << "verify/trials" << QVariant(0);
    QTest::newRow("timeout too short") << "runner/launch_timeout_ms" << QVariant(1);
    QTest::newRow("negative rtol") << "verify/rtol_override" << QVariant(-1.0);
    QTest::newRow("unknown theme") << "ui/theme" << QVariant("purple");
}

void TestSettings::handEditedNonsenseFallsBack()
{
    QFETCH(QString, key);
    QFETCH(QVariant, value);
    {
        auto qs = reopen();
        qs->setValue(key, value);
    }
    auto qs = reopen();
    Settings s(qs.get());
    QCOMPARE(s.defaultArchitecture(), QString("sm_90"));
    QCOMPARE(s.compileDebounceMs(), 300);
    QCOMPARE(s.trials(), 3);
    QCOMPARE(s.launchTimeoutMs(), 10000);
    QCOMPARE(s.toleranceOverride(), Settings::ToleranceOverride{});
    QCOMPARE(s.theme(), Settings::Theme::System);
}

void TestSettings::recentWorkspacesAreMostRecentFirstAndUnique()
{
    const QString a = m_tmp->filePath("a"), b = m_tmp->filePath("b"), c = m_tmp->filePath("c");
    {
        auto qs = reopen();
        Settings s(qs.get());
        s.addRecentWorkspace(a);
        s.addRecentWorkspace(b);
        s.addRecentWorkspace(c);
        QCOMPARE(s.recentWorkspaces(), (QStringList{c, b, a}));
        s.addRecentWorkspace(m_tmp->filePath("b/../a/")); // the same folder, spelled differently
        QCOMPARE(s.recentWorkspaces(), (QStringList{a, c, b}));
        s.removeRecentWorkspace(c);
    }
    auto qs = reopen();
    QCOMPARE(Settings(qs.get()).recentWorkspaces(), (QStringList{a, b}));
}

void TestSettings::recentWorkspacesKeepAtMostEight()
{
    auto qs = reopen();
    Settings s(qs.get());
    for (int i = 0; i < 11; ++i)
        s.addRecentWorkspace(m_tmp->filePath(QString("w%1").arg(i)));
    const QStringList recent = s.recentWorkspaces();
    QCOMPARE(recent.size(), Settings::kMaxRecentWorkspaces);
    QCOMPARE(recent.first(), m_tmp->filePath("w10"));
    QCOMPARE(recent.last(), m_tmp->filePath("w3")); // w0..w2, the oldest, were dropped
}

void TestSettings::settersAnnounceTheChange()
{
    auto qs = reopen();
    Settings s(qs.get());
    QSignalSpy spy(&s, &Settings::changed);
    s.setCompileDebounceMs(100);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).toString(), QString("compile/debounce_ms"));
}

void TestSettings::dialogShowsTheStoredValues()
{
    auto qs = reopen();
    Settings s(qs.get());
    s.setDefaultArchitecture("sm_80");
    s.setNvrtcExtraOptions({"-lineinfo", "-DNAME=a b"});
    s.setTrials(9);
    s.setToleranceOverride({1e-3, std::nullopt});
    SettingsDialog dlg(&s);
    QCOMPARE(dlg.findChild<QComboBox*>("architecture")->currentData().toString(), QString("sm_80"));
    QCOMPARE(dlg.findChild<QLineEdit*>("nvrtcOptions")->text(), QString("-lineinfo \"-DNAME=a b\""));
    QCOMPARE(dlg.findChild<QSpinBox*>("trials")->value(), 9);
    QCOMPARE(dlg.findChild<QLineEdit*>("rtol")->text(), QString("0.001"));
    QCOMPARE(dlg.findChild<QLineEdit*>("atol")->text(), QString());
    QVERIFY(dlg.findChild<QComboBox*>("architecture")->count() >= 2);
    QVERIFY(dlg.validationError().isEmpty());
}

void TestSettings::dialogRefusesBadNvrtcOptions_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("sentencePart");
    QTest::newRow("unclosed quote") << "-lineinfo \"-DX=1" << "not closed";
    QTest::newRow("a word that is not an option") << "-lineinfo maxrregcount=32" << "not an option";
    QTest::newRow("architecture given twice") << "-arch=sm_80" << "architecture above";
}

void TestSettings::dialogRefusesBadNvrtcOptions()
{
    QFETCH(QString, text);
    QFETCH(QString, sentencePart);
    auto qs = reopen();
    Settings s(qs.get());
    SettingsDialog dlg(&s);
    auto* ok = dlg.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
    auto* edit = dlg.findChild<QLineEdit*>("nvrtcOptions");
    QVERIFY(ok->isEnabled());

    edit->setText(text);
    QVERIFY(!ok->isEnabled());
    QVERIFY2(dlg.validationError().contains(sentencePart), qPrintable(dlg.validationError()));
    QCOMPARE(dlg.findChild<QLabel*>("problem")->text(), dlg.validationError());
    dlg.accept(); // e.g. Enter in the field: must not save
    QCOMPARE(s.nvrtcExtraOptions(), QStringList());

    edit->setText("-lineinfo");
    QVERIFY(ok->isEnabled());
    QVERIFY(dlg.validationError().isEmpty());
}

void TestSettings::dialogWritesOnOkOnly()
{
    auto qs = reopen();
    Settings s(qs.get());
    {
        SettingsDialog dlg(&s);
        dlg.findChild<QSpinBox*>("debounce")->setValue(1000);
        dlg.reject();
    }
    QCOMPARE(s.compileDebounceMs(), 300);

    SettingsDialog dlg(&s);
    dlg.findChild<QSpinBox*>("debounce")->setValue(1000);
    dlg.findChild<QLineEdit*>("nvrtcOptions")->setText("  -lineinfo   -maxrregcount=64 ");
    dlg.findChild<QLineEdit*>("atol")->setText("1e-5");
    auto* theme = dlg.findChild<QComboBox*>("theme");
    theme->setCurrentIndex(theme->findData(int(Settings::Theme::Light)));
    dlg.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->click();
    QCOMPARE(dlg.result(), int(QDialog::Accepted));
    auto again = reopen();
    Settings after(again.get());
    QCOMPARE(after.compileDebounceMs(), 1000);
    QCOMPARE(after.nvrtcExtraOptions(), (QStringList{"-lineinfo", "-maxrregcount=64"}));
    QCOMPARE(after.toleranceOverride(), (Settings::ToleranceOverride{std::nullopt, 1e-5}));
    QCOMPARE(after.theme(), Settings::Theme::Light);
}

QTEST_MAIN(TestSettings)
#include "tst_settings.moc"
