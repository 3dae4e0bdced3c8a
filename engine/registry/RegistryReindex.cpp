// `Registry::reindex`: a lost or unreadable index rebuilt from the version folders' records
// (`kforge registry check --reindex`). Only versions whose every recorded file is present with its
// hash are listed; the rest are named and left as they are. The settings, removed IDs and
// deprecations come back from the ledger (RegistryLedger.h); without one, the settings from the
// newest record, and the report says so.
#include "engine/registry/Registry.h"

#include "engine/core/FileLock.h"
#include "engine/core/Files.h"
#include "engine/core/Hash.h"
#include "engine/core/JsonReader.h"
#include "engine/registry/KernelId.h"
#include "engine/registry/RegistryInternal.h"
#include "engine/registry/RegistryLedger.h"
#include "engine/task/TaskFiles.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace fs = std::filesystem;

namespace kf {

namespace jr = kf::json;
using Json = nlohmann::json;
using namespace registry_internal;

namespace {

std::string fixed2(double v)
{
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", v);
    return b;
}

std::string settingsText(const RegistryIndex& s)
{
    return "threshold " + fixed2(s.threshold) + "×, torch.compile threshold " +
           (s.compileThreshold ? fixed2(*s.compileThreshold) + "×" : std::string("off")) + ", sanitizer policy " +
           sanitizerPolicyName(s.sanitizerPolicy);
}

// The settings, removed IDs and deprecations of the rebuilt index, and one note per thing
// restored or not. `newest` is the most recently promoted record found (null: none).
void restoreFromLedger(const std::filesystem::path& dir, RegistryIndex& index, const PromotionRecord* newest,
                       ReindexReport& report)
{
    std::vector<std::string>& notes = report.notes;
    const std::string setHint = "; set them with `kforge registry threshold <x> --compile <x|off>` and "
                                "`kforge registry set-sanitizer-policy <policy>`";
    auto ledger = readLedger(dir);
    if (ledger && ledger.value()) {
        const Ledger& l = *ledger.value();
        index.threshold = l.settings.threshold;
        index.compileThreshold = l.settings.compileThreshold;
        index.sanitizerPolicy = l.settings.sanitizerPolicy;
        index.removed = l.settings.removed;
        // A folder whose removal did not finish is not listed again.
        const std::set<std::string> removed(index.removed.begin(), index.removed.end());
        std::erase_if(index.kernels, [&](const RegistryEntry& e) {
            if (!removed.count(e.id))
                return false;
            report.skipped.push_back(e.id + ": removed (`kforge registry check --prune` deletes its folder)");
            return true;
        });
        int deprecated = 0;
        for (RegistryEntry& e : index.kernels)
            if (const auto it = l.deprecated.find(e.id); it != l.deprecated.end()) {
                e.status = "deprecated";
                e.deprecatedAt = it->second.at;
                e.deprecationReason = it->second.reason;
                ++deprecated;
            }
        notes.push_back("restored from " + std::string(kLedgerFile) + ": " + settingsText(index) + "; " +
                        std::to_string(index.removed.size()) + " removed ID(s), never given out again; " +
                        std::to_string(deprecated) + " deprecation(s)");
        return;
    }
    const std::string why = ledger ? "there is no " + std::string(kLedgerFile) + " (a registry from before it)"
                                   : "its ledger is unreadable: " + ledger.error().message();
    const RegistryIndex defaults;
    if (newest) {
        index.threshold = newest->threshold.value_or(defaults.threshold);
        index.compileThreshold = newest->compileThreshold;
        index.sanitizerPolicy = newest->sanitizer ? newest->sanitizer->policy : defaults.sanitizerPolicy;
        notes.push_back("settings taken from the newest record (" + newest->id + ", promoted " + newest->promotedAt +
                        "): " + settingsText(index) + "; the index that held the current ones is gone and " + why +
                        ", so a change made after that promotion is lost" + setHint);
    } else {
        notes.push_back("settings reset to the defaults (" + settingsText(index) + "): the index that held them is gone, " +
                        why + ", and no record names them" + setHint);
    }
    notes.push_back("removed IDs and deprecation states could not be restored (" + why +
                    "): every version is listed as active, and IDs are handed out after the folders present");
}

} // namespace

Result<ReindexReport> Registry::reindex() const
{
    std::error_code ec;
    auto lock = FileLock::acquire(m_dir / kLockFile, kLockTimeout);
    if (!lock)
        return lock.error();
    if (fs::exists(indexFile(), ec)) {
        auto j = jr::readFile(indexFile());
        if (j && parseRegistryIndex(j.value(), indexFile().string()))
            return Error::inFile(indexFile().string(), {}, "rebuild the registry index", "the index is readable", "nothing to rebuild: `kforge registry check` audits it");
    }
    RegistryIndex index;
    ReindexReport report;
    std::vector<std::string>& skipped = report.skipped;
    std::optional<PromotionRecord> newest;
    std::vector<fs::path> dirs;
    for (const auto& d : fs::directory_iterator(m_dir, ec))
        if (d.is_directory() && isValidKernelId(d.path().filename().string()))
            dirs.push_back(d.path());
    std::sort(dirs.begin(), dirs.end());
    for (const fs::path& dir : dirs) {
        const std::string id = dir.filename().string();
        auto skip = [&](const std::string& why) { skipped.push_back(id + ": " + why); };
        // Read once: parsed for the record, hashed for the index's file list.
        auto promotionBytes = readFileBytes(dir / "promotion.json");
        auto pj = promotionBytes ? jr::parseText(promotionBytes.value(), (dir / "promotion.json").string())
                                 : Result<Json>(promotionBytes.error());
        if (!pj) {
            skip("no readable promotion.json");
            continue;
        }
        auto record = PromotionRecord::fromJson(pj.value(), (dir / "promotion.json").string());
        if (!record || record->id != id) {
            skip(record ? "promotion.json names " + record->id : record.error().why);
            continue;
        }
        // Complete means every file the record names is there with its hash.
        bool complete = true;
        for (const RegistryFile& f : record->files) {
            auto bytes = isSafeRelativePath(f.path) ? readFileBytes(dir / f.path, kMaxTaskFileBytes) : Result<std::string>(Error{});
            if (!bytes || hashHex(bytes.value()) != f.hash) {
                skip(f.path + " is missing or differs from its recorded hash");
                complete = false;
                break;
            }
        }
        auto task = readEntryTask(dir);
        if (!complete || !task) {
            if (complete)
                skip(task.error().why);
            continue;
        }
        RegistryEntry e;
        e.id = id;
        e.version = static_cast<int>(record->version);
        e.op = opSlug(task.value());
        e.taskName = record->task.name;
        e.dtype = task->outputs.empty() ? "" : std::string(dtypeName(task->outputs.front().dtype));
        e.gpu = record->environment.gpu;
        e.arch = record->candidate.arch;
        e.kernelFile = record->candidate.file;
        e.benchmarkShapes = benchmarkShapesJson(task.value());
        e.geomeanSpeedup = record->geomeanSpeedup.value_or(0);
        e.compileSpeedup = record->compileSpeedup;
        e.minSpeedup = record->minSpeedup.value_or(0);
        e.sourceHash = record->candidate.sourceHash;
        e.taskHash = record->task.hash;
        e.promotedAt = record->promotedAt;
        e.files = record->files;
        e.files.push_back({"promotion.json", hashHex(promotionBytes.value()), static_cast<std::int64_t>(promotionBytes->size())});
        if (!newest || newest->promotedAt <= record->promotedAt)   // ties: the later folder
            newest = record.value();
        index.kernels.push_back(std::move(e));
    }
    std::sort(index.kernels.begin(), index.kernels.end(),
              [](const RegistryEntry& a, const RegistryEntry& b) { return a.promotedAt < b.promotedAt; });
    restoreFromLedger(m_dir, index, newest ? &newest.value() : nullptr, report);
    if (auto w = writeIndex(index); !w)
        return w.error();
    return report;
}

} // namespace kf
