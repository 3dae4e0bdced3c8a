#include "engine/registry/Registry.h"

#include "engine/protocol/ReportJson.h"

#include "engine/compile/Compiler.h"
#include "engine/core/Clock.h"
#include "engine/core/FileLock.h"
#include "engine/core/Files.h"
#include "engine/core/Hash.h"
#include "engine/core/JsonReader.h"
#include "engine/protocol/Signature.h"
#include "engine/registry/KernelId.h"
#include "engine/registry/RegistryHooks.h"
#include "engine/registry/RegistryInternal.h"
#include "engine/registry/RegistryLedger.h"
#include "engine/task/TaskFiles.h"
#include "engine/task/TaskHash.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fcntl.h>
#include <set>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kf {

namespace jr = kf::json;
using Json = nlohmann::json;
using namespace registry_internal;

namespace registry_internal {

Error registryError(const fs::path& dir, std::string what, std::string why, std::string hint)
{
    return Error::inFile(dir.string(), {}, std::move(what), std::move(why), std::move(hint));
}

Error unknownId(const fs::path& dir, const RegistryIndex& index, const std::string& id)
{
    std::string known;
    for (const RegistryEntry& e : index.kernels)
        known += (known.empty() ? "" : ", ") + e.id;
    Error e = registryError(dir, "find " + id, "the registry has no kernel " + id,
                            known.empty() ? "the registry is empty" : "IDs here: " + known);
    e.kind = kRegistryBadArgument;
    return e;
}

Result<LockedIndex> lockIndex(const fs::path& dir)
{
    auto lock = FileLock::acquire(dir / kLockFile, kLockTimeout);
    if (!lock)
        return lock.error();
    auto index = Registry(dir).load();
    if (!index)
        return index.error();
    return LockedIndex{std::move(lock.value()), std::move(index.value())};
}

// Makes a rename or a new file durable: the folder's own entry list is flushed too.
void syncDirectory(const fs::path& dir)
{
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

std::string pretty(const Json& j) { return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n"; }

Json benchmarkShapesJson(const Task& task)
{
    Json shapes = Json::array();
    for (const ShapeBinding& b : task.benchmarkShapes) {
        Json s = Json::object();
        for (const auto& [k, v] : b.values)
            s[k] = v;
        shapes.push_back(s);
    }
    return shapes;
}

// A path inside a version folder: relative, no "..", not hidden at its top.
bool isSafeRelativePath(const std::string& path)
{
    const fs::path p = fs::path(path).lexically_normal();
    if (path.empty() || p.is_absolute() || p.empty() || p == ".")
        return false;
    for (const fs::path& part : p)
        if (part == "..")
            return false;
    return path.front() != '.';
}

} // namespace registry_internal

namespace registry_internal {

Result<CurrentFiles> currentFiles(const PromotionInput& in)
{
    if (!in.task.findCandidate(in.candidateFile))
        return Error::inFile((in.task.directory / "task.json").string(), "/candidates", "promote " + in.candidateFile, in.candidateFile + " is not a candidate of task " + in.task.name, "list it with its launch plan under \"candidates\" in task.json");
    auto source = readTaskFile(in.task.directory, in.candidateFile, kMaxSourceBytes);
    if (!source)
        return source.error();
    CurrentFiles f;
    f.sourceHash = hashHex(source.value());
    f.source = std::move(source.value());
    f.taskHash = taskPayload(in.task).hash;
    return f;
}

GateVerdict judge(const PromotionInput& in, const CurrentFiles& f, const GateSettings& settings,
                  const Result<protocol::SigningKey>& key)
{
    GateInput g;
    g.task = &in.task;
    g.candidateFile = in.candidateFile;
    g.sourceHash = f.sourceHash;
    g.taskHash = f.taskHash;
    g.correctness = in.correctness ? &*in.correctness : nullptr;
    g.performance = in.performance ? &*in.performance : nullptr;
    g.threshold = settings.threshold;
    g.compileThreshold = settings.compileThreshold;
    g.sanitizerPolicy = settings.sanitizerPolicy;
    g.heldOutRequired = heldOutRequiredFor(in.task);
    if (key)
        g.signingKey = &key.value();
    else
        g.signingKeyProblem = key.error().message();
    g.allowUnsigned = in.allowUnsigned;
    return evaluateGates(g);
}

// A version folder's task.json: the whole task as promoted, though only the promoted kernel's
// file is in the folder, so candidate files are not looked for.
Result<Task> readEntryTask(const fs::path& dir)
{
    auto j = jr::readFile(dir / "task.json");
    if (!j)
        return j.error();
    auto t = parseTask(j.value(), (dir / "task.json").string());
    if (!t)
        return t.error();
    t->directory = dir;
    return t;
}

} // namespace registry_internal

std::string evidenceScope(const Task& task, const protocol::BenchReport& performance)
{
    const protocol::Environment& env = performance.header.environment;
    const std::string& torch = env.torch;
    const size_t shapes = performance.shapes.size();
    const std::string dtype = task.outputs.empty() ? "" : " (" + std::string(dtypeName(task.outputs.front().dtype)) + ")";
    return "op-level microbenchmark of " + opSlug(task) + dtype + " on " + env.gpu + " against LibTorch" +
           (torch.empty() ? "" : " " + torch) + ", " + std::to_string(shapes) + " benchmark shape" +
           (shapes == 1 ? "" : "s") + ", inputs in DRAM (L2 flushed); not an end-to-end model speedup";
}

Registry::Registry(fs::path directory) : m_dir(std::move(directory)) {}

fs::path Registry::defaultDirectory()
{
    if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x)
        return fs::path(x) / "KernelForge" / "registry";
    if (const char* h = std::getenv("HOME"); h && *h)
        return fs::path(h) / ".local" / "share" / "KernelForge" / "registry";
    return fs::temp_directory_path() / "KernelForge-registry";
}

Result<fs::path> Registry::resolveDirectory(const std::string& explicitDir, const fs::path& near)
{
    if (!explicitDir.empty())
        return fs::absolute(explicitDir).lexically_normal();
    if (const char* env = std::getenv("KF_REGISTRY"); env && *env)
        return fs::absolute(env).lexically_normal();
    std::error_code ec;
    fs::path dir = near.empty() ? fs::path() : fs::absolute(near).lexically_normal();
    if (!dir.empty() && !fs::is_directory(dir, ec))
        dir = dir.parent_path();
    for (int level = 0; !dir.empty() && level < 6; ++level) {
        const fs::path file = dir / kWorkspaceFile;
        if (fs::exists(file, ec)) {
            auto j = jr::readFile(file);
            if (!j)
                return j.error();
            try {
                jr::Object o(j.value(), "");
                const std::int64_t v = o.integer("schema_version");
                if (v != 1)
                    jr::fail(o.at("schema_version"), "schema_version must be 1");
                const std::string reg = o.stringOr("registry", "");
                o.finish();
                if (!reg.empty())
                    return (dir / reg).lexically_normal();
                break;
            } catch (const jr::SchemaError& e) {
                return Error::inFile(file.string(), e.pointer, "read the workspace file", e.message, "fix the file (docs/registry.md shows its keys)");
            }
        }
        if (dir == dir.root_path())
            break;
        dir = dir.parent_path();
    }
    return defaultDirectory();
}

Result<RegistryIndex> Registry::load() const
{
    std::error_code ec;
    if (!fs::exists(indexFile(), ec)) {
        // No index and no versions is a new registry; no index beside versions is a lost index,
        // and reading it as empty would let a promote overwrite it and a prune delete them.
        std::vector<std::string> versions;
        for (const auto& d : fs::directory_iterator(m_dir, ec))
            if (d.is_directory() && isValidKernelId(d.path().filename().string()) && fs::exists(d.path() / "promotion.json", ec))
                versions.push_back(d.path().filename().string());
        if (versions.empty())
            return RegistryIndex{};
        std::sort(versions.begin(), versions.end());
        return Error::inFile(indexFile().string(), {}, "read the registry " + m_dir.string(), "the index " + std::string(kRegistryIndexFile) + " is missing but the folder holds " +
                         std::to_string(versions.size()) + " kernel version(s) (" + versions.front() +
                         (versions.size() > 1 ? ", …" : "") + ")", "`kforge registry check --reindex` rebuilds the index from their records; nothing was changed");
    }
    auto j = jr::readFile(indexFile());
    if (!j)
        return j.error();
    return parseRegistryIndex(j.value(), indexFile().string());
}

Result<RegistryEntry> Registry::entry(const std::string& id) const
{
    auto index = load();
    if (!index)
        return index.error();
    if (const RegistryEntry* e = index->find(id))
        return *e;
    return unknownId(m_dir, index.value(), id);
}

Result<PromotionRecord> Registry::promotion(const std::string& id) const
{
    auto e = entry(id);
    if (!e)
        return e.error();
    const fs::path file = entryDirectory(id) / "promotion.json";
    auto j = jr::readFile(file);
    if (!j)
        return j.error();
    return PromotionRecord::fromJson(j.value(), file.string());
}

Result<Task> Registry::entryTask(const std::string& id) const
{
    auto e = entry(id);
    if (!e)
        return e.error();
    auto task = readEntryTask(entryDirectory(id));
    if (!task)
        return task.error();
    const Candidate* c = task->findCandidate(e->kernelFile);
    if (!c)
        return registryError(m_dir, "load " + id, "its task.json no longer lists " + e->kernelFile,
                             "run `kforge registry check`");
    Candidate keep = *c;
    task->candidates = {keep};
    return task;
}

// The ledger first: an index never names a removal or a setting that a lost index could forget.
Result<void> Registry::writeIndex(const RegistryIndex& index) const
{
    if (auto l = writeLedger(m_dir, index); !l)
        return l.error();
    return writeFileAtomic(indexFile(), pretty(registryIndexToJson(index)));
}

Result<GateVerdict> Registry::gates(const PromotionInput& in) const
{
    auto files = currentFiles(in);
    if (!files)
        return files.error();
    auto index = load();
    if (!index)
        return index.error();
    return judge(in, files.value(), gateSettings(index.value()), protocol::loadSigningKey(false));
}

Result<void> Registry::remove(const std::string& id) const
{
    auto locked = lockIndex(m_dir);
    if (!locked)
        return locked.error();
    RegistryIndex& index = locked->index;
    auto it = std::find_if(index.kernels.begin(), index.kernels.end(), [&](const RegistryEntry& e) { return e.id == id; });
    if (it == index.kernels.end())
        return unknownId(m_dir, index, id);
    index.kernels.erase(it);
    index.removed.push_back(id);
    if (auto w = writeIndex(index); !w)
        return w.error();
    registryHook("unindexed");
    // Out of the way first (one rename), then deleted: a kill in between leaves hidden trash.
    std::error_code ec;
    const fs::path trash = m_dir / kTrashDir / (id + "." + std::to_string(::getpid()));
    fs::create_directories(trash.parent_path(), ec);
    fs::rename(entryDirectory(id), trash, ec);
    const fs::path left = ec ? entryDirectory(id) : trash;
    ec = registryFault("remove");
    if (!ec)
        fs::remove_all(left, ec);
    if (ec)
        return registryError(m_dir, "remove " + id,
                             "it is out of the index, but its folder could not be deleted: " + ec.message() + " (" +
                                 left.string() + ")",
                             "make the registry writable, then `kforge registry check --prune` deletes it");
    return {};
}

Result<RegistryEntry> Registry::deprecate(const std::string& id, const std::string& reason) const
{
    auto locked = lockIndex(m_dir);
    if (!locked)
        return locked.error();
    RegistryIndex& index = locked->index;
    for (RegistryEntry& e : index.kernels)
        if (e.id == id) {
            e.status = "deprecated";
            e.deprecatedAt = utcNow();
            e.deprecationReason = reason.empty() ? "deprecated by the user" : reason;
            if (auto w = writeIndex(index); !w)
                return w.error();
            return e;
        }
    return unknownId(m_dir, index, id);
}

Result<void> Registry::setThreshold(double threshold) const
{
    if (!(threshold >= 1.0) || !std::isfinite(threshold)) {
        Error e = registryError(m_dir, "set the speedup threshold", "the threshold must be a number ≥ 1.0",
                                "a promoted kernel must at least match LibTorch; 1.10 is the default");
        e.kind = kRegistryBadArgument;
        return e;
    }
    auto locked = lockIndex(m_dir);
    if (!locked)
        return locked.error();
    locked->index.threshold = threshold;
    return writeIndex(locked->index);
}

Result<void> Registry::setCompileThreshold(std::optional<double> threshold) const
{
    if (threshold && (!(*threshold > 0) || !std::isfinite(*threshold))) {
        Error e = registryError(m_dir, "set the torch.compile threshold", "the threshold must be a number > 0",
                                "1.0 asks a kernel to match torch.compile; \"off\" turns the gate off");
        e.kind = kRegistryBadArgument;
        return e;
    }
    auto locked = lockIndex(m_dir);
    if (!locked)
        return locked.error();
    locked->index.compileThreshold = threshold;
    return writeIndex(locked->index);
}

Result<void> Registry::setSanitizerPolicy(SanitizerPolicy policy) const
{
    auto locked = lockIndex(m_dir);
    if (!locked)
        return locked.error();
    locked->index.sanitizerPolicy = policy;
    return writeIndex(locked->index);
}

} // namespace kf
