#include "engine/core/MappedFile.h"

#include "engine/core/Files.h"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <utility>

namespace kf {

MappedFile::~MappedFile()
{
    if (m_data && m_size)
        ::munmap(const_cast<unsigned char*>(m_data), m_size);
}

MappedFile::MappedFile(MappedFile&& o) noexcept
    : m_data(std::exchange(o.m_data, nullptr)), m_size(std::exchange(o.m_size, 0))
{
}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept
{
    if (this != &o) {
        MappedFile old(std::move(*this));
        m_data = std::exchange(o.m_data, nullptr);
        m_size = std::exchange(o.m_size, 0);
    }
    return *this;
}

Result<MappedFile> MappedFile::open(const std::filesystem::path& file)
{
    auto fail = [&](const char* step) {
        return Error::inFile(file.string(), {}, "map " + file.string(), std::string(step) + ": " + std::strerror(errno), "check that the file exists and is readable");
    };
    // A regular file only (engine/core/Files.h): a FIFO would block the open, a device map forever.
    auto opened = openRegularFile(file);
    if (!opened) {
        Error e = opened.error();
        e.what = "map " + file.string();
        return e;
    }
    MappedFile m;
    m.m_size = static_cast<std::size_t>(opened->size());
    if (m.m_size > 0) {
        void* p = ::mmap(nullptr, m.m_size, PROT_READ, MAP_SHARED, opened->fd(), 0);
        if (p == MAP_FAILED) {
            m.m_size = 0;
            return fail("mmap failed");
        }
        m.m_data = static_cast<const unsigned char*>(p);
    }
    return m;
}

} // namespace kf
