// The importer helper's proposal.json (engine/agent/Import.h): written by a Python process that
// ran a problem's own code, so untrusted. Arbitrary JSON text through the strict reader (its task
// through parseTask); the folder it names does not exist, so every file it lists must be refused.
#include "engine/agent/Import.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded())
        return 0;
    auto p = kf::agent::readImportProposal(j, "proposal.json", "/nonexistent-kforge-fuzz-folder");
    // Nothing in a folder that is not there can be read: originals, samples or the reference.
    if (p && (!p->originals.empty() || !p->samples.empty()))
        __builtin_trap();
    return 0;
}
