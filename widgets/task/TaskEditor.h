#pragma once
// The task.json editor: a "Form" tab and a "JSON" tab over one canonical nlohmann::json that
// stay in sync. Every accepted edit is validated with kf::parseTask; the engine's sentence is
// shown beside the field its JSON pointer names and in a banner at the top. Saving to disk is
// the application's job: the editor asks for it with saveRequested() (Ctrl+S).
//
// GUI thread only.

#include <nlohmann/json.hpp>

#include <QWidget>

class QLabel;
class QTabWidget;

namespace kf::ui {

class JsonTextPane;
class TaskDocument;
class TaskForm;

class TaskEditor : public QWidget {
    Q_OBJECT
public:
    explicit TaskEditor(QWidget* parent = nullptr);

    /// Loads a document. `filePath` names it in messages; `taskDir` is where candidate files
    /// and include folders are looked up (empty: those checks are skipped). Clears isModified().
    void setDocument(const nlohmann::json& doc, const QString& filePath, const QString& taskDir);
    /// Loads a file's text as it is: the JSON tab shows it unchanged (its lines are the file's),
    /// the form shows the document when it parses; a syntax error is shown like typed text's.
    /// Clears isModified().
    void setText(const QString& text, const QString& filePath, const QString& taskDir);
    /// Shows the JSON tab at 1-based `line` and `column` of its text (a problem's place).
    void goToText(int line, int column);
    /// The last document that parsed as JSON (typing still waiting for the pause included
    /// only after flushPendingEdits()).
    nlohmann::json document() const;
    /// Parses what was typed in the JSON tab without waiting for the pause.
    void flushPendingEdits();

    QString filePath() const { return m_filePath; }
    QString taskDir() const { return m_taskDir; }

    /// True when the JSON text parses and the engine accepts the task.
    bool isValid() const { return m_valid; }
    /// The sentence shown for the current problem (the engine's Error::why, or the JSON
    /// syntax error); empty when valid.
    QString validationMessage() const { return m_message; }
    /// The JSON pointer the current problem is about (empty for a syntax error or when valid).
    QString errorPointer() const { return m_errorPointer; }
    /// The message shown in the form section that owns `pointer`; empty when that section has none.
    QString messageForPointer(const QString& pointer) const;
    /// The label beside the fields `pointer` belongs to (its form section's message line).
    QLabel* messageLabelFor(const QString& pointer) const;

    bool isModified() const { return m_modified; }
    void setModified(bool modified);

    TaskForm* form() const { return m_form; }
    JsonTextPane* jsonPane() const { return m_json; }
    QTabWidget* tabs() const { return m_tabs; }

signals:
    /// After each accepted edit, from the form or from the JSON text.
    void documentChanged();
    void validityChanged(bool valid);
    void modifiedChanged(bool modified);
    void saveRequested();

private:
    void onDocumentChanged(int source);
    void onSyntaxError(const QString& message);
    void validate();
    void setValidity(bool valid, const QString& message, const QString& hint, const QString& pointer);

    TaskDocument* m_doc;
    QLabel* m_banner;
    QTabWidget* m_tabs;
    TaskForm* m_form;
    JsonTextPane* m_json;
    QString m_filePath;
    QString m_taskDir;
    QString m_message;
    QString m_errorPointer;
    bool m_valid = false;
    bool m_modified = false;
    bool m_loading = false;
};

} // namespace kf::ui
