#include "engine/task/TaskEdit.h"

#include "engine/core/Files.h"
#include "engine/core/JsonReader.h"
#include "engine/task/Task.h"

#include <system_error>

namespace kf {

namespace fs = std::filesystem;

bool isPlainCandidateName(std::string_view file)
{
    if (file.size() < 4 || file.size() > 255 || file.substr(file.size() - 3) != ".cu")
        return false;
    if (file.front() == '.' || file.front() == '-')
        return false;
    for (char c : file)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
            return false;
    return true;
}

namespace {

Result<fs::path> append(const fs::path& taskDir, const std::string& file, const std::string_view* source,
                        nlohmann::ordered_json entry, const std::string& what, const std::string& renameHint)
{
    const fs::path jsonPath = taskDir / "task.json";
    if (!isPlainCandidateName(file))
        return Error::inFile(jsonPath.string(), {}, what, "\"" + file + "\" is not a plain file name", "use letters, digits, '_', '-' and '.', ending in .cu");
    const fs::path target = taskDir / file;
    std::error_code ec;
    if (source && fs::exists(target, ec))
        return Error::inFile(target.string(), {}, what, file + " already exists in the task folder", renameHint);
    if (!source && !fs::is_regular_file(target, ec))
        return Error::inFile(target.string(), {}, what, file + " is not a file in the task folder");
    auto bytes = readFileBytes(jsonPath, json::kMaxJsonFileBytes);
    if (!bytes)
        return bytes.error();
    nlohmann::ordered_json json = nlohmann::ordered_json::parse(*bytes, nullptr, false);
    if (json.is_discarded() || !json.is_object())
        return Error::inFile(jsonPath.string(), {}, what, "task.json is not a JSON object", "fix task.json first");
    if (!json.contains("candidates"))
        json["candidates"] = nlohmann::ordered_json::array();
    if (!json["candidates"].is_array())
        return Error::inFile(jsonPath.string(), "/candidates", what, "\"candidates\" is not a list", "fix task.json first");
    for (const auto& c : json["candidates"])
        if (c.is_object() && c.contains("file") && c["file"] == file)
            return Error::inFile(jsonPath.string(), "/candidates", what, "task.json already lists a candidate " + file, renameHint);
    if (!entry.is_object())
        return Error::inFile(jsonPath.string(), {}, what, "the candidate's launch plan is not a JSON object");
    entry["file"] = file;
    json["candidates"].push_back(std::move(entry));
    auto rollback = [&] {
        if (source)
            fs::remove(target, ec);
    };
    if (source)
        if (auto w = writeFileAtomic(target, *source); !w)
            return w.error();
    // Validate before task.json is replaced: the engine checks that the file exists.
    auto check = parseTask(nlohmann::json::parse(json.dump()), jsonPath.string(), taskDir);
    if (!check) {
        rollback();
        return check.error();
    }
    if (auto w = writeFileAtomic(jsonPath, json.dump(2) + "\n"); !w) {
        rollback();
        return w.error();
    }
    return target;
}

} // namespace

Result<fs::path> appendCandidate(const fs::path& taskDir, const std::string& file, std::string_view source,
                                 nlohmann::ordered_json entry, const std::string& what, const std::string& renameHint)
{
    return append(taskDir, file, &source, std::move(entry), what, renameHint);
}

Result<fs::path> appendCandidateInPlace(const fs::path& taskDir, const std::string& file, nlohmann::ordered_json entry,
                                        const std::string& what, const std::string& renameHint)
{
    return append(taskDir, file, nullptr, std::move(entry), what, renameHint);
}

nlohmann::ordered_json candidateEntry(const std::string& file, const nlohmann::ordered_json& plan)
{
    nlohmann::ordered_json entry = nlohmann::ordered_json::object();
    entry["file"] = file;
    for (auto it = plan.begin(); it != plan.end(); ++it)
        if (it.key() != "file")
            entry[it.key()] = it.value();
    return entry;
}

} // namespace kf
