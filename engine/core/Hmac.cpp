#include "engine/core/Hmac.h"

#include "engine/core/DynamicLibrary.h"
#include "engine/core/Files.h"

#include <cerrno>
#include <cstring>
#include <mutex>
#include <unistd.h>

namespace kf {

namespace {

// The two entry points of OpenSSL 3's public API that we use (openssl/hmac.h, openssl/evp.h):
// both are stable across OpenSSL 1.1 and 3.x.
using EvpMdFn = const void* (*)();
using HmacFn = unsigned char* (*)(const void* md, const void* key, int keyLen, const unsigned char* data,
                                  std::size_t dataLen, unsigned char* out, unsigned int* outLen);
using DigestFn = int (*)(const void* data, std::size_t count, unsigned char* md, unsigned int* size, const void* type,
                         void* engine);
// The incremental digest (openssl/evp.h, OpenSSL 1.1 and 3.x).
using CtxNewFn = void* (*)();
using CtxFreeFn = void (*)(void* ctx);
using DigestInitFn = int (*)(void* ctx, const void* type, void* engine);
using DigestUpdateFn = int (*)(void* ctx, const void* data, std::size_t count);
using DigestFinalFn = int (*)(void* ctx, unsigned char* md, unsigned int* size);

struct Crypto {
    DynamicLibrary lib;
    EvpMdFn sha256 = nullptr;
    HmacFn hmac = nullptr;
    DigestFn digest = nullptr;
    CtxNewFn ctxNew = nullptr;
    CtxFreeFn ctxFree = nullptr;
    DigestInitFn init = nullptr;
    DigestUpdateFn update = nullptr;
    DigestFinalFn final = nullptr;
    Error error;
    Error incrementalError;
};

const Crypto& crypto()
{
    static Crypto c;
    static std::once_flag once;
    std::call_once(once, [] {
        auto lib = DynamicLibrary::open({"libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.so"}, "OpenSSL's libcrypto",
                                        "install libssl3 (Debian, Ubuntu) or openssl-libs; it signs KernelForge's reports");
        if (!lib) {
            c.error = lib.error();
            return;
        }
        c.lib = std::move(lib.value());
        c.sha256 = reinterpret_cast<EvpMdFn>(c.lib.symbol("EVP_sha256"));
        c.hmac = reinterpret_cast<HmacFn>(c.lib.symbol("HMAC"));
        c.digest = reinterpret_cast<DigestFn>(c.lib.symbol("EVP_Digest"));
        if (!c.sha256 || !c.hmac || !c.digest)
            c.error = Error::inFile(c.lib.path(), {}, "load OpenSSL's libcrypto", c.lib.path() + " lacks EVP_sha256, EVP_Digest or HMAC", "install OpenSSL 1.1 or 3 (libssl3)");
        c.ctxNew = reinterpret_cast<CtxNewFn>(c.lib.symbol("EVP_MD_CTX_new"));
        c.ctxFree = reinterpret_cast<CtxFreeFn>(c.lib.symbol("EVP_MD_CTX_free"));
        c.init = reinterpret_cast<DigestInitFn>(c.lib.symbol("EVP_DigestInit_ex"));
        c.update = reinterpret_cast<DigestUpdateFn>(c.lib.symbol("EVP_DigestUpdate"));
        c.final = reinterpret_cast<DigestFinalFn>(c.lib.symbol("EVP_DigestFinal_ex"));
        if (!c.ctxNew || !c.ctxFree || !c.init || !c.update || !c.final)
            c.incrementalError = Error::inFile(c.lib.path(), {}, "load OpenSSL's libcrypto", c.lib.path() + " lacks EVP_MD_CTX_new or EVP_DigestUpdate", "install OpenSSL 1.1 or 3 (libssl3)");
    });
    return c;
}

} // namespace

Result<std::string> hmacSha256Hex(std::string_view key, std::string_view data)
{
    const Crypto& c = crypto();
    if (!c.hmac || !c.sha256)
        return c.error;
    unsigned char mac[64];
    unsigned int len = 0;
    static const unsigned char empty = 0;
    const auto* bytes = data.empty() ? &empty : reinterpret_cast<const unsigned char*>(data.data());
    if (!c.hmac(c.sha256(), key.data(), static_cast<int>(key.size()), bytes, data.size(), mac, &len) || len != 32)
        return Error::failed("compute HMAC-SHA256", "libcrypto's HMAC failed");
    return hexOf(mac, len);
}

Result<std::string> sha256Hex(std::string_view data)
{
    const Crypto& c = crypto();
    if (!c.digest || !c.sha256)
        return c.error;
    unsigned char md[64];
    unsigned int len = 0;
    static const unsigned char empty = 0;
    const void* bytes = data.empty() ? static_cast<const void*>(&empty) : static_cast<const void*>(data.data());
    if (!c.digest(bytes, data.size(), md, &len, c.sha256(), nullptr) || len != 32)
        return Error::failed("compute SHA-256", "libcrypto's EVP_Digest failed");
    return hexOf(md, len);
}

Sha256::Sha256()
{
    const Crypto& c = crypto();
    if (!c.sha256 || !c.ctxNew)
        return;
    m_ctx = c.ctxNew();
    if (m_ctx && !c.init(m_ctx, c.sha256(), nullptr))
        m_failed = true;
}

Sha256::~Sha256()
{
    if (m_ctx)
        crypto().ctxFree(m_ctx);
}

Result<void> Sha256::ready() const
{
    const Crypto& c = crypto();
    if (!c.sha256)
        return c.error;
    if (!c.ctxNew)
        return c.incrementalError;
    if (!m_ctx || m_failed)
        return Error::failed("compute SHA-256", "libcrypto's EVP_DigestInit_ex failed");
    return {};
}

void Sha256::update(std::string_view data)
{
    if (!m_ctx || m_failed || data.empty())
        return;
    if (!crypto().update(m_ctx, data.data(), data.size()))
        m_failed = true;
}

Result<std::string> Sha256::hex()
{
    if (auto r = ready(); !r)
        return r.error();
    unsigned char md[64];
    unsigned int len = 0;
    m_failed = true; // a digest ends the hash
    if (!crypto().final(m_ctx, md, &len) || len != 32)
        return Error::failed("compute SHA-256", "libcrypto's EVP_DigestFinal_ex failed");
    return hexOf(md, len);
}

Result<std::string> sha256OfFile(const std::string& path)
{
    Sha256 h;
    if (auto r = h.ready(); !r)
        return r.error();
    // A regular file only (engine/core/Files.h): a FIFO would block, /dev/zero never end.
    auto in = openRegularFile(path);
    if (!in)
        return in.error();
    std::string buffer(std::size_t(1) << 20, '\0');
    for (;;) {
        const ssize_t n = ::read(in->fd(), buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return Error::inFile(path, {}, "read a file", std::string("a read failed: ") + std::strerror(errno));
        if (n == 0)
            break;
        h.update(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
    }
    return h.hex();
}

std::string hexOf(const unsigned char* bytes, std::size_t n)
{
    static const char* digits = "0123456789abcdef";
    std::string hex;
    hex.reserve(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
        hex.push_back(digits[bytes[i] >> 4]);
        hex.push_back(digits[bytes[i] & 15]);
    }
    return hex;
}

bool constantTimeEquals(std::string_view a, std::string_view b)
{
    if (a.size() != b.size())
        return false;
    unsigned char diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

} // namespace kf
