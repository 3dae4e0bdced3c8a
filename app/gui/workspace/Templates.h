#pragma once
// New tasks and candidates from the templates in resources/templates: the "New Task" and
// "New Candidate" actions of the workbench. Plain functions, callable from any thread (they
// only touch the files named); the workspace's file watcher picks the results up.

#include "engine/core/Result.h"

#include <nlohmann/json.hpp>

#include <QString>

namespace kf::app {

/// The folder holding `task/` (task.json + kernel.cu) and `candidate.cu`: the source tree's
/// resources/templates in a build, else share/kernelforge/templates beside the executable.
QString templatesDir();

/// True when `name` is a valid task name (letters, digits, '_' and '-', not starting with '-'),
/// the rule of docs/task-schema.md; the folder is named after it.
bool isValidTaskName(const QString& name);

/// Copies the task template into `<workspaceRoot>/<name>` and sets its name. Fails, touching
/// nothing, when the name is invalid or the folder already exists. Returns the new task folder
/// (absolute); the task passes kf::loadTask.
Result<QString> createTask(const QString& workspaceRoot, const QString& name);

/// Adds candidate `fileName` (a plain .cu file name; ".cu" is appended when missing) to the task
/// in `taskDir`: writes the file, either a copy of `copyFrom` (a file name in the task folder or
/// an absolute path) or a skeleton whose signature follows the launch plan, and appends an entry
/// to task.json. The launch plan is the one of `copyFrom` when it is a listed candidate, else
/// the first candidate's. task.json is written atomically, its other keys and their order kept;
/// the result is validated with the engine first, so a failure leaves task.json untouched and
/// removes the new file. Returns the new file's absolute path.
Result<QString> createCandidate(const QString& taskDir, const QString& fileName,
                                const QString& copyFrom = {});

/// Adds a kernel from elsewhere (a registry version folder) to the task in `taskDir` as candidate
/// `fileName`: copies `sourcePath` and appends `plan` (a candidate entry as in task.json, e.g. the
/// version's launch.json) with its "file" set to `fileName` and `description`. A name that is
/// taken gets "_2", "_3"… before ".cu". Validated like createCandidate; returns the new file.
Result<QString> importCandidate(const QString& taskDir, const QString& fileName, const QString& sourcePath,
                                const nlohmann::json& plan, const QString& description);

} // namespace kf::app
