// Where an installed program finds its files (engine/core/InstallLayout.h): an installed kforge,
// workbench or runner names files under its own prefix, never the build machine's source tree;
// a program run from a build tree keeps the compile-time paths.
#include "engine/core/InstallLayout.h"

#include <QCoreApplication>
#include <QDir>
#include <QTemporaryDir>
#include <QTest>

using namespace kf;

Q_DECLARE_METATYPE(kf::InstallDir)

class TestInstallLayout : public QObject {
    Q_OBJECT

    QTemporaryDir m_root;

    QString at(const QString& relative) const { return m_root.path() + "/" + relative; }

private slots:
    void initTestCase()
    {
        QVERIFY(m_root.isValid());
        // An installed prefix, a build tree, and a prefix that is not KernelForge's.
        for (const char* d : {"usr/bin", "usr/share/kernelforge/examples", "usr/libexec/kernelforge",
                              "src/build/dev/app/gui", "src/build/dev/app/cli", "opt/other/bin", "opt/other/libexec/tools",
                              "opt/other/share/tools"})
            QVERIFY(QDir().mkpath(at(d)));
    }

    void resolves_data()
    {
        QTest::addColumn<QString>("exeDir");
        QTest::addColumn<kf::InstallDir>("dir");
        QTest::addColumn<QString>("relative");
        QTest::addColumn<QString>("buildTree");
        QTest::addColumn<QString>("expected");

        const QString src = "/build-machine/src/resources/examples";
        QTest::newRow("installed workbench: examples under share")
            << "usr/bin" << InstallDir::Data << "examples" << src << "usr/share/kernelforge/examples";
        QTest::newRow("installed kforge: the runner under libexec")
            << "usr/bin" << InstallDir::Libexec << "kforge-runner" << "" << "usr/libexec/kernelforge/kforge-runner";
        QTest::newRow("installed runner: data under share of the same prefix")
            << "usr/libexec/kernelforge" << InstallDir::Data << "python/cast" << src << "usr/share/kernelforge/python/cast";
        QTest::newRow("installed, bin given with a trailing slash")
            << "usr/bin/" << InstallDir::Data << "templates" << src << "usr/share/kernelforge/templates";
        QTest::newRow("installed, a file that is missing is still named there")
            << "usr/bin" << InstallDir::Data << "screenshots/none.json" << src << "usr/share/kernelforge/screenshots/none.json";
        QTest::newRow("installed, the folder itself")
            << "usr/bin" << InstallDir::Libexec << "" << "" << "usr/libexec/kernelforge";
        QTest::newRow("build tree workbench: the compile-time path")
            << "src/build/dev/app/gui" << InstallDir::Data << "examples" << src << src;
        QTest::newRow("build tree kforge: empty keeps searching as before")
            << "src/build/dev/app/cli" << InstallDir::Libexec << "kforge-cast" << "" << "";
        QTest::newRow("another prefix's bin without share/kernelforge")
            << "opt/other/bin" << InstallDir::Data << "examples" << src << src;
        QTest::newRow("a libexec folder that is not kernelforge's")
            << "opt/other/libexec/tools" << InstallDir::Data << "examples" << src << src;
        QTest::newRow("unknown program folder")
            << "" << InstallDir::Data << "examples" << src << src;
    }

    void resolves()
    {
        QFETCH(QString, exeDir);
        QFETCH(kf::InstallDir, dir);
        QFETCH(QString, relative);
        QFETCH(QString, buildTree);
        QFETCH(QString, expected);
        const std::filesystem::path exe = exeDir.isEmpty() ? std::filesystem::path() : std::filesystem::path(at(exeDir).toStdString());
        const std::filesystem::path got = kf::installedPath(dir, relative.toStdString(), buildTree.toStdString(), exe);
        const QString want = expected.startsWith('/') || expected.isEmpty() ? expected : QDir::cleanPath(at(expected));
        QCOMPARE(QString::fromStdString(got.lexically_normal().string()), want);
    }

    void thisProgramRunsFromTheBuildTree()
    {
        QCOMPARE(QString::fromStdString(executableDir().string()), QCoreApplication::applicationDirPath());
        QVERIFY(installPrefix(executableDir()).empty());
        QCOMPARE(QString::fromStdString(installedPath(InstallDir::Data, "examples", "/compile/time").string()),
                 QStringLiteral("/compile/time"));
    }
};

QTEST_GUILESS_MAIN(TestInstallLayout)
#include "tst_installlayout.moc"
