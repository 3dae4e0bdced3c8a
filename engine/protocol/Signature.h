#pragma once
// Signed documents (docs/reliability.md, "Signed reports"). The runner signs every report it
// writes and the registry signs every promotion.json, with HMAC-SHA256 under a key that belongs
// to the user and lives outside every workspace and task folder. A report that a candidate's
// author, an agent or a model edited (or wrote from scratch) no longer carries a valid
// signature, and promotion refuses it unless the user says otherwise.
//
// The signature is a member of the document itself:
//   "signature": {"algorithm": "hmac-sha256", "key_id": "<16 hex>", "value": "<64 hex>"}
// over "kernelforge-signature-v1\n" + the document without "signature", dumped compactly with
// sorted keys (nlohmann's dump), so re-reading and re-writing a file does not change it.

#include "engine/core/Result.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace kf::protocol {

struct SigningKey {
    std::string secret;               ///< 32 random bytes
    std::string id;                   ///< 16 hex digits naming the key (not the secret)
    std::filesystem::path file;
};

/// $KF_REPORT_KEY, else $XDG_CONFIG_HOME/KernelForge/report-key, else ~/.config/KernelForge/report-key.
std::filesystem::path signingKeyPath();

/// Reads the user's key; with `create`, makes one (0600, 64 hex digits) when there is none. Two
/// processes creating it at once agree on one key. Refuses a key file that other users can read
/// or write, or that is not 64 hex digits.
Result<SigningKey> loadSigningKey(bool create);

/// Adds (or replaces) "signature". An Error when libcrypto cannot be loaded.
Result<void> signDocument(nlohmann::json& document, const SigningKey& key);

enum class SignatureState {
    Valid,        ///< signed with this key, unchanged since
    Unsigned,     ///< no "signature" member
    Altered,      ///< signed with this key, changed since (or the signature itself forged)
    OtherKey,     ///< signed with a key that is not this user's: cannot be checked here
    Malformed,    ///< "signature" is not what a signer writes
    NoKey,        ///< this user has no usable key (or no libcrypto): nothing can be checked
};

struct SignatureCheck {
    SignatureState state = SignatureState::Unsigned;
    std::string detail;   ///< one phrase: "signed with key 3f2a9c01d4e5b6a7", "altered after signing", ...
    bool valid() const { return state == SignatureState::Valid; }
};

/// Checks `document`'s signature against `key` (null: the user has none, `keyProblem` says why).
SignatureCheck checkSignature(const nlohmann::json& document, const SigningKey* key, const std::string& keyProblem = {});

/// "signed", "unsigned", "altered", "other key", "malformed", "no key".
const char* signatureStateName(SignatureState s);

} // namespace kf::protocol
