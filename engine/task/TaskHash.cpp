#include "engine/task/TaskHash.h"

#include "engine/core/Files.h"
#include "engine/core/Hash.h"

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
    std::vector<std::pair<std::string, std::filesystem::path>> files;
    for (const std::string& inc : task.compile.includeDirs) {
        const std::filesystem::path root = task.directory / inc;
        std::error_code ec;
        for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
             !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
            if (it->is_regular_file())
                files.emplace_back((std::filesystem::path(inc) / std::filesystem::relative(it->path(), root)).generic_string(),
                                   it->path());
    }
    if (task.reference.kind == Reference::Kind::TorchScript)
        files.emplace_back(task.reference.torchscript.generic_string(), task.directory / task.reference.torchscript);
    std::sort(files.begin(), files.end());
    for (const auto& [name, path] : files) {
        auto bytes = readFileBytes(path);
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
