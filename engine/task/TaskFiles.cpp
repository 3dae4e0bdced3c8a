#include "engine/task/TaskFiles.h"

namespace fs = std::filesystem;

namespace kf {

Result<fs::path> resolveTaskFile(const fs::path& taskDir, const fs::path& relative)
{
    const fs::path spelled = taskDir / relative;
    std::error_code ec;
    const fs::path root = fs::weakly_canonical(taskDir.empty() ? fs::path(".") : taskDir, ec);
    const fs::path real = fs::weakly_canonical(spelled, ec);
    if (!ec && isInsideFolder(real, root) && real != root)
        return real;
    const std::string name = relative.generic_string();
    std::string why;
    if (ec)
        why = "cannot resolve " + name + ": " + ec.message();
    else if (fs::is_symlink(fs::symlink_status(spelled, ec)))
        why = name + " is a symbolic link to " + real.string() + ", outside the task folder " + root.string();
    else if (real == root)
        why = name + " names the task folder itself, not a file in it";
    else
        why = name + " leads to " + real.string() + ", outside the task folder " + root.string() +
              (relative.is_absolute() || name.find("..") != std::string::npos ? "" : " (a folder on its way is a symbolic link)");
    return Error::inFile(spelled.string(), {}, "read " + name, why, "copy the file into the task folder; a task reads only its own files");
}

Result<std::string> readTaskFile(const fs::path& taskDir, const fs::path& relative, std::size_t maxBytes)
{
    auto real = resolveTaskFile(taskDir, relative);
    if (!real)
        return real.error();
    auto bytes = readFileBytes(*real, maxBytes);
    if (!bytes) {
        Error e = bytes.error();
        e.what = "read " + relative.generic_string();
        e.file = (taskDir / relative).string();
        return e;
    }
    return bytes;
}

} // namespace kf
