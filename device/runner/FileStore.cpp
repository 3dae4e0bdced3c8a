#include "device/runner/FileStore.h"

#include "engine/core/Descriptor.h"
#include "engine/core/Files.h"
#include "engine/core/JsonReader.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kf::device {

namespace {

constexpr const char* kFolderPrefix = "kf-runner-";

Error putError(std::string why, std::string pointer, std::string hint = {})
{
    return Error::inFile("request", std::move(pointer), "receive a staged file", std::move(why), std::move(hint));
}

Error stageError(std::string why, std::string pointer, std::string hint = {})
{
    return Error::inFile("request", std::move(pointer), "read the request", std::move(why), std::move(hint));
}

// A copy with plain system calls: the runner avoids std::filesystem's heavier operations, which
// LibTorch's own exported copies may shadow (engine/core/TempFolder.h).
bool copyFile(const fs::path& from, const fs::path& to)
{
    const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return false;
    const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
    if (out < 0) {
        ::close(in);
        return false;
    }
    std::string buffer(std::size_t(1) << 20, '\0');
    bool ok = true;
    for (;;) {
        const ssize_t r = ::read(in, buffer.data(), buffer.size());
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            ok = false;
        if (r <= 0)
            break;
        if (!writeAll(out, {buffer.data(), static_cast<std::size_t>(r)})) {
            ok = false;
            break;
        }
    }
    ok = ::close(out) == 0 && ok;
    ::close(in);
    return ok;
}

std::string shortHash(const protocol::FileMap& files)
{
    Sha256 h;
    for (const auto& [path, sha] : files) {
        h.update(path);
        h.update(std::string_view("\0", 1));
        h.update(sha);
    }
    auto hex = h.hex();
    return hex ? hex->substr(0, 16) : std::string("unhashed");
}

} // namespace

FileStore::FileStore() : m_cache(userCacheDir() / "runner-files") {}

FileStore::~FileStore()
{
    for (auto& [sha, u] : m_uploads) {
        if (u.fd >= 0)
            ::close(u.fd);
        ::unlink(u.temp.c_str());
    }
}

std::vector<std::string> FileStore::missing(const std::vector<std::string>& sha256) const
{
    std::vector<std::string> out;
    for (const std::string& sha : sha256) {
        struct stat st {};
        // A blob is a regular file of ours; anything else under its name is not trusted.
        if (!protocol::isSha256(sha) || ::lstat((m_cache / sha).c_str(), &st) != 0 || !S_ISREG(st.st_mode))
            out.push_back(sha);
    }
    return out;
}

void FileStore::drop(const std::string& sha)
{
    auto it = m_uploads.find(sha);
    if (it == m_uploads.end())
        return;
    if (it->second.fd >= 0)
        ::close(it->second.fd);
    ::unlink(it->second.temp.c_str());
    m_uploads.erase(it);
}

Result<std::map<std::string, FileStore::Upload>::iterator> FileStore::startUpload(const protocol::PutFile& c)
{
    // A (re)start: whatever was received of this blob before is dropped.
    drop(c.sha256);
    if (m_uploads.size() >= kMaxUploads) {
        auto oldest = std::min_element(m_uploads.begin(), m_uploads.end(),
                                       [](const auto& a, const auto& b) { return a.second.started < b.second.started; });
        drop(oldest->first);
    }
    std::error_code ec;
    fs::create_directories(m_cache, ec);
    ::chmod(m_cache.c_str(), 0700);
    const fs::space_info space = fs::space(m_cache, ec);
    if (!ec && static_cast<std::int64_t>(space.available) < c.size + (std::int64_t(64) << 20))
        return putError("the runner's host has " + std::to_string(space.available >> 20) + " MiB free in " + m_cache.string() +
                            ", too little for a file of " + std::to_string(c.size >> 20) + " MiB",
                        "/size", "free disk space on the runner's host (its staged files may be removed: docs/runners.md)");
    std::string temp = (m_cache / ("." + c.sha256 + ".part-XXXXXX")).string();
    const int fd = ::mkstemp(temp.data());
    if (fd < 0)
        return putError("cannot write in " + m_cache.string() + ": " + std::strerror(errno), "/sha256",
                        "check that the runner's cache folder can be written");
    Upload u;
    u.temp = temp;
    u.fd = fd;
    u.size = c.size;
    u.hash = std::make_unique<Sha256>();
    u.started = ++m_uploadCount;
    if (auto ready = u.hash->ready(); !ready) {
        ::close(fd);
        ::unlink(temp.c_str());
        return ready.error();
    }
    return m_uploads.emplace(c.sha256, std::move(u)).first;
}

Result<bool> FileStore::store(const std::string& sha256, Upload& u)
{
    // Whole and verified: read-only, on disk, then under its name in one rename.
    ::fchmod(u.fd, 0400);
    const bool synced = ::fsync(u.fd) == 0;
    ::close(u.fd);
    u.fd = -1;
    const fs::path blob = m_cache / sha256;
    if (!synced || ::rename(u.temp.c_str(), blob.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        drop(sha256);
        return putError("cannot store " + blob.string() + ": " + why, "/sha256", "free disk space on the runner's host");
    }
    m_uploads.erase(sha256);
    return true;
}

Result<bool> FileStore::put(const protocol::PutFile& c)
{
    if (!protocol::isSha256(c.sha256))
        return putError("a sha256 is 64 lowercase hex digits", "/sha256");
    if (c.size > protocol::kMaxStagedBytes)
        return putError("a staged file holds at most " + std::to_string(protocol::kMaxStagedBytes >> 30) + " GiB", "/size");
    auto it = m_uploads.find(c.sha256);
    if (c.offset == 0) {
        auto started = startUpload(c);
        if (!started)
            return started.error();
        it = started.value();
    } else if (it == m_uploads.end()) {
        return putError("a chunk at offset " + std::to_string(c.offset) + " of a file whose first chunk never came", "/offset",
                        "send the file from offset 0");
    }
    Upload& u = it->second;
    if (c.size != u.size) {
        drop(c.sha256);
        return putError("the chunk says the file has " + std::to_string(c.size) + " bytes, its first chunk " + std::to_string(u.size),
                        "/size");
    }
    if (c.offset != u.received) {
        const std::int64_t had = u.received;
        drop(c.sha256);
        return putError("a chunk at offset " + std::to_string(c.offset) + " where " + std::to_string(had) +
                            " bytes had arrived (chunks come in order)",
                        "/offset", "send the file again from offset 0");
    }
    if (!writeAll(u.fd, c.data)) {
        const std::string why = std::strerror(errno);
        drop(c.sha256);
        return putError("cannot write " + u.temp.string() + ": " + why, "/data", "free disk space on the runner's host");
    }
    u.hash->update(c.data);
    u.received += static_cast<std::int64_t>(c.data.size());
    if (!c.last)
        return false;
    if (u.received != u.size) {
        drop(c.sha256);
        return putError("the last chunk ends at " + std::to_string(u.received) + " bytes, not at the file's size", "/last");
    }
    auto got = u.hash->hex();
    if (!got) {
        drop(c.sha256);
        return got.error();
    }
    if (got.value() != c.sha256) {
        drop(c.sha256);
        return putError("the bytes received have sha256 " + got.value() + ", not " + c.sha256 + "; the file was not kept",
                        "/sha256", "the file changed while it was sent, or the connection altered it: send it again");
    }
    return store(c.sha256, u);
}

Result<fs::path> FileStore::privateDir()
{
    if (!m_private) {
        sweepStale();
        m_private.emplace(kFolderPrefix + std::to_string(::getpid()) + "-");
    }
    if (m_private->path().empty())
        return Error::failed("make the runner's private folder", "mkdtemp failed in the temporary folder: " + std::string(std::strerror(errno)), "check $TMPDIR on the runner's host");
    return m_private->path();
}

void FileStore::removePrivateDir()
{
    m_private.reset();
}

void FileStore::sweepStale()
{
    std::error_code ec;
    const fs::path base = fs::temp_directory_path(ec);
    if (ec)
        return;
    const std::string prefix = kFolderPrefix;
    for (auto it = fs::directory_iterator(base, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.rfind(prefix, 0) != 0)
            continue;
        char* end = nullptr;
        const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
        if (pid <= 0 || !end || *end != '-' || pid == ::getpid())
            continue;
        struct stat st {};
        if (::lstat(it->path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid())
            continue;
        if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)
            continue; // its runner still runs (or is not ours to ask about)
        removeTree(it->path());
    }
}

Result<fs::path> FileStore::materialise(const protocol::FileMap& files, const std::string& pointer, const std::string& kind,
                                        const std::vector<std::string>& folders)
{
    if (files.size() > protocol::kMaxStagedFiles)
        return stageError(std::to_string(files.size()) + " files, more than the " + std::to_string(protocol::kMaxStagedFiles) +
                              " a request may name",
                          pointer);
    // Every name and every blob first: nothing is made for a request that is refused.
    std::int64_t total = 0;
    for (const auto& [path, sha] : files) {
        const std::string p = kf::json::child(pointer, path);
        if (std::string why = protocol::pathProblem(path); !why.empty())
            return stageError(why, p);
        if (!protocol::isSha256(sha))
            return stageError("a sha256 is 64 lowercase hex digits", p);
        struct stat st {};
        const fs::path blob = m_cache / sha;
        if (::lstat(blob.c_str(), &st) != 0) {
            Error e = stageError("the file's content (sha256 " + sha.substr(0, 12) + "…) was never sent to this runner, or its cache was cleared",
                                 p, "stage it first (have_files, put_file); kforge does this for an endpoint with shared_fs false");
            e.kind = protocol::kNotStaged;
            return e;
        }
        if (!S_ISREG(st.st_mode))
            return stageError(blob.string() + " is not a regular file (a link or a folder under a blob's name is not trusted)", p,
                              "remove it from the runner's cache (docs/runners.md); the client sends the file again");
        total += static_cast<std::int64_t>(st.st_size);
        if (total > protocol::kMaxStagedBytes)
            return stageError("the files hold more than the " + std::to_string(protocol::kMaxStagedBytes >> 30) +
                                  " GiB a request may stage",
                              pointer);
    }
    auto base = privateDir();
    if (!base)
        return base.error();
    const fs::path folder = base.value() / (kind + "-" + shortHash(files));
    removeTree(folder); // an earlier request's copy: made again from the cache
    std::error_code ec;
    if (!fs::create_directory(folder, ec))
        return Error::failed("make the request's folder", "cannot make " + folder.string() + ": " + ec.message());
    for (const auto& [path, sha] : files) {
        const fs::path target = folder / fs::path(path);
        fs::create_directories(target.parent_path(), ec);
        if (ec)
            return stageError("cannot make the folder of " + path + " (another file of the request has its name?): " + ec.message(),
                              kf::json::child(pointer, path));
        const fs::path blob = m_cache / sha;
        if (::link(blob.c_str(), target.c_str()) != 0 && !copyFile(blob, target))
            return stageError("cannot place " + path + " in " + folder.string() + ": " + std::strerror(errno),
                              kf::json::child(pointer, path));
    }
    for (const std::string& f : folders) {
        // Folders the task names (an include folder that holds no file); a bad name is left to
        // parseTask, which refuses it with its own sentence.
        const std::string normal = fs::path(f).lexically_normal().generic_string();
        if (protocol::pathProblem(normal).empty())
            fs::create_directories(folder / normal, ec);
    }
    return folder;
}

Result<std::int64_t> streamFolder(Channel& channel, std::int64_t id, const fs::path& folder)
{
    std::vector<std::pair<std::string, fs::path>> files;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        std::error_code fileEc;
        if (it->symlink_status(fileEc).type() == fs::file_type::regular)
            files.emplace_back(fs::relative(it->path(), folder, fileEc).generic_string(), it->path());
    }
    if (ec)
        return Error::failed("send the dump", "cannot list " + folder.string() + ": " + ec.message());
    std::sort(files.begin(), files.end());
    std::int64_t sent = 0;
    std::string buffer(protocol::kMaxChunkBytes, '\0');
    for (const auto& [rel, path] : files) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        struct stat st {};
        if (fd < 0 || ::fstat(fd, &st) != 0) {
            if (fd >= 0)
                ::close(fd);
            return Error::failed("send the dump", "cannot read " + path.string() + ": " + std::strerror(errno));
        }
        protocol::FileChunk c;
        c.id = id;
        c.path = rel;
        c.size = static_cast<std::int64_t>(st.st_size);
        do {
            const std::size_t want = static_cast<std::size_t>(std::min<std::int64_t>(c.size - c.offset, protocol::kMaxChunkBytes));
            std::size_t got = 0;
            while (got < want) {
                const ssize_t r = ::read(fd, buffer.data() + got, want - got);
                if (r < 0 && errno == EINTR)
                    continue;
                if (r <= 0)
                    break;
                got += static_cast<std::size_t>(r);
            }
            if (got != want) {
                ::close(fd);
                return Error::failed("send the dump", "cannot read " + path.string() + " (it changed while it was sent)");
            }
            c.data.assign(buffer.data(), want);
            c.last = c.offset + static_cast<std::int64_t>(want) == c.size;
            channel.send(c.toJson());
            c.offset += static_cast<std::int64_t>(want);
            sent += static_cast<std::int64_t>(want);
        } while (!c.last);
        ::close(fd);
    }
    return sent;
}

} // namespace kf::device
