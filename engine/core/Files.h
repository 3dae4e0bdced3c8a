#pragma once
// File helpers shared by every reader and writer we own: bounded whole-file reads of regular
// files only, and atomic writes.

#include "engine/core/Result.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kf {

/// What readFileBytes reads unless told otherwise: more than any text file of ours.
inline constexpr std::size_t kMaxReadBytes = std::size_t(64) << 20;

/// A read-only descriptor of a regular file (openRegularFile); closed with the object.
class RegularFile {
public:
    RegularFile() = default;
    explicit RegularFile(int fd, std::uint64_t size) : m_fd(fd), m_size(size) {}
    RegularFile(RegularFile&& o) noexcept;
    RegularFile& operator=(RegularFile&& o) noexcept;
    RegularFile(const RegularFile&) = delete;
    RegularFile& operator=(const RegularFile&) = delete;
    ~RegularFile();

    int fd() const { return m_fd; }
    std::uint64_t size() const { return m_size; }   ///< at open time
    int release();                                  ///< the descriptor, no longer closed here

private:
    int m_fd = -1;
    std::uint64_t m_size = 0;
};

/// Opens `file` for reading if it is a regular file (symbolic links followed). A FIFO, a device,
/// a socket or a folder is refused by its type before it is opened, so opening has no side
/// effect; the open itself does not block (O_NONBLOCK) and the type is checked again on the
/// opened descriptor (fstat), so a file swapped in between is refused too. The Error names
/// `file` and says what it is instead ("a named pipe (FIFO)", "a character device").
Result<RegularFile> openRegularFile(const std::filesystem::path& file);

/// Reads a whole regular file of at most `maxBytes` bytes (binary-safe) through
/// openRegularFile: a larger file is refused by its size, or after reading maxBytes + 1 bytes
/// when it grows while being read, never read to its end. Errors name `file`; no byte of a
/// refused file is part of one.
Result<std::string> readFileBytes(const std::filesystem::path& file, std::size_t maxBytes = kMaxReadBytes);

/// "4 MiB", "16 KiB" or "100 bytes": a limit as a sentence says it.
std::string byteCountText(std::uint64_t bytes);

/// Writes `bytes` to `file` atomically: a temporary in the same folder, fsync, then rename, so
/// a reader sees the old file or the new one and never a torn mix, even if we are killed midway.
/// Creates missing parent folders.
Result<void> writeFileAtomic(const std::filesystem::path& file, std::string_view bytes);

/// The same for a file made of several pieces (a header and a large body), without joining
/// them in memory first.
Result<void> writeFileAtomic(const std::filesystem::path& file, const std::vector<std::string_view>& parts);

/// True when `path` is `folder` or lies below it once both are resolved (symbolic links followed,
/// "." and ".." removed); false for an empty folder.
bool isInsideFolder(const std::filesystem::path& path, const std::filesystem::path& folder);

/// $XDG_CACHE_HOME/kernelforge, or ~/.cache/kernelforge.
std::filesystem::path userCacheDir();

} // namespace kf
