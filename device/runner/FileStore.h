#pragma once
// The runner's end of staging and streamed dumps (docs/runner-protocol.md, "Files"), for a client
// that does not share this host's files:
//
//  * blobs, named by their SHA-256, in <user cache>/runner-files/ ($XDG_CACHE_HOME/kernelforge/
//    runner-files, else ~/.cache/kernelforge/runner-files): a host that already holds a file is
//    sent nothing. A blob is received in order into a temporary beside it, hashed as it arrives,
//    and renamed into place only when its last chunk matches its name: the cache never holds a
//    blob whose bytes differ from its name.
//  * a private folder of this runner process ($TMPDIR/kf-runner-<pid>-XXXXXX, mode 0700, removed
//    when the runner ends; one left by a runner that was killed is removed by the next to start)
//    in which each request's task folder is built from blobs (hard links, else copies), so the
//    task is parsed and signed exactly as a local one, and where a streamed dump is written.
//
// Every path a request names is checked before anything is made (protocol::pathProblem), and a
// request names at most kMaxStagedFiles files and kMaxStagedBytes bytes.

#include "device/runner/Channel.h"
#include "engine/core/Hmac.h"
#include "engine/core/Result.h"
#include "engine/core/TempFolder.h"
#include "engine/protocol/FileTransfer.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kf::device {

class FileStore {
public:
    FileStore();
    ~FileStore();
    FileStore(const FileStore&) = delete;
    FileStore& operator=(const FileStore&) = delete;

    const std::filesystem::path& cacheDir() const { return m_cache; }

    /// have_files: which of `sha256` the cache lacks, in the order given.
    std::vector<std::string> missing(const std::vector<std::string>& sha256) const;
    /// put_file: takes one chunk. True once the blob is whole, verified and in the cache. An Error
    /// names the field (/offset, /size, /sha256) and drops the partial blob.
    Result<bool> put(const protocol::PutFile& chunk);

    /// Builds a private folder `<kind>-<hash of files>` holding `files` (relative path -> blob)
    /// and the (empty) `folders`, and returns it. Errors name `pointer`/<path>: a path that could
    /// leave the folder, a blob never staged (kind protocol::kNotStaged), too many files or bytes.
    Result<std::filesystem::path> materialise(const protocol::FileMap& files, const std::string& pointer, const std::string& kind,
                                              const std::vector<std::string>& folders = {});

    /// This runner's private temporary folder, made on first use.
    Result<std::filesystem::path> privateDir();
    /// Removes the private folder now (before an _Exit, which runs no destructor).
    void removePrivateDir();

    /// Removes the private folders of runners that no longer run (SIGKILLed ones leave theirs).
    static void sweepStale();

    /// Blobs being received at once at most: starting another drops the oldest.
    static constexpr std::size_t kMaxUploads = 8;

private:
    struct Upload {
        std::filesystem::path temp;
        int fd = -1;
        std::int64_t size = 0;
        std::int64_t received = 0;
        std::unique_ptr<Sha256> hash;
        std::uint64_t started = 0;
    };
    void drop(const std::string& sha);
    /// put's first chunk of a file: the old attempt dropped, room made, a private temporary file.
    Result<std::map<std::string, Upload>::iterator> startUpload(const protocol::PutFile& first);
    /// put's last chunk of a verified file: read-only and synced, then renamed to its hash.
    Result<bool> store(const std::string& sha256, Upload& u);

    std::filesystem::path m_cache;
    std::optional<TempFolder> m_private;
    std::map<std::string, Upload> m_uploads;
    std::uint64_t m_uploadCount = 0;
};

/// Sends every file under `folder` (sorted, links skipped) as file_chunk events of request `id`,
/// paths relative to `folder`, chunks of at most kMaxChunkBytes. Returns the bytes sent.
Result<std::int64_t> streamFolder(Channel& channel, std::int64_t id, const std::filesystem::path& folder);

} // namespace kf::device
