#pragma once
// Follow Symbol Under Cursor's core (F2): an `#include "x.cuh"` line opens the header, an
// identifier goes to its definition in the task's sources. Token-based (engine/analysis/
// SourceTokens.h), no compiler: good for the one-folder tasks a workspace holds. No widgets, so
// it is tested alone (tests/gui/navigation/tst_followsymbol.cpp).

#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

namespace kf::ui {

/// Where to go: a file, and in it a 1-based line and byte column (KernelEditor::goTo's units);
/// line 0 only opens the file.
struct FollowTarget {
    QString path;
    int line = 0;
    int column = 0;
};

/// A target, or the sentence for the status bar saying why there is none.
struct FollowOutcome {
    std::optional<FollowTarget> target;
    QString message;
};

/// The file an `#include "name"` or `#include <name>` line names; empty for other lines.
QString includedFile(const QString& lineText);

/// The C identifier at `index` (0-based, UTF-16) in `lineText`, or the one ending just before
/// it (the cursor right after a word); empty when there is none or it starts with a digit.
QString identifierAt(const QString& lineText, int index);

/// The first definition of `name` in `source`: a `#define name`, a function with a body
/// (`name(...)` after a type or qualifier and followed by `{`), a struct, class, union or enum
/// with a body or bases, `using name =`, or a typedef naming it. Comments and string literals
/// are ignored. nullopt when there is none.
std::optional<FollowTarget> findDefinition(const QString& source, const QString& name);

/// The sources of a task folder F2 searches after the current file: .cu .cuh .h .hpp .cpp, sorted.
QStringList followSearchFiles(const QString& taskDir);

/// What F2 at (line, index) of `filePath`, whose editor holds `text`, leads to. `line` is
/// 1-based, `index` 0-based in UTF-16 units of that line. An include resolves against the file's
/// folder, then `taskDir`; an identifier is looked up in `text`, then in the other files of
/// followSearchFiles(taskDir), each read through `readText` (an open editor's buffer or the
/// disk; nullopt: unreadable, skipped).
FollowOutcome followSymbol(const QString& filePath, const QString& text, int line, int index, const QString& taskDir,
                           const std::function<std::optional<QString>(const QString& path)>& readText);

} // namespace kf::ui
