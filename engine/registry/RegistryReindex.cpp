// `Registry::reindex`: a lost or unreadable index rebuilt from the version folders' records
// (`kforge registry check --reindex`). Only versions whose every recorded file is present with its
// hash are listed; the rest are named and left as they are.
#include "engine/registry/Registry.h"

#include "engine/core/FileLock.h"
#include "engine/core/Files.h"
#include "engine/core/Hash.h"
#include "engine/core/JsonReader.h"
#include "engine/registry/KernelId.h"
#include "engine/registry/RegistryInternal.h"
#include "engine/task/TaskFiles.h"

#include <algorithm>

namespace fs = std::filesystem;

namespace kf {

namespace jr = kf::json;
using Json = nlohmann::json;
using namespace registry_internal;

Result<std::vector<std::string>> Registry::reindex() const
{
    std::error_code ec;
    auto lock = FileLock::acquire(m_dir / kLockFile, kLockTimeout);
    if (!lock)
        return lock.error();
    if (fs::exists(indexFile(), ec)) {
        auto j = jr::readFile(indexFile());
        if (j && parseRegistryIndex(j.value(), indexFile().string()))
            return Error{"rebuild the registry index", "the index is readable", "nothing to rebuild: `kforge registry check` audits it",
                         indexFile().string(), {}};
    }
    RegistryIndex index;
    std::vector<std::string> skipped;
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
        for (const ShapeBinding& b : task->benchmarkShapes) {
            Json shape = Json::object();
            for (const auto& [k, v] : b.values)
                shape[k] = v;
            e.benchmarkShapes.push_back(shape);
        }
        e.geomeanSpeedup = record->geomeanSpeedup.value_or(0);
        e.compileSpeedup = record->compileSpeedup;
        e.minSpeedup = record->minSpeedup.value_or(0);
        e.sourceHash = record->candidate.sourceHash;
        e.taskHash = record->task.hash;
        e.promotedAt = record->promotedAt;
        e.files = record->files;
        e.files.push_back({"promotion.json", hashHex(promotionBytes.value()), static_cast<std::int64_t>(promotionBytes->size())});
        if (record->threshold)
            index.threshold = *record->threshold;
        if (record->compileThreshold)   // an older record without the setting does not clear it
            index.compileThreshold = record->compileThreshold;
        index.kernels.push_back(std::move(e));
    }
    std::sort(index.kernels.begin(), index.kernels.end(),
              [](const RegistryEntry& a, const RegistryEntry& b) { return a.promotedAt < b.promotedAt; });
    if (auto w = writeIndex(index); !w)
        return w.error();
    return skipped;
}

} // namespace kf
