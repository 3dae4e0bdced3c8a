#pragma once
// One read-only assembly listing (PTX or SASS) with its line map: line numbers, colouring,
// background markers on the instructions of chosen source lines, and the source lines under
// the user's cursor or selection.

#include "engine/analysis/LineInfo.h"

#include <Qsci/qsciscintilla.h>

#include <QList>

namespace kf::ui {

class AsmLexer;

/// GUI thread only; owned by its parent (the AssemblyView).
class AsmEditor : public QsciScintilla {
    Q_OBJECT

public:
    explicit AsmEditor(QWidget* parent = nullptr);

    /// Replaces the listing; clears the markers. Does not emit sourceLinesSelected.
    void setAssembly(const QString& text, kf::LineMap map);
    const kf::LineMap& lineMap() const { return m_map; }

    /// Marks the instructions of `sourceLines` (replacing earlier marks) and returns the marked
    /// assembly lines (1-based, ascending).
    QList<int> markSourceLines(const QList<int>& sourceLines);
    QList<int> markedLines() const;  ///< 1-based, ascending

    /// Scrolls so that `line` (1-based) sits a few lines below the top; the cursor stays put.
    void scrollToLine(int line);
    /// 1-based line of the cursor.
    int cursorLine() const;

signals:
    /// The user moved the cursor or changed the selection: the distinct source lines of the
    /// assembly lines it covers (ascending; empty on lines with no source line).
    void sourceLinesSelected(const QList<int>& sourceLines);

private:
    void onCursorOrSelection();
    void applyPalette();
    void changeEvent(QEvent* e) override;

    AsmLexer* m_lexer;
    kf::LineMap m_map;
    QList<int> m_lastEmitted;
    bool m_loading = false;
};

} // namespace kf::ui
