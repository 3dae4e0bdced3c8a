#include "engine/task/TaskHash.h"

#include "engine/core/Hash.h"
#include "engine/task/TaskFiles.h"

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

namespace kf {

std::string taskHash(const Task& task)
{
    // The canonical task, then every file the kernel compiles or is judged against beside it:
    // headers in the include folders and a TorchScript reference. Editing one voids the evidence.
    Hasher h;
    h.add(taskToJson(task).dump());
    std::vector<std::string> files;   // relative to the task folder
    for (const std::string& inc : task.compile.includeDirs) {
        const std::filesystem::path root = task.directory / inc;
        std::error_code ec;
        for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
             !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
            if (it->is_regular_file())
                files.push_back((std::filesystem::path(inc) / std::filesystem::relative(it->path(), root)).generic_string());
    }
    if (task.reference.kind == Reference::Kind::TorchScript)
        files.push_back(task.reference.torchscript.generic_string());
    std::sort(files.begin(), files.end());
    for (const std::string& name : files) {
        // A link out of the task folder is hashed as unreadable, never as the file it names.
        auto bytes = readTaskFile(task.directory, name);
        h.add(name).add(bytes ? bytes.value() : std::string("<unreadable>"));
    }
    return h.hex();
}

TaskPayload taskPayload(const Task& task)
{
    TaskPayload p;
    p.json = taskToJson(task);
    p.hash = taskHash(task);
    p.directory = std::filesystem::absolute(task.directory).lexically_normal().string();
    return p;
}

} // namespace kf
