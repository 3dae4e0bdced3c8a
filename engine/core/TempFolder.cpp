#include "engine/core/TempFolder.h"

#include <stdlib.h>

#include <system_error>

namespace kf {

namespace fs = std::filesystem;

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

TempFolder::~TempFolder()
{
    std::error_code ec;
    if (!m_path.empty())
        fs::remove_all(m_path, ec);
}

} // namespace kf
