#pragma once
// One titled part of the task form (General, Symbols, Inputs...) with the validator's message
// shown right under its title, so the sentence sits beside the fields it is about.
//
// GUI thread only; owned by its parent widget.

#include <QGroupBox>

class QLabel;
class QVBoxLayout;

namespace kf::ui {

class FormSection : public QGroupBox {
    Q_OBJECT
public:
    explicit FormSection(const QString& title, QWidget* parent = nullptr);

    /// Where the section's fields go (below the message).
    QVBoxLayout* body() const { return m_body; }

    /// Shows `message` in red under the title; an empty message hides the line.
    void setMessage(const QString& message);
    QString message() const;
    QLabel* messageLabel() const { return m_message; }

private:
    QLabel* m_message;
    QVBoxLayout* m_body;
};

} // namespace kf::ui
