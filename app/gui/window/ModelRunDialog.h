#pragma once
// Run ▸ Run Model from .cast Package…: the workbench's face of `kforge cast run` for a package
// that carries a model (docs/cast.md, "Models"). Opening a package reads and checks it off the
// UI thread and lists its models and the runs recorded in it; Run starts `kforge cast run
// --json` as a separate process (the workbench links no LibTorch), streams its messages, and
// shows the result in a ModelRunView; Cancel stops the process. Non-modal: the editor stays usable.

#include <QDialog>
#include <QString>

#include <memory>

class QCheckBox;
class QComboBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QProcess;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace kf::ui {
class ModelRunView;
}

namespace kf::app {

class ModelRunDialog : public QDialog {
    Q_OBJECT

public:
    explicit ModelRunDialog(QWidget* parent = nullptr);
    ~ModelRunDialog() override;

    /// The kforge program that runs the model; default: beside the workbench, else on PATH.
    void setKforge(const QString& path) { m_kforge = path; }
    QString kforge() const { return m_kforge; }
    /// Reads and checks `file` off the UI thread; packageOpened() says how it went.
    void openPackage(const QString& file);
    /// Runs the chosen model (runFinished() when done); does nothing while a run is going.
    void run();
    void cancel();
    bool running() const;

    // Parts, for tests.
    kf::ui::ModelRunView* view() const { return m_view; }
    QComboBox* models() const { return m_models; }
    QComboBox* recorded() const { return m_recorded; }
    QComboBox* device() const { return m_device; }
    QSpinBox* runs() const { return m_runs; }
    QCheckBox* checkBox() const { return m_check; }
    QCheckBox* recordBox() const { return m_record; }
    QCheckBox* fallbackBox() const { return m_fallback; }
    QPushButton* runButton() const { return m_runButton; }
    QLabel* status() const { return m_status; }

signals:
    void packageOpened(bool ok, const QString& sentence);
    void runFinished(bool ok, const QString& sentence);

private:
    // The constructor's rows (ModelRunDialog.cpp).
    QHBoxLayout* buildOptions();
    QHBoxLayout* buildRunRow();
    struct Opened;
    void showOpened(const std::shared_ptr<Opened>& opened);
    void showRecorded(int index);
    void finished(int exitCode, bool crashed);
    void setBusy(bool busy);

    QString m_kforge;
    QString m_package;
    std::shared_ptr<Opened> m_opened;
    QLineEdit* m_file = nullptr;
    QComboBox* m_models = nullptr;
    QComboBox* m_recorded = nullptr;
    QComboBox* m_device = nullptr;
    QSpinBox* m_runs = nullptr;
    QSpinBox* m_warmup = nullptr;
    QCheckBox* m_check = nullptr;
    QCheckBox* m_record = nullptr;
    QCheckBox* m_fallback = nullptr;
    QPushButton* m_runButton = nullptr;
    QPushButton* m_cancelButton = nullptr;
    QProgressBar* m_busy = nullptr;
    QLabel* m_status = nullptr;
    kf::ui::ModelRunView* m_view = nullptr;
    QProcess* m_process = nullptr;
    QString m_stderr;
    int m_openGeneration = 0;
};

} // namespace kf::app
