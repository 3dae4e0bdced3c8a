#include "engine/runner/FileStage.h"

#include "engine/compile/CompileTypes.h"
#include "engine/core/Files.h"
#include "engine/core/Hmac.h"
#include "engine/runner/Supervisor.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

namespace fs = std::filesystem;

namespace kf {

namespace {

Error stageError(std::string why, std::string hint = {}, std::string file = {})
{
    return Error::inFile(std::move(file), {}, "send the task's files to the runner", std::move(why), std::move(hint));
}

// One file of a folder: its key, hashed; a link is followed only while it stays in the folder.
Result<StageFile> describe(const fs::path& folder, const std::string& key)
{
    const fs::path file = folder / fs::path(key);
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(file, ec)) && !isInsideFolder(file, folder))
        return stageError(key + " is a link to " + fs::weakly_canonical(file, ec).string() +
                              ", outside the folder; a runner elsewhere gets only the folder's own files",
                          "copy the file into the folder instead of linking it", file.string());
    if (!fs::is_regular_file(file, ec))
        return stageError(key + " is not a file", "", file.string());
    StageFile f;
    f.path = key;
    f.source = file;
    f.size = static_cast<std::int64_t>(fs::file_size(file, ec));
    if (ec)
        return stageError("cannot read " + key + ": " + ec.message(), "", file.string());
    auto sha = sha256OfFile(file.string());
    if (!sha)
        return sha.error();
    f.sha256 = sha.value();
    return f;
}

Result<std::vector<StageFile>> describeAll(const fs::path& folder, std::vector<std::string> keys)
{
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    if (keys.size() > protocol::kMaxStagedFiles)
        return stageError(std::to_string(keys.size()) + " files, more than the " + std::to_string(protocol::kMaxStagedFiles) +
                              " a request may name",
                          "keep fewer headers in the include folders, or share the task folder with the runner (shared_fs)",
                          folder.string());
    std::vector<StageFile> out;
    std::int64_t total = 0;
    for (const std::string& key : keys) {
        if (std::string why = protocol::pathProblem(key); !why.empty())
            return stageError(key + ": " + why, "", (folder / key).string());
        auto f = describe(folder, key);
        if (!f)
            return f.error();
        total += f->size;
        if (total > protocol::kMaxStagedBytes)
            return stageError("the files need more than the " + std::to_string(protocol::kMaxStagedBytes >> 30) +
                                  " GiB one request may stage",
                              "share the task folder with the runner (shared_fs)", folder.string());
        out.push_back(std::move(f.value()));
    }
    return out;
}

// Sends `message` (have_files or put_file) and reads the files the runner still lacks.
Result<protocol::FilesAnswer> askRunner(RunnerSupervisor& runner, const nlohmann::json& message, const CancelToken* cancel)
{
    auto answer = runner.control(message, {}, cancel);
    if (!answer)
        return answer.error();
    return protocol::FilesAnswer::fromJson(answer.value());
}

} // namespace

Result<std::vector<StageFile>> taskFilesFor(const Task& task)
{
    const fs::path dir = task.directory;
    if (dir.empty())
        return stageError("the task has no folder (it was not read from a task.json)", "save the task first");
    std::vector<std::string> keys;
    for (const Candidate& c : task.candidates)
        keys.push_back(fs::path(c.file).lexically_normal().generic_string());
    for (const std::string& inc : task.compile.includeDirs) {
        const fs::path root = dir / inc;
        std::error_code ec;
        // The files the task hash covers (engine/task/TaskHash.cpp): links to folders are not
        // entered, links to files are followed (and refused by describe() when they lead out).
        for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
            std::error_code fileEc;
            if (!it->is_regular_file(fileEc) && !fs::is_symlink(it->symlink_status(fileEc)))
                continue;
            if (fs::is_symlink(it->symlink_status(fileEc)) && fs::is_directory(it->path(), fileEc))
                continue;
            if (keys.size() > protocol::kMaxStagedFiles)
                break; // refused below with the count
            // Spelled as found, not resolved: a link keeps its own name.
            keys.push_back((fs::path(inc) / it->path().lexically_relative(root)).lexically_normal().generic_string());
        }
        if (ec)
            return stageError("cannot list the include folder " + inc + ": " + ec.message(), "", root.string());
    }
    if (task.reference.kind == Reference::Kind::TorchScript)
        keys.push_back(task.reference.torchscript.lexically_normal().generic_string());
    return describeAll(dir, std::move(keys));
}

Result<std::vector<StageFile>> folderFilesFor(const fs::path& folder)
{
    std::vector<std::string> keys;
    std::error_code ec;
    for (auto it = fs::directory_iterator(folder, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        if (!it->is_regular_file(ec))
            continue;
        if (keys.size() > protocol::kMaxStagedFiles)
            break;
        keys.push_back(it->path().filename().string());
    }
    if (ec)
        return stageError("cannot list " + folder.string() + ": " + ec.message(), "", folder.string());
    return describeAll(folder, std::move(keys));
}

protocol::FileMap fileMap(const std::vector<StageFile>& files)
{
    protocol::FileMap m;
    for (const StageFile& f : files)
        m[f.path] = f.sha256;
    return m;
}

Result<StageStats> stage(RunnerSupervisor& runner, const std::vector<StageFile>& files, const CancelToken* cancel,
                         std::size_t chunkBytes)
{
    StageStats stats;
    stats.files = static_cast<int>(files.size());
    chunkBytes = std::clamp<std::size_t>(chunkBytes, 1, protocol::kMaxChunkBytes);
    // One blob per content: two files with the same bytes travel once.
    std::map<std::string, const StageFile*> blobs;
    for (const StageFile& f : files)
        blobs.emplace(f.sha256, &f);
    if (blobs.empty())
        return stats;
    protocol::HaveFiles ask;
    for (const auto& [sha, f] : blobs)
        ask.sha256.push_back(sha);
    auto have = askRunner(runner, ask.toJson(), cancel);
    if (!have)
        return have.error();
    std::set<std::string> missing(have->missing.begin(), have->missing.end());

    std::string buffer(chunkBytes, '\0');
    for (const std::string& sha : missing) {
        auto it = blobs.find(sha);
        if (it == blobs.end())
            return stageError("the runner asked for a file it was not offered (sha256 " + sha + ")",
                              "kforge and kforge-runner probably come from different builds; rebuild both");
        const StageFile& f = *it->second;
        std::ifstream in(f.source, std::ios::binary);
        if (!in)
            return stageError("cannot read " + f.path, "", f.source.string());
        protocol::PutFile put;
        put.sha256 = f.sha256;
        put.size = f.size;
        do {
            if (cancel && cancel->cancelled())
                return stageError("cancelled");
            const std::int64_t left = f.size - put.offset;
            const auto want = static_cast<std::streamsize>(std::min<std::int64_t>(left, static_cast<std::int64_t>(chunkBytes)));
            in.read(buffer.data(), want);
            if (in.gcount() != want)
                return stageError(f.path + " changed while it was being sent (it is shorter than when it was hashed)",
                                  "run again once the file is no longer being written", f.source.string());
            put.data.assign(buffer.data(), static_cast<std::size_t>(want));
            put.last = put.offset + want == f.size;
            auto left_ = askRunner(runner, put.toJson(), cancel);
            if (!left_)
                return left_.error();
            const bool stillMissing = std::find(left_->missing.begin(), left_->missing.end(), sha) != left_->missing.end();
            if (put.last == stillMissing)
                return stageError(put.last ? "the runner did not keep " + f.path + " after its last chunk"
                                           : "the runner answered a chunk of " + f.path + " as if the file were complete",
                                  "kforge and kforge-runner probably come from different builds; rebuild both");
            ++stats.chunksSent;
            stats.bytesSent += want;
            put.offset += want;
        } while (!put.last);
        ++stats.filesSent;
    }
    return stats;
}

} // namespace kf
