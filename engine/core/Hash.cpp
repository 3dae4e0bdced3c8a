#include "engine/core/Hash.h"

#include <xxhash.h>

#include <cstdio>

namespace kf {

Hasher::Hasher() : m_state(XXH3_createState())
{
    XXH3_128bits_reset(static_cast<XXH3_state_t*>(m_state));
}

Hasher::~Hasher()
{
    XXH3_freeState(static_cast<XXH3_state_t*>(m_state));
}

Hasher& Hasher::add(std::string_view bytes)
{
    auto n = static_cast<std::uint64_t>(bytes.size());
    XXH3_128bits_update(static_cast<XXH3_state_t*>(m_state), &n, sizeof n);
    XXH3_128bits_update(static_cast<XXH3_state_t*>(m_state), bytes.data(), bytes.size());
    return *this;
}

Hasher& Hasher::add(std::int64_t value)
{
    XXH3_128bits_update(static_cast<XXH3_state_t*>(m_state), &value, sizeof value);
    return *this;
}

static std::string toHex(XXH128_hash_t h)
{
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                  static_cast<unsigned long long>(h.low64));
    return buf;
}

std::string Hasher::hex()
{
    return toHex(XXH3_128bits_digest(static_cast<XXH3_state_t*>(m_state)));
}

std::string hashHex(std::string_view bytes)
{
    return toHex(XXH3_128bits(bytes.data(), bytes.size()));
}

} // namespace kf
