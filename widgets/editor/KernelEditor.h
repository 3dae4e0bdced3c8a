#pragma once
// The kernel source editor: CUDA colouring, folding, completion, and compiler diagnostics drawn
// as squiggles and margin symbols that follow the text as the user edits.

#include "engine/compile/Diagnostic.h"

#include <Qsci/qsciscintilla.h>

#include <QList>
#include <QString>

#include <vector>

namespace kf::ui {

class CudaCompletions;
class CudaLexer;

/// A QsciScintilla set up for CUDA kernels. GUI thread only; owned by its Qt parent.
/// Every line and column in this API is 1-based; a column counts bytes of the UTF-8 line, as
/// NVRTC's diagnostics do (tabs are one column).
class KernelEditor : public QsciScintilla {
    Q_OBJECT

public:
    explicit KernelEditor(QWidget* parent = nullptr);

    /// Replaces every diagnostic mark. Each diagnostic with a line inside the document gets a
    /// squiggle from (line, column) over the token there (over the line's text when column is 0
    /// or past the end) and an error/warning/info symbol in the marker margin. Squiggles and
    /// symbols are Scintilla indicators and markers, so they move with later edits.
    void setDiagnostics(const std::vector<kf::Diagnostic>& diagnostics);
    void clearDiagnostics();
    /// Diagnostics whose squiggle covers (line, column) now, errors first.
    std::vector<kf::Diagnostic> diagnosticsAt(int line, int column) const;
    /// Diagnostics whose margin symbol sits on `line` now, errors first.
    std::vector<kf::Diagnostic> diagnosticsOnLine(int line) const;
    /// "error #20: identifier ..." lines for the squiggles at (line, column); empty if none.
    QString diagnosticToolTip(int line, int column) const;

    /// Moves the cursor to (line, column), unfolding and scrolling so it is visible, and takes
    /// the keyboard focus. Out-of-range values are clamped to the document.
    void goTo(int line, int column);
    /// Background mark for source lines an assembly selection maps to; empty clears.
    void setHighlightedLines(const QList<int>& lines);
    QList<int> highlightedLines() const;

    void setFilePath(const QString& path) { m_filePath = path; }
    QString filePath() const { return m_filePath; }

    /// Switches editor and lexer colours between dark and light. Called by itself when the
    /// application palette changes.
    void setDarkTheme(bool dark);
    bool isDarkTheme() const;

    CudaLexer* cudaLexer() const { return m_lexer; }
    /// Completion source (2 typed characters, case-sensitive): the lexer word lists and the
    /// prelude's names, plus words already in the document.
    CudaCompletions* completions() const { return m_completions; }

    /// Indicator and marker numbers, for tests that inspect Scintilla state directly.
    int errorIndicator() const { return m_errorIndicator; }
    int warningIndicator() const { return m_warningIndicator; }
    int infoIndicator() const { return m_infoIndicator; }
    int errorMarker() const { return m_errorMarker; }
    int warningMarker() const { return m_warningMarker; }
    int infoMarker() const { return m_infoMarker; }
    int highlightMarker() const { return m_highlightMarker; }

    /// Scintilla position of a 1-based (line, column), clamped to that line's end; -1 when the
    /// line is outside the document.
    int positionAt(int line, int column) const;

signals:
    /// The cursor moved to another line (1-based).
    void cursorLineChanged(int line);

protected:
    void changeEvent(QEvent* event) override;

private:
    struct Range {
        int start = 0;
        int end = 0;
    };
    struct Mark {
        kf::Diagnostic diagnostic;
        int markerHandle = -1;   ///< Scintilla marker handle; -1 without a margin symbol
    };

    void applyTheme(bool dark);
    void updateLineNumberWidth();
    Range squiggleRange(int line, int column) const;
    int indicatorFor(kf::Diagnostic::Severity severity) const;
    int markerFor(kf::Diagnostic::Severity severity) const;
    std::vector<kf::Diagnostic> sorted(std::vector<int> indices) const;
    void showToolTipAt(int position, int x, int y);
    static QString describe(const kf::Diagnostic& d);

    CudaLexer* m_lexer = nullptr;
    CudaCompletions* m_completions = nullptr;
    QString m_filePath;
    std::vector<Mark> m_marks;
    /// Indicator value v (1-based) stands for every mark in m_groups[v - 1]: diagnostics with
    /// exactly the same squiggle share one painted range.
    std::vector<std::vector<int>> m_groups;
    QList<int> m_highlighted;
    int m_lastCursorLine = 0;
    int m_lineDigits = 0;
    bool m_applyingTheme = false;

    int m_errorIndicator = -1;
    int m_warningIndicator = -1;
    int m_infoIndicator = -1;
    int m_errorMarker = -1;
    int m_warningMarker = -1;
    int m_infoMarker = -1;
    int m_highlightMarker = -1;
};

} // namespace kf::ui
