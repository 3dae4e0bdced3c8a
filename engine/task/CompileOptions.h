#pragma once
// The NVRTC options a task.json may carry in compile.options (docs/task-schema.md): a whitelist of
// options that only shape the generated code, so a task written by somebody else cannot make the
// compiler read or write files outside it.

#include <string>

namespace kf {

/// True for an option a task may set ("-maxrregcount=64", "-DTILE=32", ...).
bool isAllowedTaskOption(const std::string& option);
/// The allowed forms, for error messages.
std::string allowedTaskOptionsText();

} // namespace kf
