#pragma once
// The failing-input inspector in the window: opens a saved failing case from the Runs panel
// (double-click or "Inspect tensors…") in the Inspector dock, and turns the inspector's
// buttons into work: Re-run (the case's saved inputs, the kernel as saved now), Shrink (the
// smallest shape that fails the same way) and Export repro (a bundle `kforge verify --repro`
// re-runs). The widgets only read files; this class talks to the run controller.
#include <QObject>
#include <QString>

#include <functional>

class QDockWidget;

namespace kf::ui {
class RunPanel;
class TensorInspector;
} // namespace kf::ui

namespace kf::app {

class RunController;

/// GUI thread only.
class InspectController : public QObject {
    Q_OBJECT
public:
    InspectController(kf::ui::TensorInspector* inspector, QDockWidget* dock, kf::ui::RunPanel* panel, RunController* run,
                      QObject* parent = nullptr);

    /// Opens `caseDir` in the dock (shown and raised). False when the case cannot be read; the
    /// inspector then shows why.
    bool open(const QString& caseDir);
    /// Exports `caseDir` as a repro bundle into `bundleDir` (a new or empty folder).
    bool exportRepro(const QString& caseDir, const QString& bundleDir);
    /// Asks for the bundle folder; tests replace the dialog.
    void setAskFolder(std::function<QString(const QString& suggestion)> ask) { m_askFolder = std::move(ask); }

signals:
    void message(const QString& text);
    void problem(const QString& text);

private:
    kf::ui::TensorInspector* m_inspector;
    QDockWidget* m_dock;
    RunController* m_run;
    std::function<QString(const QString&)> m_askFolder;
};

} // namespace kf::app
