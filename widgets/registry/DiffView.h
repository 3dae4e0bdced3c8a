#pragma once
// Shows a SourceDiff: hunk headers, removed lines red and added lines green, both sides' line
// numbers in a gutter, and a one-line summary ("3 lines added, 1 removed") above.

#include "widgets/registry/SourceDiff.h"

#include <QWidget>

class QLabel;
class QPlainTextEdit;

namespace kf::ui {

/// Read-only diff of two texts. GUI thread only; owned by its Qt parent.
class DiffView : public QWidget {
    Q_OBJECT

public:
    explicit DiffView(QWidget* parent = nullptr);

    /// Diffs `oldText` (named `oldName`, e.g. the older version's ID) against `newText` and shows it.
    void showDiff(const QString& oldName, const QString& oldText, const QString& newName, const QString& newText);
    /// Shows `sentence` instead of a diff (nothing to compare, or the other source could not be read).
    void showMessage(const QString& sentence);

    const SourceDiff& diff() const { return m_diff; }
    /// The summary line as shown: "a → b: 3 lines added, 1 removed", or the message.
    QString summaryText() const;
    /// The text pane, for tests and copying.
    QPlainTextEdit* textView() const { return m_text; }

protected:
    void changeEvent(QEvent* event) override;

private:
    void render();

    QLabel* m_summary = nullptr;
    QPlainTextEdit* m_text = nullptr;
    SourceDiff m_diff;
    QString m_oldName;
    QString m_newName;
    QString m_message;
};

} // namespace kf::ui
