// The registry's files: the index (verified_kernels.json), its ledger (.ledger.json) and a
// version's promotion.json.
#include "engine/core/JsonReader.h"
#include "engine/registry/Promotion.h"
#include "engine/registry/Registry.h"
#include "engine/registry/RegistryLedger.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    auto j = kf::json::parseText(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz registry file");
    if (!j)
        return 0;
    if (auto index = kf::parseRegistryIndex(j.value(), "fuzz index"))
        if (!kf::parseRegistryIndex(kf::registryIndexToJson(index.value()), "fuzz index (written back)"))
            __builtin_trap();
    if (auto ledger = kf::registry_internal::parseLedger(j.value(), "fuzz ledger"))
        if (!kf::registry_internal::parseLedger(kf::registry_internal::ledgerToJson(ledger.value()), "fuzz ledger (written back)"))
            __builtin_trap();
    if (auto p = kf::PromotionRecord::fromJson(j.value(), "fuzz promotion.json"))
        if (!kf::PromotionRecord::fromJson(p->toJson(), "fuzz promotion.json (written back)"))
            __builtin_trap();
    return 0;
}
