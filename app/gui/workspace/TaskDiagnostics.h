#pragma once
// A task that does not load, as a diagnostic for the Problems panel: the engine's error for its
// task.json (or the file it names) at the line and column where it lies, so a click opens the
// file there. The line and column come from the JSON reader's "line L, column C" for a syntax
// error and from the JSON pointer's place in the file's text for anything the schema refuses
// (locateJsonPointer, JsonPointerPlace.h).

#include "app/gui/workspace/Workspace.h"
#include "engine/compile/Diagnostic.h"

#include <vector>

namespace kf::app {

/// The diagnostic of every task of `workspace` that failed to load, in folder order.
std::vector<kf::Diagnostic> taskDiagnostics(const Workspace& workspace);

/// The diagnostic for one entry that has an error (TaskEntry::error); its file is read to place
/// a JSON pointer. Diagnostic::source is "task".
kf::Diagnostic taskDiagnostic(const TaskEntry& entry);

} // namespace kf::app
