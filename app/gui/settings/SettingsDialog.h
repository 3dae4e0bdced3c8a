#pragma once
// Preferences dialog: edits a Settings object (General), the language models of kernel
// synthesis (Models, app/gui/settings/ModelsPage, stored in models.json) and the runner endpoints
// (Runners, app/gui/settings/RunnersPage, stored in runners.json); nothing is written
// until OK, and OK stays disabled while a field is invalid (the reason is shown under the form).

#include <QDialog>
#include <QString>
#include <QStringList>

class QComboBox;
class QDialogButtonBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QCheckBox;
class QSpinBox;

namespace kf::app {

class ModelsPage;
class RunnersPage;
class Settings;

/// GUI thread. `settings` must outlive the dialog.
class SettingsDialog : public QDialog {
    Q_OBJECT
public:
    /// `runnersFile` empty: runnersConfigPath().
    explicit SettingsDialog(Settings* settings, QWidget* parent = nullptr, const QString& runnersFile = {});

    /// Splits NVRTC options the way a shell would (quotes group, whitespace separates). Returns
    /// false with a sentence in `error` for an unclosed quote, a word that is not an option, or
    /// an option this dialog sets elsewhere (the architecture).
    static bool parseNvrtcOptions(const QString& text, QStringList* options, QString* error);
    /// The inverse of parseNvrtcOptions, for showing stored options.
    static QString joinNvrtcOptions(const QStringList& options);

    /// The first problem of the form, empty when it can be saved.
    QString validationError() const { return m_error; }
    /// The Models page (models.json at synth::modelsConfigPath()).
    ModelsPage* modelsPage() const { return m_models; }
    /// The Runners page (runners.json at runnersConfigPath()).
    RunnersPage* runnersPage() const { return m_runners; }

public slots:
    /// Writes the form to the settings and closes (only when valid).
    void accept() override;

private:
    // The General page's rows (SettingsDialog.cpp).
    void addCompileRows(QFormLayout* form);
    void addRunRows(QFormLayout* form);
    void addWorkbenchRows(QFormLayout* form);
    void load();
    void validate();
    void browseRunner();

    Settings* m_settings;
    QComboBox* m_architecture = nullptr;
    QLineEdit* m_nvrtcOptions = nullptr;
    QSpinBox* m_debounce = nullptr;
    QLineEdit* m_rtol = nullptr;
    QLineEdit* m_atol = nullptr;
    QLineEdit* m_runnerPath = nullptr;
    QSpinBox* m_launchTimeout = nullptr;
    QSpinBox* m_trials = nullptr;
    QCheckBox* m_benchCompile = nullptr;
    QLineEdit* m_skillDirs = nullptr;
    QComboBox* m_theme = nullptr;
    ModelsPage* m_models = nullptr;
    RunnersPage* m_runners = nullptr;
    QLabel* m_problem = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
    QString m_error;
};

} // namespace kf::app
