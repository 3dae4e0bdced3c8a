#include "engine/runner/DumpReceiver.h"

#include "engine/core/Descriptor.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kf {

namespace {

std::string sizeText(std::int64_t bytes)
{
    if (bytes < (std::int64_t(1) << 20))
        return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
    return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB";
}

Error refusal(const std::string& path, std::string why, std::string pointer, std::string hint = {})
{
    return Error::inFile(path, std::move(pointer), "receive the dump file " + path, std::move(why), std::move(hint));
}

} // namespace

DumpReceiver::DumpReceiver(fs::path dir, std::int64_t maxBytes) : m_dir(std::move(dir)), m_maxBytes(maxBytes) {}

DumpReceiver::~DumpReceiver()
{
    while (!m_open.empty())
        abandon(m_open.begin()->first);
}

void DumpReceiver::abandon(const std::string& path)
{
    auto it = m_open.find(path);
    if (it == m_open.end())
        return;
    if (it->second.fd >= 0)
        ::close(it->second.fd);
    std::error_code ec;
    fs::remove(it->second.temp, ec);
    m_promised -= it->second.size;
    m_open.erase(it);
}

Result<void> DumpReceiver::begin(const protocol::FileChunk& c)
{
    if (m_done.count(c.path))
        return refusal(c.path, "the file was sent twice", "/path");
    if (c.offset != 0)
        return refusal(c.path, "its first chunk is at offset " + std::to_string(c.offset) + ", not 0", "/offset");
    if (m_open.size() >= kMaxOpenFiles)
        return refusal(c.path, "more than " + std::to_string(kMaxOpenFiles) + " files are open at once", "/path");
    if (c.size < 0 || m_promised + c.size > m_maxBytes)
        return refusal(c.path,
                       "the dump would need " + sizeText(m_promised + c.size) + ", more than its budget of " + sizeText(m_maxBytes) +
                           " (max_bytes)",
                       "/size", "raise the dump budget (kforge --dump-max-mib) or dump fewer trials");

    // Every folder on the way is a real folder inside the dump folder: a link planted there (by
    // an earlier run, by anyone) must not carry the write elsewhere.
    std::error_code ec;
    fs::create_directories(m_dir, ec);
    if (!fs::is_directory(m_dir, ec))
        return refusal(c.path, "the dump folder " + m_dir.string() + " cannot be made", "/path",
                       "check that the folder can be written");
    const fs::path rel(c.path);
    fs::path at = m_dir;
    for (const fs::path& part : rel.parent_path()) {
        at /= part;
        const fs::file_status st = fs::symlink_status(at, ec);
        if (fs::is_symlink(st))
            return refusal(c.path, at.string() + " is a symbolic link; a dump file is written only inside the dump folder",
                           "/path", "remove the link, or dump into a new folder");
        if (fs::exists(st) && !fs::is_directory(st))
            return refusal(c.path, at.string() + " is a file, not a folder", "/path");
        if (!fs::exists(st) && !fs::create_directory(at, ec) && !fs::is_directory(fs::symlink_status(at, ec)))
            return refusal(c.path, "the folder " + at.string() + " cannot be made: " + ec.message(), "/path");
    }
    const fs::path target = m_dir / rel;
    const fs::file_status st = fs::symlink_status(target, ec);
    if (fs::is_symlink(st))
        return refusal(c.path, target.string() + " is a symbolic link; a dump file is written only inside the dump folder", "/path",
                       "remove the link, or dump into a new folder");
    if (fs::exists(st) && !fs::is_regular_file(st))
        return refusal(c.path, target.string() + " exists and is not a file", "/path");

    std::string temp = (target.parent_path() / ("." + target.filename().string() + ".kf-part-XXXXXX")).string();
    const int fd = ::mkstemp(temp.data());
    if (fd < 0)
        return refusal(c.path, "cannot write in " + target.parent_path().string() + ": " + std::strerror(errno), "/path",
                       "check that the dump folder can be written");
    ::fchmod(fd, 0644);
    Open o;
    o.target = target;
    o.temp = temp;
    o.fd = fd;
    o.size = c.size;
    m_promised += c.size;
    m_open.emplace(c.path, std::move(o));
    return {};
}

Result<void> DumpReceiver::accept(const protocol::FileChunk& c)
{
    if (std::string why = protocol::pathProblem(c.path); !why.empty())
        return refusal(c.path, why, "/path");
    auto it = m_open.find(c.path);
    if (it == m_open.end()) {
        if (auto b = begin(c); !b)
            return b;
        it = m_open.find(c.path);
    }
    Open& o = it->second;
    if (c.size != o.size) {
        abandon(c.path);
        return refusal(c.path, "a chunk says the file has " + std::to_string(c.size) + " bytes, an earlier one " + std::to_string(o.size),
                       "/size");
    }
    if (c.offset != o.received) {
        const std::int64_t expected = o.received;
        abandon(c.path);
        return refusal(c.path, "a chunk at offset " + std::to_string(c.offset) + " where " + std::to_string(expected) +
                                   " bytes had arrived (chunks come in order, each once)",
                       "/offset");
    }
    const auto n = static_cast<std::int64_t>(c.data.size());
    if (o.received + n > o.size) {
        abandon(c.path);
        return refusal(c.path, "the chunks run past the file's size " + std::to_string(o.size), "/data");
    }
    if (m_bytes + n > m_maxBytes) {
        abandon(c.path);
        return refusal(c.path, "the dump would exceed its budget of " + sizeText(m_maxBytes) + " (max_bytes)", "/size",
                       "raise the dump budget (kforge --dump-max-mib) or dump fewer trials");
    }
    if (!writeAll(o.fd, c.data)) {
        const std::string why = std::strerror(errno);
        abandon(c.path);
        return refusal(c.path, "cannot write " + o.target.string() + ": " + why, "", "free disk space where the dump goes");
    }
    o.received += n;
    m_bytes += n;
    const bool ends = o.received == o.size;
    if (c.last != ends) {
        abandon(c.path);
        return refusal(c.path, c.last ? "the last chunk ends before the file's size" : "the file is complete but its chunk is not the last",
                       "/last");
    }
    if (!c.last)
        return {};
    const bool synced = ::fsync(o.fd) == 0;
    ::close(o.fd);
    o.fd = -1;
    std::error_code ec;
    if (synced)
        fs::rename(o.temp, o.target, ec);
    if (!synced || ec) {
        const std::string why = synced ? ec.message() : std::string(std::strerror(errno));
        abandon(c.path);
        return refusal(c.path, "cannot finish " + o.target.string() + ": " + why, "", "free disk space where the dump goes");
    }
    m_done.insert(c.path);
    m_open.erase(it);
    return {};
}

Result<void> DumpReceiver::finish()
{
    if (m_open.empty())
        return {};
    const std::string path = m_open.begin()->first;
    const std::int64_t got = m_open.begin()->second.received, size = m_open.begin()->second.size;
    while (!m_open.empty())
        abandon(m_open.begin()->first);
    return refusal(path, "the runner ended the request after " + std::to_string(got) + " of its " + std::to_string(size) +
                             " bytes",
                   "");
}

} // namespace kf
