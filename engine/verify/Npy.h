#pragma once
// NumPy .npy files (format 1.0, 2.0 read): how the runner saves the tensors of a failing case
// and how the inspector reads them back. Readable outside KernelForge with
// numpy.load(f, mmap_mode="r"). See docs/tensor-files.md.
//
// Only what we write is accepted: little-endian, C order, the dtypes of engine/task/DType.h.
// bf16 has no NumPy dtype; it is stored as "<u2" (the raw bits), and since KernelForge has no
// uint16 type, "<u2" always reads back as bf16.

#include "engine/core/MappedFile.h"
#include "engine/core/Result.h"
#include "engine/task/DType.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kf {

struct NpyHeader {
    DType dtype = DType::F32;
    std::vector<std::int64_t> extents;   ///< empty for a 0-d array (one element)
    std::size_t dataOffset = 0;          ///< bytes before the data; a multiple of 64 for our files
    std::int64_t elements = 1;
    std::size_t dataBytes() const { return static_cast<std::size_t>(elements) * static_cast<std::size_t>(dtypeSize(dtype)); }
};

/// "<f4", "<u2" (bf16), "|b1"...
std::string_view npyDescr(DType t);

/// The header bytes for an array (magic, version 1.0, dict, padding to 64 bytes).
std::string npyHeaderBytes(DType t, const std::vector<std::int64_t>& extents);

/// Writes `bytes` (C order, native little-endian) as `file`, atomically. `bytes` must equal
/// the element count times the element size.
Result<void> writeNpy(const std::filesystem::path& file, DType t, const std::vector<std::int64_t>& extents,
                      const void* data, std::size_t bytes);

/// Parses and checks the header of a file's first bytes; `fileSize` must cover the data.
/// `file` only names the file in errors.
Result<NpyHeader> parseNpyHeader(const unsigned char* bytes, std::size_t fileSize, const std::string& file);

/// A mapped .npy file: the header plus a pointer to its elements.
class NpyFile {
public:
    static Result<NpyFile> open(const std::filesystem::path& file);
    const NpyHeader& header() const { return m_header; }
    const unsigned char* data() const { return m_map.data() + m_header.dataOffset; }
    const unsigned char* element(std::int64_t flat) const { return data() + flat * dtypeSize(m_header.dtype); }

private:
    MappedFile m_map;
    NpyHeader m_header;
};

/// The whole data of a .npy file, copied, after checking its dtype and extents against what
/// the caller expects (the runner reading repro inputs).
Result<std::vector<unsigned char>> readNpyExpecting(const std::filesystem::path& file, DType t,
                                                    const std::vector<std::int64_t>& extents);

} // namespace kf
