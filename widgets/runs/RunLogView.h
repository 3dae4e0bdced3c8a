#pragma once
// The run log: what the runner did and when, newest at the bottom.

#include <QPlainTextEdit>
#include <QString>

namespace kf::ui {

/// A read-only QPlainTextEdit of timestamped lines ("12:04:31.250  warning  …"), coloured by
/// level for the current palette. Old lines are dropped past maximumBlockCount() so a long
/// benchmark cannot grow it without bound. GUI thread only; owned by its Qt parent.
class RunLogView : public QPlainTextEdit {
    Q_OBJECT

public:
    enum class Level { Info, Warning, Error };

    /// `maxLines` bounds the kept lines (QPlainTextEdit::setMaximumBlockCount).
    explicit RunLogView(QWidget* parent = nullptr, int maxLines = 5000);

    /// Appends one line (a newline inside `text` is shown as a space, keeping one event per line)
    /// and scrolls to it unless the user has scrolled up to read older lines.
    void appendLine(Level level, const QString& text);
    /// The text of the last line without its timestamp and level, for tests; empty when none.
    QString lastMessage() const { return m_lastMessage; }
    Level lastLevel() const { return m_lastLevel; }

    static QString levelName(Level level);

private:
    QString m_lastMessage;
    Level m_lastLevel = Level::Info;
};

} // namespace kf::ui
