#pragma once
// Where KernelForge's programs find their files: the same binaries run from a build tree (paths
// fixed at compile time) and installed under a prefix such as /usr (docs/packaging.md, "Layout").

#include <filesystem>
#include <string_view>

namespace kf {

/// The installed folders the programs look in.
enum class InstallDir {
    Data,    ///< <prefix>/share/kernelforge: examples, templates, skills, prelude, Python harnesses
    Libexec, ///< <prefix>/libexec/kernelforge: kforge-runner and kforge-cast (and their launchers)
};

/// The folder of the running program (/proc/self/exe), empty when it cannot be read.
std::filesystem::path executableDir();

/// The prefix of an installed KernelForge whose program runs from `exeDir` (`<prefix>/bin` or
/// `<prefix>/libexec/kernelforge`, and `<prefix>/share/kernelforge` is a folder); empty for a
/// program that runs from a build tree.
std::filesystem::path installPrefix(const std::filesystem::path& exeDir);

/// Where `relative` is for a program in `exeDir`. Installed: `<prefix>/share/kernelforge/<relative>`
/// (Data) or `<prefix>/libexec/kernelforge/<relative>` (Libexec), whether or not it exists, so a
/// message names the installed file rather than a build machine's. From a build tree: `buildTree`,
/// the compile-time path (KF_EXAMPLES_DIR, ...), which may be empty ("search as before").
std::filesystem::path installedPath(InstallDir dir, std::string_view relative, std::string_view buildTree,
                                    const std::filesystem::path& exeDir = executableDir());

} // namespace kf
