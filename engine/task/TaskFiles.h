#pragma once
// A task's files are the task folder's own: every file of a task that we read (a candidate, the
// TorchScript reference, a header of an include folder) must lie inside the task folder once
// symbolic links are followed, as the include folders must (engine/task/TaskParse.cpp) and as the
// #includes of a task compile must (engine/compile/IncludeScope.h). A candidate that is a link to
// /etc/shadow or to another project's kernel is refused with one sentence naming it; no byte of
// it is read.

#include "engine/core/Files.h"
#include "engine/core/Result.h"

#include <cstddef>
#include <filesystem>
#include <string>

namespace kf {

/// The largest file of a task read whole (a TorchScript module with its weights, a header):
/// the largest file a .cast package may carry (engine/cast/CastArchive.h).
inline constexpr std::size_t kMaxTaskFileBytes = std::size_t(512) << 20;

/// Where `relative` (as task.json spells it, relative to `taskDir`) lies once links are followed:
/// its canonical path, if that is inside the task folder. Otherwise an Error whose sentence names
/// the file as spelled and where it leads ("x.cu is a symbolic link to /etc/shadow, outside the
/// task folder /t"), with the hint to copy the file into the task folder. Does not check that
/// the file exists (reading it does).
Result<std::filesystem::path> resolveTaskFile(const std::filesystem::path& taskDir, const std::filesystem::path& relative);

/// resolveTaskFile, then readFileBytes of the resolved path with `maxBytes`: a regular file inside
/// the task folder, read with a cap. Errors name the file as spelled (taskDir / relative).
Result<std::string> readTaskFile(const std::filesystem::path& taskDir, const std::filesystem::path& relative,
                                 std::size_t maxBytes = kMaxTaskFileBytes);

} // namespace kf
