// The registry's index and entries as JSON (docs/registry.md): the reader, with every field's
// pointer in its errors, and the writer; and Registry::listing(), the index with what each signed
// record says of its evidence. Registry.cpp does the file work.
#include "engine/registry/Registry.h"

#include "engine/core/JsonReader.h"
#include "engine/protocol/Signature.h"
#include "engine/registry/KernelId.h"
#include "engine/registry/RegistryInternal.h"

#include <algorithm>
#include <set>

namespace fs = std::filesystem;

namespace kf {

namespace jr = kf::json;
using Json = nlohmann::json;
using namespace registry_internal;

namespace {

RegistryEntry parseEntry(const Json& v, const std::string& ptr)
{
    jr::Object o(v, ptr);
    RegistryEntry e;
    e.id = o.string("id");
    if (!isValidKernelId(e.id))
        jr::fail(o.at("id"), "\"" + e.id + "\" is not a registry ID (<lang>_<op>_<gpu>_<dtype>_<shapes>_v<n>)");
    e.version = static_cast<int>(o.integer("version"));
    e.op = o.string("op");
    e.taskName = o.string("task");
    e.dtype = o.string("dtype");
    e.gpu = o.string("gpu");
    e.arch = o.string("arch");
    e.kernelFile = o.string("kernel_file");
    e.benchmarkShapes = jr::asArray(o.required("benchmark_shapes"), o.at("benchmark_shapes"));
    e.geomeanSpeedup = o.number("geomean_speedup");
    e.minSpeedup = o.number("min_speedup");
    if (const Json* c = o.optional("compile_speedup"); c && !c->is_null())
        e.compileSpeedup = jr::asNumber(*c, o.at("compile_speedup"));
    e.sourceHash = o.string("source_hash");
    e.taskHash = o.string("task_hash");
    e.promotedAt = o.string("promoted_at");
    e.status = o.string("status"); // required: a deleted status must not reactivate a deprecated kernel
    if (e.status != "active" && e.status != "deprecated")
        jr::fail(o.at("status"), "status must be \"active\" or \"deprecated\"");
    e.deprecatedAt = o.stringOr("deprecated_at", "");
    e.deprecationReason = o.stringOr("deprecation_reason", "");
    const Json& files = jr::asArray(o.required("files"), o.at("files"));
    for (size_t i = 0; i < files.size(); ++i) {
        jr::Object f(files[i], jr::child(o.at("files"), i));
        RegistryFile rf{f.string("path"), f.string("hash"), f.integer("bytes")};
        const fs::path p(rf.path);
        if (!isSafeRelativePath(rf.path) || p.is_absolute())
            jr::fail(f.at("path"), "a file path must stay inside the version folder");
        f.finish();
        e.files.push_back(std::move(rf));
    }
    if (!isSafeRelativePath(e.kernelFile) ||
        std::none_of(e.files.begin(), e.files.end(), [&](const RegistryFile& f) { return f.path == e.kernelFile; }))
        jr::fail(o.at("kernel_file"), "kernel_file must name one of the entry's files");
    o.finish();
    return e;
}

} // namespace

Json registryEntryToJson(const RegistryEntry& e)
{
    Json files = Json::array();
    for (const RegistryFile& f : e.files)
        files.push_back({{"path", f.path}, {"hash", f.hash}, {"bytes", f.bytes}});
    Json j = {{"id", e.id},
              {"version", e.version},
              {"op", e.op},
              {"task", e.taskName},
              {"dtype", e.dtype},
              {"gpu", e.gpu},
              {"arch", e.arch},
              {"kernel_file", e.kernelFile},
              {"benchmark_shapes", e.benchmarkShapes},
              {"geomean_speedup", e.geomeanSpeedup},
              {"min_speedup", e.minSpeedup},
              {"source_hash", e.sourceHash},
              {"task_hash", e.taskHash},
              {"promoted_at", e.promotedAt},
              {"status", e.status},
              {"files", files}};
    if (e.compileSpeedup)
        j["compile_speedup"] = *e.compileSpeedup;
    if (e.deprecated()) {
        j["deprecated_at"] = e.deprecatedAt;
        j["deprecation_reason"] = e.deprecationReason;
    }
    return j;
}

std::string RegistryEntry::shapesText() const
{
    std::string out;
    for (const Json& s : benchmarkShapes) {
        std::string one;
        if (s.is_object())
            for (const auto& [k, v] : s.items())
                one += (one.empty() ? "" : " ") + k + "=" + v.dump();
        out += (out.empty() ? "" : "; ") + one;
    }
    return out;
}

const RegistryEntry* RegistryIndex::find(std::string_view id) const
{
    for (const RegistryEntry& e : kernels)
        if (e.id == id)
            return &e;
    return nullptr;
}

Result<RegistryIndex> parseRegistryIndex(const Json& j, const std::string& origin)
{
    try {
        jr::Object o(j, "");
        const std::int64_t version = o.integer("schema_version");
        if (version != kRegistrySchemaVersion)
            jr::fail(o.at("schema_version"), "schema_version " + std::to_string(version) +
                                                 " is not supported; this KernelForge reads version " +
                                                 std::to_string(kRegistrySchemaVersion));
        RegistryIndex index;
        index.threshold = o.numberOr("speedup_threshold", kDefaultSpeedupThreshold);
        if (!(index.threshold >= 1.0) || !std::isfinite(index.threshold))
            jr::fail(o.at("speedup_threshold"), "the speedup threshold must be a number ≥ 1.0");
        if (const Json* c = o.optional("compile_speedup_threshold"); c && !c->is_null()) {
            index.compileThreshold = jr::asNumber(*c, o.at("compile_speedup_threshold"));
            if (!(*index.compileThreshold > 0) || !std::isfinite(*index.compileThreshold))
                jr::fail(o.at("compile_speedup_threshold"), "the torch.compile threshold must be a number > 0, or null for none");
        }
        if (const Json* sp = o.optional("sanitizer_policy")) {
            const std::string name = jr::asString(*sp, o.at("sanitizer_policy"));
            const auto policy = parseSanitizerPolicy(name);
            if (!policy)
                jr::fail(o.at("sanitizer_policy"), "\"" + name + "\" is not a sanitizer policy: use " + kSanitizerPolicyChoices);
            index.sanitizerPolicy = *policy;
        }
        const Json& kernels = jr::asArray(o.required("kernels"), o.at("kernels"));
        std::set<std::string> seen;
        for (size_t i = 0; i < kernels.size(); ++i) {
            RegistryEntry e = parseEntry(kernels[i], jr::child(o.at("kernels"), i));
            if (!seen.insert(e.id).second)
                jr::fail(jr::child(jr::child(o.at("kernels"), i), "id"), "the ID " + e.id + " appears twice");
            index.kernels.push_back(std::move(e));
        }
        if (const Json* removed = o.optional("removed")) {
            index.removed = jr::asStringArray(*removed, o.at("removed"));
            for (size_t i = 0; i < index.removed.size(); ++i)
                if (!isValidKernelId(index.removed[i]))
                    jr::fail(jr::child(o.at("removed"), i), "\"" + index.removed[i] + "\" is not a registry ID");
        }
        o.finish();
        return index;
    } catch (const jr::SchemaError& e) {
        return Error::inFile(origin, e.pointer, "read the registry index", e.message, "run `kforge registry check`; restore the file from a backup if it was edited by hand");
    }
}

Json registryIndexToJson(const RegistryIndex& index)
{
    Json kernels = Json::array();
    for (const RegistryEntry& e : index.kernels)
        kernels.push_back(registryEntryToJson(e));
    Json j = {{"schema_version", kRegistrySchemaVersion}, {"speedup_threshold", index.threshold}, {"kernels", kernels}};
    if (!index.removed.empty())
        j["removed"] = index.removed;
    if (index.compileThreshold)
        j["compile_speedup_threshold"] = *index.compileThreshold;
    // Written when not the default, so a KernelForge from before the policy still reads the index.
    if (index.sanitizerPolicy != kDefaultSanitizerPolicy)
        j["sanitizer_policy"] = sanitizerPolicyName(index.sanitizerPolicy);
    return j;
}

// What `registry list` and the workbench show beside the index: each signed record's word.
Result<RegistryIndex> Registry::listing() const
{
    auto index = load();
    if (!index)
        return index;
    auto key = protocol::loadSigningKey(false);
    const std::string keyProblem = key ? std::string() : key.error().message();
    for (RegistryEntry& e : index->kernels) {
        auto j = jr::readFile(entryDirectory(e.id) / "promotion.json");
        if (!j)
            continue;
        e.recordSignature = protocol::checkSignature(j.value(), key ? &key.value() : nullptr, keyProblem).state;
        if (const auto it = j->find("unsigned_evidence_accepted"); it != j->end() && it->is_boolean())
            e.unsignedEvidence = it->get<bool>();
    }
    return index;
}

} // namespace kf
