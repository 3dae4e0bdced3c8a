#pragma once
// An inter-process lock on a file (flock(2)): the registry's writers take it so two processes
// promoting at once queue instead of overwriting each other. The kernel drops the lock when the
// holder dies, so a killed promoter never leaves the registry locked.

#include "engine/core/Result.h"

#include <chrono>
#include <filesystem>

namespace kf {

class FileLock {
public:
    FileLock() = default;
    ~FileLock();
    FileLock(FileLock&& other) noexcept;
    FileLock& operator=(FileLock&& other) noexcept;
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;

    /// Takes an exclusive lock on `file` (created if missing), waiting at most `timeout`.
    static Result<FileLock> acquire(const std::filesystem::path& file, std::chrono::milliseconds timeout);

    bool held() const { return m_fd >= 0; }
    void release();

private:
    int m_fd = -1;
};

} // namespace kf
