#pragma once
// The registry of verified kernels: a folder holding `verified_kernels.json` (the index) and one
// folder per kernel version with its source, task, launch plan, reports and `promotion.json`
// (docs/registry.md). It never lies and never loses an entry:
//  * nothing enters without passing the gates (Gates.h), checked here, under the lock, against
//    the files as they are on disk;
//  * every write is atomic and every change is made under an inter-process lock;
//  * a version folder is staged under `.staging/` and renamed into place before the index names
//    it, so a promoter killed at any point leaves a valid index (at worst an orphan folder that
//    `check` reports and `check --prune` removes);
//  * `check` re-hashes every file and re-judges every entry's evidence.
// Qt-free; safe to use from several processes at once. One Registry object is cheap (a path).

#include "engine/core/Result.h"
#include "engine/registry/Gates.h"
#include "engine/protocol/RunReport.h"
#include "engine/registry/Promotion.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kf {

inline constexpr int kRegistrySchemaVersion = 1;
inline constexpr const char* kRegistryIndexFile = "verified_kernels.json";
inline constexpr const char* kWorkspaceFile = "kernelforge-workspace.json";
/// Error::kind of a registry error that is the caller's mistake (exit 2, not 3): an ID the
/// registry does not have, or a value out of range.
inline constexpr const char* kRegistryBadArgument = "registry_bad_argument";

/// A file of a version folder, path relative to it.

/// One kernel version as the index lists it (promotion.json holds the full evidence).
struct RegistryEntry {
    std::string id;                  ///< cuda_softmax_h100_fp32_b8192-d4096_v1
    int version = 1;
    std::string op;                  ///< softmax
    std::string taskName;
    std::string dtype;               ///< first output's dtype
    std::string gpu;                 ///< "NVIDIA H100 80GB HBM3"
    std::string arch;                ///< sm_90
    std::string kernelFile;          ///< the source file inside the folder, e.g. optimized.cu
    nlohmann::json benchmarkShapes = nlohmann::json::array();   ///< [{"B": 8192, "D": 4096}, ...]
    double geomeanSpeedup = 0;
    std::optional<double> compileSpeedup;          ///< over torch.compile, when it was measured
    double minSpeedup = 0;
    std::string sourceHash;
    std::string taskHash;
    std::string promotedAt;          ///< UTC, ISO 8601
    std::string status = "active";   ///< active | deprecated
    std::string deprecatedAt;
    std::string deprecationReason;
    std::vector<RegistryFile> files;
    /// Not stored in the index: read from the version's signed promotion.json by
    /// Registry::listing(), so `registry list` and the workbench show what the record says.
    bool unsignedEvidence = false;                            ///< promoted with --allow-unsigned
    std::optional<protocol::SignatureState> recordSignature;  ///< the record's signature, checked live

    bool deprecated() const { return status == "deprecated"; }
    /// "B=8192 D=4096; B=4096 D=8192"
    std::string shapesText() const;
};

struct RegistryIndex {
    double threshold = kDefaultSpeedupThreshold;   ///< per registry (the geomean_speedup gate)
    std::optional<double> compileThreshold;        ///< per registry, off when empty (the last gate)
    SanitizerPolicy sanitizerPolicy = kDefaultSanitizerPolicy;   ///< per registry (the sanitizer gate)
    std::vector<RegistryEntry> kernels;            ///< in promotion order
    std::vector<std::string> removed;              ///< IDs removed so far: never given out again
    const RegistryEntry* find(std::string_view id) const;
};

/// Something `check` found wrong.
struct RegistryDrift {
    enum class Severity { Error, Warning };
    Severity severity = Severity::Error;
    std::string id;          ///< the entry, or empty for the registry as a whole
    std::string file;        ///< path relative to the registry folder, if one is involved
    std::string problem;     ///< one sentence
    std::string hint;        ///< what to do
    /// A repair (`check --prune`) could not write the registry; `problem` gives the cause. The
    /// CLI exits 3 for it (docs/cli.md: a registry that cannot be written).
    bool notWritten = false;
};

/// What `check --reindex` rebuilt and what it could not bring back.
struct ReindexReport {
    std::vector<std::string> skipped;   ///< "<id>: why", version folders left out of the index
    std::vector<std::string> notes;     ///< one sentence each: what was restored from where, what was reset
};

struct PromotionInput {
    Task task;                        ///< as loaded from disk (its directory is read)
    std::string candidateFile;        ///< as listed in task.json
    std::optional<protocol::RunReport> correctness;   ///< report (kind correctness)
    std::optional<protocol::RunReport> performance;   ///< report (kind performance)
    std::string promotedBy;           ///< optional: "user@host"
    /// Accept reports whose signature is missing or does not hold (`promote --allow-unsigned`);
    /// the record says so and `registry show|check` keep saying it.
    bool allowUnsigned = false;
};

struct PromotionOutcome {
    GateVerdict gates;
    std::optional<RegistryEntry> entry;   ///< set when the kernel was promoted
};

class Registry {
public:
    explicit Registry(std::filesystem::path directory);

    /// $XDG_DATA_HOME/KernelForge/registry, or ~/.local/share/KernelForge/registry.
    static std::filesystem::path defaultDirectory();
    /// `explicitDir` when given, else $KF_REGISTRY, else the `registry` named by the nearest
    /// kernelforge-workspace.json at or above `near` (relative to that file), else the default.
    static Result<std::filesystem::path> resolveDirectory(const std::string& explicitDir,
                                                          const std::filesystem::path& near);

    const std::filesystem::path& directory() const { return m_dir; }
    std::filesystem::path indexFile() const { return m_dir / kRegistryIndexFile; }
    std::filesystem::path entryDirectory(const std::string& id) const { return m_dir / id; }

    /// The index; an empty one (default threshold) when the folder or file does not exist yet.
    Result<RegistryIndex> load() const;
    /// The entry; the error lists the IDs that are there when `id` is not.
    Result<RegistryEntry> entry(const std::string& id) const;
    /// promotion.json of an entry.
    Result<PromotionRecord> promotion(const std::string& id) const;
    /// The entry's task reduced to its promoted candidate, rooted at the entry folder: what a
    /// re-verification runs.
    Result<Task> entryTask(const std::string& id) const;

    /// The gates for `in` against its files as they are now and this registry's thresholds and
    /// sanitizer policy.
    Result<GateVerdict> gates(const PromotionInput& in) const;
    /// Judges the gates again under the lock and, when they pass, writes the new version.
    /// A refusal is an outcome (entry empty), not an error; errors are I/O and a damaged index.
    Result<PromotionOutcome> promote(const PromotionInput& in) const;
    /// Deletes the entry from the index, then its folder.
    Result<void> remove(const std::string& id) const;
    /// Marks the entry deprecated (it stays, with the reason, and no longer counts as current).
    Result<RegistryEntry> deprecate(const std::string& id, const std::string& reason) const;
    /// The promotion threshold for the geometric-mean speedup (≥ 1.0).
    Result<void> setThreshold(double threshold) const;
    /// The factor of torch.compile a kernel must reach (> 0), or nullopt to turn the gate off.
    Result<void> setCompileThreshold(std::optional<double> threshold) const;
    /// What the sanitizer gate asks of compute-sanitizer (Gates.h, SanitizerPolicy).
    Result<void> setSanitizerPolicy(SanitizerPolicy policy) const;
    /// Verifies the index against the folders and hashes; with `prune`, also deletes folders
    /// that no index entry names (left by an interrupted promote or remove).
    Result<std::vector<RegistryDrift>> check(bool prune = false) const;
    /// Rebuilds a missing or unreadable index from the version folders' records. Only complete
    /// versions (every recorded file present with its hash) are listed; the others are named in
    /// the result and left untouched. Refuses when the index reads fine. The settings, removed
    /// IDs and deprecation states come back from the ledger (RegistryLedger.h); what it cannot
    /// restore is said in the report's notes.
    Result<ReindexReport> reindex() const;
    /// The index with each entry's unsignedEvidence and recordSignature read from its
    /// promotion.json (an unreadable record leaves them unset: `check` names it).
    Result<RegistryIndex> listing() const;

private:
    Result<void> writeIndex(const RegistryIndex& index) const;
    void pruneOrReport(bool prune, const std::set<std::string>& named, std::vector<RegistryDrift>& drift) const;

    std::filesystem::path m_dir;
};

/// "op-level microbenchmark of softmax (fp32) on NVIDIA H100 80GB HBM3 against LibTorch 2.11.0 …"
std::string evidenceScope(const Task& task, const protocol::BenchReport& performance);

/// Parses and writes the index (exposed for tests and `registry check`).
Result<RegistryIndex> parseRegistryIndex(const nlohmann::json& j, const std::string& origin);
nlohmann::json registryIndexToJson(const RegistryIndex& index);
nlohmann::json registryEntryToJson(const RegistryEntry& entry);

} // namespace kf
