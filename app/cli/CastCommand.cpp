// `kforge cast export | inspect | check` and the command line of `kforge cast`: .cast packages of
// registry kernels (docs/cast.md, docs/cast-format.md). `kforge cast run` is in CastRun.cpp.
#include "CastCommand.h"
#include "CastArgs.h"

#include "CommaList.h"
#include "ExitCodes.h"
#include "ProgressLine.h"
#include "TextTable.h"
#include "engine/cast/CastExport.h"
#include "engine/cast/CastModel.h"
#include "engine/cast/ModelRuns.h"
#include "engine/cast/CastPackage.h"
#include "engine/cast/CastPackageEvidence.h"
#include "engine/protocol/Signature.h"
#include "engine/registry/Registry.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <tuple>

#ifndef KF_VERSION
#define KF_VERSION "dev"
#endif

namespace fs = std::filesystem;
using nlohmann::json;

namespace kf::cli::castcli {

namespace {

void printJson(const json& j) { std::cout << j.dump(2, ' ', false, json::error_handler_t::replace) << '\n'; }

std::string fixed(const json& v, const char* suffix)
{
    if (!v.is_number())
        return "–";
    char b[32];
    std::snprintf(b, sizeof b, "%.2f%s", v.get<double>(), suffix);
    return b;
}

// "cast::a, cast::b": the ops of a package or of a model, as C++ calls them.
std::string castOps(const std::vector<std::string>& names)
{
    std::string out;
    for (const auto& n : names)
        out += (out.empty() ? "cast::" : ", cast::") + n;
    return out;
}

// The export's options from the command line: --name ID=NAME and the [NAME=]FILE of --model and
// --inputs.
Result<cast::ExportOptions> exportOptions(const CastArgs& a)
{
    cast::ExportOptions o;
    o.ids = a.ids;
    o.architectures = splitCommaList(a.archs);
    o.ptx = a.ptx;
    o.packageName = a.packageName;
    o.packageVersion = a.packageVersion;
    o.kernelforgeVersion = KF_VERSION;
    o.allowDeprecated = a.allowDeprecated;
    for (const std::string& n : a.names) {
        const auto eq = n.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == n.size())
            return Error::failed("read --name", "\"" + n + "\" is not ID=NAME", "e.g. --name cuda_add_h100_fp32_n64_v1=my_add");
        o.opNames[n.substr(0, eq)] = n.substr(eq + 1);
    }
    // "[NAME=]FILE": a name before the first '=', when that comes before any '/'.
    auto named = [](const std::string& arg) -> std::pair<std::string, std::string> {
        const auto eq = arg.find('=');
        if (eq != std::string::npos && eq > 0 && arg.find('/') > eq)
            return {arg.substr(0, eq), arg.substr(eq + 1)};
        return {{}, arg};
    };
    for (const std::string& m : a.models) {
        cast::ModelExport me;
        std::tie(me.name, me.file) = named(m);
        o.models.push_back(me);
    }
    for (std::size_t i = 0; i < a.inputs.size(); ++i) {
        const auto [name, file] = named(a.inputs[i]);
        if (!name.empty()) {
            auto it = std::find_if(o.models.begin(), o.models.end(), [&](const cast::ModelExport& me) {
                return (me.name.empty() ? cast::defaultOpName(me.file.stem().string()) : me.name) == name;
            });
            if (it == o.models.end())
                return Error::failed("read --inputs", "no --model is named \"" + name + "\"", "name the model: --model " + name + "=FILE");
            it->inputs = file;
        } else if (i < o.models.size()) {
            o.models[i].inputs = file;
        } else {
            return Error::failed("read --inputs", "there are more --inputs than --model files", "give one --inputs per --model, or NAME=FILE");
        }
    }
    return o;
}

void printExportSummary(const CastArgs& a, const cast::ExportSummary& s)
{
    if (a.json) {
        printJson({{"schema_version", 1}, {"command", "cast export"}, {"ok", true}, {"file", s.file.string()},
                   {"bytes", s.bytes}, {"ops", s.ops}, {"architectures", s.architectures},
                   {"ptx", s.ptx.empty() ? json() : json(s.ptx)}, {"compile_ms", s.compileMs},
                   {"models", [&] {
                        json list = json::array();
                        for (const auto& m : s.models)
                            list.push_back({{"name", m.name}, {"uses", m.uses}});
                        return list;
                    }()}});
        return;
    }
    std::string archs;
    for (const auto& x : s.architectures)
        archs += (archs.empty() ? "" : ", ") + x;
    std::cout << "wrote " << s.file.string() << " (" << s.bytes << " bytes): " << castOps(s.ops) << "\n  cubins for " << archs
              << (s.ptx.empty() ? std::string(", no PTX") : ", PTX " + s.ptx) << "; compiled in "
              << static_cast<long long>(s.compileMs) << " ms\n";
    for (const auto& m : s.models) {
        const std::string uses = castOps(m.uses);
        std::cout << "  model " << m.name << ": "
                  << (uses.empty() ? std::string("no packaged op matches an operator its graph calls")
                                   : "its graph calls what " + uses + " implement" + (m.uses.size() > 1 ? "" : "s"))
                  << " (each call site is matched when it runs: `kforge cast run`)\n";
    }
}

int exportCommand(const CastArgs& a)
{
    auto o = exportOptions(a);
    if (!o)
        return reportError(o.error(), a.json, "export", kExitUsage);
    auto dir = Registry::resolveDirectory(a.registry, fs::current_path());
    if (!dir)
        return reportError(dir.error(), a.json, "export", kExitUsage);
    Registry registry(dir.value());
    ProgressLine line;
    auto done = cast::exportPackage(registry, *o, a.output, [&](const cast::ExportProgress& p) {
        line.show("[" + std::to_string(p.done) + "/" + std::to_string(p.total) + "] " + p.text);
    });
    line.clear();
    if (!done) {
        const Error& e = done.error();
        int code = kExitEnvironment;
        if (e.kind == kRegistryBadArgument || e.kind == cast::kCastBadArgument)
            code = kExitUsage;
        else if (e.kind == cast::kCastKernelRefused)
            code = kExitFailed;
        return reportError(e, a.json, "export", code);
    }
    printExportSummary(a, done.value());
    return kExitOk;
}

// Each op's evidence as the signed record in the package says it, checked now (never the
// manifest's summary, which no hash covers).
std::vector<cast::OpEvidence> opEvidence(const cast::Package& p)
{
    auto key = protocol::loadSigningKey(false);
    std::vector<cast::OpEvidence> out;
    for (const cast::PackageOp& op : p.ops)
        out.push_back(cast::readOpEvidence(p, op, key ? &key.value() : nullptr, key ? std::string() : key.error().message()));
    return out;
}

// One op's row: numbers from the record, each marked "unverified" unless the record holds.
std::vector<std::string> opRow(const cast::PackageOp& op, const cast::OpEvidence& ev)
{
    const std::string mark = ev.verified() ? "" : " unverified";
    auto num = [&](const std::optional<double>& v) { return v ? fixed(json(*v), "×") + mark : std::string("–"); };
    const PromotionRecord* r = ev.record ? &*ev.record : nullptr;
    return {"cast::" + op.name, op.schema, op.registryId,
            r ? r->environment.gpu + " (" + r->candidate.arch + ")" : std::string("–"),
            num(r ? r->geomeanSpeedup : std::nullopt), num(r ? r->minSpeedup : std::nullopt),
            num(r ? r->compileSpeedup : std::nullopt), ev.trustText()};
}

void printEvidenceProblems(const cast::Package& p, const std::vector<cast::OpEvidence>& evidence)
{
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        const cast::OpEvidence& ev = evidence[i];
        for (const std::string& problem : ev.problems)
            std::cout << "  ⚠ cast::" << p.ops[i].name << ": " << problem << "\n";
        if (!ev.summaryEdited.empty()) {
            std::string keys;
            for (const std::string& k : ev.summaryEdited)
                keys += (keys.empty() ? "" : ", ") + k;
            std::cout << "  ⚠ cast::" << p.ops[i].name << ": the manifest's evidence summary differs from the signed record ("
                      << keys << "): edited after export, so ignored; the numbers above are the record's\n";
        }
    }
}

void printInspectJson(const CastArgs& a, const cast::Package& p, bool checkOnly)
{
    const char* name = checkOnly ? "check" : "inspect";
    json j = {{"schema_version", 1}, {"command", std::string("cast ") + name}, {"ok", true}, {"file", a.file},
              {"package", {{"name", p.name}, {"version", p.version}}}, {"files", p.files.size()}, {"ops", json::array()}};
    const std::vector<cast::OpEvidence> evidence = checkOnly ? std::vector<cast::OpEvidence>() : opEvidence(p);
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        const auto& op = p.ops[i];
        j["ops"].push_back({{"name", op.name}, {"registry_id", op.registryId}, {"schema", op.schema}, {"images", op.images}});
        if (!checkOnly)
            j["ops"].back()["evidence"] = evidence[i].toJson();
    }
    j["models"] = json::array();
    for (const auto& mo : p.models)
        j["models"].push_back({{"name", mo.name}, {"format", mo.format}, {"uses", mo.uses}, {"runs", mo.runs.size()}});
    if (!checkOnly)
        j["manifest"] = p.manifest;
    printJson(j);
}

// The package's header and its ops with their op-level evidence.
void printOps(const std::string& file, const cast::Package& p)
{
    const json& m = p.manifest;
    std::cout << "package  " << p.name << " " << p.version << "  (" << file << ")\n"
              << "made     " << p.createdAt << " by KernelForge " << p.kernelforgeVersion << ", NVRTC "
              << m.value("nvrtc_version", "") << "\n";
    std::string archs;
    for (const auto& x : m["architectures"])
        archs += (archs.empty() ? "" : ", ") + x.get<std::string>();
    std::cout << "targets  cubin " << archs << "; PTX " << (m["ptx"].is_string() ? m["ptx"].get<std::string>() : "none")
              << "\n\nops\n";
    TextTable ops({{"op"}, {"signature"}, {"registry ID"}, {"measured on"}, {"geomean", TextTable::Align::Right},
                   {"min", TextTable::Align::Right}, {"vs torch.compile", TextTable::Align::Right}, {"promotion record"}});
    const std::vector<cast::OpEvidence> evidence = opEvidence(p);
    for (std::size_t i = 0; i < p.ops.size(); ++i)
        ops.addRow(opRow(p.ops[i], evidence[i]));
    ops.print(std::cout);
    std::cout << "  (op-level evidence, read from each op's signed promotion.json and checked now: each kernel's\n"
                 "   microbenchmark against LibTorch eager on the shapes of its task, and against torch.compile's faster\n"
                 "   mode where the registry measured it; \"-\" where it did not; \"unverified\" where the record's\n"
                 "   signature does not hold under this user's key, a file it names differs, or its reports were unsigned)\n";
    printEvidenceProblems(p, evidence);
}

// A model's model-level evidence: one row per recorded run.
void printModelRuns(const cast::Package& p, const cast::PackageModel& mo)
{
    TextTable runs({{"model run (model-level, end to end)"}, {"GPU"}, {"torch"}, {"with", TextTable::Align::Right},
                    {"without", TextTable::Align::Right}, {"speedup (unsigned, unverified)", TextTable::Align::Right}, {"substituted"},
                    {"fallbacks", TextTable::Align::Right}});
    for (const std::string& path : mo.runs) {
        auto r = json::parse(p.file(path)->bytes, nullptr, false);
        if (r.is_discarded())
            continue;
        const cast::RunTally tally = cast::tallyOf(r);   // the run passed checkModelRun in openPackage
        auto ms = [&](const char* key) {
            if (!r.contains(key) || !r[key].is_object() || !r[key]["median"].is_number())
                return std::string("–");
            char b[32];
            std::snprintf(b, sizeof b, "%.4f ms", r[key]["median"].get<double>());
            return std::string(b);
        };
        runs.addRow({r["created_at"].get<std::string>(), r["gpu"].get<std::string>().empty() ? "CPU" : r["gpu"].get<std::string>(),
                     r["torch"].get<std::string>(), ms("with_kernels_ms"), ms("without_kernels_ms"),
                     fixed(r["speedup"], "×"), std::to_string(tally.substituted) + " of " + std::to_string(tally.sites),
                     std::to_string(tally.fallbacks)});
    }
    runs.print(std::cout);
}

void printModel(const std::string& file, const cast::Package& p, const cast::PackageModel& mo)
{
    const json& e = mo.json;
    const std::string uses = castOps(mo.uses);
    std::string ins;
    for (const auto& t : e["inputs"])
        ins += (ins.empty() ? "" : "; ") + t["name"].get<std::string>() + " " + t["dtype"].get<std::string>() + " " +
               t["shape"].dump();
    std::cout << "\nmodel " << mo.name << "  (" << mo.format
              << (e["torch_version"].get<std::string>().empty() ? "" : ", torch " + e["torch_version"].get<std::string>())
              << ", " << mo.file << ")\n  inputs  " << (ins.empty() ? std::string("(a TorchScript module does not declare them)") : ins)
              << " — runs use "
              << (e["example"]["file"].is_string() ? e["example"]["kind"].get<std::string>() + " " + e["example"]["file"].get<std::string>()
                                                   : std::string("the program's own sample inputs"))
              << "\n  may use " << (uses.empty() ? std::string("none of the packaged ops") : uses) << "\n";
    if (mo.runs.empty()) {
        std::cout << "  no model-level evidence yet (`kforge cast run " << file << " --record`)\n";
        return;
    }
    printModelRuns(p, mo);
}

int inspectCommand(const CastArgs& a, bool checkOnly)
{
    const char* name = checkOnly ? "check" : "inspect";
    auto pkg = cast::openPackage(a.file);
    if (!pkg)
        return reportError(pkg.error(), a.json, name, openFailureCode(pkg.error()));
    const cast::Package& p = pkg.value();
    if (a.json) {
        printInspectJson(a, p, checkOnly);
        return kExitOk;
    }
    if (checkOnly) {
        std::uint64_t bytes = 0;
        for (const auto& f : p.files)
            bytes += static_cast<std::uint64_t>(f.bytes);
        std::cout << a.file << ": ok — " << p.ops.size() << " op(s), "
                  << (p.models.empty() ? std::string() : std::to_string(p.models.size()) + " model(s), ") << p.files.size()
                  << " files, every SHA-256 matches (" << bytes << " bytes unpacked)\n";
        return kExitOk;
    }
    printOps(a.file, p);
    for (const cast::PackageModel& mo : p.models)
        printModel(a.file, p, mo);
    std::cout << "\nfiles\n";
    TextTable files({{"path"}, {"bytes", TextTable::Align::Right}, {"sha256"}});
    for (const auto& f : p.files)
        files.addRow({f.path, std::to_string(f.bytes), f.sha256});
    files.print(std::cout);
    std::cout << "\nintegrity: every file matches its SHA-256 in the manifest\n";
    return kExitOk;
}

} // namespace

int reportError(const Error& e, bool asJson, const char* command, int code)
{
    if (!asJson)
        return fail(e, code);
    printJson({{"schema_version", 1}, {"command", std::string("cast ") + command}, {"ok", false},
               {"error", {{"what", e.what}, {"why", e.why}, {"hint", e.hint}, {"file", e.file}, {"entry", e.pointer}}}});
    return code;
}

int openFailureCode(const Error& e)
{
    if (e.kind == cast::kCastNoSuchFile)
        return kExitUsage;
    if (e.what.find("libcrypto") != std::string::npos || e.what.find("SHA-256") != std::string::npos)
        return kExitEnvironment;
    return kExitFailed;
}

} // namespace kf::cli::castcli

namespace kf::cli {

void addCastCommand(CLI::App& app, int& exitCode)
{
    using namespace castcli;
    auto args = std::make_shared<CastArgs>();
    CLI::App* cast = app.add_subcommand("cast", "Export registry kernels as .cast packages, inspect and check them");
    cast->require_subcommand(1);

    CLI::App* e = cast->add_subcommand("export", "Compile registry kernels for several GPUs into one .cast package");
    e->add_option("ids", args->ids, "registry IDs (`kforge registry list`)")->required();
    e->add_option("-o,--output", args->output, "the package to write, e.g. ops.cast")->required();
    std::string defaults;
    for (const char* a : cast::kDefaultArchitectures)
        defaults += (defaults.empty() ? "" : ",") + std::string(a);
    e->add_option("--arch", args->archs, "cubin architectures, comma-separated (default " + defaults + ")");
    e->add_option("--ptx", args->ptx, "PTX for later GPUs: compute_XY of a listed architecture, or none (default: the lowest)");
    e->add_option("--name", args->names, "ID=NAME: call that version cast::NAME (default: its task's name)");
    e->add_option("--package-name", args->packageName, "the package's name (default: the file's stem)");
    e->add_option("--package-version", args->packageVersion, "the package's version (default 1.0.0)");
    e->add_flag("--allow-deprecated", args->allowDeprecated, "export deprecated versions too");
    e->add_option("--model", args->models,
                  "[NAME=]FILE: carry a model, a torch.export.save .pt2 (or torch.jit.save module) with its weights");
    e->add_option("--inputs", args->inputs,
                  "[NAME=]FILE: the model's inputs for runs, shapes.json or tensors saved with torch.save "
                  "(default: the .pt2's sample inputs)");
    e->add_option("--registry", args->registry,
                  "registry folder (default: $KF_REGISTRY, the workspace's, or ~/.local/share/KernelForge/registry)");
    e->add_flag("--json", args->json, "print JSON");
    e->callback([args, &exitCode] { exitCode = exportCommand(*args); });

    CLI::App* i = cast->add_subcommand("inspect", "List a package's ops, architectures, evidence and file hashes");
    i->add_option("file", args->file, "the .cast package")->required();
    i->add_flag("--json", args->json, "print JSON (with the whole manifest)");
    i->callback([args, &exitCode] { exitCode = inspectCommand(*args, false); });

    CLI::App* r = cast->add_subcommand("run", "Load a package as a LibTorch program would and run each op on generated "
                                               "inputs against its reference ops, with timings");
    r->add_option("file", args->file, "the .cast package")->required();
    r->add_option("--device", args->device, "cuda or cpu (default: cuda when there is a GPU)")
        ->check(CLI::IsMember({"cuda", "cpu"}));
    r->add_option("--runs", args->runs, "timed runs per shape (default 20)")->check(CLI::Range(1, 100000));
    r->add_flag("--no-kernels", args->noKernels, "run every op's reference ops instead of its kernels");
    r->add_option("--op", args->op, "only this op (of a package with a model: run the op, not the model)");
    r->add_option("--model", args->model, "which model (default: the first)");
    r->add_option("--warmup", args->warmup, "model runs: untimed passes first (default 5)")->check(CLI::Range(0, 100000));
    r->add_flag("--check", args->check, "model runs: compare outputs with the unsubstituted model and an fp64 run");
    r->add_flag("--allow-fallback", args->allowFallback,
                "model runs: a kernel that raises falls back to its reference ops, said once per op and counted");
    r->add_flag("--record", args->record,
                "model runs: store the run's model-level evidence in the package, and beside each registry version "
                "whose kernel ran (when the registry is here)");
    r->add_option("--registry", args->registry, "with --record: the registry folder (default: as for export)");
    r->add_flag("--json", args->json, "print JSON");
    r->callback([args, &exitCode] { exitCode = runCommand(*args); });

    CLI::App* c = cast->add_subcommand("check", "Check a package's integrity: archive, manifest, hashes (exit 1 when rejected)");
    c->add_option("file", args->file, "the .cast package")->required();
    c->add_flag("--json", args->json, "print JSON");
    c->callback([args, &exitCode] { exitCode = inspectCommand(*args, true); });
}

} // namespace kf::cli
