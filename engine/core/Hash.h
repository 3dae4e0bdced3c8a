#pragma once
// Content hashing (xxHash XXH3-128): cache keys, source hashes for evidence, torn-file checks.
// Not a security boundary; collisions are astronomically unlikely for our sizes.

#include <cstdint>
#include <string>
#include <string_view>

namespace kf {

/// Incremental hasher. Each add() is length-prefixed so ("ab","c") != ("a","bc").
class Hasher {
public:
    Hasher();
    ~Hasher();
    Hasher(const Hasher&) = delete;
    Hasher& operator=(const Hasher&) = delete;

    Hasher& add(std::string_view bytes);
    Hasher& add(std::int64_t value);
    /// 32 lowercase hex digits.
    std::string hex();

private:
    void* m_state;
};

/// XXH3-128 of `bytes` as 32 hex digits.
std::string hashHex(std::string_view bytes);

} // namespace kf
