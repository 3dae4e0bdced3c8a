#pragma once
// HMAC-SHA256 and SHA-256 from OpenSSL's libcrypto, loaded at run time like libnvrtc and libcuda: no OpenSSL
// headers are needed to build, and a machine without libcrypto still runs everything except
// signing, which then says why (docs/reliability.md, "Signed reports").

#include "engine/core/Result.h"

#include <cstddef>
#include <string>
#include <string_view>

namespace kf {

/// HMAC-SHA256 of `data` under `key`, as 64 lowercase hex digits; an Error when libcrypto
/// (libcrypto.so.3) cannot be loaded.
Result<std::string> hmacSha256Hex(std::string_view key, std::string_view data);

/// SHA-256 of `data` as 64 lowercase hex digits (the .cast packages' file hashes); an Error
/// when libcrypto cannot be loaded.
Result<std::string> sha256Hex(std::string_view data);

/// SHA-256 over data given in pieces (a file read in chunks, a blob received in chunks), with the
/// same libcrypto as sha256Hex: hex() of the pieces equals sha256Hex of them joined.
class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;

    /// An Error when libcrypto cannot be loaded (then update() and hex() return it too).
    Result<void> ready() const;
    void update(std::string_view data);
    /// The digest of everything given so far, as 64 lowercase hex digits; ends the hash.
    Result<std::string> hex();

private:
    void* m_ctx = nullptr;
    bool m_failed = false;
};

/// SHA-256 of a whole file, read in pieces (never held in memory at once).
Result<std::string> sha256OfFile(const std::string& path);

/// `n` bytes as 2n lowercase hex digits.
std::string hexOf(const unsigned char* bytes, std::size_t n);

/// Compares two strings in time that depends only on their lengths (for MAC comparisons).
bool constantTimeEquals(std::string_view a, std::string_view b);

} // namespace kf
