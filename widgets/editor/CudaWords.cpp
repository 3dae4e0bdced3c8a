#include "widgets/editor/CudaWords.h"

#include "resources/lexer.h"
#include "resources/prelude.h"

#include <QRegularExpression>
#include <QSet>

namespace kf::ui {

QStringList lexerWords(std::string_view fileName)
{
    QStringList words;
    for (const auto& file : kf::lexer::files()) {
        if (file.name != fileName)
            continue;
        const auto text = QString::fromUtf8(file.contents.data(), qsizetype(file.contents.size()));
        for (const auto& raw : text.split(u'\n')) {
            const QString word = raw.trimmed();
            if (!word.isEmpty() && !word.startsWith(u'#'))
                words << word;
        }
    }
    return words;
}

// Drops every `namespace detail { ... }` body: those helpers are not meant to be called from a
// kernel, so completion should not offer them.
static QString withoutDetailNamespaces(QString text)
{
    static const QRegularExpression opening(QStringLiteral(R"(namespace\s+detail\s*\{)"));
    for (auto m = opening.match(text); m.hasMatch(); m = opening.match(text)) {
        qsizetype i = m.capturedEnd();
        for (int depth = 1; i < text.size() && depth > 0; ++i) {
            if (text[i] == u'{')
                ++depth;
            else if (text[i] == u'}')
                --depth;
        }
        text.remove(m.capturedStart(), i - m.capturedStart());
    }
    return text;
}

QStringList preludeIdentifiers()
{
    // A declaration in the prelude always carries an execution-space qualifier before its name:
    // `__device__ __forceinline__ T warp_reduce_sum(T v)`; the name is the last word before '('.
    static const QRegularExpression function(
        QStringLiteral(R"(__(?:device|host)__[^;{}()=]*?\b([A-Za-z_]\w*)\s*(?:<[^<>()]*>)?\s*\()"));
    static const QRegularExpression type(
        QStringLiteral(R"(\b(?:struct|class)\s+(?:alignas\s*\([^)]*\)\s*)?([A-Za-z_]\w*))"));
    static const QSet<QString> notNames = {QStringLiteral("operator"), QStringLiteral("identity")};

    QSet<QString> names;
    for (const auto& file : kf::prelude::files()) {
        const QString text = withoutDetailNamespaces(
            QString::fromUtf8(file.contents.data(), qsizetype(file.contents.size())));
        for (const auto* re : {&function, &type}) {
            for (auto it = re->globalMatch(text); it.hasNext();) {
                const QString name = it.next().captured(1);
                if (!notNames.contains(name) && !name.startsWith(QStringLiteral("__")))
                    names.insert(name);
            }
        }
    }
    QStringList sorted(names.begin(), names.end());
    sorted.sort();
    return sorted;
}

} // namespace kf::ui
