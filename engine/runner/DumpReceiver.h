#pragma once
// The client's end of a streamed dump (docs/runner-protocol.md, "Files"): a runner that does not
// share the client's files writes the case folders of failing trials into a folder of its own and
// sends them as file_chunk events before the report. DumpReceiver writes them under the client's
// dump folder with the checks a local dump has: every path stays inside the folder (no absolute
// path, no "..", no symbolic link on the way), every file arrives in order, and the whole stream
// stays within the run's budget (max_bytes). Each file appears whole or not at all (a temporary
// beside it, renamed after its last chunk), so a case folder never holds half a tensor.

#include "engine/core/Result.h"
#include "engine/protocol/FileTransfer.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>

namespace kf {

class DumpReceiver {
public:
    /// Files go under `dir` (made when the first chunk arrives); `maxBytes` bounds the bytes of
    /// all files together.
    DumpReceiver(std::filesystem::path dir, std::int64_t maxBytes);
    /// Removes the temporaries of files that never received their last chunk.
    ~DumpReceiver();
    DumpReceiver(const DumpReceiver&) = delete;
    DumpReceiver& operator=(const DumpReceiver&) = delete;

    /// Writes one chunk. An Error (naming the path and the field: /path, /offset, /size) refuses
    /// it; nothing of that file is kept.
    Result<void> accept(const protocol::FileChunk& chunk);
    /// Once the request's final message has come: an Error when a file was begun and not ended.
    Result<void> finish();

    const std::filesystem::path& dir() const { return m_dir; }
    std::int64_t bytes() const { return m_bytes; }
    int filesWritten() const { return static_cast<int>(m_done.size()); }

    /// Files open at once at most (a runner sends one after the other).
    static constexpr std::size_t kMaxOpenFiles = 64;

private:
    struct Open {
        std::filesystem::path target;
        std::filesystem::path temp;
        int fd = -1;
        std::int64_t size = 0;
        std::int64_t received = 0;
    };
    Result<void> begin(const protocol::FileChunk& chunk);
    void abandon(const std::string& path);

    std::filesystem::path m_dir;
    std::int64_t m_maxBytes = 0;
    std::int64_t m_bytes = 0;           ///< written so far, all files
    std::int64_t m_promised = 0;        ///< the sizes of every file begun (the budget is checked against these)
    std::map<std::string, Open> m_open;
    std::set<std::string> m_done;
};

} // namespace kf
