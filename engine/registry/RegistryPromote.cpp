// `Registry::promote`: the gates judged under the registry's lock, then the new version's index
// entry, its folder's files and its signed promotion.json, staged and renamed into place before
// the index names it (docs/registry.md).
#include "engine/registry/Registry.h"

#include "engine/core/Clock.h"
#include "engine/core/Files.h"
#include "engine/core/Hash.h"
#include "engine/protocol/ReportJson.h"
#include "engine/protocol/Signature.h"
#include "engine/registry/KernelId.h"
#include "engine/registry/RegistryHooks.h"
#include "engine/registry/RegistryInternal.h"
#include "engine/registry/RegistryLedger.h"
#include "engine/task/TaskFiles.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kf {

using namespace registry_internal;
using Json = nlohmann::json;

namespace {

// The versions already used for `prefix`: in the index, in the ledger (removed and given out,
// even when the index was rebuilt since) and as folders on disk (an orphan left by a killed
// promote keeps its number, so no two promotions ever share a folder name).
int nextVersion(const fs::path& dir, const RegistryIndex& index, const std::optional<Ledger>& ledger, const std::string& prefix)
{
    int highest = ledger ? ledgerHighest(*ledger, prefix) : 0;
    for (const RegistryEntry& e : index.kernels)
        if (auto s = splitKernelId(e.id); s && s->first == prefix)
            highest = std::max(highest, s->second);
    for (const std::string& id : index.removed) // an ID once given out is never given to other code
        if (auto s = splitKernelId(id); s && s->first == prefix)
            highest = std::max(highest, s->second);
    std::error_code ec;
    for (const auto& d : fs::directory_iterator(dir, ec))
        if (auto s = splitKernelId(d.path().filename().string()); s && s->first == prefix)
            highest = std::max(highest, s->second);
    return highest + 1;
}

struct Staged {
    std::string path;
    std::string bytes;
};

// Files of the task's include folders, so the version folder holds everything the kernel compiles from.
Result<std::vector<Staged>> includeFiles(const Task& task)
{
    std::vector<Staged> out;
    for (const std::string& inc : task.compile.includeDirs) {
        const fs::path root = task.directory / inc;
        std::error_code ec;
        if (!fs::is_directory(root, ec))
            continue;
        for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
             it.increment(ec)) {
            if (!it->is_regular_file())
                continue;
            const std::string name = (fs::path(inc) / fs::relative(it->path(), root)).lexically_normal().string();
            auto bytes = readTaskFile(task.directory, name);   // a link out of the task is refused
            if (!bytes)
                return bytes.error();
            out.push_back({name, std::move(bytes.value())});
        }
    }
    return out;
}


/// The index entry of the new version: what the task, the reports and the gates say of it.
RegistryEntry newEntry(const PromotionInput& in, const CurrentFiles& files, const GateVerdict& gates,
                       const std::string& prefix, int version)
{
    const protocol::VerifyReport& correctness = *in.correctness->verify();
    const protocol::Environment& env = correctness.header.environment;
    RegistryEntry e;
    e.id = kernelId(prefix, version);
    e.version = version;
    e.op = opSlug(in.task);
    e.taskName = in.task.name;
    e.dtype = in.task.outputs.empty() ? "" : std::string(dtypeName(in.task.outputs.front().dtype));
    e.gpu = env.gpu;
    e.arch = correctness.header.candidate.arch;
    e.kernelFile = fs::path(in.candidateFile).lexically_normal().generic_string();
    e.benchmarkShapes = benchmarkShapesJson(in.task);
    e.sourceHash = files.sourceHash;
    e.taskHash = files.taskHash;
    e.promotedAt = utcNow();
    e.geomeanSpeedup = gates.geomeanSpeedup; // the numbers the gates passed, nothing recomputed
    if (std::isfinite(gates.compileSpeedup))
        e.compileSpeedup = gates.compileSpeedup;
    e.minSpeedup = gates.minSpeedup;
    return e;
}

/// Every file of the version folder but promotion.json: the kernel, the task, its launch, the
/// reports, the include folders' files and a TorchScript reference.
Result<std::vector<Staged>> versionFiles(const PromotionInput& in, const RegistryEntry& e, const CurrentFiles& files)
{
    const Json taskJson = taskToJson(in.task);
    Json launch = Json::object();
    for (const Json& c : taskJson.at("candidates"))
        if (c.value("file", std::string()) == in.candidateFile)
            launch = c;
    auto includes = includeFiles(in.task);
    if (!includes)
        return includes.error();
    std::vector<Staged> staged = {{e.kernelFile, files.source},
                                  {"task.json", pretty(taskJson)},
                                  {"launch.json", pretty(launch)},
                                  {"correctness.json", pretty(in.correctness->document())},
                                  {"performance.json", pretty(in.performance->document())}};
    for (Staged& s : includes.value())
        staged.push_back(std::move(s));
    if (in.task.reference.kind == Reference::Kind::TorchScript) {
        auto script = readTaskFile(in.task.directory, in.task.reference.torchscript);
        if (!script)
            return script.error();
        staged.push_back({in.task.reference.torchscript.lexically_normal().string(), std::move(script.value())});
    }
    return staged;
}

/// promotion.json's record: the entry, the seeds, trials, held-out shapes, tolerances, the
/// environment, the registry's settings and every gate as judged.
PromotionRecord promotionRecord(const PromotionInput& in, const RegistryEntry& e, const RegistryIndex& index,
                                const GateVerdict& gates)
{
    const protocol::VerifyReport& correctness = *in.correctness->verify();
    const protocol::BenchReport& performance = *in.performance->bench();
    PromotionRecord p;
    p.schemaVersion = kRegistrySchemaVersion;
    p.id = e.id;
    p.version = e.version;
    p.promotedAt = e.promotedAt;
    p.promotedBy = in.promotedBy;
    p.task = {in.task.name, e.taskHash};
    p.candidate = correctness.header.candidate;
    p.candidate.file = e.kernelFile;
    p.candidate.sourceHash = e.sourceHash;
    p.candidate.arch = e.arch;
    p.correctnessSeeds = correctness.header.seeds;
    p.performanceSeeds = performance.header.seeds;
    p.trialsPerShape = correctness.trialsPerShape;
    for (const auto& s : correctness.shapes)
        if (s.id.set == "held_out")
            p.heldOutShapes.push_back(s.id);
    for (const TensorSpec& t : in.task.outputs)
        p.tolerances.push_back({t.name, t.tolerance.rtol, t.tolerance.atol, t.tolerance.atolMode == Tolerance::AtolMode::Rms});
    p.environment = correctness.header.environment;
    p.threshold = index.threshold;
    p.compileThreshold = index.compileThreshold;
    if (std::isfinite(gates.compileSpeedup))
        p.compileSpeedup = gates.compileSpeedup;
    p.gates = gates.checks;
    for (const GateCheck& g : gates.checks)
        if (g.gate == "sanitizer" && gates.sanitizer) {
            const GateVerdict::Sanitizer& s = *gates.sanitizer;
            p.sanitizer = PromotionRecord::Sanitizer{s.policy, g.passed ? "passed" : "not_run", g.detail, s.toolVersion,
                                                     s.toolsRun, s.shapes};
        }
    p.geomeanSpeedup = e.geomeanSpeedup;
    p.minSpeedup = e.minSpeedup;
    // The benchmark shapes' timings: the gates judged these shapes.
    for (const auto& s : performance.shapes)
        if (s.id.set == "benchmarks")
            p.perShape.push_back({s.id, s.speedup, s.candidate.medianMs, s.baseline.medianMs});
    p.evidenceScope = evidenceScope(in.task, performance);
    p.files = e.files;
    p.unsignedEvidenceAccepted = gates.unsignedAccepted;
    return p;
}

/// Stage, rename into place: a kill at any point leaves the index valid (an orphan folder at
/// worst, which `check` reports and `check --prune` removes).
Result<void> install(const fs::path& dir, const fs::path& target, const std::string& id, const std::vector<Staged>& staged)
{
    std::error_code ec;
    const fs::path staging = dir / kStagingDir / (id + "." + std::to_string(::getpid()));
    fs::remove_all(staging, ec);
    for (size_t i = 0; i < staged.size(); ++i) {
        if (auto w = writeFileAtomic(staging / staged[i].path, staged[i].bytes); !w)
            return w.error();
        if (i == 0)
            registryHook("staging");
    }
    syncDirectory(staging);
    registryHook("staged");
    fs::rename(staging, target, ec);
    if (ec)
        return registryError(dir, "promote " + id, "cannot move the staged folder into place: " + ec.message(),
                             "check free disk space and permissions");
    syncDirectory(dir);
    registryHook("renamed");
    return {};
}

} // namespace

Result<PromotionOutcome> Registry::promote(const PromotionInput& in) const
{
    std::error_code ec;
    fs::create_directories(m_dir, ec);
    if (ec)
        return registryError(m_dir, "create the registry folder", ec.message(), "check the path and permissions");
    auto locked = lockIndex(m_dir);
    if (!locked)
        return locked.error();
    registryHook("locked");
    RegistryIndex& index = locked->index;

    // Judged under the lock, on the files as they are now: nothing slips in between.
    auto files = currentFiles(in);
    if (!files)
        return files.error();
    // One key for judging the reports and signing the record (made now if the user has none).
    const auto key = protocol::loadSigningKey(true);
    PromotionOutcome outcome;
    outcome.gates = judge(in, files.value(), gateSettings(index), key);
    if (!outcome.gates.passed())
        return outcome;

    // The gates passed, so both reports are there and of their kinds.
    const std::string prefix = kernelIdPrefix(in.task, in.correctness->verify()->header.environment.gpu);
    // An unreadable ledger is rewritten from the index below; the folders still guard the IDs.
    auto ledger = readLedger(m_dir);
    const int version = nextVersion(m_dir, index, ledger ? ledger.value() : std::nullopt, prefix);
    RegistryEntry e = newEntry(in, files.value(), outcome.gates, prefix, version);

    // Every file of the version folder, then promotion.json naming their hashes.
    auto staged = versionFiles(in, e, files.value());
    if (!staged)
        return staged.error();
    for (const Staged& s : staged.value())
        e.files.push_back({s.path, hashHex(s.bytes), static_cast<std::int64_t>(s.bytes.size())});
    Json promotion = promotionRecord(in, e, index, outcome.gates).toJson();
    // The record is signed like the reports: `check` then notices any field changed since, even
    // with the index's hashes fixed up (docs/reliability.md, "Signed reports").
    if (!key)
        return registryError(m_dir, "sign promotion.json for " + e.id, key.error().message(),
                             "a registry record is always signed; fix the key (or KF_REPORT_KEY) and promote again");
    if (auto signedOk = protocol::signDocument(promotion, key.value()); !signedOk)
        return registryError(m_dir, "sign promotion.json for " + e.id, signedOk.error().message(),
                             "install OpenSSL's libcrypto (libssl3) and promote again");
    const std::string promotionText = pretty(promotion);
    e.files.push_back({"promotion.json", hashHex(promotionText), static_cast<std::int64_t>(promotionText.size())});
    staged->push_back({"promotion.json", promotionText});

    std::set<std::string> names;
    for (const Staged& st : staged.value())
        if (!isSafeRelativePath(st.path) || !names.insert(st.path).second)
            return registryError(m_dir, "promote " + e.id,
                                 "the version folder would hold \"" + st.path + "\" twice or outside itself",
                                 "keep headers in a subfolder of the task (include_dirs) whose files do not clash with "
                                 "task.json, launch.json, the reports or the kernel");

    // Then name it in the index: a kill before leaves an orphan folder, never a broken index.
    if (auto placed = install(m_dir, entryDirectory(e.id), e.id, staged.value()); !placed)
        return placed.error();
    index.kernels.push_back(e);
    if (auto w = writeIndex(index); !w)
        return w.error();
    registryHook("indexed");
    outcome.entry = std::move(e);
    return outcome;
}

} // namespace kf
