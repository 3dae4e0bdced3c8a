#include "engine/cast/CastArchive.h"

#include "engine/core/Files.h"

#include <zip.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <system_error>

namespace fs = std::filesystem;

namespace kf::cast {

namespace {

Error archiveError(const std::string& origin, const std::string& entry, std::string why, std::string hint = {})
{
    if (hint.empty())
        hint = "the package is damaged or was not written by `kforge cast export`; export it again";
    return Error::inFile(origin, entry, "read package " + origin, entry.empty() ? std::move(why) : "entry \"" + entry + "\": " + why, std::move(hint));
}

std::string libzipError(zip_error_t* e)
{
    std::string s = zip_error_strerror(e);
    return s;
}

std::string lower(std::string_view s)
{
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return out;
}

struct ZipCloser {
    void operator()(zip_t* z) const
    {
        if (z)
            zip_discard(z);
    }
};
using ZipPtr = std::unique_ptr<zip_t, ZipCloser>;

// An entry as pass 1 found it in the central directory.
struct Planned {
    zip_uint64_t index;
    std::string name;
    zip_uint64_t size;
};

/// One directory record's checks: a size, no encryption, a method a package uses, a regular
/// file, and the limits on its size and compression ratio.
Result<void> checkRecord(zip_t* za, zip_int64_t i, const zip_stat_t& st, const std::string& name, const std::string& origin,
                         const ArchiveLimits& limits)
{
    if (!(st.valid & ZIP_STAT_SIZE) || !(st.valid & ZIP_STAT_COMP_SIZE))
        return archiveError(origin, name, "its directory record has no size");
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
        return archiveError(origin, name, "it is encrypted; packages are never encrypted");
    if ((st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method != ZIP_CM_STORE && st.comp_method != ZIP_CM_DEFLATE)
        return archiveError(origin, name, "compression method " + std::to_string(st.comp_method) +
                                              " is not one a package uses (stored or deflated)");
    zip_uint8_t opsys = 0;
    zip_uint32_t attributes = 0;
    if (zip_file_get_external_attributes(za, static_cast<zip_uint64_t>(i), 0, &opsys, &attributes) == 0 &&
        opsys == ZIP_OPSYS_UNIX) {
        const mode_t mode = static_cast<mode_t>(attributes >> 16);
        if (S_ISLNK(mode))
            return archiveError(origin, name, "it is a symbolic link; a package holds only regular files");
        if ((mode & S_IFMT) != 0 && !S_ISREG(mode))
            return archiveError(origin, name, "it is not a regular file (mode " + std::to_string(mode & S_IFMT) + ")");
    }
    if (st.size > limits.maxEntryBytes)
        return archiveError(origin, name, "it unpacks to " + std::to_string(st.size) + " bytes; the limit is " +
                                              std::to_string(limits.maxEntryBytes));
    if (st.size > limits.ratioFloorBytes &&
        static_cast<double>(st.size) > limits.maxRatio * static_cast<double>(std::max<zip_uint64_t>(st.comp_size, 1)))
        return archiveError(origin, name, "it unpacks " + std::to_string(st.comp_size) + " bytes into " +
                                              std::to_string(st.size) + ", a ratio above " +
                                              std::to_string(static_cast<int>(limits.maxRatio)) +
                                              " (a zip bomb)");
    return {};
}

/// Pass 1: the central directory only. Nothing is decompressed before every entry passed.
Result<std::vector<Planned>> planEntries(zip_t* za, zip_int64_t count, const std::string& origin, const ArchiveLimits& limits)
{
    std::vector<Planned> planned;
    std::map<std::string, std::string> seen;   // lower-cased name -> name
    std::uint64_t total = 0, compressed = 0;
    for (zip_int64_t i = 0; i < count; ++i) {
        zip_stat_t st;
        zip_stat_init(&st);
        if (zip_stat_index(za, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW, &st) != 0)
            return archiveError(origin, "#" + std::to_string(i), "libzip cannot read its directory record: " +
                                                                     libzipError(zip_get_error(za)));
        const std::string name = (st.valid & ZIP_STAT_NAME) && st.name ? st.name : std::string();
        const std::string label = name.empty() ? "#" + std::to_string(i) : name;
        if (std::string why = entryNameProblem(name, limits); !why.empty())
            return archiveError(origin, label, why);
        const std::string key = lower(name);
        if (auto it = seen.find(key); it != seen.end())
            return archiveError(origin, name, it->second == name ? "the name appears twice"
                                                                 : "the name differs from \"" + it->second +
                                                                       "\" only in case (two entries would land on one file)");
        seen.emplace(key, name);
        if (auto r = checkRecord(za, i, st, name, origin, limits); !r)
            return r.error();
        total += st.size;
        if (total > limits.maxTotalBytes)
            return archiveError(origin, name, "the entries so far unpack to " + std::to_string(total) +
                                                  " bytes; a package may unpack to at most " +
                                                  std::to_string(limits.maxTotalBytes));
        compressed += st.comp_size;
        planned.push_back({static_cast<zip_uint64_t>(i), name, st.size});
    }
    // Many small entries can each stay under the per-entry ratio (or share compressed data):
    // the whole archive is held to the same ratio once it unpacks to more than 64 MiB.
    if (total > (std::uint64_t(64) << 20) &&
        static_cast<double>(total) > limits.maxRatio * static_cast<double>(std::max<std::uint64_t>(compressed, 1)))
        return archiveError(origin, {}, "its entries unpack " + std::to_string(compressed) + " bytes into " +
                                            std::to_string(total) + ", a ratio above " +
                                            std::to_string(static_cast<int>(limits.maxRatio)) + " (a zip bomb)");
    return planned;
}

/// Pass 2 for one entry: decompressed, never more than the declared size (libzip checks the CRC
/// at the end).
Result<ArchiveEntry> unpack(zip_t* za, const Planned& p, const std::string& origin)
{
    zip_file_t* zf = zip_fopen_index(za, p.index, 0);
    if (!zf)
        return archiveError(origin, p.name, "libzip cannot open it: " + libzipError(zip_get_error(za)));
    ArchiveEntry e;
    e.name = p.name;
    e.bytes.resize(static_cast<std::size_t>(p.size));
    std::uint64_t got = 0;
    bool failed = false;
    while (got < p.size) {
        const zip_int64_t n = zip_fread(zf, e.bytes.data() + got, p.size - got);
        if (n < 0) {
            failed = true;
            break;
        }
        if (n == 0)
            break;
        got += static_cast<std::uint64_t>(n);
    }
    std::string why;
    if (failed)
        why = "it cannot be unpacked: " + libzipError(zip_file_get_error(zf));
    else if (got != p.size)
        why = "it unpacks to " + std::to_string(got) + " bytes, not the " + std::to_string(p.size) + " its record declares";
    else {
        char extra = 0;
        const zip_int64_t more = zip_fread(zf, &extra, 1);
        if (more > 0)
            why = "it unpacks to more than the " + std::to_string(p.size) + " bytes its record declares";
        else if (more < 0)
            why = "it cannot be unpacked: " + libzipError(zip_file_get_error(zf));
    }
    zip_fclose(zf);
    if (!why.empty())
        return archiveError(origin, p.name, why);
    return e;
}

Result<Archive> readOpen(zip_t* za, const std::string& origin, const ArchiveLimits& limits)
{
    const zip_int64_t count = zip_get_num_entries(za, 0);
    if (count < 0)
        return archiveError(origin, {}, "libzip cannot count its entries");
    if (count == 0)
        return archiveError(origin, {}, "the archive is empty");
    if (static_cast<std::uint64_t>(count) > limits.maxEntries)
        return archiveError(origin, {}, "it has " + std::to_string(count) + " entries; a package may have at most " +
                                            std::to_string(limits.maxEntries));
    auto planned = planEntries(za, count, origin, limits);
    if (!planned)
        return planned.error();
    Archive out;
    out.entries.reserve(planned->size());
    for (const Planned& p : *planned) {
        auto e = unpack(za, p, origin);
        if (!e)
            return e.error();
        out.entries.push_back(std::move(e.value()));
    }
    return out;
}

} // namespace

const ArchiveEntry* Archive::find(std::string_view name) const
{
    for (const auto& e : entries)
        if (e.name == name)
            return &e;
    return nullptr;
}

std::string entryNameProblem(std::string_view name, const ArchiveLimits& limits)
{
    if (name.empty())
        return "the entry has no name";
    if (name.size() > limits.maxNameBytes)
        return "the name is " + std::to_string(name.size()) + " bytes long; the limit is " +
               std::to_string(limits.maxNameBytes);
    for (unsigned char c : name)
        if (c < 0x20 || c == 0x7f)
            return "the name contains a control character";
    if (name.find('\\') != std::string_view::npos)
        return "the name contains a backslash (a Windows path separator)";
    if (name.front() == '/')
        return "the name is an absolute path";
    if (name.size() >= 2 && name[1] == ':')
        return "the name starts with a drive letter";
    if (name.back() == '/')
        return "it is a directory entry; a package lists files only";
    std::size_t start = 0;
    while (start <= name.size()) {
        std::size_t end = name.find('/', start);
        if (end == std::string_view::npos)
            end = name.size();
        std::string_view part = name.substr(start, end - start);
        if (part.empty())
            return "the name has an empty path component (\"//\")";
        if (part == "..")
            return "the name climbs out of the package (\"..\")";
        if (part == ".")
            return "the name has a \".\" component";
        start = end + 1;
    }
    return {};
}

Result<Archive> readArchive(const fs::path& file, const ArchiveLimits& limits)
{
    std::error_code ec;
    const auto status = fs::symlink_status(file, ec);
    if (ec || !fs::exists(status))
        return Error::inFile(file.string(), {}, "read package " + file.string(), "the file does not exist", "check the path").withKind(kCastNoSuchFile);
    if (fs::is_symlink(status) ? !fs::is_regular_file(fs::status(file, ec)) : !fs::is_regular_file(status))
        return Error::inFile(file.string(), {}, "read package " + file.string(), "it is not a regular file", "pass a .cast file").withKind(kCastNoSuchFile);
    // Through a descriptor checked to be a regular file (engine/core/Files.h): a FIFO or a device
    // put in the file's place after the checks above is refused, not opened blocking.
    auto openZip = [&](int flags, int* err) -> ZipPtr {
        auto opened = openRegularFile(file);
        if (!opened) {
            *err = ZIP_ER_OPEN;
            return nullptr;
        }
        ZipPtr za(zip_fdopen(opened->fd(), flags, err));
        if (za)
            opened->release(); // libzip closes it now
        return za;
    };
    int err = 0;
    ZipPtr za = openZip(ZIP_CHECKCONS, &err);
    if (!za && err == ZIP_ER_EXISTS) {
        // Two entries share a name: open without the consistency checks so pass 1 names them.
        int looseErr = 0;
        ZipPtr loose = openZip(0, &looseErr);
        if (loose) {
            auto named = readOpen(loose.get(), file.string(), limits);
            if (!named)
                return named.error();
        }
    }
    if (!za) {
        zip_error_t e;
        zip_error_init_with_code(&e, err);
        std::string why = "it is not a readable zip archive: " + libzipError(&e);
        zip_error_fini(&e);
        return Error::inFile(file.string(), {}, "read package " + file.string(), why, "a .cast package is a zip archive written by `kforge cast export`");
    }
    return readOpen(za.get(), file.string(), limits);
}

Result<Archive> readArchiveBytes(std::string_view bytes, const std::string& origin, const ArchiveLimits& limits)
{
    auto open = [&](int flags, zip_error_t* e) -> ZipPtr {
        zip_source_t* src = zip_source_buffer_create(bytes.data(), bytes.size(), 0, e);
        if (!src)
            return nullptr;
        ZipPtr za(zip_open_from_source(src, flags, e));
        if (!za)
            zip_source_free(src);
        return za;
    };
    zip_error_t e;
    zip_error_init(&e);
    ZipPtr za = open(ZIP_RDONLY | ZIP_CHECKCONS, &e);
    if (!za && zip_error_code_zip(&e) == ZIP_ER_EXISTS) {
        zip_error_t e2;
        zip_error_init(&e2);
        ZipPtr loose = open(ZIP_RDONLY, &e2);
        zip_error_fini(&e2);
        if (loose) {
            auto named = readOpen(loose.get(), origin, limits);
            if (!named) {
                zip_error_fini(&e);
                return named.error();
            }
        }
    }
    if (!za) {
        std::string why = "it is not a readable zip archive: " + libzipError(&e);
        zip_error_fini(&e);
        return Error::inFile(origin, {}, "read package " + origin, why, "a .cast package is a zip archive written by `kforge cast export`");
    }
    zip_error_fini(&e);
    return readOpen(za.get(), origin, limits);
}

Result<void> writeArchive(const fs::path& file, const std::vector<ArchiveEntry>& entries)
{
    const std::string what = "write package " + file.string();
    const fs::path tmp = file.string() + ".tmp." + std::to_string(::getpid());
    std::error_code ec;
    fs::remove(tmp, ec);
    int err = 0;
    zip_t* za = zip_open(tmp.c_str(), ZIP_CREATE | ZIP_EXCL, &err);
    if (!za) {
        zip_error_t e;
        zip_error_init_with_code(&e, err);
        std::string why = libzipError(&e);
        zip_error_fini(&e);
        return Error::inFile(file.string(), {}, what, "cannot create " + tmp.string() + ": " + why, "check that the folder exists and is writable");
    }
    auto fail = [&](const std::string& entry, std::string why) -> Result<void> {
        zip_discard(za);
        fs::remove(tmp, ec);
        return Error::inFile(file.string(), {}, what, entry.empty() ? why : "entry \"" + entry + "\": " + why);
    };
    for (const auto& e : entries) {
        if (std::string why = entryNameProblem(e.name); !why.empty())
            return fail(e.name, why);
        zip_source_t* src = zip_source_buffer(za, e.bytes.data(), e.bytes.size(), 0);
        if (!src)
            return fail(e.name, libzipError(zip_get_error(za)));
        const zip_int64_t idx = zip_file_add(za, e.name.c_str(), src, ZIP_FL_ENC_UTF_8);
        if (idx < 0) {
            zip_source_free(src);
            return fail(e.name, libzipError(zip_get_error(za)));
        }
        // Regular file, rw-r--r--: readers refuse links and devices.
        zip_file_set_external_attributes(za, static_cast<zip_uint64_t>(idx), 0, ZIP_OPSYS_UNIX,
                                         static_cast<zip_uint32_t>(S_IFREG | 0644) << 16);
        zip_set_file_compression(za, static_cast<zip_uint64_t>(idx), ZIP_CM_DEFLATE, 9);
    }
    if (zip_close(za) != 0) {
        std::string why = libzipError(zip_get_error(za));
        zip_discard(za);
        fs::remove(tmp, ec);
        return Error::inFile(file.string(), {}, what, why, "check free space and permissions");
    }
    fs::rename(tmp, file, ec);
    if (ec) {
        fs::remove(tmp, ec);
        return Error::inFile(file.string(), {}, what, "cannot move it into place: " + ec.message(), "check permissions");
    }
    return {};
}

} // namespace kf::cast
