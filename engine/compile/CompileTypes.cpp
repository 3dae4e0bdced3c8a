#include "engine/compile/CompileTypes.h"

#include "engine/core/Base64.h"
#include "engine/core/JsonReader.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace kf {

namespace {

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

// Each element of the optional array under `key`, read by `read(element)` into `into`.
template <class T, class F>
void readNestedArray(json::Object& o, std::string_view key, std::vector<T>& into, F&& read)
{
    const nlohmann::json* v = o.optional(key);
    if (!v)
        return;
    const nlohmann::json& a = json::asArray(*v, o.at(key));
    for (size_t i = 0; i < a.size(); ++i)
        into.push_back(readNested(json::child(o.at(key), i), [&] { return read(a[i]); }));
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
    readNestedArray(o, "diagnostics", r.diagnostics, diagnosticFromJson);
    r.log = o.stringOr("log", "");
    if (const Json* names = o.optional("lowered_names")) {
        Object n(*names, o.at("lowered_names"));
        for (auto it = names->begin(); it != names->end(); ++it)
            r.loweredNames[it.key()] = asString(it.value(), n.at(it.key()));
    }
    readNestedArray(o, "kernels", r.kernels, kernelResourcesFromJson);
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
