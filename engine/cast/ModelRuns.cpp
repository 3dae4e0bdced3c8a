#include "engine/cast/ModelRuns.h"

#include "engine/core/Files.h"
#include "engine/core/JsonReader.h"

#include <algorithm>
#include <map>
#include <set>

namespace fs = std::filesystem;

namespace kf::cast {

namespace {
std::string modelOf(const nlohmann::json& run)
{
    return run.is_object() && run.contains("model") && run["model"].is_string() ? run["model"].get<std::string>() : std::string();
}
} // namespace

RunTally tallyOf(const nlohmann::json& run)
{
    RunTally t;
    for (const auto& s : run["substitution"]) {
        ++t.sites;
        t.substituted += s["status"] == "substituted";
    }
    for (const auto& [op, n] : run["fallbacks"].items())
        t.fallbacks += n.get<std::int64_t>();
    return t;
}

Result<ModelRunHeadline> readModelRunHeadline(const nlohmann::json& run, const std::string& origin)
{
    try {
        checkModelRun(run, "", modelOf(run));
    } catch (const kf::json::SchemaError& e) {
        return Error::inFile(origin, e.pointer, "read a model run's evidence", e.message);
    }
    // Checked: every field below is there with its type.
    ModelRunHeadline h{run["model"].get<std::string>(), run["created_at"].get<std::string>(), run["gpu"].get<std::string>(), {}};
    if (run["speedup"].is_number())
        h.speedup = run["speedup"].get<double>();
    return h;
}

std::string runFileStem(const nlohmann::json& run, const std::string& package)
{
    std::string stem = run.value("created_at", std::string()) + "-" + package + "-" + modelOf(run);
    for (char& c : stem)
        if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'))
            c = '-';
    return stem.substr(0, 160);
}

Error foreignRun(const std::string& what, const nlohmann::json& run, const Package& package)
{
    return Error::inFile(package.origin, {}, what, "the run is of package " + run["package"]["name"].get<std::string>() + " " +
                     run["package"]["version"].get<std::string>() + ", not " + package.name + " " + package.version, "record a run of this package");
}

bool sameRunPackage(const nlohmann::json& run, const Package& package)
{
    return run["package"]["name"] == package.name && run["package"]["version"] == package.version;
}

fs::path modelRunsDirectory(const Registry& registry, const std::string& id)
{
    return registry.directory() / "model-runs" / id;
}

Result<std::vector<RegistryRunCopy>> recordModelRunInRegistry(const Registry& registry, const Package& package,
                                                              const nlohmann::json& run)
{
    const std::string what = "record the model run in the registry " + registry.directory().string();
    try {
        checkModelRun(run, "", modelOf(run));
    } catch (const kf::json::SchemaError& e) {
        return Error::failed(what, "the run's evidence is malformed at " + e.pointer + ": " + e.message);
    }
    if (!sameRunPackage(run, package))
        return foreignRun(what, run, package);
    std::set<std::string> ran;
    for (const auto& s : run["substitution"])
        if (s["status"] == "substituted")
            ran.insert(s["cast_op"].get<std::string>());
    const std::string stamp = runFileStem(run, package.name);
    std::vector<RegistryRunCopy> out;
    for (const PackageOp& op : package.ops) {
        if (!ran.count(op.name))
            continue;
        RegistryRunCopy copy{op.registryId, {}, {}};
        if (run["fallbacks"].contains(op.name)) {
            copy.why = "cast::" + op.name + " fell back " + std::to_string(run["fallbacks"][op.name].get<std::int64_t>()) +
                       " time(s) in this run, so the run is not evidence for its kernel";
            out.push_back(copy);
            continue;
        }
        if (!registry.entry(op.registryId)) {
            copy.why = "not in the registry at " + registry.directory().string();
            out.push_back(copy);
            continue;
        }
        const fs::path dir = modelRunsDirectory(registry, op.registryId);
        std::error_code ec;
        fs::create_directories(dir, ec);
        fs::path file = dir / (stamp + ".json");
        for (int n = 2; fs::exists(file, ec); ++n)
            file = dir / (stamp + "-" + std::to_string(n) + ".json");
        if (auto w = writeFileAtomic(file, run.dump(2) + "\n"); !w)
            return w.error();
        copy.file = file.string();
        out.push_back(copy);
    }
    return out;
}

std::vector<StoredModelRun> modelRunsOf(const Registry& registry, const std::string& id)
{
    std::vector<StoredModelRun> out;
    const fs::path dir = modelRunsDirectory(registry, id);
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return out;
    std::vector<fs::path> files;
    for (const auto& f : fs::directory_iterator(dir, ec))
        if (f.is_regular_file() && f.path().extension() == ".json")
            files.push_back(f.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
        StoredModelRun s;
        s.file = f.string();
        auto j = kf::json::readFile(f);
        if (!j) {
            s.problem = j.error().message();
        } else {
            s.run = std::move(j.value());
            try {
                checkModelRun(s.run, "", modelOf(s.run));
            } catch (const kf::json::SchemaError& e) {
                s.problem = f.string() + ": at " + e.pointer + ": " + e.message;
            }
        }
        out.push_back(std::move(s));
    }
    return out;
}

} // namespace kf::cast
