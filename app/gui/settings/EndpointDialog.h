#pragma once
// Settings ▸ Runners ▸ Add / Edit: one runner endpoint (docs/runners.md) as a form. Every field of
// runners.json has an editor; those of other kinds are hidden. OK asks the page's validator, which
// is the engine's reader (parseRunnersConfig): a refusal is shown with its JSON pointer and the
// dialog stays open.

#include "engine/runner/Endpoint.h"

#include <QDialog>
#include <QString>
#include <QStringList>

#include <functional>

class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QSpinBox;

namespace kf::app {

/// GUI thread.
class EndpointDialog : public QDialog {
    Q_OBJECT
public:
    /// The sentence that keeps `endpoint` out of runners.json, or empty when it may be saved.
    using Validator = std::function<QString(const kf::Endpoint& endpoint)>;

    EndpointDialog(const kf::Endpoint& endpoint, Validator validate, QWidget* parent = nullptr);

    /// The form as an endpoint. Fields the form cannot read (a port that is no number, an
    /// unclosed quote) leave `problem` non-empty.
    kf::Endpoint endpoint(QString* problem = nullptr) const;
    /// What OK would refuse now (the form's own reading, then the validator); empty when none.
    QString problem() const;

    /// Splits `text` into words as a shell does (quotes group words, whitespace separates them).
    /// False with a sentence in `error` for an unclosed quote.
    static bool splitWords(const QString& text, QStringList* words, QString* error);
    /// The inverse of splitWords, for showing stored words.
    static QString joinWords(const std::vector<std::string>& words);

public slots:
    /// Closes with Accepted only when problem() is empty; else shows it under the form.
    void accept() override;

private:
    // The form's rows, top to bottom (EndpointDialog.cpp).
    void addIdentityRows(const kf::Endpoint& e);
    void addConnectionRows(const kf::Endpoint& e);
    void addRunnerRows(const kf::Endpoint& e);
    void addTimeoutRows(const kf::Endpoint& e);
    void kindChanged();
    void showProblem();

    Validator m_validate;
    kf::Endpoint::Kind m_kind = kf::Endpoint::Kind::Local;
    QFormLayout* m_form = nullptr;
    QLineEdit* m_name = nullptr;
    QComboBox* m_kindBox = nullptr;
    QLineEdit* m_runner = nullptr;
    QPlainTextEdit* m_env = nullptr;
    QLineEdit* m_host = nullptr;
    QLineEdit* m_user = nullptr;
    QSpinBox* m_port = nullptr;
    QLineEdit* m_identity = nullptr;
    QLineEdit* m_sshOptions = nullptr;
    QLineEdit* m_srunArgs = nullptr;
    QLineEdit* m_command = nullptr;
    QCheckBox* m_sharedFs = nullptr;
    QSpinBox* m_startTimeout = nullptr;
    QSpinBox* m_idleTimeout = nullptr;
    QSpinBox* m_heartbeat = nullptr;
    QSpinBox* m_latency = nullptr;
    QLineEdit* m_sanitizer = nullptr;
    QCheckBox* m_pool = nullptr;
    QLabel* m_problem = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
};

} // namespace kf::app
