#pragma once
// Everything the registry browser shows about one kernel version beyond its index row: the
// promotion record, both runner reports and the kernel source, as read from its version folder.

#include "engine/protocol/RunReport.h"
#include "engine/registry/Registry.h"

#include <nlohmann/json.hpp>

#include <QString>

namespace kf::ui {

/// A plain value the app fills from `<registry>/<id>/` and hands to RegistryBrowser::setDetails().
struct RegistryDetails {
    kf::RegistryEntry entry;          ///< as the index lists it (entry.id names the version)
    std::optional<kf::PromotionRecord> promotion;         ///< promotion.json; none when it could not be read
    std::optional<kf::protocol::RunReport> correctness;   ///< correctness.json; none when missing or malformed
    std::optional<kf::protocol::RunReport> performance;   ///< performance.json; none when missing or malformed
    QString source;                   ///< the kernel source (entry.kernelFile)
    QString error;                    ///< a sentence saying what could not be read and what to do; empty when all was read
    /// Model-level evidence: runs of whole models in which this version's kernel ran
    /// (<registry>/model-runs/<id>/, written by `kforge cast run --record`), each checked.
    std::vector<nlohmann::json> modelRuns;
};

} // namespace kf::ui
