// Reading a task from disk: task.json (or a link to it) in a folder, and the variant that sets
// aside candidates nobody asked for when their entry is broken.
#include "engine/core/JsonReader.h"
#include "engine/task/Task.h"

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;

namespace kf {

namespace jr = kf::json;
using Json = nlohmann::json;

Result<Task> loadTask(const fs::path& dirOrFile, const std::vector<std::string>& onlyCandidates)
{
    if (onlyCandidates.empty())
        return loadTask(dirOrFile);
    fs::path file = dirOrFile;
    std::error_code ec;
    if (fs::is_directory(dirOrFile, ec))
        file = dirOrFile / "task.json";
    auto j = fs::exists(file, ec) ? jr::readFile(file) : Result<Json>(Error{});
    if (!j || !j->is_object() || !j->contains("candidates") || !(*j)["candidates"].is_array())
        return loadTask(dirOrFile); // its own error, or no candidates to set aside
    Json doc = std::move(j.value());
    // Which entry of the file each remaining candidate is, so errors point into the file.
    std::vector<std::size_t> original(doc["candidates"].size());
    for (std::size_t k = 0; k < original.size(); ++k)
        original[k] = k;
    const std::string prefix = "/candidates/";
    auto inFile = [&](Result<Task> t) -> Result<Task> {
        if (t)
            return t;
        Error e = t.error();
        if (e.pointer.rfind(prefix, 0) == 0) {
            const std::size_t end = e.pointer.find('/', prefix.size());
            const std::string digits = e.pointer.substr(prefix.size(), end == std::string::npos ? std::string::npos : end - prefix.size());
            if (!digits.empty() && digits.size() <= 6 && digits.find_first_not_of("0123456789") == std::string::npos &&
                std::stoul(digits) < original.size())
                e.pointer = prefix + std::to_string(original[std::stoul(digits)]) +
                            (end == std::string::npos ? std::string() : e.pointer.substr(end));
        }
        return e;
    };
    // A problem in a candidate nobody asked for must not stop the ones asked for: set such a
    // candidate aside and read the task again (each pass removes one).
    for (std::size_t pass = 0;; ++pass) {
        auto t = parseTask(doc, file.string(), file.parent_path());
        if (t || pass >= 1000)
            return inFile(std::move(t));
        const std::string& ptr = t.error().pointer;
        if (ptr.rfind(prefix, 0) != 0)
            return inFile(std::move(t));
        const std::size_t end = ptr.find('/', prefix.size());
        const std::string digits = ptr.substr(prefix.size(), end == std::string::npos ? std::string::npos : end - prefix.size());
        if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos)
            return inFile(std::move(t));
        const std::size_t index = std::stoul(digits);
        Json& list = doc["candidates"];
        if (index >= list.size() || list.size() == 1)
            return inFile(std::move(t));
        const Json& c = list[index];
        const std::string name = c.is_object() && c.contains("file") && c["file"].is_string() ? c["file"].get<std::string>() : "";
        if (name.empty() || std::find(onlyCandidates.begin(), onlyCandidates.end(), name) != onlyCandidates.end())
            return inFile(std::move(t)); // a candidate that was asked for: its problem is the answer
        list.erase(list.begin() + static_cast<std::ptrdiff_t>(index));
        original.erase(original.begin() + static_cast<std::ptrdiff_t>(index));
    }
}

Result<Task> loadTask(const fs::path& dirOrFile)
{
    fs::path file = dirOrFile;
    std::error_code ec;
    if (fs::is_directory(dirOrFile, ec))
        file = dirOrFile / "task.json";
    if (!fs::exists(file, ec) && fs::is_symlink(fs::symlink_status(file, ec)))
        return Error::inFile(file.string(), {}, "open task", "task.json is a symbolic link to " + fs::read_symlink(file, ec).string() + ", which does not exist", "point the link at the task file, or replace it with the file");
    if (!fs::exists(file, ec))
        return Error::inFile(file.string(), {}, "open task", "no task.json found", "a task folder holds task.json and its candidate .cu files");
    auto j = jr::readFile(file);
    if (!j)
        return j.error();
    return parseTask(*j, file.string(), file.parent_path());
}

} // namespace kf
