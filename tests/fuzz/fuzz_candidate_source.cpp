// A candidate an agent hands back (engine/agent/CandidateAdd.h, engine/analysis/SourceScan.h):
// the source's first-comment plan fence, the plan's JSON with line:column errors, and the static
// scan's tokenizer and rules, on arbitrary bytes. Findings must lie inside the source; a fence
// that is found must parse or fail with a location.
#include "engine/agent/CandidateAdd.h"
#include "engine/analysis/SourceScan.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view source(reinterpret_cast<const char*>(data), size);
    const long lines = 1 + std::count(source.begin(), source.end(), '\n');
    for (const kf::ScanFinding& f : kf::scanSource(source))
        if (f.line < 1 || f.line > lines || f.column < 1 || f.rule.empty() || f.message.empty())
            __builtin_trap();
    // The whole input as a --plan file.
    // Errors name the plan: with line:column for a syntax error, alone for the size and depth bounds.
    if (auto plan = kf::agent::parsePlanJson(source, "plan.json");
        !plan && plan.error().file != "plan.json" && plan.error().file.rfind("plan.json:", 0) != 0)
        __builtin_trap();
    auto fence = kf::agent::fencedPlan(source, "fuzz.cu");
    if (fence && fence->has_value()) {
        const kf::agent::FencedPlan& plan = **fence;
        if (plan.line < 2 || plan.line > lines)
            __builtin_trap();
        auto parsed = kf::agent::parsePlanJson(plan.json, "fuzz.cu", plan.line, plan.offsets);
        if (!parsed && parsed.error().file != "fuzz.cu" && parsed.error().file.rfind("fuzz.cu:", 0) != 0)
            __builtin_trap();
    }
    return 0;
}
