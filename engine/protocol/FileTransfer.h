#pragma once
// Files that travel inside the runner protocol (docs/runner-protocol.md, "Files"), for a runner
// that does not see the client's files (an endpoint with shared_fs false, docs/runners.md):
//
//   caller -> have_files {sha256: [...]}                  runner -> files {missing: [...]}
//   caller -> put_file {sha256, size, offset, data, last} runner -> files {missing: [...]}
//   runner -> file_chunk {path, offset, size, data, last} (an event of a verify with dump.stream)
//
// A task's files are staged by content (SHA-256) before a request that names them in task_files;
// a dump's case folders come back as file_chunk events before the report. `data` is base64; a
// chunk holds at most kMaxChunkBytes raw bytes. New message types, guarded by the hello's
// features "stage" and "dump_stream": a client sends them, and a runner streams, only when the
// other side listed the feature.

#include "engine/core/Result.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kf::protocol {

/// Raw bytes in one put_file or file_chunk (4 MiB; base64 makes a line of about 5.6 MB).
inline constexpr std::size_t kMaxChunkBytes = std::size_t(4) << 20;
/// Files one request may name in task_files (or inputs_files), and the bytes they may hold.
inline constexpr std::size_t kMaxStagedFiles = 4096;
inline constexpr std::int64_t kMaxStagedBytes = std::int64_t(4) << 30;
/// One streamed file of a dump at most (the dump budget's own ceiling, DumpSettings).
inline constexpr std::int64_t kMaxStreamedFileBytes = std::int64_t(64) << 30;

/// Error::kind of a runner's refusal to run a request that names a file it does not hold (a
/// runner restarted on another host, a cache cleared in between): stage again and resend.
inline constexpr const char* kNotStaged = "not_staged";

/// Whether `text` is a SHA-256 as the protocol spells it: 64 lowercase hex digits.
bool isSha256(std::string_view text);

/// Why `path` cannot name a file inside a folder, or "" when it can: a relative path of '/'-
/// separated names, none empty, "." or "..", without backslashes or control characters, at most
/// 1024 bytes. Both sides check every path that crosses the wire with it.
std::string pathProblem(std::string_view path);

/// {"<relative path>": "<sha256>", ...}: a request's task_files and inputs_files.
using FileMap = std::map<std::string, std::string>;

/// Reads a FileMap at `pointer`: an object of at most kMaxStagedFiles entries, every key a path
/// pathProblem accepts, every value a sha256. The Error names the offending key's pointer.
Result<FileMap> readFileMap(const nlohmann::json& value, const std::string& pointer);

/// `have_files`: which of these blobs does the runner lack?
struct HaveFiles {
    std::vector<std::string> sha256;

    nlohmann::json toJson() const;
    static Result<HaveFiles> fromJson(const nlohmann::json& j);
};

/// `put_file`: one chunk of one blob, in order (offset is the number of bytes sent before it).
struct PutFile {
    std::string sha256;
    std::int64_t size = 0;          ///< the whole blob's size
    std::int64_t offset = 0;
    std::string data;               ///< raw bytes (base64 on the wire), at most kMaxChunkBytes
    bool last = false;              ///< offset + data.size() == size

    nlohmann::json toJson() const;
    static Result<PutFile> fromJson(const nlohmann::json& j);
};

/// `files`: the runner's answer to have_files and put_file, the blobs it still lacks.
struct FilesAnswer {
    std::vector<std::string> missing;

    nlohmann::json toJson() const;
    static Result<FilesAnswer> fromJson(const nlohmann::json& j);
};

/// `file_chunk`: one chunk of one file of a streamed dump, `path` relative to the dump folder.
struct FileChunk {
    std::int64_t id = 0;
    std::string path;
    std::int64_t offset = 0;
    std::int64_t size = 0;          ///< the whole file's size
    std::string data;               ///< raw bytes, at most kMaxChunkBytes
    bool last = false;              ///< offset + data.size() == size

    nlohmann::json toJson() const;
    static Result<FileChunk> fromJson(const nlohmann::json& j);
};

} // namespace kf::protocol
