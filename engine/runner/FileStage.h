#pragma once
// Staging (docs/runner-protocol.md, "Files"): the files a runner that does not share this
// machine's file system (an endpoint with shared_fs false, docs/runners.md) needs for a request,
// sent by content before the request that names them.
//
//   taskFilesFor(task)    every file the runner reads from the task folder: the candidates'
//                         sources (parseTask checks they exist), every file under the compile
//                         include folders, the TorchScript reference; each with its SHA-256
//   stage(runner, files)  have_files, then put_file chunks (at most 4 MiB each) of the blobs the
//                         runner lacks; a runner that has them all (a warm host) receives nothing
//
// The request then carries task_files {path: sha256} instead of task_dir; the runner builds a
// private folder from its blobs (device/runner/FileStore.h), so the task reads as a normal folder.

#include "engine/core/Result.h"
#include "engine/protocol/FileTransfer.h"
#include "engine/task/Task.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kf {

class CancelToken;
class RunnerSupervisor;

struct StageFile {
    std::string path;                   ///< relative to its folder, '/' between names (the key in task_files)
    std::filesystem::path source;       ///< the file on this machine
    std::string sha256;
    std::int64_t size = 0;
};

struct StageStats {
    int files = 0;                      ///< files named
    int filesSent = 0;                  ///< blobs the runner lacked and got
    int chunksSent = 0;
    std::int64_t bytesSent = 0;         ///< raw bytes of put_file data
};

/// The files of `task` a runner reads, sorted by path. Refuses (naming the file) one that cannot
/// be read, a link that leads out of the task folder, more than kMaxStagedFiles files and more
/// than kMaxStagedBytes together.
Result<std::vector<StageFile>> taskFilesFor(const Task& task);

/// The regular files directly inside `folder` (a repro's <input>.npy files), sorted by name.
Result<std::vector<StageFile>> folderFilesFor(const std::filesystem::path& folder);

/// The request field: path -> sha256.
protocol::FileMap fileMap(const std::vector<StageFile>& files);

/// Makes sure the runner holds every blob of `files`: asks which it lacks (have_files) and sends
/// those in chunks of `chunkBytes` (put_file), checking `cancel` between chunks. A runner error
/// (a hash that does not match the bytes, a full disk) and a file that changed since it was
/// hashed are Errors.
Result<StageStats> stage(RunnerSupervisor& runner, const std::vector<StageFile>& files, const CancelToken* cancel = nullptr,
                         std::size_t chunkBytes = protocol::kMaxChunkBytes);

} // namespace kf
