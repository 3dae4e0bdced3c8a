// kernelforge: the workbench. Starts without a GPU and without LibTorch; GPU work goes to
// kforge-runner. `--exit-when-ready` quits once the window is interactive (startup benchmark);
// `--screenshot DIR` saves the main views as PNGs and quits (docs and the GPU-server check).
#include "app/gui/settings/Settings.h"
#include "app/gui/window/MainWindow.h"
#include "app/gui/window/Screenshots.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QTimer>

#include <cstdio>

int main(int argc, char** argv)
{
    QElapsedTimer sinceStart;
    sinceStart.start();
    QGuiApplication::setHighDpiScaleFactorRoundingPolicy(Qt::HighDpiScaleFactorRoundingPolicy::PassThrough);
    QApplication app(argc, argv);
    QApplication::setOrganizationName("KernelForge");
    QApplication::setApplicationName("KernelForge");
    QApplication::setApplicationVersion(KF_VERSION);

    QCommandLineParser cli;
    cli.setApplicationDescription("KernelForge: write CUDA kernels that are proven correct and proven fast.");
    cli.addHelpOption();
    cli.addVersionOption();
    cli.addPositionalArgument("workspace", "Folder of tasks to open (default: the last one, else the examples).", "[workspace]");
    QCommandLineOption exitWhenReady("exit-when-ready", "Quit as soon as the window is interactive; print the time.");
    QCommandLineOption screenshot("screenshot", "Save screenshots of the main views to <dir> and quit.", "dir");
    QCommandLineOption screenshotRun("screenshot-run", "With --screenshot: also verify and benchmark the open candidate.");
    QCommandLineOption noRunner("no-runner", "Do not start the GPU runner (compile-only).");
    cli.addOptions({exitWhenReady, screenshot, screenshotRun, noRunner});
    cli.process(app);

    kf::app::Settings settings;
    kf::app::MainWindow::Options options;
    if (!cli.positionalArguments().isEmpty())
        options.workspace = cli.positionalArguments().constFirst();
    options.probeRunner = !cli.isSet(noRunner);
    options.askToRestore = !cli.isSet(screenshot) && !cli.isSet(exitWhenReady);
    kf::app::MainWindow window(&settings, options);
    window.show();

    if (cli.isSet(exitWhenReady)) {
        // Interactive = shown, laid out and the event loop turning: the first zero-timer runs
        // after the window's first paint events have been processed.
        QTimer::singleShot(0, &app, [&] {
            std::printf("interactive after %.1f ms\n", sinceStart.nsecsElapsed() / 1e6);
            std::fflush(stdout);
            app.quit();
        });
    }
    if (cli.isSet(screenshot))
        kf::app::takeScreenshots(window, cli.value(screenshot), cli.isSet(screenshotRun));
    return app.exec();
}
