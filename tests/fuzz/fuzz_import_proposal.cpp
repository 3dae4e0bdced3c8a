// The importer helper's proposal.json (engine/agent/Import.h): written by a Python process that
// ran a problem's own code, so untrusted. Arbitrary JSON text, read as kforge reads it (the
// depth-limited parser, then the strict reader, its task through parseTask). The folder it names
// does not exist, so nothing it lists can be there: an accepted proposal lists no originals and
// no sample tensors.
#include "engine/agent/Import.h"
#include "engine/core/JsonReader.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto j = kf::json::parseText(text, "proposal.json");
    if (!j)
        return 0;
    auto p = kf::agent::readImportProposal(*j, "proposal.json", "/nonexistent-kforge-fuzz-folder");
    if (!p)
        return 0;
    if (!p->originals.empty())
        __builtin_trap();
    for (const kf::agent::ImportSample& s : p->samples)
        if (!s.inputs.empty() || !s.expected.empty())
            __builtin_trap();
    return 0;
}
