#include "engine/core/Files.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kf {

Result<std::string> readFileBytes(const fs::path& file)
{
    std::ifstream in(file, std::ios::binary);
    if (!in)
        return Error{"read " + file.string(), std::string("cannot open the file: ") + std::strerror(errno),
                     "check that it exists and is readable", file.string(), {}};
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

Result<void> writeFileAtomic(const fs::path& file, std::string_view bytes)
{
    return writeFileAtomic(file, std::vector<std::string_view>{bytes});
}

Result<void> writeFileAtomic(const fs::path& file, const std::vector<std::string_view>& parts)
{
    auto fail = [&](const std::string& why) {
        return Error{"write " + file.string(), why, "check free disk space and permissions", file.string(), {}};
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
    for (std::string_view bytes : parts) {
        size_t done = 0;
        while (done < bytes.size()) {
            ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                std::string why = std::strerror(errno);
                ::close(fd);
                ::unlink(tmp.c_str());
                return fail("write failed: " + why);
            }
            done += static_cast<size_t>(n);
        }
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
