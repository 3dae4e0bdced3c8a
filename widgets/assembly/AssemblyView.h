#pragma once
// The PTX and SASS of the last build, side by side with the source: pick a kernel to jump to
// it, put the editor's cursor on a line to see the instructions it became, put the cursor on an
// instruction to learn which source line it came from. When there is no SASS the view says why.

#include "engine/compile/CompileTypes.h"

#include <QList>
#include <QString>
#include <QWidget>

class QComboBox;
class QLabel;
class QTabWidget;

namespace kf::ui {

class AsmEditor;

/// GUI thread only; owned by its parent. Keeps copies of the texts it shows, so the
/// CompileResult passed in may die right after the call.
class AssemblyView : public QWidget {
    Q_OBJECT

public:
    enum class Kind { Ptx, Sass };

    explicit AssemblyView(QWidget* parent = nullptr);

    /// Shows `result`'s PTX and SASS. `sourceFileName` is the CompileRequest::fileName the
    /// build used: line info is matched against it. The current source-line highlight is
    /// reapplied to the new listings (the user usually stays on the line they were editing).
    void setCompileResult(const kf::CompileResult& result, const QString& sourceFileName);

    /// Empties both tabs and the kernel list and shows `why` in their place.
    void clear(const QString& why);

    /// Marks, in both tabs, the instructions that came from `sourceLine` (0 clears) and scrolls
    /// the current tab to the first of them unless one is already on screen, so a view that
    /// drives the editor and follows it does not jump under the user.
    void highlightSourceLine(int sourceLine);

    /// Marked assembly lines (1-based, ascending) of the current tab.
    QList<int> highlightedAsmLines() const;

    void showTab(Kind kind);
    Kind currentTab() const;

    /// The explanation shown above a tab's listing (no SASS and why, no line info); empty
    /// when the listing speaks for itself.
    QString note(Kind kind) const;

    /// The kernels offered in the selector, as shown (demangled when known).
    QStringList kernelNames() const;
    /// Jumps both tabs to the kernel at `index` of the selector, as choosing it does.
    void selectKernel(int index);

signals:
    /// The user moved the cursor or selection in either listing: the source lines of the
    /// instructions under it (ascending, may be empty). Not emitted by the setters above.
    void sourceLinesSelected(const QList<int>& sourceLines);

private:
    AsmEditor* editor(Kind kind) const;
    QLabel* noteLabel(Kind kind) const;
    void setNote(Kind kind, const QString& text);
    void onAsmSelection(const QList<int>& sourceLines);
    void scrollToMarks(AsmEditor* e);

    QComboBox* m_kernels;
    QTabWidget* m_tabs;
    AsmEditor* m_ptx;
    AsmEditor* m_sass;
    QLabel* m_ptxNote;
    QLabel* m_sassNote;
    QList<int> m_sourceLines;  ///< source lines currently marked
};

} // namespace kf::ui
