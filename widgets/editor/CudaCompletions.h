#pragma once
// Completion source for the kernel editor: CUDA keywords, builtins, types and the names our
// prelude declares, answered synchronously from a sorted list.

#include <Qsci/qsciabstractapis.h>

#include <QStringList>

namespace kf::ui {

/// Attaches itself to `lexer` (QsciAbstractAPIs does) and is owned by it. GUI thread only.
/// Unlike QsciAPIs it needs no background preparation, so an editor can be closed at once.
class CudaCompletions : public QsciAbstractAPIs {
    Q_OBJECT

public:
    explicit CudaCompletions(QsciLexer* lexer);

    /// Every word offered without a qualifier, sorted.
    const QStringList& words() const { return m_words; }

    /// Completions for `context` as QScintilla splits it at "::", "->" and ".": the last entry
    /// is the partial word. "kf::" offers prelude names; "threadIdx." and friends offer x, y, z.
    QStringList completionsFor(const QStringList& context) const;

    void updateAutoCompletionList(const QStringList& context, QStringList& list) override;
    QStringList callTips(const QStringList& context, int commas, QsciScintilla::CallTipsStyle style,
                         QList<int>& shifts) override;

private:
    QStringList m_words;
    QStringList m_prelude;
};

} // namespace kf::ui
