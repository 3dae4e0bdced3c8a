// `Registry::check`: the index against the version folders, every hash, promotion.json against
// the index, and the gates re-judged on the stored evidence; `--prune` for what the registry left.
#include "engine/core/FileLock.h"
#include "engine/core/Files.h"
#include "engine/core/Hash.h"
#include "engine/core/JsonReader.h"
#include "engine/protocol/Signature.h"
#include "engine/registry/KernelId.h"
#include "engine/registry/Registry.h"
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
using Sev = RegistryDrift::Severity;
namespace jr = kf::json;

namespace {

bool near(const std::optional<double>& v, double x)
{
    return v && std::abs(*v - x) <= 1e-9 * std::max(1.0, std::abs(x));
}

/// One index entry audited against its version folder: the files' hashes, promotion.json (its
/// signature and whether it describes the entry), the task, the stored reports' signatures, and
/// the gates re-judged on the stored evidence. Each finding goes to `drift`.
class EntryAudit {
public:
    EntryAudit(const RegistryEntry& e, fs::path dir, const Result<protocol::SigningKey>& key, double threshold,
               std::vector<RegistryDrift>& drift)
        : e(e), dir(std::move(dir)), key(key), keyPtr(key ? &key.value() : nullptr),
          keyProblem(key ? std::string() : key.error().message()), threshold(threshold), drift(drift)
    {
    }

    void run();

private:
    void problem(const std::string& file, std::string what, std::string hint)
    {
        drift.push_back({Sev::Error, e.id, file.empty() ? e.id : e.id + "/" + file, std::move(what), std::move(hint)});
    }
    bool filesIntact();
    bool recordSigned(const Json& promotionJson, protocol::SignatureCheck& recordSig);
    bool describesEntry(const PromotionRecord& pj);
    bool taskMatches(const Task& t);
    bool signaturesHold(const PromotionRecord& pj, const protocol::SignatureCheck& recordSig, const Json& corr,
                        const Json& perf);
    void rejudge(const PromotionRecord& pj, PromotionInput in);

    const RegistryEntry& e;
    const fs::path dir;
    const Result<protocol::SigningKey>& key;
    const protocol::SigningKey* keyPtr;
    const std::string keyProblem;
    const double threshold;   ///< the index's, for a record without its own
    std::vector<RegistryDrift>& drift;
};

void EntryAudit::run()
{
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        problem({}, "the index names this kernel but its folder is missing",
                "restore the folder from a backup, or `kforge registry remove " + e.id + "`");
        return;
    }
    if (!filesIntact())
        return;
    // The files are what was promoted; now re-judge what they say.
    auto promotionJson = jr::readFile(dir / "promotion.json");
    auto task = readEntryTask(dir);
    auto corr = jr::readFile(dir / "correctness.json");
    auto perf = jr::readFile(dir / "performance.json");
    if (!promotionJson || !task || !corr || !perf) {
        problem({}, "a file of the version folder does not parse", "remove and promote the kernel again");
        return;
    }
    auto promotion = PromotionRecord::fromJson(promotionJson.value(), (dir / "promotion.json").string());
    if (!promotion) {
        problem("promotion.json", promotion.error().message(), "remove the entry and promote the kernel again");
        return;
    }
    const PromotionRecord& pj = promotion.value();
    protocol::SignatureCheck recordSig;
    if (!recordSigned(promotionJson.value(), recordSig) || !describesEntry(pj))
        return;
    auto corrReport = protocol::RunReport::fromJson(corr.value(), (dir / "correctness.json").string());
    auto perfReport = protocol::RunReport::fromJson(perf.value(), (dir / "performance.json").string());
    if (!corrReport || !perfReport) {
        const Error& bad = corrReport ? perfReport.error() : corrReport.error();
        problem(fs::path(bad.file).filename().string(), "a stored report is malformed: " + bad.message(),
                "remove the entry and promote the kernel again");
        return;
    }
    if (!taskMatches(task.value()) || !signaturesHold(pj, recordSig, corr.value(), perf.value()))
        return;
    rejudge(pj, PromotionInput{std::move(task.value()), e.kernelFile, std::move(corrReport.value()),
                               std::move(perfReport.value()), {}});
}

/// Every file the index lists is there with its promoted hash, promotion.json among them.
bool EntryAudit::filesIntact()
{
    bool intact = true;
    bool hasPromotion = false;
    for (const RegistryFile& f : e.files) {
        hasPromotion = hasPromotion || f.path == "promotion.json";
        auto bytes = readFileBytes(dir / f.path, kMaxTaskFileBytes);
        if (!bytes) {
            problem(f.path, "the file is missing", "restore it from a backup, or remove the entry");
            intact = false;
        } else if (hashHex(bytes.value()) != f.hash) {
            problem(f.path, "the file changed since promotion (hash " + hashHex(bytes.value()).substr(0, 8) + ", promoted " +
                                f.hash.substr(0, 8) + ")",
                    "restore the promoted file; a changed kernel is a new version: promote it again");
            intact = false;
        }
    }
    if (!hasPromotion) {
        problem("promotion.json", "the index does not list promotion.json", "remove and promote the kernel again");
        return false;
    }
    return intact;
}

/// The record is signed by the registry that wrote it: any field changed since shows here, even
/// with every hash in the index fixed up to match. A record that cannot be checked is a warning.
bool EntryAudit::recordSigned(const Json& promotionJson, protocol::SignatureCheck& recordSig)
{
    recordSig = protocol::checkSignature(promotionJson, keyPtr, keyProblem);
    if (recordSig.state == protocol::SignatureState::Altered || recordSig.state == protocol::SignatureState::Malformed) {
        problem("promotion.json", "promotion.json " + recordSig.detail, "remove the entry and promote the kernel again");
        return false;
    }
    if (recordSig.state == protocol::SignatureState::Unsigned && keyPtr) {
        // Every record is signed when it is written: one without a signature had it removed.
        problem("promotion.json", "promotion.json carries no signature (every record is signed when it is written)",
                "remove the entry and promote the kernel again");
        return false;
    }
    if (!recordSig.valid())
        drift.push_back({Sev::Warning, e.id, e.id + "/promotion.json",
                         "promotion.json cannot be checked against its signature: " + recordSig.detail,
                         "check it as the user who promoted it, with their key"});
    return true;
}

/// promotion.json says what the index entry says: ID, task, hashes, files, GPU, date, speedups.
bool EntryAudit::describesEntry(const PromotionRecord& pj)
{
    std::set<std::string> indexFiles, promotedFiles;
    for (const RegistryFile& f : e.files)
        if (f.path != "promotion.json")
            indexFiles.insert(f.path + ":" + f.hash);
    for (const RegistryFile& f : pj.files)
        promotedFiles.insert(f.path + ":" + f.hash);
    if (pj.id != e.id || pj.candidate.sourceHash != e.sourceHash || pj.task.hash != e.taskHash ||
        pj.candidate.file != e.kernelFile || pj.candidate.arch != e.arch || pj.environment.gpu != e.gpu ||
        pj.version != e.version || !near(pj.geomeanSpeedup, e.geomeanSpeedup) || !near(pj.minSpeedup, e.minSpeedup) ||
        pj.task.name != e.taskName || pj.promotedAt != e.promotedAt || indexFiles != promotedFiles) {
        problem("promotion.json",
                "promotion.json does not describe the index entry (ID, task, hashes, files, GPU, date or speedups differ)",
                "remove the entry and promote the kernel again");
        return false;
    }
    return true;
}

/// What the index says of the kernel is what its task says.
bool EntryAudit::taskMatches(const Task& t)
{
    const Json shapes = benchmarkShapesJson(t);
    const std::string dtype = t.outputs.empty() ? "" : std::string(dtypeName(t.outputs.front().dtype));
    if (e.op != opSlug(t) || e.dtype != dtype || e.benchmarkShapes != shapes || e.taskName != t.name) {
        problem({}, "the index entry's op, dtype, task or benchmark shapes differ from the version's task.json",
                "remove the entry and promote the kernel again");
        return false;
    }
    return true;
}

/// The stored reports carry the runner's signature, unless the (signed) record says the user
/// accepted them without one.
bool EntryAudit::signaturesHold(const PromotionRecord& pj, const protocol::SignatureCheck& recordSig, const Json& corr,
                                const Json& perf)
{
    bool hold = true;
    for (const auto& [name, doc] : {std::pair<const char*, const Json*>{"correctness.json", &corr},
                                    std::pair<const char*, const Json*>{"performance.json", &perf}}) {
        const protocol::SignatureCheck sc = protocol::checkSignature(*doc, keyPtr, keyProblem);
        if (sc.valid())
            continue;
        using S = protocol::SignatureState;
        if (sc.state == S::OtherKey || sc.state == S::NoKey) {
            drift.push_back({Sev::Warning, e.id, e.id + "/" + name, std::string(name) + " cannot be checked here: " + sc.detail,
                             "check it as the user who promoted it"});
        } else if (pj.unsignedEvidenceAccepted && recordSig.valid()) {
            // The user accepted it at promotion; its bytes are pinned by the signed record's hash.
            drift.push_back({Sev::Warning, e.id, e.id + "/" + name,
                             std::string(name) + " is " + sc.detail + "; accepted at promotion with --allow-unsigned",
                             "promote again with reports the runner signed"});
        } else {
            problem(name, std::string(name) + " is " + sc.detail +
                              (pj.unsignedEvidenceAccepted ? "" : "; the promotion did not accept unsigned evidence"),
                    "remove the entry; promote again with fresh evidence");
            hold = false;
        }
    }
    return hold;
}

/// The gates judged again on the stored evidence, as at promotion: the record's threshold and
/// policy (a record from before the sanitizer gate, the default policy: its reports were judged
/// without one). The speedups must be the ones recorded.
void EntryAudit::rejudge(const PromotionRecord& pj, PromotionInput in)
{
    in.allowUnsigned = true; // judged above, with severities of their own
    auto current = currentFiles(in);
    if (!current) {
        problem(e.kernelFile, current.error().message(), "remove the entry and promote the kernel again");
        return;
    }
    const GateSettings asPromoted{pj.threshold.value_or(threshold), pj.compileThreshold,
                                  pj.sanitizer ? pj.sanitizer->policy : kDefaultSanitizerPolicy};
    const GateVerdict v = judge(in, current.value(), asPromoted, key);
    if (!v.passed())
        problem({}, "the stored evidence does not support the promotion: " + v.sentence(),
                "remove the entry; promote again with fresh evidence");
    else if (!near(pj.geomeanSpeedup, v.geomeanSpeedup) || !near(pj.minSpeedup, v.minSpeedup) ||
             pj.compileSpeedup.has_value() != std::isfinite(v.compileSpeedup) ||
             (pj.compileSpeedup && !near(pj.compileSpeedup, v.compileSpeedup)))
        problem("promotion.json",
                "the speedups recorded (geomean " + protocol::formatFixed(pj.geomeanSpeedup.value_or(NAN), 2) + "×) are not "
                "the ones the stored performance report gives (" + protocol::formatFixed(v.geomeanSpeedup, 2) + "×)",
                "remove the entry; promote again with fresh evidence");
}

} // namespace

Result<std::vector<RegistryDrift>> Registry::check(bool prune) const
{
    std::vector<RegistryDrift> drift;
    std::error_code ec;
    if (!fs::is_directory(m_dir, ec))
        return drift; // nothing promoted yet: nothing can have drifted
    // Under the lock even to read: a promote or remove in flight is never mistaken for drift.
    auto lock = FileLock::acquire(m_dir / kLockFile, kLockTimeout);
    if (!lock) {
        // A registry we may only read (a shared, read-only mount) can still be audited; only
        // pruning needs the lock. Without it, a promote in flight may show as drift.
        const bool readOnly = ::access(m_dir.c_str(), W_OK) != 0;
        if (prune || !readOnly)
            return lock.error();
        drift.push_back({Sev::Warning, {}, kLockFile,
                         "the registry is read-only, so it was checked without its lock (" + lock.error().why + ")",
                         "a promote or remove running right now may show as drift: check again when it is done"});
    }
    auto index = load();
    if (!index) {
        // Nothing is pruned without an index to tell debris from a verified version.
        drift.push_back({Sev::Error, {}, kRegistryIndexFile, index.error().why,
                         "`kforge registry check --reindex` rebuilds it from the complete version folders (or restore it from "
                         "a backup); nothing was pruned"});
        return drift;
    }
    if (!fs::exists(indexFile(), ec)) {
        for (const auto& d : fs::directory_iterator(m_dir, ec))
            if (d.is_directory() && isValidKernelId(d.path().filename().string())) {
                // Version folders without an index: never prune them as orphans.
                drift.push_back({Sev::Error, {}, kRegistryIndexFile,
                                 "the index is missing but the folder holds kernel versions",
                                 "restore verified_kernels.json from a backup; nothing was pruned"});
                return drift;
            }
    }
    const auto key = protocol::loadSigningKey(false);
    std::set<std::string> named;
    for (const RegistryEntry& e : index->kernels) {
        named.insert(e.id);
        EntryAudit(e, entryDirectory(e.id), key, index->threshold, drift).run();
    }
    pruneOrReport(prune, named, drift);
    return drift;
}

// Folders the index does not name: interrupted promotes (or removes), and staging leftovers. A
// deletion that fails is an error naming its cause (`notWritten`), never a clean report.
void Registry::pruneOrReport(bool prune, const std::set<std::string>& named, std::vector<RegistryDrift>& drift) const
{
    using Sev = RegistryDrift::Severity;
    std::error_code ec;
    auto erase = [&](const fs::directory_entry& d, const std::string& name, bool tree) {
        std::error_code failed = registryFault("prune");
        if (!failed)
            tree ? static_cast<void>(fs::remove_all(d.path(), failed)) : static_cast<void>(fs::remove(d.path(), failed));
        if (!failed)
            return;
        RegistryDrift left{Sev::Error, {}, name, "could not delete " + name + ": " + failed.message(),
                           "make the registry folder writable (or run as its owner), then `kforge registry check --prune` again"};
        left.notWritten = true;
        drift.push_back(std::move(left));
    };
    for (const auto& d : fs::directory_iterator(m_dir, ec)) {
        const std::string name = d.path().filename().string();
        // A temp file of a writer killed before its rename (the index or ledger itself is intact).
        if (d.is_regular_file() && (name.rfind(std::string(kRegistryIndexFile) + ".tmp.", 0) == 0 ||
                                    name.rfind(std::string(kLedgerFile) + ".tmp.", 0) == 0)) {
            if (prune)
                erase(d, name, false);
            else
                drift.push_back({Sev::Warning, {}, name, "a temporary copy of the index left by an interrupted write",
                                 "`kforge registry check --prune` deletes it"});
            continue;
        }
        const bool hidden = name == kStagingDir || name == kTrashDir;
        // Only what the registry itself makes: anything else in the folder is not ours to judge.
        if (!d.is_directory() || named.count(name) || !(hidden || isValidKernelId(name)))
            continue;
        if (hidden && fs::is_empty(d.path(), ec))
            continue;
        if (prune) {
            erase(d, name, true);
            continue;
        }
        drift.push_back({Sev::Warning, hidden ? std::string() : name, name,
                         hidden ? "leftovers of an interrupted promote or remove"
                                : "a version folder that the index does not name (an interrupted promote or remove)",
                         "`kforge registry check --prune` deletes it"});
    }
}

} // namespace kf
