#include "engine/cast/PackageFiles.h"

#include "engine/cast/CastExport.h"
#include "engine/cast/CastPackage.h"
#include "engine/core/Hmac.h"

namespace kf::cast::detail {

Error exportError(const std::string& why, std::string hint, std::string file, std::string kind)
{
    return Error::inFile(std::move(file), {}, "export a .cast package", why, std::move(hint)).withKind(std::move(kind));
}

Error badArgument(const std::string& why, std::string hint)
{
    return exportError(why, std::move(hint), {}, kCastBadArgument);
}

Result<nlohmann::json> fileEntry(const std::string& path, const std::string& bytes)
{
    auto sha = sha256Hex(bytes);
    if (!sha)
        return sha.error();
    return nlohmann::json{{"path", path}, {"sha256", sha.value()}, {"bytes", static_cast<std::int64_t>(bytes.size())}};
}

Result<void> checkEntries(std::vector<ArchiveEntry> entries, const std::string& origin)
{
    Archive mem;
    mem.entries = std::move(entries);
    auto checked = checkPackage(std::move(mem), origin);
    if (!checked)
        return checked.error();
    return {};
}

Result<void> PackageFiles::add(const std::string& path, std::string bytes)
{
    auto entry = fileEntry(path, bytes);
    if (!entry)
        return entry.error();
    m_list.push_back(std::move(entry.value()));
    m_entries.push_back({path, std::move(bytes)});
    return {};
}

Result<void> PackageFiles::write(const nlohmann::json& manifest, const std::filesystem::path& output)
{
    m_entries.insert(m_entries.begin(), ArchiveEntry{kManifestName, manifest.dump(2) + "\n"});
    if (auto checked = checkEntries(m_entries, output.string()); !checked)
        return Error::inFile(output.string(), checked.error().pointer, "export a .cast package", "the package would not pass its own check: " + checked.error().why, "this is a KernelForge bug; please report it with the registry IDs");
    return writeArchive(output, m_entries);
}

} // namespace kf::cast::detail
