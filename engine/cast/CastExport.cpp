#include "engine/cast/CastExport.h"

#include "engine/cast/CastModel.h"
#include "engine/cast/ExportModels.h"
#include "engine/cast/PackageFiles.h"
#include "engine/cast/ModelRuns.h"
#include "engine/core/JsonReader.h"

#include "engine/compile/Compiler.h"
#include "engine/compile/TaskCompile.h"
#include "engine/core/Architectures.h"
#include "engine/core/Clock.h"
#include "engine/core/Files.h"
#include "engine/core/Hmac.h"
#include "engine/protocol/Signature.h"

#include <algorithm>
#include <chrono>
#include <set>

namespace fs = std::filesystem;

namespace kf::cast {

using Json = nlohmann::json;
using namespace detail;

namespace {

Json exprJson(const Expr& e)
{
    return {{"text", e.text()}, {"tree", e.tree()}};
}

Json tensorsJson(const std::vector<TensorSpec>& specs)
{
    Json list = Json::array();
    for (const auto& t : specs)
        list.push_back({{"name", t.name}, {"dtype", dtypeName(t.dtype)}, {"shape", shapeJson(t.shape)}});
    return list;
}

std::string schemaFor(const std::string& name, const Task& task)
{
    std::string s = name + "(";
    for (std::size_t i = 0; i < task.inputs.size(); ++i)
        s += (i ? ", Tensor " : "Tensor ") + task.inputs[i].name;
    s += ") -> ";
    if (task.outputs.size() == 1)
        return s + "Tensor";
    s += "(";
    for (std::size_t i = 0; i < task.outputs.size(); ++i)
        s += i ? ", Tensor" : "Tensor";
    return s + ")";
}

int archNumber(const std::string& arch)
{
    const ArchInfo* a = findArchitecture(arch);
    return a ? a->major * 10 + a->minor : 0;
}

/// Everything of one registry version that goes into the package.
struct OpExport {
    std::string id, name;
    Task task;
    PromotionRecord record;
    RegistryEntry entry;
    std::map<std::string, CompileResult> builds;   // sm_XY -> cubin build
};

Json evidenceJson(const OpExport& op, const std::string& dir, const Registry& registry)
{
    const PromotionRecord& r = op.record;
    Json gates = Json::array();
    for (const GateCheck& g : r.gates) {
        Json one = {{"gate", g.gate}, {"passed", g.passed}, {"detail", g.detail}};
        if (g.notRun)
            one["not_run"] = true;   // allowed by the registry's sanitizer policy; not a pass
        gates.push_back(std::move(one));
    }
    Json shapes = Json::array();
    for (const auto& s : r.perShape) {
        Json dims = Json::object();
        for (const auto& [k, v] : s.shape.dims)
            dims[k] = v;
        shapes.push_back({{"shape", dims}, {"label", s.shape.label},
                          {"speedup", s.speedup ? Json(*s.speedup) : Json()},
                          {"candidate_median_ms", s.candidateMedianMs ? Json(*s.candidateMedianMs) : Json()},
                          {"baseline_median_ms", s.baselineMedianMs ? Json(*s.baselineMedianMs) : Json()}});
    }
    // Whether promotion.json's signature holds for this user's key, said at export: a runtime
    // cannot check it (the key is per user), so the package records what the exporter saw.
    std::string signature = "not checked";
    auto text = readFileBytes(registry.entryDirectory(op.id) / "promotion.json");
    if (text) {
        auto doc = Json::parse(text.value(), nullptr, false);
        if (!doc.is_discarded()) {
            auto key = protocol::loadSigningKey(false);
            const protocol::SignatureCheck c = key ? protocol::checkSignature(doc, &key.value())
                                                   : protocol::checkSignature(doc, nullptr, key.error().why);
            signature = std::string(protocol::signatureStateName(c.state)) + (c.detail.empty() ? "" : ": " + c.detail);
        }
    }
    Json out = {{"correctness", dir + "correctness.json"},
            {"performance", dir + "performance.json"},
            {"promotion", dir + "promotion.json"},
            {"gpu", r.environment.gpu},
            {"arch", r.candidate.arch},
            {"torch", r.environment.torch},
            {"promoted_at", r.promotedAt},
            {"baseline", "LibTorch eager"},
            {"geomean_speedup", r.geomeanSpeedup ? Json(*r.geomeanSpeedup) : Json()},
            {"min_speedup", r.minSpeedup ? Json(*r.minSpeedup) : Json()},
            {"threshold", r.threshold ? Json(*r.threshold) : Json()},
            {"per_shape", shapes},
            {"gates", gates},
            {"scope", r.evidenceScope},
            {"unsigned_evidence_accepted", r.unsignedEvidenceAccepted},
            {"registry_signature", signature}};
    // The second baseline, when the registry had it measured (docs/benchmarks.md): written only
    // then, so packages without it read as before.
    if (r.compileSpeedup)
        out["compile_speedup"] = *r.compileSpeedup;
    if (r.compileThreshold)
        out["compile_threshold"] = *r.compileThreshold;
    return out;
}

} // namespace

Json candidateOpJson(const std::string& name, const Task& task, const Candidate& cand,
                     const std::map<std::string, std::string>& lowered)
{
    Json launches = Json::array();
    for (const Launch& l : cand.launches) {
        Json args = Json::array();
        for (const LaunchArg& a : l.args)
            if (a.kind == LaunchArg::Kind::Tensor)
                args.push_back({{"tensor", a.tensor}});
            else
                args.push_back({{"scalar", exprJson(a.scalar)}, {"type", a.scalarType}});
        const auto it = lowered.find(l.kernel);
        launches.push_back({{"kernel", l.kernel},
                            {"lowered", it == lowered.end() ? l.kernel : it->second},
                            {"grid", {exprJson(l.grid[0]), exprJson(l.grid[1]), exprJson(l.grid[2])}},
                            {"block", {exprJson(l.block[0]), exprJson(l.block[1]), exprJson(l.block[2])}},
                            {"shared_bytes", exprJson(l.sharedBytes)},
                            {"args", args}});
    }
    Json scratch = Json::array();
    for (const Scratch& s : cand.scratch)
        scratch.push_back({{"name", s.name}, {"dtype", dtypeName(s.dtype)}, {"count", exprJson(s.count)}, {"zero", s.zero}});
    Json symbols = Json::array();
    for (const SymbolSpec& s : task.symbols)
        symbols.push_back({{"name", s.name}, {"min", s.min}, {"max", s.max}, {"multiple_of", s.multipleOf}});
    Json constraints = Json::array();
    for (const Expr& c : task.constraints)
        constraints.push_back(exprJson(c));
    // The candidate's numeric defines are names of its launch plan too (Task::environment).
    Json params = Json::object();
    for (const auto& [k, v] : cand.constants())
        params[k] = v.isInt ? Json(v.i) : Json(v.d);
    for (const auto& [k, v] : task.parameters)
        params[k] = v.isInt ? Json(v.i) : Json(v.d);
    Json reference;
    if (task.reference.kind == Reference::Kind::TorchScript) {
        reference = {{"kind", "torchscript"},
                     {"file", task.reference.torchscript.generic_string()},
                     {"inputs", task.reference.scriptInputs}};
    } else {
        Json steps = Json::array();
        for (const OpStep& s : task.reference.steps)
            steps.push_back({{"op", s.op},
                             {"inputs", s.inputs},
                             {"attrs", s.attrs.is_null() ? Json::object() : s.attrs},
                             {"output", s.output.empty() ? task.outputs.front().name : s.output}});
        reference = {{"kind", "tape"}, {"steps", steps}};
    }
    return {{"name", name},
            {"inputs", tensorsJson(task.inputs)},
            {"outputs", tensorsJson(task.outputs)},
            {"parameters", params},
            {"symbols", symbols},
            {"constraints", constraints},
            {"launches", launches},
            {"scratch", scratch},
            {"reference", reference}};
}

std::string defaultOpName(const std::string& taskName)
{
    std::string s;
    for (char c : taskName)
        s.push_back((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c : '_');
    if (s.empty() || (s[0] >= '0' && s[0] <= '9'))
        s = "op_" + s;
    if (s.size() > 64)
        s.resize(64);
    if (!isOpName(s))
        s = "op_" + s.substr(0, 61);
    return s;
}

namespace {

/// The cubin architectures, oldest first, and the PTX to add ("" for none).
struct Targets {
    std::vector<std::string> archs;
    std::string ptx;
};

Result<Targets> chooseTargets(const ExportOptions& options)
{
    Targets t;
    t.archs = options.architectures;
    if (t.archs.empty())
        t.archs.assign(std::begin(kDefaultArchitectures), std::end(kDefaultArchitectures));
    std::set<std::string> seenArch;
    for (std::string& a : t.archs) {
        if (!a.empty() && (a.back() == 'a' || a.back() == 'f'))
            return badArgument("\"" + a + "\" is an architecture-specific target; a package holds portable cubins only",
                               "use " + a.substr(0, a.size() - 1) + " (the format has no way to mark a cubin that needs " + a + ")");
        const ArchInfo* info = findArchitecture(a);
        if (!info || a.rfind("compute_", 0) == 0)
            return badArgument("\"" + a + "\" is not an architecture KernelForge compiles cubins for",
                               "use sm_XY names such as sm_80,sm_90 (`kforge archs` lists them)");
        a = info->arch;
        if (!seenArch.insert(a).second)
            return badArgument(a + " is listed twice in --arch");
    }
    std::sort(t.archs.begin(), t.archs.end(),
              [](const std::string& x, const std::string& y) { return archNumber(x) < archNumber(y); });
    if (options.ptx == "none")
        return t;
    if (options.ptx.empty()) {
        t.ptx = "compute_" + t.archs.front().substr(3);
        return t;
    }
    if (options.ptx.back() == 'a' || options.ptx.back() == 'f')
        return badArgument("\"" + options.ptx + "\" is an architecture-specific target", "use compute_XY, e.g. compute_80, or none");
    const ArchInfo* info = findArchitecture(options.ptx);
    if (!info)
        return badArgument("\"" + options.ptx + "\" is not an architecture", "use compute_XY, e.g. compute_80, or none");
    t.ptx = "compute_" + info->arch.substr(3);
    if (!seenArch.count("sm_" + t.ptx.substr(8)))
        return badArgument("PTX for " + t.ptx + " needs sm_" + t.ptx.substr(8) + " among the architectures",
                           "add it to --arch, or pick the PTX of a listed one");
    return t;
}

/// One registry version to export: not deprecated (unless allowed), clean in the registry
/// check, with its task, promotion record and op name.
Result<OpExport> gatherOp(const Registry& registry, const ExportOptions& options, const std::string& id,
                          const std::vector<RegistryDrift>& drift)
{
    OpExport op;
    op.id = id;
    auto entry = registry.entry(id);
    if (!entry)
        return entry.error();
    op.entry = entry.value();
    if (op.entry.deprecated() && !options.allowDeprecated)
        return badArgument(id + " is deprecated (" + op.entry.deprecationReason + ")",
                           "export its successor, or pass --allow-deprecated");
    for (const RegistryDrift& d : drift)
        if (d.severity == RegistryDrift::Severity::Error && (d.id == id || d.id.empty()))
            return exportError("the registry check fails for " + (d.id.empty() ? std::string("the registry") : id) + ": " +
                                   d.problem,
                               d.hint.empty() ? "run `kforge registry check`" : d.hint, d.file, kCastKernelRefused);
    auto task = registry.entryTask(id);
    if (!task)
        return task.error();
    op.task = std::move(task.value());
    auto record = registry.promotion(id);
    if (!record)
        return record.error();
    op.record = std::move(record.value());
    auto named = options.opNames.find(id);
    op.name = named != options.opNames.end() ? named->second : defaultOpName(op.task.name);
    if (!isOpName(op.name))
        return badArgument("\"" + op.name + "\" cannot name an operator",
                           "use letters, digits and _ (not starting with a digit, at most 64): --name " + id + "=NAME");
    return op;
}

Result<std::vector<OpExport>> gatherOps(const Registry& registry, const ExportOptions& options)
{
    auto index = registry.load();
    if (!index)
        return index.error();
    // The registry must vouch for what leaves it: every file hash and the evidence re-judged.
    auto drift = registry.check(false);
    if (!drift)
        return drift.error();
    std::vector<OpExport> ops;
    std::set<std::string> names;
    for (const std::string& id : options.ids) {
        auto op = gatherOp(registry, options, id, drift.value());
        if (!op)
            return op.error();
        if (!names.insert(op->name).second)
            return badArgument("two versions would both be cast::" + op->name,
                               "name one of them: --name " + id + "=OTHER_NAME");
        ops.push_back(std::move(op.value()));
    }
    return ops;
}

/// The op's candidate compiled for one architecture (cubin, no SASS), refused with the first
/// error when it does not build.
Result<CompileResult> compileFor(const OpExport& op, const std::string& arch, const CancelToken* cancel)
{
    const Candidate& cand = op.task.candidates.front();
    auto req = compileRequestFor(op.task, cand, arch);
    if (!req)
        return req.error();
    req->wantSass = false;
    auto built = compile(req.value(), nullptr, cancel);
    if (!built)
        return built.error();
    if (!built->success) {
        std::string first;
        for (const Diagnostic& d : built->diagnostics)
            if (d.severity == Diagnostic::Severity::Error) {
                first = d.file + ":" + std::to_string(d.line) + ": " + d.message;
                break;
            }
        return exportError(op.id + " does not compile for " + arch + ": " + first,
                           "drop " + arch + " from --arch, or promote a version that builds for it", {}, kCastKernelRefused);
    }
    for (const Launch& l : cand.launches)
        if (!built->loweredNames.count(l.kernel))
            return exportError(op.id + ": NVRTC gave no lowered name for " + l.kernel + " on " + arch);
    return built;
}

Result<void> compileOps(std::vector<OpExport>& ops, const std::vector<std::string>& archs, const fs::path& output,
                        const std::function<void(const ExportProgress&)>& progress, const CancelToken* cancel)
{
    ExportProgress p;
    p.total = static_cast<int>(ops.size() * archs.size());
    for (OpExport& op : ops) {
        for (const std::string& arch : archs) {
            if (cancel && cancel->cancelled())
                return exportError("cancelled");
            p.text = "compile " + op.name + " for " + arch;
            if (progress)
                progress(p);
            auto built = compileFor(op, arch, cancel);
            if (!built)
                return built.error();
            op.builds[arch] = std::move(built.value());
            ++p.done;
        }
        // One lowered name per kernel for every architecture: the manifest names it once.
        for (const auto& [arch, b] : op.builds)
            if (b.loweredNames != op.builds.begin()->second.loweredNames)
                return exportError(op.id + ": the kernels' lowered names differ between architectures");
    }
    p.text = "write " + output.string();
    if (progress)
        progress(p);
    return {};
}

/// The version's registry files under ops/<name>/registry/; returns the sources among them.
Result<Json> addRegistryFiles(const OpExport& op, const std::string& reg, const Registry& registry, PackageFiles& files)
{
    const fs::path folder = registry.entryDirectory(op.id);
    std::vector<std::string> regFiles = {"promotion.json"};
    for (const RegistryFile& f : op.record.files)
        regFiles.push_back(f.path);
    std::sort(regFiles.begin(), regFiles.end());
    Json sources = Json::array();
    for (const std::string& rel : regFiles) {
        auto bytes = readFileBytes(folder / rel, ArchiveLimits{}.maxEntryBytes);
        if (!bytes)
            return bytes.error();
        if (auto r = files.add(reg + rel, std::move(bytes.value())); !r)
            return r.error();
        const bool isSource = rel == op.entry.kernelFile || rel.rfind("include/", 0) == 0 ||
                              std::any_of(op.task.compile.includeDirs.begin(), op.task.compile.includeDirs.end(),
                                          [&](const std::string& d) { return rel.rfind(d + "/", 0) == 0; });
        if (isSource)
            sources.push_back(reg + rel);
    }
    return sources;
}

/// The cubins under ops/<name>/bin/, and the PTX when asked; returns the manifest's "images".
Result<Json> addImages(const OpExport& op, const std::string& base, const std::string& ptx, PackageFiles& files)
{
    Json images = Json::object();
    for (const auto& [arch, b] : op.builds) {
        const std::string path = base + "bin/" + arch + ".cubin";
        if (auto r = files.add(path, b.cubin); !r)
            return r.error();
        images[arch] = path;
    }
    if (!ptx.empty()) {
        const std::string path = base + "bin/" + ptx + ".ptx";
        if (auto r = files.add(path, op.builds.at("sm_" + ptx.substr(8)).ptx); !r)
            return r.error();
        images[ptx] = path;
    }
    return images;
}

/// Refuses an output whose extent no input binds: a call could not know it.
Result<void> checkOutputsBound(const OpExport& op)
{
    std::set<std::string> bound;
    for (const TensorSpec& t : op.task.inputs)
        for (const std::string& s : t.shape)
            bound.insert(s);
    for (const TensorSpec& t : op.task.outputs)
        for (const std::string& s : t.shape)
            if (!bound.count(s) && !isFixedExtent(s))
                return exportError(op.id + ": output " + t.name + "'s extent " + s +
                                   " is no input's extent, so a call could not know it");
    return {};
}

/// Adds the version's files; returns its entry of the manifest's "ops".
Result<Json> writeOp(const OpExport& op, const std::string& ptx, const Registry& registry, PackageFiles& files)
{
    const std::string base = "ops/" + op.name + "/";
    const std::string reg = base + "registry/";
    auto sources = addRegistryFiles(op, reg, registry, files);
    if (!sources)
        return sources.error();
    auto images = addImages(op, base, ptx, files);
    if (!images)
        return images.error();
    Json entry = candidateOpJson(op.name, op.task, op.task.candidates.front(), op.builds.begin()->second.loweredNames);
    if (op.task.reference.kind == Reference::Kind::TorchScript)
        entry["reference"]["file"] = reg + op.task.reference.torchscript.generic_string();
    if (auto bound = checkOutputsBound(op); !bound)
        return bound.error();
    entry["registry_id"] = op.id;
    entry["task_name"] = op.task.name;
    entry["schema"] = schemaFor(op.name, op.task);
    entry["images"] = images.value();
    entry["sources"] = sources.value();
    entry["task"] = reg + "task.json";
    entry["evidence"] = evidenceJson(op, reg, registry);
    return entry;
}

OpTapes opTapes(const std::vector<OpExport>& ops)
{
    OpTapes tapes;
    for (const OpExport& op : ops) {
        std::vector<std::string> steps;
        for (const OpStep& st : op.task.reference.steps)
            steps.push_back(st.op);
        tapes.emplace_back(op.name, steps);
    }
    return tapes;
}

Json manifestJson(const ExportOptions& options, const fs::path& output, const Targets& targets, Json ops, Json files,
                  bool withModels)
{
    auto nvrtc = nvrtcVersion();
    return {{"format", kCastFormat},
            {"schema_version", withModels ? kCastModelSchemaVersion : kCastSchemaVersion},
            {"package", {{"name", options.packageName.empty() ? output.stem().string() : options.packageName},
                         {"version", options.packageVersion}}},
            {"kernelforge_version", options.kernelforgeVersion},
            {"created_at", utcNow()},
            {"nvrtc_version", nvrtc ? nvrtc.value() : std::string()},
            {"architectures", targets.archs},
            {"ptx", targets.ptx.empty() ? Json() : Json(targets.ptx)},
            {"ops", std::move(ops)},
            {"files", std::move(files)}};
}

} // namespace

Result<ExportSummary> exportPackage(const Registry& registry, const ExportOptions& options, const fs::path& output,
                                    const std::function<void(const ExportProgress&)>& progress, const CancelToken* cancel)
{
    if (options.ids.empty())
        return badArgument("no registry ID was given", "list one or more IDs (`kforge registry list`)");
    auto targets = chooseTargets(options);
    if (!targets)
        return targets.error();
    auto ops = gatherOps(registry, options);
    if (!ops)
        return ops.error();
    std::set<std::string> names;
    for (const OpExport& op : ops.value())
        names.insert(op.name);
    auto models = readModels(options.models, names);
    if (!models)
        return models.error();

    ExportSummary summary;
    summary.file = output;
    summary.architectures = targets->archs;
    summary.ptx = targets->ptx;
    const auto started = std::chrono::steady_clock::now();
    if (auto built = compileOps(ops.value(), targets->archs, output, progress, cancel); !built)
        return built.error();
    summary.compileMs = msSince(started);

    PackageFiles files;
    Json opList = Json::array();
    for (const OpExport& op : ops.value()) {
        auto entry = writeOp(op, targets->ptx, registry, files);
        if (!entry)
            return entry.error();
        opList.push_back(std::move(entry.value()));
        summary.ops.push_back(op.name);
    }
    const OpTapes tapes = opTapes(ops.value());
    Json modelList = Json::array();
    for (ModelFiles& mf : models.value()) {
        auto entry = writeModel(mf, tapes, files);
        if (!entry)
            return entry.error();
        summary.models.push_back({mf.name, entry.value()["uses"].get<std::vector<std::string>>()});
        modelList.push_back(std::move(entry.value()));
    }
    Json manifest = manifestJson(options, output, targets.value(), std::move(opList), files.list(), !models->empty());
    if (!models->empty())
        manifest["models"] = modelList;
    if (auto w = files.write(manifest, output); !w)
        return w.error();
    std::error_code ec;
    summary.bytes = static_cast<std::int64_t>(fs::file_size(output, ec));
    return summary;
}

Result<std::string> recordModelRun(const fs::path& file, const std::string& model, const Json& run)
{
    auto pkg = openPackage(file);
    if (!pkg)
        return pkg.error();
    const std::string what = "record a model run in " + file.string();
    auto it = std::find_if(pkg->models.begin(), pkg->models.end(), [&](const PackageModel& m) { return m.name == model; });
    if (it == pkg->models.end())
        return Error::inFile(file.string(), {}, what, "the package has no model \"" + model + "\"", "`kforge cast inspect` lists its models");
    try {
        checkModelRun(run, "", model);
    } catch (const kf::json::SchemaError& e) {
        return Error::inFile(file.string(), {}, what, "the run's evidence is malformed at " + e.pointer + ": " + e.message, "record what `python -m kernelforge_cast run --evidence` wrote");
    }
    if (!sameRunPackage(run, pkg.value()))
        return foreignRun(what, run, pkg.value());
    const std::string stamp = runFileStem(run, pkg->name);
    std::string path = "models/" + model + "/runs/" + stamp + ".json";
    for (int n = 2; pkg->archive.find(path); ++n)
        path = "models/" + model + "/runs/" + stamp + "-" + std::to_string(n) + ".json";
    std::string bytes = run.dump(2) + "\n";
    auto listed = fileEntry(path, bytes);
    if (!listed)
        return listed.error();
    Json manifest = pkg->manifest;
    manifest["files"].push_back(std::move(listed.value()));
    const std::size_t index = static_cast<std::size_t>(it - pkg->models.begin());
    manifest["models"][index]["runs"].push_back(path);
    std::vector<ArchiveEntry> entries = std::move(pkg->archive.entries);
    entries.front().bytes = manifest.dump(2) + "\n";
    entries.push_back({path, std::move(bytes)});
    if (auto checked = checkEntries(entries, file.string()); !checked)
        return checked.error();
    if (auto w = writeArchive(file, entries); !w)
        return w.error();
    return path;
}

} // namespace kf::cast
