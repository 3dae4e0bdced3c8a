#include "engine/core/TempFolder.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include <system_error>

namespace kf {

namespace fs = std::filesystem;

namespace {

int removeOne(const char* path, const struct stat*, int, struct FTW*)
{
    ::remove(path);
    return 0;
}

} // namespace

TempFolder::TempFolder(const std::string& prefix)
{
    std::error_code ec;
    fs::path base = fs::temp_directory_path(ec);
    if (ec)
        base = "/tmp";
    std::string tmpl = (base / (prefix + "XXXXXX")).string();
    if (::mkdtemp(tmpl.data()))
        m_path = tmpl;
}

void removeTree(const std::filesystem::path& path)
{
    // nftw, not std::filesystem::remove_all: in the runner, LibTorch's own copy of remove_all
    // (libtorch.so exports one) wins symbol resolution and calls through a null pointer.
    // Depth first, links not followed.
    if (!path.empty())
        ::nftw(path.c_str(), removeOne, 16, FTW_DEPTH | FTW_PHYS);
}

TempFolder::~TempFolder()
{
    removeTree(m_path);
}

} // namespace kf
