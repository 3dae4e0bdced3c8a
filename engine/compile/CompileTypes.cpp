#include "engine/compile/CompileTypes.h"

#include "engine/core/JsonReader.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace kf {

namespace {

constexpr char kBase64Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Standard alphabet with padding (RFC 4648 section 4): what `base64 -d` and every JSON consumer
// understands without options.
std::string base64Encode(std::string_view in)
{
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 3 <= in.size(); i += 3) {
        std::uint32_t v = (std::uint32_t(std::uint8_t(in[i])) << 16) |
                          (std::uint32_t(std::uint8_t(in[i + 1])) << 8) | std::uint8_t(in[i + 2]);
        out += kBase64Alphabet[(v >> 18) & 63];
        out += kBase64Alphabet[(v >> 12) & 63];
        out += kBase64Alphabet[(v >> 6) & 63];
        out += kBase64Alphabet[v & 63];
    }
    size_t rest = in.size() - i;
    if (rest > 0) {
        std::uint32_t v = std::uint32_t(std::uint8_t(in[i])) << 16;
        if (rest == 2)
            v |= std::uint32_t(std::uint8_t(in[i + 1])) << 8;
        out += kBase64Alphabet[(v >> 18) & 63];
        out += kBase64Alphabet[(v >> 12) & 63];
        out += rest == 2 ? kBase64Alphabet[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

// Strict: length a multiple of 4, padding only at the end, no whitespace. A cubin that decodes
// "mostly" would fail much later with a baffling driver error, so we refuse it here.
bool base64Decode(std::string_view in, std::string& out)
{
    static const std::array<std::int8_t, 256> table = [] {
        std::array<std::int8_t, 256> t{};
        t.fill(-1);
        for (int i = 0; i < 64; ++i)
            t[std::uint8_t(kBase64Alphabet[i])] = std::int8_t(i);
        return t;
    }();
    out.clear();
    if (in.size() % 4 != 0)
        return false;
    out.reserve(in.size() / 4 * 3);
    for (size_t i = 0; i < in.size(); i += 4) {
        const bool last = i + 4 == in.size();
        int pad = 0;
        if (last) {
            if (in[i + 3] == '=')
                pad = in[i + 2] == '=' ? 2 : 1;
        }
        std::uint32_t v = 0;
        for (int k = 0; k < 4 - pad; ++k) {
            std::int8_t d = table[std::uint8_t(in[i + k])];
            if (d < 0)
                return false;
            v |= std::uint32_t(d) << (18 - 6 * k);
        }
        out += char((v >> 16) & 0xff);
        if (pad < 2)
            out += char((v >> 8) & 0xff);
        if (pad < 1)
            out += char(v & 0xff);
    }
    return true;
}

// Errors of nested readers name pointers relative to their own value; make them absolute.
template <class F>
auto readNested(const std::string& pointer, F&& read)
{
    try {
        return read();
    } catch (json::SchemaError& e) {
        e.pointer = e.pointer == "/" ? pointer : pointer + e.pointer;
        throw;
    } catch (const nlohmann::json::exception& e) {
        // Readers built on json::value() throw type errors; give them a pointer like ours.
        json::fail(pointer, e.what());
    }
}

} // namespace

std::vector<std::string> CompileOptions::nvrtcArguments() const
{
    std::vector<std::string> args;
    args.push_back("--gpu-architecture=" + arch);
    if (!cxxStd.empty())
        args.push_back("--std=" + cxxStd);
    if (lineInfo)
        args.push_back("-lineinfo");
    if (fastMath)
        args.push_back("--use_fast_math");
    // One argument per ptxas flag: NVRTC 13 passes "--ptxas-options=-O3 -v" to ptxas as a
    // single word and ptxas rejects it. ptxas silently accepts -O9, so clamp to what it means.
    args.push_back("--ptxas-options=-O" + std::to_string(std::clamp(optLevel, 0, 3)));
    if (ptxasVerbose)
        args.push_back("--ptxas-options=-v");
    if (maxRegisters > 0)
        args.push_back("--maxrregcount=" + std::to_string(maxRegisters));
    for (const auto& [name, value] : defines)
        args.push_back(value.empty() ? "-D" + name : "-D" + name + "=" + value);
    for (const auto& dir : includeDirs)
        args.push_back("-I" + dir);
    // Last, so the user can override anything above (NVRTC takes the last occurrence).
    args.insert(args.end(), extraOptions.begin(), extraOptions.end());
    return args;
}

int CompileResult::errorCount() const
{
    return int(std::count_if(diagnostics.begin(), diagnostics.end(),
                             [](const Diagnostic& d) { return d.severity == Diagnostic::Severity::Error; }));
}

int CompileResult::warningCount() const
{
    return int(std::count_if(diagnostics.begin(), diagnostics.end(),
                             [](const Diagnostic& d) { return d.severity == Diagnostic::Severity::Warning; }));
}

nlohmann::json toJson(const CompileResult& r, bool includeBinaries)
{
    nlohmann::json j = nlohmann::json::object();
    j["schema_version"] = kCompileResultSchemaVersion;
    j["success"] = r.success;
    j["arch"] = r.arch;
    j["nvrtc_version"] = r.nvrtcVersion;
    j["cache_key"] = r.cacheKey;
    j["from_cache"] = r.fromCache;
    j["compile_ms"] = r.compileMs;
    j["error_count"] = r.errorCount();
    j["warning_count"] = r.warningCount();
    nlohmann::json diags = nlohmann::json::array();
    for (const auto& d : r.diagnostics)
        diags.push_back(toJson(d));
    j["diagnostics"] = std::move(diags);
    j["log"] = r.log;
    j["lowered_names"] = nlohmann::json::object();
    for (const auto& [expr, mangled] : r.loweredNames)
        j["lowered_names"][expr] = mangled;
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& k : r.kernels)
        kernels.push_back(toJson(k));
    j["kernels"] = std::move(kernels);
    j["sass_unavailable_reason"] = r.sassUnavailableReason;
    if (includeBinaries) {
        j["ptx"] = r.ptx;
        j["cubin_base64"] = base64Encode(r.cubin);
        j["sass"] = r.sass;
    }
    return j;
}

CompileResult compileResultFromJson(const nlohmann::json& j)
{
    using namespace kf::json;
    CompileResult r;
    Object o(j, "");
    std::int64_t version = o.integer("schema_version");
    if (version != kCompileResultSchemaVersion)
        fail(o.at("schema_version"), "unsupported schema_version " + std::to_string(version) +
                                         "; this build reads version " +
                                         std::to_string(kCompileResultSchemaVersion));
    r.success = asBool(o.required("success"), o.at("success"));
    r.arch = o.stringOr("arch", "");
    r.nvrtcVersion = o.stringOr("nvrtc_version", "");
    r.cacheKey = o.stringOr("cache_key", "");
    r.fromCache = o.booleanOr("from_cache", false);
    r.compileMs = o.numberOr("compile_ms", 0.0);
    // Derived from the diagnostics; accepted so our own output reads back, never trusted.
    o.optional("error_count");
    o.optional("warning_count");
    if (const Json* d = o.optional("diagnostics")) {
        const Json& a = asArray(*d, o.at("diagnostics"));
        for (size_t i = 0; i < a.size(); ++i)
            r.diagnostics.push_back(readNested(child(o.at("diagnostics"), i),
                                               [&] { return diagnosticFromJson(a[i]); }));
    }
    r.log = o.stringOr("log", "");
    if (const Json* names = o.optional("lowered_names")) {
        Object n(*names, o.at("lowered_names"));
        for (auto it = names->begin(); it != names->end(); ++it)
            r.loweredNames[it.key()] = asString(it.value(), n.at(it.key()));
    }
    if (const Json* k = o.optional("kernels")) {
        const Json& a = asArray(*k, o.at("kernels"));
        for (size_t i = 0; i < a.size(); ++i)
            r.kernels.push_back(readNested(child(o.at("kernels"), i),
                                           [&] { return kernelResourcesFromJson(a[i]); }));
    }
    r.sassUnavailableReason = o.stringOr("sass_unavailable_reason", "");
    r.ptx = o.stringOr("ptx", "");
    if (const Json* c = o.optional("cubin_base64")) {
        if (!base64Decode(asString(*c, o.at("cubin_base64")), r.cubin))
            fail(o.at("cubin_base64"), "not valid base64 (standard alphabet, '=' padding, no whitespace)");
    }
    r.sass = o.stringOr("sass", "");
    o.finish();
    return r;
}

} // namespace kf
