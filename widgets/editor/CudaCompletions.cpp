#include "widgets/editor/CudaCompletions.h"

#include "widgets/editor/CudaWords.h"

#include <algorithm>

namespace kf::ui {

namespace {

QStringList sortedUnique(QStringList words)
{
    words.sort(Qt::CaseSensitive);
    words.erase(std::unique(words.begin(), words.end()), words.end());
    return words;
}

// Words of a sorted list that start with `prefix` (case-sensitive, as the editor completes).
QStringList withPrefix(const QStringList& sorted, const QString& prefix)
{
    QStringList out;
    for (auto it = std::lower_bound(sorted.begin(), sorted.end(), prefix);
         it != sorted.end() && it->startsWith(prefix); ++it)
        out << *it;
    return out;
}

} // namespace

CudaCompletions::CudaCompletions(QsciLexer* lexer)
    : QsciAbstractAPIs(lexer)
    , m_prelude(sortedUnique(preludeIdentifiers()))
{
    QStringList all = m_prelude;
    for (const char* list : {"cuda_keywords.txt", "cuda_builtins.txt", "cuda_types.txt"})
        all += lexerWords(list);
    m_words = sortedUnique(all);
}

QStringList CudaCompletions::completionsFor(const QStringList& context) const
{
    if (context.isEmpty())
        return {};
    const QString& partial = context.last();
    if (context.size() == 1)
        return withPrefix(m_words, partial);
    const QString& owner = context.at(context.size() - 2);
    if (owner == QLatin1String("kf"))
        return withPrefix(m_prelude, partial);
    static const QStringList builtinVectors = {QStringLiteral("threadIdx"), QStringLiteral("blockIdx"),
                                               QStringLiteral("blockDim"), QStringLiteral("gridDim")};
    if (builtinVectors.contains(owner))
        return withPrefix({QStringLiteral("x"), QStringLiteral("y"), QStringLiteral("z")}, partial);
    return {};
}

void CudaCompletions::updateAutoCompletionList(const QStringList& context, QStringList& list)
{
    list += completionsFor(context);
}

QStringList CudaCompletions::callTips(const QStringList&, int, QsciScintilla::CallTipsStyle, QList<int>&)
{
    return {};
}

} // namespace kf::ui
