// runners.json as a user or the workbench wrote it: parseRunnersConfig (strict schema, gpus
// expansion, default and pools resolved). Whatever reads must hold the reader's promises: an
// endpoint named "local", a default and pool members that name endpoints, names unique, and a
// configuration that writes and reads back the same. Every endpoint's argv is built as well.
#include "engine/runner/RunnersConfig.h"

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto c = kf::parseRunnersConfig(text, "runners.json");
    if (!c) {
        if (c.error().why.empty() || c.error().file != "runners.json")
            __builtin_trap(); // a refusal must say why, and where
        return 0;
    }
    if (!c->find("local") || c->find("local")->kind != kf::Endpoint::Kind::Local || !c->find(c->defaultEndpoint))
        __builtin_trap();
    std::set<std::string> names;
    for (const kf::Endpoint& e : c->endpoints) {
        if (!names.insert(e.name).second)
            __builtin_trap();
        const std::vector<std::string> argv = e.argv("/opt/kforge-runner");
        if (argv.empty() || argv.front().empty())
            __builtin_trap();
        (void)e.childEnv();
        (void)e.describe();
    }
    for (const auto& [pool, members] : c->pools)
        for (const std::string& m : members)
            if (!c->find(m))
                __builtin_trap();
    if (!c->poolEndpoints(""))
        __builtin_trap();
    const std::string written = c->toJson();
    auto again = kf::parseRunnersConfig(written, "runners.json (written back)");
    if (!again || again->toJson() != written || again->endpoints.size() != c->endpoints.size()
        || again->allGpuTemplates.size() != c->allGpuTemplates.size())
        __builtin_trap(); // the writer produced something its own reader refuses or reads otherwise
    return 0;
}
