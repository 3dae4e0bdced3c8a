#pragma once
// A read-only memory map of a whole file, so a viewer reads a 400 MB tensor by pointer offset
// and only the pages it touches are loaded. Move-only; unmaps on destruction.

#include "engine/core/Result.h"

#include <cstddef>
#include <filesystem>

namespace kf {

class MappedFile {
public:
    MappedFile() = default;
    ~MappedFile();
    MappedFile(MappedFile&& o) noexcept;
    MappedFile& operator=(MappedFile&& o) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    static Result<MappedFile> open(const std::filesystem::path& file);

    const unsigned char* data() const { return m_data; }
    std::size_t size() const { return m_size; }

private:
    const unsigned char* m_data = nullptr;
    std::size_t m_size = 0;
};

} // namespace kf
