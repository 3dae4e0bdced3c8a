#include "engine/core/InstallLayout.h"

namespace fs = std::filesystem;

namespace kf {

fs::path executableDir()
{
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path() : exe.parent_path();
}

fs::path installPrefix(const fs::path& exeDir)
{
    if (exeDir.empty())
        return {};
    const fs::path dir = exeDir.lexically_normal();
    // "/usr/bin/" normalises to "/usr/bin/" (an empty last element): drop it before asking names.
    const fs::path clean = dir.has_filename() ? dir : dir.parent_path();
    fs::path prefix;
    if (clean.filename() == "bin")
        prefix = clean.parent_path();
    else if (clean.filename() == "kernelforge" && clean.parent_path().filename() == "libexec")
        prefix = clean.parent_path().parent_path();
    else
        return {};
    std::error_code ec;
    return fs::is_directory(prefix / "share" / "kernelforge", ec) ? prefix : fs::path();
}

fs::path installedPath(InstallDir dir, std::string_view relative, std::string_view buildTree, const fs::path& exeDir)
{
    const fs::path prefix = installPrefix(exeDir);
    if (prefix.empty())
        return fs::path(buildTree);
    const fs::path base = prefix / (dir == InstallDir::Data ? "share" : "libexec") / "kernelforge";
    return relative.empty() ? base : base / relative;
}

} // namespace kf
