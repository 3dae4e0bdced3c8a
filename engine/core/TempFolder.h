#pragma once
// A private temporary folder (mkdtemp: created 0700 with an unpredictable name, since a name in
// /tmp that others can guess could be planted) removed with everything in it on every way out.

#include <filesystem>
#include <string>

namespace kf {

class TempFolder {
public:
    /// Creates <$TMPDIR or /tmp>/<prefix>XXXXXX; path() is empty when that fails.
    explicit TempFolder(const std::string& prefix);
    ~TempFolder();
    TempFolder(const TempFolder&) = delete;
    TempFolder& operator=(const TempFolder&) = delete;

    const std::filesystem::path& path() const { return m_path; }

private:
    std::filesystem::path m_path;
};

} // namespace kf
