#pragma once
// Content-addressed disk cache of compile results.
//
// Key: our cache format version, the NVRTC version, the architecture, every option, the source,
// the embedded prelude headers and the user's include folders (file names, sizes and mtimes),
// and the name expressions. Entries are CBOR, written atomically (temp + rename) and prefixed
// with a hash of their payload, so a torn or corrupt file is detected, deleted and rebuilt.
// Safe for concurrent processes: writers never share a temp file, eviction runs under an
// advisory file lock, readers tolerate entries vanishing. Size-capped; least recently used
// entries are evicted first (a hit refreshes the entry's mtime).

#include "engine/compile/CompileTypes.h"
#include "engine/core/Result.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace kf {

inline constexpr int kCacheFormatVersion = 3; // 2: SASS carries inlined-at line info (nvdisasm -gi); 3: ptxas and name-map diagnostics at their source

class CompileCache {
public:
    /// `dir` is created on first store. `maxBytes` is the size cap (default 512 MiB).
    explicit CompileCache(std::filesystem::path dir, std::uint64_t maxBytes = 512ull << 20);

    /// The default location: $XDG_CACHE_HOME/kernelforge/compile (or ~/.cache/...).
    static std::filesystem::path defaultDirectory();

    /// The key for a request built with a given NVRTC version (see header comment).
    static std::string key(const CompileRequest& request, const std::string& nvrtcVersion);

    /// A hit returns the stored result (fromCache = true). A corrupt entry is removed and
    /// reported as a miss.
    std::optional<CompileResult> load(const std::string& key) const;
    Result<void> store(const std::string& key, const CompileResult& result) const;

    /// Removes least-recently-used entries until the cache is under its cap.
    void evict() const;
    void clear() const;

    struct Stats {
        std::uint64_t entries = 0;
        std::uint64_t bytes = 0;
    };
    Stats stats() const;

    const std::filesystem::path& directory() const { return m_dir; }
    std::filesystem::path entryPath(const std::string& key) const;

private:
    std::filesystem::path m_dir;
    std::uint64_t m_maxBytes;
};

} // namespace kf
