#pragma once
// File ▸ New Candidate from Reference…: the workbench's face of `kforge generate`
// (docs/generate.md). It generates the fused candidate of a task's reference, shows the source
// read-only with the editor's highlighting, the launch plan and what was fused, and lets the
// user name the file; Add to Task writes it into the task (source and plan, atomically, after
// the engine validated the task) and says which file it added. A reference the generator does
// not support shows the generator's sentence instead, and nothing can be added. Generating takes
// milliseconds, so it runs on the UI thread; the NVRTC check that kforge generate also makes runs
// on a worker, and Add to Task waits for it: a source that does not compile cleanly (a generator
// bug) cannot be added. Without NVRTC the dialog says the source was not compiled.

#include "engine/compile/CompileTypes.h"
#include "engine/generate/Generate.h"
#include "engine/task/Task.h"

#include <QDialog>
#include <QString>

#include <optional>

class QLabel;
class QLineEdit;
class QPushButton;

namespace kf::ui {
class KernelEditor;
}

namespace kf::app {

class GenerateDialog : public QDialog {
    Q_OBJECT

public:
    explicit GenerateDialog(QWidget* parent = nullptr);

    /// Loads the task in `taskDir` and generates its candidate. False when the task does not load
    /// or its reference cannot be fused; problem() then holds the sentence the dialog shows.
    bool prepare(const QString& taskDir);
    QString problem() const { return m_problem; }
    QString source() const;
    QLineEdit* fileName() const { return m_name; }
    QPushButton* addButton() const { return m_add; }
    /// The NVRTC check's line: "Checking…", "Compiles cleanly for sm_90 …", or why not.
    QLabel* compileStatus() const { return m_compile; }
    /// Writes the candidate under the name in the field. Emits candidateAdded() and closes the
    /// dialog; on an error (a taken name) shows it and stays open.
    void addToTask();

signals:
    void candidateAdded(const QString& taskDir, const QString& file);
    /// The NVRTC check finished; `clean` is false only when the source has errors or warnings.
    void compileChecked(bool clean);

private:
    void startCompileCheck();

    QString m_taskDir;
    QString m_problem;
    std::optional<gen::Generated> m_generated;
    std::optional<Task> m_task;
    bool m_compileClean = false;
    int m_generation = 0;   ///< which prepare() a finished check belongs to
    QLabel* m_compile = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_plan = nullptr;
    QLabel* m_error = nullptr;
    ui::KernelEditor* m_preview = nullptr;
    QLineEdit* m_name = nullptr;
    QPushButton* m_add = nullptr;
};

} // namespace kf::app
