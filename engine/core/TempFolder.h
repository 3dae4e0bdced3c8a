#pragma once
// A private temporary folder (mkdtemp: created 0700 with an unpredictable name, since a name in
// /tmp that others can guess could be planted) removed with everything in it on every way out.

#include <filesystem>
#include <string>

namespace kf {

/// Removes `path` and everything under it (links are removed, not followed). Use it instead of
/// std::filesystem::remove_all in code the runner runs: LibTorch exports its own remove_all, which
/// crashes when it is the one the loader picks (seen on the H100 server).
void removeTree(const std::filesystem::path& path);

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
