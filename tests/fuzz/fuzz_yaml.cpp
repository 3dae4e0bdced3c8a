// The YAML reader (engine/agent/Yaml.h) and the skill reader on top of it (engine/agent/Skills.h):
// outside text from --skills-dir folders and GPU MODE task.yml files. The first byte picks the
// reader: byte % 4 == 1, parseSkill of the rest; == 3, readGpuModeTaskYml; else parseYaml with
// tight limits. A document that reads
// must be JSON that dumps and reads back the same, and every pointer it locates must exist.
#include "engine/agent/Import.h"
#include "engine/agent/Skills.h"
#include "engine/agent/Yaml.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1)
        return 0;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    if (data[0] % 4 == 3) {
        auto spec = kf::agent::readGpuModeTaskYml(text, "task.yml");
        if (spec && (!spec->spec.is_object() || spec->spec.value("lang", std::string()) != "py"))
            __builtin_trap();
        return 0;
    }
    if (data[0] % 4 == 1) {
        auto skill = kf::agent::parseSkill(text, "fuzz/SKILL.md", "fuzz");
        if (skill && (skill->name != "fuzz" || skill->description.empty() || skill->description.size() > 1024
                      || skill->body.empty()))
            __builtin_trap();
        return 0;
    }
    kf::agent::YamlLimits limits;
    limits.maxDepth = 8 + data[0] % 32;
    limits.maxNodes = 2000;
    auto doc = kf::agent::parseYaml(text, "fuzz.yml", 1 + data[0] % 3, limits);
    if (!doc)
        return 0;
    const std::string dumped = doc->value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    const nlohmann::json again = nlohmann::json::parse(dumped, nullptr, false);
    if (again.is_discarded())
        __builtin_trap();
    for (const auto& [pointer, where] : doc->where) {
        if (where.first < 1 || where.second < 1)
            __builtin_trap();
        if (!pointer.empty() && !doc->value.contains(nlohmann::json::json_pointer(pointer)))
            __builtin_trap();
    }
    return 0;
}
