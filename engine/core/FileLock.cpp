#include "engine/core/FileLock.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <thread>
#include <unistd.h>

namespace kf {

FileLock::~FileLock() { release(); }

FileLock::FileLock(FileLock&& other) noexcept : m_fd(other.m_fd) { other.m_fd = -1; }

FileLock& FileLock::operator=(FileLock&& other) noexcept
{
    if (this != &other) {
        release();
        m_fd = other.m_fd;
        other.m_fd = -1;
    }
    return *this;
}

void FileLock::release()
{
    if (m_fd >= 0) {
        ::flock(m_fd, LOCK_UN);
        ::close(m_fd);
        m_fd = -1;
    }
}

Result<FileLock> FileLock::acquire(const std::filesystem::path& file, std::chrono::milliseconds timeout)
{
    std::error_code ec;
    if (file.has_parent_path())
        std::filesystem::create_directories(file.parent_path(), ec);
    int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    // flock needs no write access: a lock file we may only read (a read-only registry) still
    // serialises us with its writers.
    if (fd < 0 && (errno == EACCES || errno == EROFS))
        fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return Error::inFile(file.string(), {}, "lock " + file.string(), std::string("cannot open the lock file: ") + std::strerror(errno), "check that the folder exists and is writable");
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto pause = std::chrono::milliseconds(1);
    for (;;) {
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
            FileLock lock;
            lock.m_fd = fd;
            return lock;
        }
        if (errno != EWOULDBLOCK && errno != EINTR) {
            const std::string why = std::strerror(errno);
            ::close(fd);
            return Error::inFile(file.string(), {}, "lock " + file.string(), "flock failed: " + why);
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            ::close(fd);
            return Error::inFile(file.string(), {}, "lock " + file.string(), "another process has held the registry lock for " + std::to_string(timeout.count() / 1000) +
                             " s", "wait for the other promote or remove to finish, then try again");
        }
        std::this_thread::sleep_for(pause); // polling keeps the wait bounded; flock has no timeout
        pause = std::min(pause * 2, std::chrono::milliseconds(50));
    }
}

} // namespace kf
