#pragma once
// The "JSON" tab: the whole task document as pretty-printed text (2-space indent) in a
// QScintilla editor. Typing re-parses after a short pause; valid JSON is handed on with
// textParsed(), a syntax error is shown as "line L, column C: ..." under the text and the
// text is left exactly as typed.
//
// GUI thread only.

#include <nlohmann/json.hpp>

#include <QWidget>

class QLabel;
class QTimer;
class QsciScintilla;

namespace kf::ui {

class JsonTextPane : public QWidget {
    Q_OBJECT
public:
    explicit JsonTextPane(QWidget* parent = nullptr);

    /// Replaces the text with `doc` pretty-printed, keeping the scroll position, and clears
    /// any syntax error. Does not emit textParsed().
    void showDocument(const nlohmann::json& doc);
    /// Replaces the text with `text` exactly as given (a file's own layout, a syntax error and
    /// all) and parses it at once: textParsed() when it parses, else the syntax error is shown.
    void showText(const QString& text);
    /// Parses pending typing now instead of after the pause (before a save, say).
    void flush();
    /// Shows the text at 1-based `line` and `column` (bytes of the UTF-8 line, as the engine's
    /// errors count them), with the cursor there and the keyboard focus. Clamped to the text.
    void goTo(int line, int column);

    QString text() const;
    QsciScintilla* editor() const { return m_editor; }
    /// The current syntax error sentence, empty when the text parses.
    QString syntaxError() const { return m_syntaxError; }

    /// Pause after the last keystroke before the text is parsed.
    static constexpr int kDebounceMs = 300;

signals:
    void textParsed(const nlohmann::json& doc);
    /// The text no longer parses (`message` non-empty) or parses again (empty).
    void syntaxErrorChanged(const QString& message);

private:
    void parse();
    void setSyntaxError(const QString& message, int line);

    QsciScintilla* m_editor;
    QLabel* m_error;
    QTimer* m_debounce;
    QString m_syntaxError;
    bool m_loading = false;
};

} // namespace kf::ui
