#include "engine/repro/Repro.h"

#include "engine/compile/Compiler.h"
#include "engine/core/Clock.h"
#include "engine/core/Files.h"
#include "engine/core/Hash.h"
#include "engine/core/JsonReader.h"
#include "engine/protocol/ReportJson.h"
#include "engine/protocol/VerifyReport.h"
#include "engine/task/TaskFiles.h"
#include "engine/task/TaskHash.h"
#include "engine/verify/Compare.h"
#include "engine/verify/Npy.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

namespace fs = std::filesystem;

namespace kf {

using Json = nlohmann::json;

namespace {

Error bundleError(const fs::path& file, const std::string& why, const std::string& hint)
{
    return Error::inFile(file.string(), {}, "use repro bundle", why, hint);
}

Result<void> copyInto(const fs::path& from, const fs::path& to)
{
    std::error_code ec;
    fs::create_directories(to.parent_path(), ec);
    if (fs::is_directory(from, ec))
        fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
    else
        fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
    if (ec)
        return Error::inFile(to.string(), {}, "copy " + from.string(), ec.message(), "check free disk space and permissions");
    return {};
}

// Everything the task hash covers, and every candidate (task.json names them all, and a task
// whose candidate files are missing does not load). Each is read as a task file
// (engine/task/TaskFiles.h): a link out of the task folder is refused, never copied into a bundle
// that is made to be shared.
Result<void> copyTask(const Task& task, const fs::path& to)
{
    auto taskJson = readFileBytes(task.directory / "task.json", json::kMaxJsonFileBytes);
    if (!taskJson)
        return taskJson.error();
    if (auto w = writeFileAtomic(to / "task.json", *taskJson); !w)
        return w;
    std::vector<fs::path> items;
    for (const Candidate& c : task.candidates)
        items.emplace_back(c.file);
    for (const std::string& inc : task.compile.includeDirs) {
        std::error_code ec;
        for (auto it = fs::recursive_directory_iterator(task.directory / inc, ec); !ec && it != fs::recursive_directory_iterator();
             it.increment(ec))
            if (it->is_regular_file() || it->is_symlink())
                items.push_back(fs::path(inc) / it->path().lexically_relative(task.directory / inc));
    }
    if (task.reference.kind == Reference::Kind::TorchScript)
        items.push_back(task.reference.torchscript);
    for (const fs::path& item : items) {
        std::error_code ec;
        if (!fs::exists(task.directory / item, ec) || fs::is_directory(task.directory / item, ec))
            continue;
        auto bytes = readTaskFile(task.directory, item);
        if (!bytes)
            return bytes.error();
        if (auto w = writeFileAtomic(to / item, *bytes); !w)
            return w;
    }
    return {};
}

std::string sourceHashOf(const Task& task, const std::string& file)
{
    auto bytes = readTaskFile(task.directory, file, kMaxSourceBytes);
    return bytes ? hashHex(bytes.value()) : std::string();
}

std::int64_t checkMismatches(const CaseInfo& c)
{
    std::int64_t n = 0;
    for (const CaseOutput& o : c.outputs)
        if (auto check = protocol::outputCheckFromJson(o.check))
            n += check->mismatches;
    return n;
}

struct OutputFiles {
    NpyFile expected, actual;
    std::optional<NpyFile> libtorch;  ///< beside a golden `expected`

    std::optional<double> libtorchAt(std::int64_t i) const
    {
        if (!libtorch)
            return std::nullopt;
        double v;
        std::memcpy(&v, libtorch->element(i), sizeof v);
        return v;
    }
};

Result<OutputFiles> openOutput(const fs::path& dir, const CaseInfo& c, const std::string& name)
{
    const CaseTensor* e = c.find(name, CaseTensor::Role::Expected);
    const CaseTensor* a = c.find(name, CaseTensor::Role::Actual);
    if (!e || !a)
        return bundleError(dir / kCaseFile, "output " + name + " has no saved tensors", "re-export the bundle");
    auto ef = NpyFile::open(dir / e->file);
    if (!ef)
        return ef.error();
    auto af = NpyFile::open(dir / a->file);
    if (!af)
        return af.error();
    if (ef->header().dtype != DType::F64 || ef->header().elements != af->header().elements)
        return bundleError(dir / e->file, "the expected and actual tensors of " + name + " do not match in size",
                           "re-export the bundle");
    OutputFiles files{std::move(ef.value()), std::move(af.value()), std::nullopt};
    if (const CaseTensor* l = c.find(name, CaseTensor::Role::Libtorch)) {
        auto lf = NpyFile::open(dir / l->file);
        if (!lf)
            return lf.error();
        if (lf->header().dtype != DType::F64 || lf->header().elements != files.expected.header().elements)
            return bundleError(dir / l->file, "LibTorch's tensor of " + name + " does not match the expected one in size",
                               "re-export the bundle");
        files.libtorch = std::move(lf.value());
    }
    return files;
}

} // namespace

fs::path newRunDumpDir(const std::string& task, const std::string& candidateFile, const fs::path& root)
{
    std::string stamp = utcNow();
    for (char& ch : stamp)
        if (ch == ':')
            ch = '-';
    const fs::path base = (root.empty() ? userCacheDir() / "runs" : root) /
                          (stamp + "-" + task + "-" + fs::path(candidateFile).stem().string());
    // Two runs in one second get their own folders.
    // Two runs in one second get their own folders: create_directory claims a name atomically.
    std::error_code ec;
    fs::create_directories(base.parent_path(), ec);
    fs::path dir = base;
    for (int i = 2; !fs::create_directory(dir, ec) && i < 1000; ++i)
        dir = base.string() + "-" + std::to_string(i);
    return dir;
}

void pruneRunDumpDirs(int keep, const fs::path& inUse)
{
    const fs::path root = userCacheDir() / "runs";
    std::error_code ec;
    std::vector<fs::path> dirs;
    for (const auto& d : fs::directory_iterator(root, ec))
        if (d.is_directory(ec))
            dirs.push_back(d.path());
    // Names start with a UTC time stamp, so they sort oldest first.
    std::sort(dirs.begin(), dirs.end());
    for (size_t i = 0; i + static_cast<size_t>(std::max(keep, 0)) < dirs.size(); ++i) {
        if (!inUse.empty() && isInsideFolder(inUse, dirs[i]))
            continue;
        fs::remove_all(dirs[i], ec);
    }
}

FailureKind failureKindOfCase(const CaseInfo& c)
{
    // The case's own copy of its trial (a report fragment); without it, the checks and the
    // failure sentence say as much.
    protocol::Trial t;
    try {
        if (c.trialReport.is_object() && !c.trialReport.empty())
            return protocol::readTrial(protocol::Fields(c.trialReport, "/trial")).failureKind();
        for (const CaseOutput& o : c.outputs)
            if (o.check.is_object())
                t.outputs.push_back(protocol::readOutputCheck(protocol::Fields(o.check, "/outputs")));
    } catch (const kf::json::SchemaError&) {
        // A malformed trial in a case file: judge by the failure sentence alone.
        t.outputs.clear();
    }
    t.passed = false;
    if (c.failure.rfind("launch error", 0) == 0)
        t.launchError = c.failure;
    if (c.failure.rfind("guard violation", 0) == 0)
        t.guardViolations.push_back({c.failure, "", 0});
    if (c.failure.rfind("input ", 0) == 0 && c.failure.find(" was modified") != std::string::npos)
        t.modifiedInputs.push_back(c.failure);
    t.runsAgree = c.failure.rfind("the two runs disagree", 0) != 0;
    return t.failureKind();
}

Result<fs::path> exportRepro(const fs::path& caseDir, const Task& task, const fs::path& bundleDir)
{
    auto kase = readCase(caseDir);
    if (!kase)
        return kase.error();
    const CaseInfo& c = kase.value();
    if (c.taskName != task.name || c.taskHash != taskHash(task))
        return bundleError(caseDir / kCaseFile,
                           std::string("the case was saved for ") + (c.taskName == task.name ? "another version of task " : "task ") +
                               c.taskName + ", not for " + task.name + " as it is now",
                           "re-run the failing shape to save a case for the task as it is");
    if (!task.findCandidate(c.candidateFile))
        return bundleError(caseDir / kCaseFile, "task " + task.name + " has no candidate " + c.candidateFile,
                           "export the case from the task it was saved for");
    if (sourceHashOf(task, c.candidateFile) != c.sourceHash)
        return bundleError(task.directory / c.candidateFile,
                           c.candidateFile + " was edited after the case was saved",
                           "re-run the failing shape to save a case for the code as it is now");
    std::error_code ec;
    if (fs::exists(bundleDir, ec) && !fs::is_empty(bundleDir, ec))
        return bundleError(bundleDir, "the folder exists and is not empty", "choose a new folder for the bundle");
    if (auto r = copyTask(task, bundleDir / "task"); !r)
        return r.error();
    if (auto r = copyInto(caseDir, bundleDir / "case"); !r)
        return r.error();
    Json values = Json::object();
    for (const auto& [k, v] : c.shape.values)
        values[k] = v;
    const Json repro = {{"schema_version", kReproSchemaVersion},
                        {"kind", "kernelforge-repro"},
                        {"created_at", utcNow()},
                        {"task", {{"name", c.taskName}, {"hash", c.taskHash}, {"dir", "task"}}},
                        {"candidate", {{"file", c.candidateFile}, {"source_hash", c.sourceHash}, {"arch", c.arch}}},
                        {"case", "case"},
                        {"shape", {{"values", values}, {"label", c.shape.label}}},
                        {"trial", c.trial},
                        {"seed", c.seed},
                        {"failure", c.failure},
                        {"failure_kind", failureKindName(failureKindOfCase(c))}};
    if (auto r = writeFileAtomic(bundleDir / kReproFile, repro.dump(2) + "\n"); !r)
        return r.error();
    return bundleDir;
}

Result<ReproBundle> loadRepro(const fs::path& dir)
{
    const fs::path file = dir / kReproFile;
    auto j = json::readFile(file);
    if (!j)
        return j.error();
    ReproBundle b;
    b.dir = dir;
    try {
        json::Object o(j.value(), "");
        if (o.integer("schema_version") != kReproSchemaVersion)
            json::fail(o.at("schema_version"), "this build reads repro bundles of schema version " +
                                                   std::to_string(kReproSchemaVersion));
        if (o.string("kind") != "kernelforge-repro")
            json::fail(o.at("kind"), "not a KernelForge repro bundle");
        json::Object t(o.required("task"), o.at("task"));
        // Both folders stay inside the bundle: a bundle from elsewhere must not point at other files.
        auto inside = [](json::Object& obj, const char* key, const char* fallback) {
            const std::string v = obj.stringOr(key, fallback);
            if (v.empty() || fs::path(v).is_absolute() || v.find("..") != std::string::npos)
                json::fail(obj.at(key), "must name a folder inside the bundle");
            return v;
        };
        b.taskDir = dir / inside(t, "dir", "task");
        b.caseDir = dir / inside(o, "case", "case");
        b.createdAt = o.stringOr("created_at", "");
        const std::string kind = o.stringOr("failure_kind", "mismatch");
        auto k = parseFailureKind(kind);
        if (!k)
            json::fail(o.at("failure_kind"), "unknown failure kind '" + kind + "'");
        b.kind = *k;
    } catch (const json::SchemaError& e) {
        return Error::inFile(file.string(), e.pointer, "read repro bundle", e.message, "export the bundle again");
    }
    auto task = loadTask(b.taskDir);
    if (!task)
        return task.error();
    b.task = std::move(task.value());
    auto kase = readCase(b.caseDir);
    if (!kase)
        return kase.error();
    b.kase = std::move(kase.value());
    if (taskHash(b.task) != b.kase.taskHash)
        return bundleError(b.taskDir / "task.json",
                           "the bundle's task folder no longer hashes to the task the case was saved with (task.json, "
                           "an include folder or the TorchScript reference was edited)",
                           "export the bundle again, or restore the edited file");
    if (!b.task.findCandidate(b.kase.candidateFile))
        return bundleError(b.taskDir / "task.json", "the task has no candidate " + b.kase.candidateFile, "export the bundle again");
    if (sourceHashOf(b.task, b.kase.candidateFile) != b.kase.sourceHash)
        return bundleError(b.taskDir / b.kase.candidateFile,
                           "the bundle's copy of " + b.kase.candidateFile + " was edited",
                           "to try a fix, keep the bundle as it is and pass the edited file with --candidate-source");
    return b;
}

Result<ReproComparison> compareReproduction(const ReproBundle& b, const protocol::Trial& trial, const fs::path& rerunCaseDir)
{
    ReproComparison r;
    r.kind = trial.failureKind();
    r.reproduced = r.kind != FailureKind::None && r.kind == b.kind;
    r.mismatchesBefore = checkMismatches(b.kase);
    for (const OutputCheck& o : trial.outputs)
        r.mismatchesNow += o.mismatches;

    if (rerunCaseDir.empty()) {
        r.elementsDiffering = r.mismatchesBefore + r.mismatchesNow;
        r.sameMismatchSet = r.mismatchesBefore == 0 && r.mismatchesNow == 0;
    } else {
        auto now = readCase(rerunCaseDir);
        if (!now)
            return now.error();
        r.actualBitwiseEqual = true;
        r.sameMismatchSet = true;
        for (const CaseOutput& before : b.kase.outputs) {
            const CaseOutput* after = now->output(before.name);
            auto oldFiles = openOutput(b.caseDir, b.kase, before.name);
            if (!oldFiles)
                return oldFiles.error();
            if (!after) {
                r.sameMismatchSet = r.actualBitwiseEqual = false;
                continue;
            }
            auto newFiles = openOutput(rerunCaseDir, now.value(), after->name);
            if (!newFiles)
                return newFiles.error();
            const NpyFile &oe = oldFiles->expected, &oa = oldFiles->actual, &ne = newFiles->expected, &na = newFiles->actual;
            if (oa.header().dtype != na.header().dtype || oa.header().elements != na.header().elements) {
                r.sameMismatchSet = r.actualBitwiseEqual = false;
                continue;
            }
            const DType t = oa.header().dtype;
            const auto bytes = oa.header().dataBytes();
            r.actualBitwiseEqual = r.actualBitwiseEqual && std::memcmp(oa.data(), na.data(), bytes) == 0;
            const auto* oev = reinterpret_cast<const double*>(oe.data());
            const auto* nev = reinterpret_cast<const double*>(ne.data());
            for (std::int64_t i = 0; i < oa.header().elements; ++i) {
                const bool wasBad = classify(t, oa.element(i), oev[i], before.sentinel[0].data(), before.atolEffective,
                                             before.rtol, oldFiles->libtorchAt(i)).cls != ElementClass::Ok;
                const bool isBad = classify(t, na.element(i), nev[i], after->sentinel[0].data(), after->atolEffective,
                                            after->rtol, newFiles->libtorchAt(i)).cls != ElementClass::Ok;
                r.elementsDiffering += wasBad != isBad;
                const bool sameRef = oev[i] == nev[i] || (std::isnan(oev[i]) && std::isnan(nev[i]));
                if (!sameRef) {
                    ++r.referenceDriftElements;
                    if (std::isfinite(oev[i]) && std::isfinite(nev[i]))
                        r.referenceDriftMax = std::max(r.referenceDriftMax, std::fabs(oev[i] - nev[i]));
                }
            }
        }
        r.sameMismatchSet = r.sameMismatchSet && r.elementsDiffering == 0;
    }

    if (r.kind == FailureKind::None)
        r.sentence = "not reproduced: the candidate now passes on the saved inputs (" + std::to_string(r.mismatchesBefore) +
                     " mismatches before)";
    else if (!r.reproduced)
        r.sentence = std::string("failed differently: ") + std::string(failureKindName(r.kind)) + " now, " +
                     std::string(failureKindName(b.kind)) + " before";
    else if (r.sameMismatchSet)
        r.sentence = "reproduced: the same " + std::to_string(r.mismatchesNow) + " elements are wrong" +
                     (r.actualBitwiseEqual ? ", and the outputs are bit-for-bit the same" : " (the values differ)");
    else
        r.sentence = "reproduced (" + std::string(failureKindName(r.kind)) + "), but " + std::to_string(r.elementsDiffering) +
                     " elements differ in whether they are wrong (" + std::to_string(r.mismatchesBefore) + " before, " +
                     std::to_string(r.mismatchesNow) + " now)";
    if (r.referenceDriftElements > 0)
        r.sentence += "; the reference changed in " + std::to_string(r.referenceDriftElements) +
                      " elements (another GPU or LibTorch?)";
    return r;
}

Json toJson(const ReproComparison& c)
{
    return {{"reproduced", c.reproduced},
            {"kind", failureKindName(c.kind)},
            {"same_mismatch_set", c.sameMismatchSet},
            {"actual_bitwise_equal", c.actualBitwiseEqual},
            {"mismatches_before", c.mismatchesBefore},
            {"mismatches_now", c.mismatchesNow},
            {"elements_differing", c.elementsDiffering},
            {"reference_drift", {{"elements", c.referenceDriftElements}, {"max_abs", c.referenceDriftMax}}},
            {"summary", c.sentence}};
}

} // namespace kf
