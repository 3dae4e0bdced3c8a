#pragma once
// promotion.json, the record a promotion writes into a kernel version's folder (docs/registry.md):
// what was promoted, on which GPU, with which seeds, tolerances and held-out shapes, what each
// gate said and the speedups the gates judged. Written once by Registry::promote; read by
// `kforge registry check|show`, the registry browser's evidence page and its table. A value type
// with toJson/fromJson side by side, so no reader spells its keys.

#include "engine/core/Result.h"
#include "engine/protocol/Report.h"
#include "engine/protocol/Signature.h"
#include "engine/registry/Gates.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kf {

/// A file of a kernel version folder, as the index and promotion.json list it.
struct RegistryFile {
    std::string path;
    std::string hash;       ///< hashHex of the bytes
    std::int64_t bytes = 0;
};

struct PromotionRecord {
    struct ToleranceUsed {
        std::string output;
        double rtol = 0;
        double atol = 0;
        bool atolRelativeToRms = true;      ///< atol × the reference's RMS ("rms"), else absolute
    };
    /// What the sanitizer gate judged (docs/registry.md, "promotion.json"): absent in records
    /// written before the gate existed.
    struct Sanitizer {
        SanitizerPolicy policy = kDefaultSanitizerPolicy;   ///< the registry's policy at promotion
        std::string outcome;                ///< passed | not_run (a failed gate promotes nothing)
        std::string detail;                 ///< the gate's detail
        std::string toolVersion;            ///< compute-sanitizer's version, empty when none ran
        std::vector<std::string> tools;     ///< the tools that ran
        std::vector<std::string> shapes;    ///< the shapes they ran on
    };
    struct ShapeSpeedup {
        protocol::ShapeId shape;            ///< dims and label (set "benchmarks")
        std::optional<double> speedup;
        std::optional<double> candidateMedianMs;
        std::optional<double> baselineMedianMs;
    };

    int schemaVersion = 1;
    std::string id;                         ///< "cuda_softmax_h100_fp32_b8192-d4096_v2"
    std::int64_t version = 0;
    std::string promotedAt;                 ///< UTC, ISO 8601
    std::string promotedBy;
    protocol::TaskRef task;                 ///< the task file is task.json in the folder
    protocol::CandidateRef candidate;
    std::vector<std::string> correctnessSeeds;
    std::vector<std::string> performanceSeeds;
    std::int64_t trialsPerShape = 0;
    std::vector<protocol::ShapeId> heldOutShapes;
    std::vector<ToleranceUsed> tolerances;
    protocol::Environment environment;
    std::optional<double> threshold;        ///< the registry's threshold at promotion
    std::optional<double> compileThreshold; ///< the registry's torch.compile threshold then (none: off)
    std::optional<double> compileSpeedup;   ///< geometric mean over torch.compile, when measured
    std::vector<GateCheck> gates;
    std::optional<Sanitizer> sanitizer;
    std::optional<double> geomeanSpeedup;
    std::optional<double> minSpeedup;
    std::vector<ShapeSpeedup> perShape;
    std::string evidenceScope;              ///< what the speedup means (never an end-to-end claim)
    /// The user promoted with `--allow-unsigned` and a report's signature did not hold.
    bool unsignedEvidenceAccepted = false;
    std::vector<RegistryFile> files;        ///< every other file of the folder with its hash
    nlohmann::json json;                    ///< as read (for `--json`); empty for a record built in code

    nlohmann::json toJson() const;
    /// Missing fields take their defaults; a field of the wrong type is an Error naming `source`
    /// and the JSON pointer.
    static Result<PromotionRecord> fromJson(const nlohmann::json& j, const std::string& source);
};

/// How a signed document's signature is shown wherever its numbers are (`registry list|show`,
/// `cast inspect`, the workbench): "signature holds (this user's key)", "signed with another key:
/// cannot be checked here", "signature does NOT hold: edited after signing", "unsigned", ...
const char* signatureTrustText(protocol::SignatureState state);
/// A signed record whose signature no longer holds: edited, its signature removed or forged.
inline bool signatureBroken(protocol::SignatureState s)
{
    return s == protocol::SignatureState::Altered || s == protocol::SignatureState::Malformed ||
           s == protocol::SignatureState::Unsigned;
}
/// The marker for a version promoted with `--allow-unsigned` (its reports' signatures did not hold).
inline constexpr const char* kUnsignedEvidenceMarker = "unsigned evidence";

} // namespace kf
