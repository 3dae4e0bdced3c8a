#pragma once
// File ▸ Import Problem…: the workbench's face of `kforge import` (docs/agents.md, "Importing
// problems"). The user picks a KernelBench problem file or a GPU MODE problem folder, where the
// task goes and, for KernelBench, a dtype; the import runs the problem's Python code off the UI
// thread with a busy bar and Cancel, then shows where the task is and the importer's notes, or
// the sentence that names what could not be imported. Nothing is left behind by a failed or
// cancelled import.

#include <QDialog>
#include <QString>
#include <QStringList>

#include <atomic>
#include <memory>

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;

namespace kf::app {

class ImportDialog : public QDialog {
    Q_OBJECT

public:
    /// `parentFolder`: where new task folders go (the workspace).
    explicit ImportDialog(const QString& parentFolder, QWidget* parent = nullptr);
    ~ImportDialog() override;

    enum Format { KernelBench = 0, GpuMode = 1 };
    void setFormat(Format f);
    QLineEdit* source() const { return m_source; }
    QLineEdit* destination() const { return m_parent; }
    QComboBox* dtype() const { return m_dtype; }
    QLineEdit* python() const { return m_python; }
    QPushButton* importButton() const { return m_import; }
    QPushButton* cancelButton() const { return m_cancel; }
    QLabel* status() const { return m_status; }
    QPlainTextEdit* notes() const { return m_notes; }
    bool busy() const { return m_busy; }

    /// Starts the import with the fields as they are (what the Import button does).
    void start();

    /// Esc or the window's close button: while an import runs, cancels it and stays open (the
    /// outcome is shown); otherwise closes.
    void reject() override;

signals:
    void imported(const QString& taskDir, const QStringList& notes);
    void failed(const QString& message);

private:
    void browse();
    void updateState();

    QComboBox* m_format = nullptr;
    QLineEdit* m_source = nullptr;
    QLineEdit* m_parent = nullptr;
    QComboBox* m_dtype = nullptr;
    QLineEdit* m_python = nullptr;
    QLabel* m_status = nullptr;
    QPlainTextEdit* m_notes = nullptr;
    QProgressBar* m_busyBar = nullptr;
    QPushButton* m_import = nullptr;
    QPushButton* m_cancel = nullptr;
    QPushButton* m_close = nullptr;
    bool m_busy = false;
    std::shared_ptr<std::atomic_bool> m_stop;
};

} // namespace kf::app
