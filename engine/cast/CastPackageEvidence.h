#pragma once
// What a package's evidence proves, read from the files it carries rather than from the
// manifest (docs/cast.md, "What inspect trusts"). The manifest is covered by no hash: anyone can
// edit its evidence summary, and fix up the SHA-256 of any file it lists. What cannot be forged
// without the key is the registry's signed record, ops/<op>/registry/promotion.json; the numbers
// shown for an op are read from it, its signature is checked now against this user's key, every
// registry file the package carries is checked against the record's hashes, and the manifest's
// summary is compared with the record (a difference is named, and the summary ignored).

#include "engine/cast/CastPackage.h"
#include "engine/protocol/Signature.h"
#include "engine/registry/Promotion.h"

#include <optional>
#include <string>
#include <vector>

namespace kf::cast {

struct OpEvidence {
    std::optional<PromotionRecord> record;   ///< the op's promotion.json; empty when it does not read
    protocol::SignatureCheck signature;      ///< promotion.json's signature, checked now
    /// Why the record's numbers are not established here, one sentence each (record unreadable,
    /// another kernel's record, a carried file that differs from the record's hash...).
    std::vector<std::string> problems;
    /// Keys of the manifest's evidence summary that disagree with the record.
    std::vector<std::string> summaryEdited;

    bool unsignedEvidence() const { return record && record->unsignedEvidenceAccepted; }
    /// The numbers hold: the record reads, its signature holds under this user's key, the
    /// package's registry files are the ones it names, and the reports it was judged on were
    /// signed by the runner (not accepted with --allow-unsigned).
    bool verified() const { return record && signature.valid() && problems.empty() && !unsignedEvidence(); }
    /// "signature holds (this user's key)", ..., with "; ⚠ unsigned evidence" when it applies.
    std::string trustText() const;
    /// For `cast inspect --json`: verified, record_signature, signature, unsigned_evidence,
    /// problems, manifest_summary_differs, and the record's gpu, arch and speedups.
    nlohmann::json toJson() const;
};

/// Reads `op`'s evidence from `pkg` (which openPackage has checked). `key` is this user's key, or
/// null with `keyProblem` saying why there is none. Never throws.
OpEvidence readOpEvidence(const Package& pkg, const PackageOp& op, const protocol::SigningKey* key,
                          const std::string& keyProblem);

} // namespace kf::cast
