#pragma once
// The registry's ledger, `.ledger.json` beside the index (docs/registry.md, "The ledger"): what a
// lost index must not take with it. The index stays the one source of truth while it exists;
// the ledger is rewritten (atomically, under the registry's lock) just before every index write,
// and read only to hand out IDs and by `check --reindex`. It holds
//   * the settings (threshold, torch.compile threshold, sanitizer policy), in the index's own form;
//   * every ID ever removed, and the highest version ever given out per ID stem, merged with
//     what it held before, so an ID once given out is never given to other code, even after the
//     index and the version folder are both gone;
//   * the deprecation states (ID, date, reason).
// Not API: Registry.cpp, RegistryReindex.cpp and their tests use it.

#include "engine/core/Result.h"
#include "engine/registry/Registry.h"

#include <filesystem>
#include <map>
#include <string>

namespace kf::registry_internal {

inline constexpr const char* kLedgerFile = ".ledger.json";

struct Ledger {
    /// Settings and removed IDs, parsed by parseRegistryIndex (its kernels list is empty).
    RegistryIndex settings;
    std::map<std::string, int> highest;             ///< ID stem (kernelIdPrefix) -> highest version given out
    struct Deprecation {
        std::string at, reason;
    };
    std::map<std::string, Deprecation> deprecated;  ///< ID -> when and why
};

/// Parses a ledger document (`origin` names it in errors) and writes one.
Result<Ledger> parseLedger(const nlohmann::json& j, const std::string& origin);
nlohmann::json ledgerToJson(const Ledger& ledger);
/// The ledger of registry `dir`; nullopt when there is none (a registry from before it, or lost).
Result<std::optional<Ledger>> readLedger(const std::filesystem::path& dir);
/// Writes the ledger for `index`, merged with the one on disk (removed IDs and highest versions
/// only grow). An unreadable ledger is replaced by the index's view: the index is the truth.
Result<void> writeLedger(const std::filesystem::path& dir, const RegistryIndex& index);
/// The highest version of `prefix` the ledger has seen (0 for none).
int ledgerHighest(const Ledger& ledger, const std::string& prefix);

} // namespace kf::registry_internal
