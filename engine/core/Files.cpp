#include "engine/core/Files.h"

#include "engine/core/Descriptor.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace fs = std::filesystem;

namespace kf {

namespace {

// What a file that is not a regular one is, for the sentence that refuses it.
const char* typeName(mode_t mode)
{
    switch (mode & S_IFMT) {
    case S_IFDIR: return "a folder";
    case S_IFIFO: return "a named pipe (FIFO)";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    default: return "not a regular file";
    }
}

Error readError(const fs::path& file, std::string why, std::string hint = "check that it exists and is readable")
{
    return Error::inFile(file.string(), {}, "read " + file.string(), std::move(why), std::move(hint));
}

Error notRegular(const fs::path& file, mode_t mode)
{
    return readError(file, std::string("it is not a regular file but ") + typeName(mode) +
                               "; KernelForge reads only regular files",
                     "give the path of a regular file");
}

} // namespace

RegularFile::RegularFile(RegularFile&& o) noexcept : m_fd(std::exchange(o.m_fd, -1)), m_size(o.m_size) {}

RegularFile& RegularFile::operator=(RegularFile&& o) noexcept
{
    if (this != &o) {
        RegularFile old(std::move(*this));
        m_fd = std::exchange(o.m_fd, -1);
        m_size = o.m_size;
    }
    return *this;
}

RegularFile::~RegularFile()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

int RegularFile::release()
{
    return std::exchange(m_fd, -1);
}

Result<RegularFile> openRegularFile(const fs::path& file)
{
    // By type first: opening a device can have effects of its own (a tape rewinds, a watchdog arms).
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0)
        return readError(file, std::string("cannot open the file: ") + std::strerror(errno));
    if (!S_ISREG(st.st_mode))
        return notRegular(file, st.st_mode);
    // Then on the descriptor: a FIFO swapped in after the stat opens without blocking and is refused here.
    const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return readError(file, std::string("cannot open the file: ") + std::strerror(errno));
    RegularFile opened(fd, 0);
    if (::fstat(fd, &st) != 0)
        return readError(file, std::string("cannot stat the file: ") + std::strerror(errno));
    if (!S_ISREG(st.st_mode))
        return notRegular(file, st.st_mode);
    return RegularFile(opened.release(), static_cast<std::uint64_t>(st.st_size));
}

std::string byteCountText(std::uint64_t bytes)
{
    if (bytes >= (std::uint64_t(1) << 20) && bytes % (std::uint64_t(1) << 20) == 0)
        return std::to_string(bytes >> 20) + " MiB";
    if (bytes >= 1024 && bytes % 1024 == 0)
        return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

Result<std::string> readFileBytes(const fs::path& file, std::size_t maxBytes)
{
    auto opened = openRegularFile(file);
    if (!opened)
        return opened.error();
    auto tooLarge = [&] {
        return readError(file,
                         "the file is larger than " + byteCountText(maxBytes) + ", the most KernelForge reads from a file of this kind",
                         "check that it is the right file");
    };
    if (opened->size() > maxBytes)
        return tooLarge();
    // At most maxBytes + 1 bytes: a file that grew past the limit is refused without reading the rest.
    std::string bytes(static_cast<std::size_t>(opened->size()) + 1, '\0');
    std::size_t got = 0;
    for (;;) {
        if (got == bytes.size()) {
            if (bytes.size() > maxBytes)
                return tooLarge();
            bytes.resize(std::min<std::size_t>(maxBytes, std::max<std::size_t>(2 * bytes.size(), 64 << 10)) + 1);
        }
        const ssize_t n = ::read(opened->fd(), bytes.data() + got, bytes.size() - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return readError(file, std::string("a read failed: ") + std::strerror(errno));
        if (n == 0)
            break;
        got += static_cast<std::size_t>(n);
    }
    if (got > maxBytes)
        return tooLarge();
    bytes.resize(got);
    return bytes;
}

Result<void> writeFileAtomic(const fs::path& file, std::string_view bytes)
{
    return writeFileAtomic(file, std::vector<std::string_view>{bytes});
}

Result<void> writeFileAtomic(const fs::path& file, const std::vector<std::string_view>& parts)
{
    auto fail = [&](const std::string& why) {
        return Error::inFile(file.string(), {}, "write " + file.string(), why, "check free disk space and permissions");
    };
    std::error_code ec;
    if (file.has_parent_path()) {
        fs::create_directories(file.parent_path(), ec);
        // Say why the folder cannot be made (EACCES on .staging), not the ENOENT that follows.
        if (ec)
            return fail("cannot create the folder " + file.parent_path().string() + ": " + ec.message());
    }
    std::random_device rd;
    fs::path tmp = file;
    tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return fail(std::string("cannot create a temporary file: ") + std::strerror(errno));
    for (std::string_view bytes : parts)
        if (!writeAll(fd, bytes)) {
            std::string why = std::strerror(errno);
            ::close(fd);
            ::unlink(tmp.c_str());
            return fail("write failed: " + why);
        }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        std::string why = std::strerror(errno);
        ::unlink(tmp.c_str());
        return fail("flush failed: " + why);
    }
    if (::rename(tmp.c_str(), file.c_str()) != 0) {
        std::string why = std::strerror(errno);
        ::unlink(tmp.c_str());
        return fail("rename failed: " + why);
    }
    return {};
}

bool isInsideFolder(const fs::path& path, const fs::path& folder)
{
    if (folder.empty())
        return false;
    std::error_code ec;
    const fs::path rel = fs::weakly_canonical(path, ec).lexically_relative(fs::weakly_canonical(folder, ec));
    return !rel.empty() && *rel.begin() != "..";
}

fs::path userCacheDir()
{
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
        return fs::path(x) / "kernelforge";
    if (const char* h = std::getenv("HOME"); h && *h)
        return fs::path(h) / ".cache" / "kernelforge";
    return fs::temp_directory_path() / "kernelforge-cache";
}

} // namespace kf
