#include "engine/compile/CompileCache.h"

#include "engine/core/Clock.h"
#include "engine/core/Files.h"
#include "engine/core/Hash.h"
#include "resources/prelude.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace kf {

namespace {

constexpr std::string_view kMagic = "KFC1";
constexpr size_t kHashChars = 32;
constexpr size_t kHeaderBytes = kMagic.size() + kHashChars;
constexpr std::string_view kEntrySuffix = ".kfc";
// A user who adds /usr/include as an include folder should not pay for a walk of the world.
constexpr size_t kMaxIncludeFiles = 10000;
constexpr int kMaxIncludeDepth = 32;
// Temp files of writers that were killed midway; a live writer finishes in well under this.
constexpr auto kStaleTempAge = std::chrono::minutes(10);

bool isHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// Keys become file names; anything but lowercase hex could escape the cache folder.
bool validKey(const std::string& key)
{
    return key.size() >= 2 && std::all_of(key.begin(), key.end(), isHex);
}

bool isShardDir(const fs::path& p)
{
    std::string n = p.filename().string();
    return n.size() == 2 && isHex(n[0]) && isHex(n[1]);
}

bool isEntryName(const std::string& name)
{
    return name.size() > kEntrySuffix.size() && name.ends_with(kEntrySuffix) &&
           std::all_of(name.begin(), name.end() - kEntrySuffix.size(), isHex);
}

bool isTempName(const std::string& name)
{
    auto p = name.find(std::string(kEntrySuffix) + ".tmp.");
    return p != std::string::npos && isEntryName(name.substr(0, p + kEntrySuffix.size()));
}

std::int64_t mtimeNs(const struct stat& st)
{
    return std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

struct EntryInfo {
    fs::path path;
    std::uint64_t bytes = 0;
    std::int64_t mtime = 0;
    bool temp = false;
};

// Every entry (and stray temp file) in the shard folders. Files may vanish while we look:
// another process evicts or replaces them, so failures to stat are skips, not errors.
std::vector<EntryInfo> listEntries(const fs::path& dir)
{
    std::vector<EntryInfo> out;
    std::error_code ec;
    for (fs::directory_iterator shard(dir, ec), end; !ec && shard != end; shard.increment(ec)) {
        if (!isShardDir(shard->path()))
            continue;
        std::error_code ec2;
        for (fs::directory_iterator it(shard->path(), ec2), e2; !ec2 && it != e2; it.increment(ec2)) {
            std::string name = it->path().filename().string();
            bool temp = isTempName(name);
            if (!temp && !isEntryName(name))
                continue;
            struct stat st {};
            if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode))
                continue;
            out.push_back({it->path(), std::uint64_t(st.st_size), mtimeNs(st), temp});
        }
    }
    return out;
}

// An exclusive advisory lock on <dir>/.lock for the lifetime of the object, so two processes
// never evict at once (each would delete down to 90% of the cap and together far more).
class DirLock {
public:
    explicit DirLock(const fs::path& dir)
    {
        m_fd = ::open((dir / ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (m_fd >= 0) {
            while (::flock(m_fd, LOCK_EX) != 0 && errno == EINTR) {
            }
        }
    }
    ~DirLock()
    {
        if (m_fd >= 0)
            ::close(m_fd); // releases the lock
    }
    DirLock(const DirLock&) = delete;
    DirLock& operator=(const DirLock&) = delete;

private:
    int m_fd = -1;
};

const std::string& preludeDigest()
{
    static const std::string digest = [] {
        Hasher h;
        auto files = prelude::files();
        h.add(std::int64_t(files.size()));
        for (const auto& f : files)
            h.add(f.name).add(f.contents);
        return h.hex();
    }();
    return digest;
}

struct IncludeWalk {
    Hasher& hasher;
    size_t files = 0;
    bool truncated = false;

    // Depth-first in sorted order, so the same tree always hashes the same way whatever order
    // the file system lists it in, and the file cap always cuts at the same place.
    void walk(const fs::path& dir, const std::string& relative, int depth)
    {
        if (depth > kMaxIncludeDepth) {
            truncated = true;
            return;
        }
        std::vector<std::string> names;
        std::error_code ec;
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
            std::string name = it->path().filename().string();
            if (!name.empty() && name[0] != '.')
                names.push_back(std::move(name));
        }
        std::sort(names.begin(), names.end());
        for (const auto& name : names) {
            if (files >= kMaxIncludeFiles) {
                truncated = true;
                return;
            }
            fs::path p = dir / name;
            std::string rel = relative.empty() ? name : relative + "/" + name;
            struct stat st {};
            // stat, not lstat: a header reached through a symlink changes when its target does.
            if (::stat(p.c_str(), &st) != 0)
                continue;
            if (S_ISDIR(st.st_mode)) {
                hasher.add(std::string_view("dir")).add(rel);
                walk(p, rel, depth + 1);
            } else if (S_ISREG(st.st_mode)) {
                ++files;
                hasher.add(std::string_view("file")).add(rel).add(std::int64_t(st.st_size)).add(mtimeNs(st));
            }
        }
    }
};

// --- Reading entries -----------------------------------------------------------------------------
// nlohmann's CBOR reader goes byte by byte (about 4 ns a byte: 250 us for a 60 KB cubin), so the
// top-level map is walked here: the blobs are sliced straight out of the payload and only the
// small fields go through nlohmann. The bytes on disk are ordinary CBOR either way.

// One CBOR head: major type and argument. Indefinite lengths and reserved values fail: our
// writer never produces them.
bool readCborHead(std::string_view d, size_t& pos, int& major, std::uint64_t& arg)
{
    if (pos >= d.size())
        return false;
    const auto b = std::uint8_t(d[pos++]);
    major = b >> 5;
    const int info = b & 31;
    if (info < 24) {
        arg = std::uint64_t(info);
        return true;
    }
    const size_t n = info == 24 ? 1 : info == 25 ? 2 : info == 26 ? 4 : info == 27 ? 8 : 0;
    if (n == 0 || d.size() - pos < n)
        return false;
    arg = 0;
    for (size_t i = 0; i < n; ++i)
        arg = (arg << 8) | std::uint8_t(d[pos++]);
    return true;
}

bool skipCborItem(std::string_view d, size_t& pos, int depth)
{
    int major = 0;
    std::uint64_t arg = 0;
    if (depth > 64 || !readCborHead(d, pos, major, arg))
        return false;
    switch (major) {
    case 2: // byte string
    case 3: // text string
        if (arg > d.size() - pos)
            return false;
        pos += size_t(arg);
        return true;
    case 4: // array; every item takes at least one byte, so a huge count fails fast
        for (std::uint64_t i = 0; i < arg; ++i)
            if (!skipCborItem(d, pos, depth + 1))
                return false;
        return true;
    case 5: // map
        for (std::uint64_t i = 0; i < arg; ++i)
            if (!skipCborItem(d, pos, depth + 1) || !skipCborItem(d, pos, depth + 1))
                return false;
        return true;
    case 6: // tag: the tagged item follows
        return skipCborItem(d, pos, depth + 1);
    default: // integers, simple values and floats: the head was all of it
        return true;
    }
}

// Returns nullopt for anything malformed; schema errors in the small fields throw.
std::optional<CompileResult> decodePayload(std::string_view payload)
{
    size_t pos = 0;
    int major = 0;
    std::uint64_t count = 0;
    if (!readCborHead(payload, pos, major, count) || major != 5)
        return std::nullopt;
    std::string small;
    std::uint64_t smallCount = 0;
    std::string_view cubin, ptx, sass;
    for (std::uint64_t i = 0; i < count; ++i) {
        const size_t keyStart = pos;
        std::uint64_t keyLen = 0;
        if (!readCborHead(payload, pos, major, keyLen) || major != 3 || keyLen > payload.size() - pos)
            return std::nullopt;
        const std::string_view key = payload.substr(pos, size_t(keyLen));
        pos += size_t(keyLen);
        std::string_view* blob = key == "cubin" ? &cubin : key == "ptx" ? &ptx : key == "sass" ? &sass : nullptr;
        if (blob) {
            std::uint64_t len = 0;
            if (!readCborHead(payload, pos, major, len) || major != (blob == &cubin ? 2 : 3) ||
                len > payload.size() - pos)
                return std::nullopt;
            *blob = payload.substr(pos, size_t(len));
            pos += size_t(len);
            continue;
        }
        if (!skipCborItem(payload, pos, 0))
            return std::nullopt;
        small.append(payload.substr(keyStart, pos - keyStart));
        ++smallCount;
    }
    if (pos != payload.size())
        return std::nullopt;
    // Re-frame the small entries as a map of their own (head: major type 5, 8-byte count).
    std::string head(1, char(0xbb));
    for (int shift = 56; shift >= 0; shift -= 8)
        head += char((smallCount >> shift) & 0xff);
    small.insert(0, head);
    CompileResult result = compileResultFromJson(nlohmann::json::from_cbor(small));
    result.cubin.assign(cubin);
    result.ptx.assign(ptx);
    result.sass.assign(sass);
    return result;
}

} // namespace

CompileCache::CompileCache(fs::path dir, std::uint64_t maxBytes)
    : m_dir(std::move(dir)), m_maxBytes(maxBytes)
{
}

fs::path CompileCache::defaultDirectory()
{
    return userCacheDir() / "compile";
}

std::string CompileCache::key(const CompileRequest& request, const std::string& nvrtcVersion)
{
    Hasher h;
    h.add(std::string_view("kernelforge compile cache"));
    h.add(std::int64_t(kCacheFormatVersion)).add(std::int64_t(kCompileResultSchemaVersion));
    h.add(nvrtcVersion);
    // The argument list, not the raw fields: two option sets NVRTC cannot tell apart share
    // entries, and any new option reaches the key the moment it reaches NVRTC.
    auto args = request.options.nvrtcArguments();
    h.add(std::int64_t(args.size()));
    for (const auto& a : args)
        h.add(a);
    h.add(request.source).add(request.fileName);
    h.add(std::int64_t(request.nameExpressions.size()));
    for (const auto& n : request.nameExpressions)
        h.add(n);
    h.add(std::int64_t(request.wantSass ? 1 : 0));
    h.add(preludeDigest());
    for (const auto& dir : request.options.includeDirs) {
        h.add(std::string_view("include dir")).add(dir);
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) {
            h.add(std::string_view("missing"));
            continue;
        }
        IncludeWalk w{h};
        w.walk(dir, "", 0);
        h.add(std::int64_t(w.files)).add(std::int64_t(w.truncated ? 1 : 0));
    }
    return h.hex();
}

fs::path CompileCache::entryPath(const std::string& key) const
{
    return m_dir / key.substr(0, 2) / (key + std::string(kEntrySuffix));
}

std::optional<CompileResult> CompileCache::load(const std::string& key) const
{
    auto t0 = std::chrono::steady_clock::now();
    if (!validKey(key))
        return std::nullopt;
    const fs::path path = entryPath(key);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return std::nullopt;
    struct stat st {};
    std::string bytes;
    bool readOk = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (readOk) {
        bytes.resize(size_t(st.st_size));
        size_t done = 0;
        while (done < bytes.size()) {
            ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            done += size_t(n);
        }
        readOk = done == bytes.size();
    }

    auto corrupt = [&]() -> std::optional<CompileResult> {
        // Only delete the file we read: a writer may have renamed a good entry over it since.
        struct stat now {};
        if (::stat(path.c_str(), &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino)
            ::unlink(path.c_str());
        ::close(fd);
        return std::nullopt;
    };
    if (!readOk || bytes.size() < kHeaderBytes || std::string_view(bytes).substr(0, kMagic.size()) != kMagic)
        return corrupt();
    std::string_view payload = std::string_view(bytes).substr(kHeaderBytes);
    if (std::string_view(bytes).substr(kMagic.size(), kHashChars) != hashHex(payload))
        return corrupt();

    std::optional<CompileResult> decoded;
    try {
        decoded = decodePayload(payload);
    } catch (...) {
        // CBOR errors are nlohmann exceptions, schema errors are json::SchemaError: all corrupt.
    }
    if (!decoded)
        return corrupt();
    CompileResult& result = *decoded;
    // Refresh the mtime through the descriptor we read: that is the LRU clock eviction uses.
    ::futimens(fd, nullptr);
    ::close(fd);
    result.fromCache = true;
    result.cacheKey = key;
    result.compileMs = msSince(t0);
    return decoded;
}

Result<void> CompileCache::store(const std::string& key, const CompileResult& result) const
{
    if (!validKey(key))
        return Error::inFile(m_dir.string(), {}, "store a compile result in the cache", "the key \"" + key + "\" is not a hex digest", "use CompileCache::key() to make keys");
    // The public JSON minus base64: a binary CBOR value keeps hits a plain memcpy.
    nlohmann::json j = toJson(result, false);
    j["ptx"] = result.ptx;
    j["sass"] = result.sass;
    j["cubin"] = nlohmann::json::binary(std::vector<std::uint8_t>(result.cubin.begin(), result.cubin.end()));
    std::vector<std::uint8_t> payload = nlohmann::json::to_cbor(j);
    std::string_view payloadView(reinterpret_cast<const char*>(payload.data()), payload.size());
    std::string bytes;
    bytes.reserve(kHeaderBytes + payload.size());
    bytes.append(kMagic).append(hashHex(payloadView)).append(payloadView);
    // Each writer has its own temp file; racing writers of one key rename identical bytes.
    Result<void> written = writeFileAtomic(entryPath(key), bytes);
    if (!written)
        return written;
    if (stats().bytes > m_maxBytes)
        evict();
    return {};
}

void CompileCache::evict() const
{
    std::error_code ec;
    if (!fs::is_directory(m_dir, ec))
        return;
    DirLock lock(m_dir);
    std::vector<EntryInfo> entries = listEntries(m_dir);
    const std::int64_t staleBefore =
        std::chrono::duration_cast<std::chrono::nanoseconds>(
            (std::chrono::system_clock::now() - kStaleTempAge).time_since_epoch())
            .count();
    std::uint64_t total = 0;
    std::vector<EntryInfo> live;
    for (auto& e : entries) {
        if (e.temp) {
            if (e.mtime < staleBefore)
                ::unlink(e.path.c_str());
            continue;
        }
        total += e.bytes;
        live.push_back(std::move(e));
    }
    // Another process may have evicted while we waited for the lock.
    if (total <= m_maxBytes)
        return;
    const std::uint64_t target = m_maxBytes / 10 * 9;
    std::sort(live.begin(), live.end(), [](const EntryInfo& a, const EntryInfo& b) {
        return a.mtime != b.mtime ? a.mtime < b.mtime : a.path < b.path;
    });
    for (const auto& e : live) {
        if (total <= target)
            break;
        if (::unlink(e.path.c_str()) == 0 || errno == ENOENT)
            total -= e.bytes;
    }
}

void CompileCache::clear() const
{
    std::error_code ec;
    if (!fs::is_directory(m_dir, ec))
        return;
    DirLock lock(m_dir);
    // Only our own files: a cache folder pointed at the wrong place must not lose anything else.
    for (const auto& e : listEntries(m_dir))
        ::unlink(e.path.c_str());
    for (fs::directory_iterator it(m_dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (isShardDir(it->path()))
            ::rmdir(it->path().c_str()); // fails harmlessly when something else lives there
    }
}

CompileCache::Stats CompileCache::stats() const
{
    Stats s;
    for (const auto& e : listEntries(m_dir)) {
        if (e.temp)
            continue;
        ++s.entries;
        s.bytes += e.bytes;
    }
    return s;
}

} // namespace kf
