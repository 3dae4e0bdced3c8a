#pragma once
// Base64 (RFC 4648, standard alphabet, '=' padding): cubins travel inside JSON (compile cache,
// `kforge compile --json`, runner requests), and JSON has no bytes type.

#include <string>
#include <string_view>

namespace kf {

std::string base64Encode(std::string_view in);

/// Strict: length a multiple of 4, padding only at the end, no whitespace. Returns false (and
/// leaves `out` unspecified) on anything else.
bool base64Decode(std::string_view in, std::string& out);

} // namespace kf
