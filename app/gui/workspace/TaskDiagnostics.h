#pragma once
// A task that does not load, as a diagnostic for the Problems panel: the engine's error for its
// task.json (or the file it names) at the line and column where it lies, so a click opens the
// file there. The line and column come from the JSON reader's "line L, column C" for a syntax
// error and from the JSON pointer's place in the file's text for anything the schema refuses.

#include "app/gui/workspace/Workspace.h"
#include "engine/compile/Diagnostic.h"

#include <string_view>
#include <utility>
#include <vector>

namespace kf::app {

/// The diagnostic of every task of `workspace` that failed to load, in folder order.
std::vector<kf::Diagnostic> taskDiagnostics(const Workspace& workspace);

/// The diagnostic for one entry that has an error (TaskEntry::error); its file is read to place
/// a JSON pointer. Diagnostic::source is "task".
kf::Diagnostic taskDiagnostic(const TaskEntry& entry);

/// 1-based line and byte column of the value at JSON `pointer` in `text`, or of its deepest
/// ancestor that is there; {0, 0} when `text` is not JSON up to there. Linear in the text and
/// never recursive in its nesting, so a hostile file costs one pass.
std::pair<int, int> locateJsonPointer(std::string_view text, std::string_view pointer);

} // namespace kf::app
