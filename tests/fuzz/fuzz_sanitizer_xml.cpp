// compute-sanitizer's XML (engine/sanitize/SanitizerXml.h): the file a tool wrote while running a
// candidate, read as each of the four tools would have written it. Every finding must carry a
// known kind and severity, summarise, and survive the report's JSON (dumped as a report file is,
// read back, equal); a host-side finding never belongs to a kernel, and a kernel's own name
// (a plain identifier, printed bare or with return type and parameters) always does.
#include "engine/protocol/SanitizerReport.h"
#include "engine/sanitize/SanitizerXml.h"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const std::set<std::string> kinds = {
        "oob_read", "oob_write", "misaligned", "invalid_address", "shared_race", "uninit_global_read",
        "uninit_shared_read", "barrier_divergent", "invalid_barrier", "hardware_exception", "api_error", "leak", "other"};
    const std::string_view xml(reinterpret_cast<const char*>(data), size);
    for (const char* tool : {"memcheck", "racecheck", "initcheck", "synccheck"}) {
        auto parsed = kf::sanitize::parseSanitizerXml(xml, tool, "fuzz.xml");
        if (!parsed) {
            if (parsed.error().why.empty())
                __builtin_trap();
            continue;
        }
        if (parsed->records != static_cast<std::int64_t>(parsed->findings.size()))
            __builtin_trap();
        kf::protocol::SanitizerSection section;
        section.ran = true;
        for (const kf::protocol::SanitizerFinding& f : parsed->findings) {
            if (!kinds.count(f.kind) || (f.severity != "error" && f.severity != "warning") || f.tool != tool ||
                f.count < 1 || f.size < 0 || f.where.line < 0)
                __builtin_trap();
            if (f.summary().empty())
                __builtin_trap();
            if (f.hostSide && kf::sanitize::findingInKernels(f, {f.where.kernel, "k", ""}))
                __builtin_trap();
            (void)kf::sanitize::findingInKernels(f, {"shift_add<float>", "block_sum", f.description});
            // A plain identifier names itself, with or without a return type and parameters.
            const std::string& k = f.where.kernel;
            const bool identifier = !k.empty() && !std::isdigit(static_cast<unsigned char>(k[0])) &&
                std::all_of(k.begin(), k.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
            if (!f.hostSide && identifier) {
                kf::protocol::SanitizerFinding printed = f;
                printed.where.kernel = "void " + k + "(const float *, int)";
                if (!kf::sanitize::findingInKernels(f, {k}) || !kf::sanitize::findingInKernels(printed, {k}) ||
                    kf::sanitize::findingInKernels(f, {k + "x"}))
                    __builtin_trap();
            }
        }
        section.findings = parsed->findings;
        const std::string dumped =
            kf::protocol::toJson(section).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        const nlohmann::json again = nlohmann::json::parse(dumped, nullptr, false);
        if (again.is_discarded())
            __builtin_trap();
        const auto back = kf::protocol::sanitizerSectionFromJson(again, "/sanitizer");
        if (!back || kf::protocol::toJson(*back) != again)
            __builtin_trap();
    }
    return 0;
}
