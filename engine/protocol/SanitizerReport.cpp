#include "engine/protocol/SanitizerReport.h"

#include "engine/core/Text.h"
#include "engine/protocol/ReportJson.h"

#include <algorithm>
#include <limits>

namespace kf::protocol {

namespace jr = kf::json;

namespace {

nlohmann::json dim3Json(const std::array<std::int64_t, 3>& v) { return nlohmann::json::array({v[0], v[1], v[2]}); }

std::string dim3Text(const std::array<std::int64_t, 3>& v)
{
    return "(" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]) + ")";
}

nlohmann::json toJson(const SanitizerAccess& a)
{
    nlohmann::json j = {{"access", a.access}, {"kernel", a.kernel}, {"file", a.file}, {"line", a.line}, {"pc", a.pc}};
    if (a.block)
        j["block"] = dim3Json(*a.block);
    if (a.thread)
        j["thread"] = dim3Json(*a.thread);
    return j;
}

std::optional<std::array<std::int64_t, 3>> readDim3(const Fields& f, std::string_view key)
{
    const Json* v = f.find(key);
    if (!v)
        return std::nullopt;
    const Json& a = jr::asArray(*v, f.at(key));
    if (a.size() != 3)
        jr::fail(f.at(key), "expected 3 integers (x, y, z), found " + std::to_string(a.size()) + " values");
    std::array<std::int64_t, 3> out{};
    for (size_t i = 0; i < 3; ++i)
        out[i] = jr::asInteger(a[i], jr::child(f.at(key), i));
    return out;
}

SanitizerAccess readAccess(const Fields& f)
{
    SanitizerAccess a;
    a.access = f.text("access");
    a.kernel = f.text("kernel");
    a.file = f.text("file");
    const std::int64_t line = f.integer("line");
    if (line < 0 || line > std::numeric_limits<int>::max())
        jr::fail(f.at("line"), "expected a source line (0 or more), found " + std::to_string(line));
    a.line = static_cast<int>(line);
    a.pc = f.text("pc");
    a.block = readDim3(f, "block");
    a.thread = readDim3(f, "thread");
    return a;
}

SanitizerFinding readFinding(const Fields& f)
{
    SanitizerFinding s;
    s.tool = f.text("tool");
    s.kind = f.text("kind");
    s.severity = f.text("severity", "error");
    s.description = f.text("description");
    s.where = readAccess(f.object("where"));
    if (f.find("other"))
        s.other = readAccess(f.object("other"));
    s.space = f.text("space");
    s.size = f.integer("size");
    s.address = f.text("address");
    s.count = f.integer("count", 1);
    s.hostSide = f.boolean("host_side");
    return s;
}

SanitizerToolRun readToolRun(const Fields& f)
{
    SanitizerToolRun t;
    t.tool = f.text("tool");
    t.ran = f.boolean("ran");
    t.skipped = f.text("skipped");
    t.error = f.text("error");
    const std::int64_t code = f.integer("exit_code");
    if (code < -1'000'000 || code > 1'000'000)
        jr::fail(f.at("exit_code"), "expected an exit code, found " + std::to_string(code));
    t.exitCode = static_cast<int>(code);
    t.durationMs = f.integer("duration_ms");
    t.findings = f.integer("findings");
    t.truncated = f.boolean("truncated");
    t.ignored = f.integer("ignored");
    return t;
}

SanitizerSection readSection(const Fields& f)
{
    SanitizerSection s;
    s.ran = f.boolean("ran");
    s.requested = f.boolean("requested", true);
    s.reason = f.text("reason");
    s.toolVersion = f.text("tool_version");
    s.toolPath = f.text("tool_path");
    s.shapes = f.texts("shapes");
    s.seed = f.text("seed");
    s.durationMs = f.integer("duration_ms");
    f.forEach("tools", [&](const Json& v, const std::string& p) { s.tools.push_back(readToolRun(Fields(v, p))); });
    f.forEach("findings", [&](const Json& v, const std::string& p) { s.findings.push_back(readFinding(Fields(v, p))); });
    return s;
}

/// The words a summary uses for a kind ("out-of-bounds read"), with the access for the generic ones.
std::string kindWords(const SanitizerFinding& f)
{
    const std::string& k = f.kind;
    if (k == "oob_read")
        return "out-of-bounds read";
    if (k == "oob_write")
        return "out-of-bounds write";
    if (k == "misaligned")
        return f.where.access.empty() ? "misaligned access" : "misaligned " + f.where.access;
    if (k == "invalid_address")
        return f.where.access.empty() ? "access to an invalid address" : "invalid " + f.where.access;
    if (k == "shared_race")
        return "shared-memory race";
    if (k == "uninit_global_read")
        return f.hostSide ? "uninitialised global memory read by the host" : "uninitialised global-memory read";
    if (k == "uninit_shared_read")
        return "uninitialised shared-memory read";
    if (k == "barrier_divergent")
        return "barrier reached by divergent threads";
    if (k == "invalid_barrier")
        return "invalid barrier";
    if (k == "hardware_exception")
        return "hardware exception";
    if (k == "api_error")
        return "CUDA API error";
    if (k == "leak")
        return "memory leak";
    return k.empty() || k == "other" ? "finding" : k;
}

bool isAccessKind(const std::string& k)
{
    return k == "oob_read" || k == "oob_write" || k == "misaligned" || k == "invalid_address" ||
           k == "uninit_global_read" || k == "uninit_shared_read";
}

std::string baseName(const std::string& path)
{
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string raceSide(const SanitizerAccess& a)
{
    std::string s = a.access.empty() ? "access" : a.access;
    if (a.line > 0)
        s += " at line " + std::to_string(a.line);
    return s;
}

} // namespace

nlohmann::json toJson(const SanitizerFinding& f)
{
    nlohmann::json j = {{"tool", f.tool},       {"kind", f.kind},       {"severity", f.severity},
                        {"description", f.description}, {"where", toJson(f.where)}, {"space", f.space},
                        {"size", f.size},       {"address", f.address}, {"count", f.count},
                        {"host_side", f.hostSide}};
    if (f.other)
        j["other"] = toJson(*f.other);
    return j;
}

nlohmann::json toJson(const SanitizerSection& s)
{
    nlohmann::json tools = nlohmann::json::array();
    for (const SanitizerToolRun& t : s.tools)
        tools.push_back({{"tool", t.tool}, {"ran", t.ran}, {"skipped", t.skipped}, {"error", t.error},
                         {"exit_code", t.exitCode}, {"duration_ms", t.durationMs}, {"findings", t.findings},
                         {"truncated", t.truncated}, {"ignored", t.ignored}});
    nlohmann::json findings = nlohmann::json::array();
    for (const SanitizerFinding& f : s.findings)
        findings.push_back(toJson(f));
    return {{"ran", s.ran},       {"requested", s.requested}, {"reason", s.reason},
            {"tool_version", s.toolVersion}, {"tool_path", s.toolPath},
            {"shapes", s.shapes}, {"seed", s.seed},     {"duration_ms", s.durationMs},    {"tools", tools},
            {"findings", findings}};
}

SanitizerSection readSanitizerSection(const Fields& f)
{
    return readSection(f);
}

Result<SanitizerSection> sanitizerSectionFromJson(const nlohmann::json& j, const std::string& pointer)
{
    return readReport<SanitizerSection>("read the sanitizer section of a report",
                                        [&] { return readSection(Fields(j, pointer)); });
}

std::string SanitizerFinding::summary() const
{
    std::string s = "compute-sanitizer " + (tool.empty() ? std::string("(no tool)") : tool) + ": " + kindWords(*this);
    if (isAccessKind(kind) && size > 0 && !hostSide)
        s += " of " + std::to_string(size) + (size == 1 ? " byte" : " bytes");
    if (kind == "shared_race" && other)
        s += " (" + raceSide(where) + " / " + raceSide(*other) + ")";
    if (!where.kernel.empty())
        s += " in " + where.kernel;
    if (kind != "shared_race" && where.line > 0)
        s += " at " + (where.file.empty() ? std::string("line ") : baseName(where.file) + ":") + std::to_string(where.line);
    if (where.block)
        s += ", block " + dim3Text(*where.block);
    if (where.thread)
        s += std::string(where.block ? " " : ", ") + "thread " + dim3Text(*where.thread);
    // Records without a place in the kernel (API errors, host accesses, leaks, unknown ones) are
    // only understood through the tool's own words.
    if (!description.empty() && (hostSide || kind == "other" || kind.empty() || where.kernel.empty()))
        s += ": " + text::clipUtf8(description, 300);
    return s;
}

bool SanitizerSection::clean() const
{
    if (!ran || tools.empty() || !findings.empty())
        return false;
    return std::all_of(tools.begin(), tools.end(), [](const SanitizerToolRun& t) {
        return (t.ran || !t.skipped.empty()) && t.error.empty() && t.findings == 0 && !t.truncated;
    });
}

std::string SanitizerSection::firstProblem() const
{
    if (!findings.empty())
        return findings.front().summary();
    for (const SanitizerToolRun& t : tools)
        if (!t.error.empty())
            return "compute-sanitizer " + t.tool + ": " + t.error;
    return {};
}

} // namespace kf::protocol
