// The registry's ledger (RegistryLedger.h): settings, removed IDs, highest versions and
// deprecations kept outside the index, so that `check --reindex` can bring them back.
#include "engine/registry/RegistryLedger.h"

#include "engine/core/Files.h"
#include "engine/core/JsonReader.h"
#include "engine/registry/KernelId.h"

#include <algorithm>
#include <set>

namespace fs = std::filesystem;

namespace kf::registry_internal {

namespace jr = kf::json;
using Json = nlohmann::json;

namespace {

constexpr int kLedgerSchemaVersion = 1;

Ledger readLedgerJson(const Json& j, const std::string& origin)
{
    jr::Object o(j, "");
    if (o.integer("schema_version") != kLedgerSchemaVersion)
        jr::fail(o.at("schema_version"), "is not " + std::to_string(kLedgerSchemaVersion));
    o.stringOr("about", {});
    Ledger l;
    Json settings = o.required("index");
    auto parsed = parseRegistryIndex(settings, origin);
    if (!parsed)
        jr::fail(o.at("index") + parsed.error().pointer, parsed.error().why);
    if (!parsed->kernels.empty())
        jr::fail(o.at("index"), "the ledger keeps no kernels");
    l.settings = std::move(parsed.value());
    jr::Object highest(o.required("highest_version"), o.at("highest_version"));
    for (const auto& [prefix, v] : highest.raw().items()) {
        const std::int64_t n = jr::asInteger(highest.required(prefix), highest.at(prefix));
        if (n < 1 || n > 1'000'000'000)
            jr::fail(highest.at(prefix), "a version is 1 to 10^9");
        l.highest[prefix] = static_cast<int>(n);
    }
    jr::Object deprecated(o.required("deprecated"), o.at("deprecated"));
    for (const auto& [id, v] : deprecated.raw().items()) {
        jr::Object d(deprecated.required(id), deprecated.at(id));
        l.deprecated[id] = {d.string("at"), d.string("reason")};
        d.finish();
    }
    o.finish();
    return l;
}

} // namespace

Result<std::optional<Ledger>> readLedger(const fs::path& dir)
{
    const fs::path file = dir / kLedgerFile;
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(file, ec)))
        return std::optional<Ledger>();
    auto j = jr::readFile(file);
    if (!j)
        return j.error();
    auto ledger = parseLedger(j.value(), file.string());
    if (!ledger)
        return ledger.error();
    return std::optional<Ledger>(std::move(ledger.value()));
}

Result<Ledger> parseLedger(const Json& j, const std::string& origin)
{
    try {
        return readLedgerJson(j, origin);
    } catch (const jr::SchemaError& e) {
        return Error::inFile(origin, e.pointer, "read the registry's ledger", e.message, "it is rewritten from the index at the next change; without an index, fix or delete it and reindex");
    }
}

Json ledgerToJson(const Ledger& l)
{
    Json highest = Json::object();
    for (const auto& [prefix, v] : l.highest)
        highest[prefix] = v;
    Json deprecated = Json::object();
    for (const auto& [id, d] : l.deprecated)
        deprecated[id] = {{"at", d.at}, {"reason", d.reason}};
    RegistryIndex settings = l.settings;
    settings.kernels.clear();
    return {{"schema_version", kLedgerSchemaVersion},
            {"about", "what `kforge registry check --reindex` restores if verified_kernels.json is lost; "
                      "written with every change of the index"},
            {"index", registryIndexToJson(settings)},
            {"highest_version", highest},
            {"deprecated", deprecated}};
}

int ledgerHighest(const Ledger& ledger, const std::string& prefix)
{
    const auto it = ledger.highest.find(prefix);
    return it == ledger.highest.end() ? 0 : it->second;
}

Result<void> writeLedger(const fs::path& dir, const RegistryIndex& index)
{
    Ledger l;
    if (auto old = readLedger(dir); old && old.value())
        l = std::move(*old.value());   // an unreadable one is replaced by the index's view
    std::set<std::string> removed(l.settings.removed.begin(), l.settings.removed.end());
    std::vector<std::string> removedInOrder = l.settings.removed;
    for (const std::string& id : index.removed)
        if (removed.insert(id).second)
            removedInOrder.push_back(id);
    auto raise = [&](const std::string& id) {
        if (auto s = splitKernelId(id))
            l.highest[s->first] = std::max(l.highest[s->first], s->second);
    };
    for (const std::string& id : removedInOrder)
        raise(id);
    l.deprecated.clear();   // a state, not a history: the index's view replaces it
    for (const RegistryEntry& e : index.kernels) {
        raise(e.id);
        if (e.deprecated())
            l.deprecated[e.id] = {e.deprecatedAt, e.deprecationReason};
    }
    l.settings = index;
    l.settings.kernels.clear();
    l.settings.removed = std::move(removedInOrder);
    return writeFileAtomic(dir / kLedgerFile, ledgerToJson(l).dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
}

} // namespace kf::registry_internal
