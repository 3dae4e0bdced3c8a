#include "engine/sanitize/SanitizerXml.h"

#include "engine/core/Text.h"

#include <pugixml.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <limits>

// The record shapes below are those compute-sanitizer 2025.3 writes; tests/fixtures/sanitizer/ has
// real files of each (README.md there says where they came from):
//   memcheck   <kind>Precise</kind><level>Error</level><who>…</who><what><text/><space/><size/>
//              <direction/><error/><address/></what><where><func/><path/><line/><pc/></where>
//   initcheck  <kind>Initcheck</kind>, <who>, <what><text/><address/><size/></what>, <where>
//   synccheck  <kind>Synccheck</kind>, <who>, <what><text>Barrier error</text><type/></what>, <where>
//   racecheck  <kind>Analysis</kind><level>Warning</level><what><text>Race condition</text>
//              <source><direction/><where/></source><destination>…<count/></destination>…</what>
//              and with --racecheck-report all also <kind>Hazard</kind><what><common>…<blockIdx/>
//              </common><thread0><access/><threadIdx/><where/></thread0><thread1>…</thread1></what>
//   every tool <kind>Api</kind><what><text>Program hit cudaError… on CUDA API call to …</text></what>

namespace kf::sanitize {

namespace {

constexpr size_t kMaxXmlBytes = size_t(64) << 20;
constexpr std::int64_t kMaxRecords = 100'000;
/// Any one text taken from the file (a description, a kernel name, a path) is clipped here.
constexpr size_t kMaxFieldBytes = 4096;

const char* const kTools[] = {"memcheck", "racecheck", "initcheck", "synccheck"};

std::string field(const pugi::xml_node& node, const char* name)
{
    return text::clipUtf8(text::trim(node.child_value(name)), kMaxFieldBytes);
}

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

bool contains(const std::string& haystack, std::string_view needle) { return haystack.find(needle) != std::string::npos; }

std::optional<std::int64_t> integer(std::string_view s)
{
    s = text::trim(s);
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size())
        return std::nullopt;
    return v;
}

std::optional<std::array<std::int64_t, 3>> dim3(const pugi::xml_node& node)
{
    if (!node)
        return std::nullopt;
    std::array<std::int64_t, 3> out{};
    const char* axes[] = {"x", "y", "z"};
    for (int i = 0; i < 3; ++i) {
        const auto v = integer(node.child_value(axes[i]));
        if (!v)
            return std::nullopt;
        out[i] = *v;
    }
    return out;
}

/// `<where>`: function, source path, line and pc of one access.
void readWhere(const pugi::xml_node& where, protocol::SanitizerAccess& a)
{
    a.kernel = field(where, "func");
    a.file = field(where, "path");
    const auto line = integer(where.child_value("line"));
    a.line = line && *line > 0 && *line <= std::numeric_limits<int>::max() ? static_cast<int>(*line) : 0;
    a.pc = field(where, "pc");
}

std::int64_t saturatingAdd(std::int64_t a, std::int64_t b)
{
    return b > std::numeric_limits<std::int64_t>::max() - a ? std::numeric_limits<std::int64_t>::max() : a + b;
}

/// racecheck's analysis record: the source access and the accesses that race with it.
void readAnalysis(const pugi::xml_node& what, protocol::SanitizerFinding& f)
{
    const pugi::xml_node source = what.child("source");
    f.where.access = lower(field(source, "direction"));
    readWhere(source.child("where"), f.where);
    std::int64_t count = 0;
    for (const pugi::xml_node& d : what.children("destination")) {
        if (!f.other) {
            protocol::SanitizerAccess other;
            other.access = lower(field(d, "direction"));
            readWhere(d.child("where"), other);
            f.other = std::move(other);
        }
        const auto c = integer(d.child_value("count"));
        if (c && *c > 0)
            count = saturatingAdd(count, *c);
    }
    f.count = std::max<std::int64_t>(count, 1);
}

/// racecheck's hazard record (--racecheck-report all): one pair of threads of one block.
void readHazard(const pugi::xml_node& what, protocol::SanitizerFinding& f)
{
    const pugi::xml_node common = what.child("common");
    f.address = field(common, "address");
    const auto block = dim3(common.child("blockIdx"));
    const auto side = [&](const pugi::xml_node& t, protocol::SanitizerAccess& a) {
        a.access = lower(field(t, "access"));
        readWhere(t.child("where"), a);
        a.thread = dim3(t.child("threadIdx"));
        a.block = block;
    };
    side(what.child("thread0"), f.where);
    if (const pugi::xml_node t1 = what.child("thread1")) {
        protocol::SanitizerAccess other;
        side(t1, other);
        f.other = std::move(other);
    }
}

/// The kind of a memcheck access record, from its error and direction.
std::string memcheckKind(const std::string& text, const std::string& error, const std::string& direction)
{
    const std::string both = text + " " + error;
    if (contains(both, "misaligned"))
        return "misaligned";
    if (contains(both, "out of bounds") || contains(both, "out-of-bounds")) {
        if (direction == "read" || (direction.empty() && contains(text, " read")))
            return "oob_read";
        if (direction == "write" || (direction.empty() && (contains(text, " write") || contains(text, " atomic"))))
            return "oob_write";
        return "other";
    }
    if (contains(both, "invalid") || contains(both, "illegal address") || contains(both, "address is not valid"))
        return "invalid_address";
    return "other";
}

void classify(const pugi::xml_node& record, const std::string& tool, protocol::SanitizerFinding& f)
{
    const std::string kind = lower(field(record, "kind"));
    const pugi::xml_node what = record.child("what");
    const std::string text = lower(f.description);
    const std::string error = lower(field(what, "error"));

    if (kind == "api") {
        // A consequence seen by the host (the launch failed, a copy hit a bad pointer), not an
        // access of the kernel; the runner decides what it means.
        f.kind = "api_error";
        f.hostSide = true;
        return;
    }
    if (kind == "analysis" || kind == "hazard" || contains(text, "race condition") || contains(text, "hazard")) {
        if (kind == "hazard" || what.child("thread0"))
            readHazard(what, f);
        else
            readAnalysis(what, f);
        f.kind = "shared_race";
        if (f.space.empty())
            f.space = "__shared__";   // racecheck checks shared memory only
        return;
    }
    if (contains(kind, "leak") || contains(text, "leaked")) {
        f.kind = "leak";
        f.hostSide = true;
        return;
    }
    // A host API's own access to device memory (a cudaMemcpy reading memory nothing wrote):
    // "Host API memory access error at host access to 0x… of size 4 bytes".
    const bool host = contains(text, "host api") || contains(text, "host access");
    if (host)
        f.hostSide = true;
    // initcheck reports only memory read before it was written (or never used): a host access
    // it reports is a copy reading such memory.
    if (contains(text, "uninitialized") || contains(text, "uninitialised") || kind == "initcheck" ||
        (host && tool == "initcheck")) {
        if (contains(text, "unused memory"))
            f.kind = "other";
        else if (contains(text, "__shared__") || f.space == "__shared__")
            f.kind = "uninit_shared_read";
        else
            f.kind = "uninit_global_read";
        if (f.where.access.empty() && !host && contains(text, " read"))
            f.where.access = "read";   // "Uninitialized __global__ memory read of size 4 bytes"
        return;
    }
    if (host) {
        f.kind = "api_error";
        return;
    }
    if (kind == "synccheck" || contains(text, "barrier") || contains(text, "syncwarp")) {
        const std::string type = lower(field(what, "type"));
        f.kind = contains(type, "divergent") || contains(text, "divergent") ? "barrier_divergent" : "invalid_barrier";
        if (f.where.access.empty())
            f.where.access = "barrier";
        return;
    }
    // Hardware exceptions ("Warp Illegal Address", "Illegal Instruction", "Hardware Stack
    // Overflow") come imprecise: the tool names the warp's fault, not a checked access.
    if (contains(kind, "exception") || kind == "imprecise" || text.rfind("warp ", 0) == 0 ||
        contains(text, "illegal instruction") || contains(text, "stack overflow") || contains(text, "exception")) {
        f.kind = "hardware_exception";
        return;
    }
    if (tool == "memcheck" || kind == "precise")
        f.kind = memcheckKind(text, error, f.where.access);
    else
        f.kind = "other";
}

protocol::SanitizerFinding readRecord(const pugi::xml_node& record, const std::string& tool)
{
    protocol::SanitizerFinding f;
    f.tool = tool;
    const pugi::xml_node what = record.child("what");
    f.description = field(what, "text");
    const std::string level = lower(field(record, "level"));
    const std::string kind = lower(field(record, "kind"));
    if (level == "warning" || level == "info" || (level.empty() && (kind == "hazard" || kind == "analysis")))
        f.severity = "warning";
    f.space = field(what, "space");
    if (const auto size = integer(what.child_value("size")); size && *size > 0)
        f.size = *size;
    f.address = field(what, "address");
    f.where.access = lower(field(what, "direction"));
    readWhere(record.child("where"), f.where);
    if (const pugi::xml_node who = record.child("who")) {
        f.where.thread = dim3(who.child("threadIdx"));
        f.where.block = dim3(who.child("blockIdx"));
    }
    classify(record, tool, f);
    if (f.hostSide) {
        // Not the kernel's access: a device place that came with it would only mislead.
        f.where.kernel.clear();
    }
    return f;
}

Error xmlError(const std::string& origin, std::string why, std::string hint = {})
{
    return Error::inFile(origin, {}, "read compute-sanitizer's XML report", std::move(why), std::move(hint));
}

/// A kernel name as compared: no return type, no parameter list, no white space, no leading "::".
std::string comparable(std::string_view text)
{
    std::string owned(text::trim(text));
    for (size_t at; (at = owned.find("(anonymous namespace)::")) != std::string::npos;)
        owned.erase(at, 23);
    const std::string_view name = owned;
    // The first '(' or '<' outside template arguments ends the plain name; a space before it
    // separates a return type ("void shift_add<float>(…)").
    int depth = 0;
    size_t nameEnd = name.size(), params = name.size();
    for (size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        if (c == '<') {
            if (depth == 0 && nameEnd == name.size())
                nameEnd = i;
            ++depth;
        } else if (c == '>' && depth > 0) {
            --depth;
        } else if (c == '(' && depth == 0) {
            params = i;
            nameEnd = std::min(nameEnd, i);
            break;
        }
    }
    const size_t space = name.substr(0, nameEnd).find_last_of(" \t");
    const size_t start = space == std::string_view::npos ? 0 : space + 1;
    std::string out;
    for (size_t i = start; i < params; ++i)
        if (!std::isspace(static_cast<unsigned char>(name[i])))
            out += name[i];
    while (out.rfind("::", 0) == 0)
        out.erase(0, 2);
    return out;
}

std::string withoutTemplateArguments(const std::string& name) { return name.substr(0, name.find('<')); }

} // namespace

Result<ParsedXml> parseSanitizerXml(std::string_view xml, const std::string& tool, const std::string& origin)
{
    if (std::find(std::begin(kTools), std::end(kTools), tool) == std::end(kTools))
        return xmlError(origin, "unknown compute-sanitizer tool \"" + text::clipUtf8(tool, 100) + "\"",
                        "expected memcheck, racecheck, initcheck or synccheck");
    if (xml.empty())
        return xmlError(origin, "the file is empty (compute-sanitizer always writes <ComputeSanitizerOutput>)",
                        "the tool probably did not run to the end; its text output says why");
    if (xml.size() > kMaxXmlBytes)
        return xmlError(origin, "the file has " + std::to_string(xml.size()) + " bytes, more than the 64 MiB read",
                        "lower --print-limit");
    pugi::xml_document doc;
    const pugi::xml_parse_result parsed =
        doc.load_buffer(xml.data(), xml.size(), pugi::parse_default, pugi::encoding_utf8);
    if (!parsed)
        return xmlError(origin, std::string("it is not well-formed XML: ") + parsed.description() + " at byte " +
                                    std::to_string(parsed.offset));
    const pugi::xml_node root = doc.document_element();
    if (std::string_view(root.name()) != "ComputeSanitizerOutput")
        return xmlError(origin, "the root element is <" + text::clipUtf8(root.name(), 100) +
                                    ">, not <ComputeSanitizerOutput>: not a compute-sanitizer report");
    for (pugi::xml_node n = root.next_sibling(); n; n = n.next_sibling())
        if (n.type() == pugi::node_element)
            return xmlError(origin, "the document has more than one root element");

    ParsedXml out;
    for (const pugi::xml_node& record : root.children("record")) {
        if (++out.records > kMaxRecords)
            return xmlError(origin, "more than " + std::to_string(kMaxRecords) + " records",
                            "lower --print-limit");
        out.findings.push_back(readRecord(record, tool));
    }
    return out;
}

bool findingInKernels(const protocol::SanitizerFinding& f, const std::vector<std::string>& nameExpressions)
{
    if (f.hostSide || f.where.kernel.empty())
        return false;
    const std::string kernel = comparable(f.where.kernel);
    if (kernel.empty())
        return false;
    // compute-sanitizer's XML names a templated kernel without its arguments (<func>shift_add</func>
    // for shift_add<float>); such a name matches every instance of the template.
    const bool bare = kernel.find('<') == std::string::npos;
    for (const std::string& expression : nameExpressions) {
        const std::string e = comparable(expression);
        if (e.empty())
            continue;
        if (e == kernel || (bare && withoutTemplateArguments(e) == kernel))
            return true;
    }
    return false;
}

} // namespace kf::sanitize
