#include "engine/protocol/Signature.h"

#include "engine/core/Hmac.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <pwd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kf::protocol {

namespace {

constexpr const char* kAlgorithm = "hmac-sha256";
constexpr const char* kDomain = "kernelforge-signature-v1\n";

Error keyError(const fs::path& file, std::string why, std::string hint)
{
    return Error::inFile(file.string(), {}, "read the report signing key", std::move(why), std::move(hint));
}

bool isHex(const std::string& s, std::size_t n)
{
    if (s.size() != n)
        return false;
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    return true;
}

std::string fromHex(const std::string& hex)
{
    std::string bytes;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    return bytes;
}

// What is signed: the document without its signature, compact, keys sorted (nlohmann::json
// keeps objects in a std::map), invalid UTF-8 replaced as every writer of ours replaces it.
std::string signedBytes(const nlohmann::json& document)
{
    if (!document.is_object())
        return kDomain + document.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    nlohmann::json copy = document;
    copy.erase("signature");
    return kDomain + copy.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<std::string> keyIdOf(const std::string& secret)
{
    auto mac = hmacSha256Hex(secret, "kernelforge key id");
    if (!mac)
        return mac.error();
    return mac->substr(0, 16);
}

Result<SigningKey> readKey(const fs::path& file)
{
    // Opened without following a link and checked on the descriptor: what is checked is what is
    // read, even if somebody swaps the path in between.
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return keyError(file, errno == ELOOP ? std::string("it is a symbolic link; the key must be a file of its own")
                                             : std::string("cannot read it: ") + std::strerror(errno),
                        errno == ELOOP ? "replace the link with the key file itself" : "");
    struct stat st {};
    std::string text;
    const bool statted = ::fstat(fd, &st) == 0;
    if (statted && S_ISREG(st.st_mode) && st.st_size <= 1024) {
        char buffer[1025];
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n > 0)
            text.assign(buffer, static_cast<std::size_t>(n));
    }
    ::close(fd);
    if (!statted || !S_ISREG(st.st_mode))
        return keyError(file, "it is not a regular file", "remove it; KernelForge makes a new key on the next run");
    if (st.st_uid != ::geteuid())
        return keyError(file, "it belongs to another user", "use a key of your own: remove it, or set KF_REPORT_KEY");
    if (st.st_mode & (S_IRWXG | S_IRWXO))
        return keyError(file, "other users can read or write it, so they could sign reports as you",
                        "chmod 600 " + file.string());
    // Nobody else may replace the key either: its folder must not be writable by others.
    struct stat parent {};
    if (::stat(file.parent_path().c_str(), &parent) == 0 && (parent.st_mode & (S_IWGRP | S_IWOTH)) &&
        !(parent.st_mode & S_ISVTX))
        return keyError(file, "its folder " + file.parent_path().string() + " is writable by other users, who could replace it",
                        "chmod go-w " + file.parent_path().string() + ", or set KF_REPORT_KEY to a file in a private folder");
    std::string hex = text;
    while (!hex.empty() && (hex.back() == '\n' || hex.back() == '\r' || hex.back() == ' '))
        hex.pop_back();
    if (!isHex(hex, 64))
        return keyError(file, "it is not 64 lowercase hex digits",
                        "remove it; KernelForge makes a new key on the next run (reports signed with the old one "
                        "can then no longer be checked)");
    SigningKey key;
    key.secret = fromHex(hex);
    key.file = file;
    auto id = keyIdOf(key.secret);
    if (!id)
        return id.error();
    key.id = id.value();
    return key;
}

Result<void> createKey(const fs::path& file)
{
    auto failed = [&](const std::string& why) {
        return Error::inFile(file.string(), {}, "create the report signing key", why, "set KF_REPORT_KEY to a file in a folder you can write");
    };
    std::error_code ec;
    const fs::path folder = file.parent_path();
    const bool made = !fs::exists(folder, ec);
    fs::create_directories(folder, ec);
    if (ec)
        return failed("cannot create " + folder.string() + ": " + ec.message());
    if (made) // a folder of our own: private
        fs::permissions(folder, fs::perms::owner_all, fs::perm_options::replace, ec);
    unsigned char secret[32];
    std::size_t got = 0;
    while (got < sizeof secret) {
        const ssize_t n = ::getrandom(secret + got, sizeof secret - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return failed(std::string("getrandom failed: ") + std::strerror(errno));
        got += static_cast<std::size_t>(n);
    }
    const std::string text = hexOf(secret, sizeof secret) + "\n";
    // A private temporary of a unique name (mkstemp: 0600), then link(): the key appears whole or
    // not at all, and of two processes creating it at once the second finds the first one's
    // (EEXIST) and uses it.
    std::string tmp = file.string() + ".tmp.XXXXXX";
    const int fd = ::mkstemp(tmp.data());
    if (fd < 0)
        return failed("cannot write a temporary file beside it: " + std::string(std::strerror(errno)));
    const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
    ::close(fd);
    if (!written) {
        ::unlink(tmp.c_str());
        return failed("cannot write " + tmp);
    }
    const int linked = ::link(tmp.c_str(), file.c_str());
    const int linkErrno = errno;
    if (linked != 0 && (linkErrno == EPERM || linkErrno == ENOTSUP || linkErrno == EOPNOTSUPP)) {
        // A file system without hard links: create it exclusively instead (a reader racing the
        // write may see it short, and says so).
        ::unlink(tmp.c_str());
        const int out = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (out < 0)
            return errno == EEXIST ? Result<void>() : failed(std::string("cannot create it: ") + std::strerror(errno));
        const bool ok = ::write(out, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(out) == 0;
        ::close(out);
        return ok ? Result<void>() : failed("cannot write it");
    }
    ::unlink(tmp.c_str());
    if (linked != 0 && linkErrno != EEXIST)
        return failed(std::string("cannot create it: ") + std::strerror(linkErrno));
    return {};
}

} // namespace

fs::path signingKeyPath()
{
    if (const char* k = std::getenv("KF_REPORT_KEY"); k && *k)
        return fs::path(k);
    if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x)
        return fs::path(x) / "KernelForge" / "report-key";
    const char* home = std::getenv("HOME");
    if (!home || !*home) {
        // Never a shared folder such as /tmp: the account's own home.
        const passwd* pw = ::getpwuid(::geteuid());
        home = pw && pw->pw_dir && *pw->pw_dir ? pw->pw_dir : nullptr;
    }
    if (!home)
        return {};
    return fs::path(home) / ".config" / "KernelForge" / "report-key";
}

Result<SigningKey> loadSigningKey(bool create)
{
    const fs::path file = signingKeyPath();
    if (file.empty())
        return Error::failed("find the report signing key", "this account has no home folder", "set KF_REPORT_KEY to a private file");
    std::error_code ec;
    if (create && !fs::exists(fs::symlink_status(file, ec)))
        if (auto made = createKey(file); !made)
            return made.error();
    return readKey(file);
}

Result<void> signDocument(nlohmann::json& document, const SigningKey& key)
{
    if (!document.is_object())
        return Error::failed("sign a document", "only a JSON object can carry a signature");
    auto mac = hmacSha256Hex(key.secret, signedBytes(document));
    if (!mac)
        return mac.error();
    document["signature"] = {{"algorithm", kAlgorithm}, {"key_id", key.id}, {"value", mac.value()}};
    return {};
}

SignatureCheck checkSignature(const nlohmann::json& document, const SigningKey* key, const std::string& keyProblem)
{
    using S = SignatureState;
    if (!document.is_object() || !document.contains("signature"))
        return {S::Unsigned, "not signed"};
    const nlohmann::json& s = document["signature"];
    if (!s.is_object() || !s.contains("algorithm") || !s.contains("key_id") || !s.contains("value") ||
        !s["algorithm"].is_string() || !s["key_id"].is_string() || !s["value"].is_string() ||
        s["algorithm"].get<std::string>() != kAlgorithm || !isHex(s["key_id"].get<std::string>(), 16) ||
        !isHex(s["value"].get<std::string>(), 64))
        return {S::Malformed, "its \"signature\" is not one KernelForge writes"};
    const std::string keyId = s["key_id"].get<std::string>();
    if (!key)
        return {S::NoKey, "signed with key " + keyId + ", but there is no key here to check it with" +
                              (keyProblem.empty() ? std::string() : " (" + keyProblem + ")")};
    if (keyId != key->id)
        return {S::OtherKey, "signed with key " + keyId + ", not this user's key " + key->id};
    auto mac = hmacSha256Hex(key->secret, signedBytes(document));
    if (!mac)
        return {S::NoKey, "cannot be checked: " + mac.error().why};
    if (!constantTimeEquals(mac.value(), s["value"].get<std::string>()))
        return {S::Altered, "changed after it was signed (its signature does not match its contents)"};
    return {S::Valid, "signed with key " + keyId};
}

const char* signatureStateName(SignatureState s)
{
    switch (s) {
    case SignatureState::Valid: return "signed";
    case SignatureState::Unsigned: return "unsigned";
    case SignatureState::Altered: return "altered";
    case SignatureState::OtherKey: return "other key";
    case SignatureState::Malformed: return "malformed";
    case SignatureState::NoKey: return "no key";
    }
    return "unknown";
}

} // namespace kf::protocol
