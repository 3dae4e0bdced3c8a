#include "device/runner/CaseWriter.h"

#include "engine/core/TempFolder.h"

#include <filesystem>

namespace fs = std::filesystem;

namespace kf::device {

nlohmann::json CaseWriter::save(const CaseInfo& info, const std::vector<CaseTensorData>& tensors)
{
    std::int64_t bytes = 0;
    for (const CaseTensorData& t : tensors)
        bytes += static_cast<std::int64_t>(t.bytes) + 128; // the .npy header
    const std::string mib = std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB";
    if (m_written + bytes > m_settings.maxBytes)
        return {{"case_skipped", "tensors not saved: this case needs " + mib + " and the run's budget (max_bytes) has " +
                                     std::to_string((m_settings.maxBytes - m_written) >> 20) + " MiB left"}};
    std::error_code ec;
    fs::create_directories(m_settings.dir, ec);
    const fs::space_info space = fs::space(m_settings.dir, ec);
    if (!ec && static_cast<std::int64_t>(space.available) < 2 * bytes)
        return {{"case_skipped", "tensors not saved: the case needs " + mib + " but " + m_settings.dir + " has only " +
                                     std::to_string(space.available >> 20) + " MiB free"}};
    const std::string name = caseFolderName(info.shapeIndex, info.shape, info.trial);
    const fs::path dir = fs::path(m_settings.dir) / name;
    if (auto r = writeCase(dir, info, tensors); !r) {
        removeTree(dir);
        return {{"case_skipped", "tensors not saved: " + r.error().why}};
    }
    // What the folder really holds (case.json included) counts against the budget, so a client
    // receiving a streamed dump can hold the runner to max_bytes byte for byte.
    std::int64_t onDisk = 0;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (std::error_code fileEc; it->is_regular_file(fileEc))
            onDisk += static_cast<std::int64_t>(it->file_size(fileEc));
    if (m_written + onDisk > m_settings.maxBytes) {
        removeTree(dir);
        return {{"case_skipped", "tensors not saved: this case takes " + std::to_string((onDisk + (1 << 20) - 1) >> 20) +
                                     " MiB and the run's budget (max_bytes) has " +
                                     std::to_string((m_settings.maxBytes - m_written) >> 20) + " MiB left"}};
    }
    m_written += onDisk;
    return {{"case", name}};
}

} // namespace kf::device
