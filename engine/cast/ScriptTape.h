#pragma once
// A task's TorchScript reference (Reference::Kind::TorchScript, a module saved with
// torch.jit.save) read as an op tape for `kforge generate`, without LibTorch: the archive's
// code/__torch__.py is parsed (engine/cast/ScriptSyntax.h) and the straight-line forward of the
// saved module's class is evaluated call by call, each `torch.<op>(...)` mapped to one op of the
// reference catalog (engine/cast/ScriptAten.h). docs/generate.md ("TorchScript references") lists the forms read.
//
// forward's parameters after self are bound to the reference's "inputs" when the task lists
// them, else to the task's inputs in order. The value returned in position i is named after
// task output i (a returned input, or a value returned twice, is copied by a `clone` step);
// every other value gets a fresh name t1, t2, ... that no task tensor uses.
//
// Whatever the tape cannot express is refused with one Error naming the construct and the line
// (Error::pointer "code/__torch__.py:<line>"): a scripted torch.nn.functional helper
// (__torch__.torch.nn.functional.*), self.<attribute> (parameters, buffers, submodules),
// CONSTANTS.* (tensors baked in by tracing), control flow, indexing, ops without a catalog op,
// arguments the catalog cannot express, names never assigned, and returns or inputs that do not
// match the task. The archive and the code are untrusted: sizes and nesting are bounded.

#include "engine/core/Result.h"
#include "engine/task/Task.h"

#include <string>
#include <string_view>
#include <vector>

namespace kf::cast {

/// Reads `task.directory / task.reference.torchscript` as an op tape. Errors name the file.
Result<std::vector<OpStep>> scriptTape(const Task& task);

/// The Python code of the saved module's class (what scriptTape reads), for showing the
/// reference to people and agents: the archive entry's name and its text.
struct ScriptCode {
    std::string entry;   ///< "code/__torch__.py"
    std::string text;
    std::string className;   ///< the root module's class, empty when the first class is meant
};
Result<ScriptCode> scriptCode(const Task& task);

/// The same from the code of code/__torch__.py already in memory (tests, the fuzz target):
/// the first class with a forward method is read; `origin` is the file errors name.
Result<std::vector<OpStep>> scriptTapeFromSource(std::string_view code, const Task& task, const std::string& origin);

} // namespace kf::cast
