#pragma once
// A scripted tour of the workbench that saves a PNG of each main view: the docs' screenshots and
// the GPU server's end-to-end check of the GUI with the real runner. Runs asynchronously on the
// event loop and quits the application when done.
#include <QString>

namespace kf::app {

class MainWindow;

/// Saves workbench.png, diagnostics.png, assembly.png, occupancy.png, task-editor.png and
/// runs.png (and, with `withRuns`, verify.png and benchmark.png after real runs, and last tune.png
/// and tune-runs.png after Run ▸ Tune when a workspace candidate has a "tune" block) into `dir`.
void takeScreenshots(MainWindow& window, const QString& dir, bool withRuns);

} // namespace kf::app
