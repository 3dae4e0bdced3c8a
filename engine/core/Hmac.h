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

/// `n` bytes as 2n lowercase hex digits.
std::string hexOf(const unsigned char* bytes, std::size_t n);

/// Compares two strings in time that depends only on their lengths (for MAC comparisons).
bool constantTimeEquals(std::string_view a, std::string_view b);

} // namespace kf
