// `kforge registry list | show | check | remove | deprecate | threshold | set-sanitizer-policy`: the
// registry of verified kernels from a terminal or a CI pipeline. Every subcommand takes --registry
// and --json.
#include "ExitCodes.h"
#include "PromoteCommand.h"
#include "TextTable.h"
#include "engine/protocol/Report.h"
#include "engine/protocol/Signature.h"
#include "engine/registry/Registry.h"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kf::cli {

namespace {

std::string times(double v)
{
    char b[32];
    std::snprintf(b, sizeof b, "%.2f×", v);
    return b;
}

struct RegistryArgs {
    std::string registry;
    bool json = false;
    std::string id;
    std::string reason;
    bool prune = false;
    bool reindex = false;
    bool all = false;
    double threshold = 0;
    std::string compileThreshold;   ///< "off", or a factor of torch.compile
    std::string sanitizerPolicy;    ///< required | if_available | off
};

std::string compileText(const std::optional<double>& v)
{
    return v ? "≥ " + times(*v) + " torch.compile" : "off";
}

// "if_available (clean under compute-sanitizer where the runner's host has it)"
std::string policyText(SanitizerPolicy p)
{
    const char* what = p == SanitizerPolicy::Required      ? "clean under compute-sanitizer, always"
                       : p == SanitizerPolicy::IfAvailable ? "clean under compute-sanitizer where the runner's host has it"
                                                           : "compute-sanitizer not asked for; its findings still refuse a kernel";
    return std::string(sanitizerPolicyName(p)) + " (" + what + ")";
}

// The gate's mark: passed, not run (allowed by the policy), failed.
const char* gateMark(const GateCheck& g)
{
    return g.passed ? "✓ " : g.notRun ? "– " : "✗ ";
}


json with(json j, const json& more)
{
    j.update(more);
    return j;
}

void printJson(const json& j) { std::cout << j.dump(2, ' ', false, json::error_handler_t::replace) << '\n'; }

json document(const char* command, bool ok, const Registry& r)
{
    return {{"schema_version", 1}, {"command", std::string("registry ") + command}, {"ok", ok},
            {"registry", r.directory().string()}};
}

// One exit code per cause, in every registry command (docs/cli.md): an ID the registry does not
// have or a value out of range is the caller's mistake (2); a registry that cannot be read,
// locked or written is the environment's (3).
int exitFor(const Error& e)
{
    return e.kind == kRegistryBadArgument ? kExitUsage : kExitEnvironment;
}

// Runs `body` with the resolved registry; errors become exit code 2 (bad path or ID) or 3 (I/O).
template <class Body>
void withRegistry(const RegistryArgs& a, int& exitCode, Body body)
{
    auto dir = Registry::resolveDirectory(a.registry, fs::current_path());
    if (!dir) {
        std::cerr << "kforge: " << dir.error().message() << '\n';
        exitCode = kExitUsage;
        return;
    }
    exitCode = body(Registry(dir.value()));
}

// The status column: the index's state, then what the signed record says of the evidence.
std::string statusText(const RegistryEntry& e)
{
    std::string s = e.status;
    if (e.unsignedEvidence)
        s += ", ⚠ " + std::string(kUnsignedEvidenceMarker);
    if (e.recordSignature && signatureBroken(*e.recordSignature))
        s += ", ⚠ record: " + std::string(signatureTrustText(*e.recordSignature));
    return s;
}

int list(const RegistryArgs& a, const Registry& r)
{
    auto index = r.listing();
    if (!index)
        return fail(index.error(), kExitEnvironment);
    if (a.json) {
        json out = document("list", true, r);
        out["speedup_threshold"] = index->threshold;
        out["compile_speedup_threshold"] = index->compileThreshold ? json(*index->compileThreshold) : json();
        out["sanitizer_policy"] = sanitizerPolicyName(index->sanitizerPolicy);
        json kernels = json::array();
        for (const RegistryEntry& e : index->kernels)
            kernels.push_back(with(registryEntryToJson(e),
                                   {{"unsigned_evidence", e.unsignedEvidence},
                                    {"record_signature", e.recordSignature ? json(protocol::signatureStateName(*e.recordSignature)) : json()}}));
        out["kernels"] = kernels;
        printJson(out);
        return kExitOk;
    }
    std::cout << "Registry " << r.directory().string() << " (promotion threshold " << times(index->threshold)
              << (index->compileThreshold ? ", and " + compileText(index->compileThreshold) : std::string())
              << "; sanitizer policy " << sanitizerPolicyName(index->sanitizerPolicy) << ")\n";
    if (index->kernels.empty()) {
        std::cout << "  no verified kernels yet: `kforge promote <task-dir> --candidate file.cu`\n";
        return kExitOk;
    }
    TextTable t({{"ID"}, {"op"}, {"dtype"}, {"GPU"}, {"shapes"}, {"speedup", TextTable::Align::Right},
                 {"vs torch.compile", TextTable::Align::Right}, {"promoted"}, {"status"}});
    int hidden = 0;
    for (const RegistryEntry& e : index->kernels) {
        if (e.deprecated() && !a.all) {
            ++hidden;
            continue;
        }
        t.addRow({e.id, e.op, e.dtype, e.gpu, TextTable::truncate(e.shapesText(), 40), times(e.geomeanSpeedup),
                  e.compileSpeedup ? times(*e.compileSpeedup) : "-", e.promotedAt, statusText(e)});
    }
    t.print(std::cout);
    if (hidden)
        std::cout << "  (" << hidden << " deprecated not shown: --all)\n";
    return kExitOk;
}

int show(const RegistryArgs& a, const Registry& r)
{
    auto e = r.entry(a.id);
    if (!e)
        return fail(e.error(), exitFor(e.error()));
    auto promotion = r.promotion(a.id);
    if (a.json) {
        json out = document("show", true, r);
        out["entry"] = registryEntryToJson(e.value());
        out["folder"] = r.entryDirectory(a.id).string();
        out["promotion"] = promotion ? promotion->json : json();
        printJson(out);
        return kExitOk;
    }
    std::cout << e->id << (e->deprecated() ? "  [deprecated: " + e->deprecationReason + "]" : "") << '\n'
              << "  folder:    " << r.entryDirectory(a.id).string() << '\n'
              << "  task:      " << e->taskName << " (" << e->op << ", " << e->dtype << "), kernel " << e->kernelFile << '\n'
              << "  GPU:       " << e->gpu << " (" << e->arch << ")\n"
              << "  speedup:   " << times(e->geomeanSpeedup) << " geometric mean, slowest shape " << times(e->minSpeedup)
              << (e->compileSpeedup ? "; " + times(*e->compileSpeedup) + " torch.compile" : std::string(", not compared with torch.compile"))
              << '\n'
              << "  shapes:    " << e->shapesText() << '\n'
              << "  promoted:  " << e->promotedAt << '\n'
              << "  hashes:    source " << e->sourceHash << ", task " << e->taskHash << '\n';
    if (!promotion)
        return fail(promotion.error(), kExitFailed);
    const PromotionRecord& p = promotion.value();
    auto orUnknown = [](const std::string& v) { return v.empty() ? std::string("?") : v; };
    std::cout << "  software:  driver " << orUnknown(p.environment.driver) << ", NVRTC " << orUnknown(p.environment.nvrtc)
              << ", LibTorch " << orUnknown(p.environment.torch) << '\n';
    if (!p.evidenceScope.empty())
        std::cout << "  scope:     " << p.evidenceScope << '\n';
    // What is printed here is only as good as the record: say whether its signature holds.
    auto key = protocol::loadSigningKey(false);
    const protocol::SignatureCheck sig =
        protocol::checkSignature(p.json, key ? &key.value() : nullptr, key ? std::string() : key.error().message());
    std::cout << "  record:    " << (sig.valid() ? "" : "⚠ ") << "promotion.json " << sig.detail
              << (sig.state == protocol::SignatureState::Altered ? ": its numbers cannot be trusted (`kforge registry check`)" : "")
              << '\n';
    if (p.unsignedEvidenceAccepted)
        std::cout << "  evidence:  ⚠ accepted without a valid signature (--allow-unsigned)\n";
    if (p.sanitizer) {
        std::string tools;
        for (const std::string& t : p.sanitizer->tools)
            tools += (tools.empty() ? "" : ", ") + t;
        const std::string policy = std::string("policy ") + sanitizerPolicyName(p.sanitizer->policy);
        if (p.sanitizer->outcome == "passed")
            std::cout << "  sanitizer: " << tools << " clean (compute-sanitizer " << p.sanitizer->toolVersion << "; " << policy << ")\n";
        else
            std::cout << "  sanitizer: not run: " << p.sanitizer->detail << " (" << policy << ")\n";
    }
    if (!p.gates.empty()) {
        std::cout << "  gates (threshold " << (p.threshold ? times(*p.threshold) : std::string("?"))
                  << (p.sanitizer ? std::string(", sanitizer policy ") + sanitizerPolicyName(p.sanitizer->policy) : std::string())
                  << "):\n";
        for (const GateCheck& g : p.gates)
            std::cout << "    " << gateMark(g) << g.title << (g.notRun ? " (not run)" : "") << ": " << g.detail << '\n';
    }
    if (!p.perShape.empty()) {
        TextTable t({{"shape"}, {"candidate ms", TextTable::Align::Right}, {"LibTorch ms", TextTable::Align::Right},
                     {"speedup", TextTable::Align::Right}});
        auto ms = [](const std::optional<double>& v) { return v ? protocol::formatNumber(*v, 6) : std::string("?"); };
        for (const PromotionRecord::ShapeSpeedup& s : p.perShape)
            t.addRow({s.shape.dimsText(), ms(s.candidateMedianMs), ms(s.baselineMedianMs), s.speedup ? times(*s.speedup) : "?"});
        t.print(std::cout, "    ");
    }
    return kExitOk;
}

int check(const RegistryArgs& a, const Registry& r)
{
    json reindexed;
    if (a.reindex) {
        auto report = r.reindex();
        if (!report)
            return fail(report.error(), kExitEnvironment);
        auto rebuilt = r.load();
        std::cerr << "rebuilt " << kRegistryIndexFile << " with " << (rebuilt ? rebuilt->kernels.size() : 0)
                  << " complete kernel version(s)\n";
        for (const std::string& n : report->notes)
            std::cerr << "  " << n << '\n';
        for (const std::string& s : report->skipped)
            std::cerr << "  not listed (left as it is): " << s << '\n';
        reindexed = {{"notes", report->notes}, {"skipped", report->skipped}};
    }
    auto drift = r.check(a.prune);
    if (!drift)
        return fail(drift.error(), kExitEnvironment);
    auto index = r.load();
    const size_t count = index ? index->kernels.size() : 0;
    int errors = 0;
    bool notWritten = false;
    for (const RegistryDrift& d : drift.value()) {
        errors += d.severity == RegistryDrift::Severity::Error;
        notWritten = notWritten || d.notWritten;
    }
    if (a.json) {
        json list = json::array();
        for (const RegistryDrift& d : drift.value()) {
            json one = {{"severity", d.severity == RegistryDrift::Severity::Error ? "error" : "warning"},
                        {"id", d.id}, {"file", d.file}, {"problem", d.problem}, {"hint", d.hint}};
            if (d.notWritten)
                one["not_written"] = true;
            list.push_back(std::move(one));
        }
        json out = document("check", errors == 0, r);
        out["kernels"] = count;
        out["drift"] = list;
        if (!reindexed.is_null())
            out["reindex"] = reindexed;
        printJson(out);
    } else {
        for (const RegistryDrift& d : drift.value())
            std::cout << (d.severity == RegistryDrift::Severity::Error ? "error: " : "warning: ") << d.file << ": "
                      << d.problem << "\n  what to do: " << d.hint << '\n';
        if (drift->empty())
            std::cout << r.directory().string() << ": " << count << " kernel(s), every file matches its hash and every "
                      << "entry's evidence passes the gates\n";
        else
            std::cout << r.directory().string() << ": " << errors << " error(s), " << drift->size() - size_t(errors)
                      << " warning(s) in " << count << " kernel(s)\n";
    }
    // A repair that could not write is the environment's (3), before drift found (1).
    return notWritten ? kExitEnvironment : errors ? kExitFailed : kExitOk;
}

int removeEntry(const RegistryArgs& a, const Registry& r)
{
    auto done = r.remove(a.id);
    if (!done)
        return fail(done.error(), exitFor(done.error()));
    if (a.json)
        printJson(with(document("remove", true, r), {{"id", a.id}}));
    else
        std::cout << "removed " << a.id << '\n';
    return kExitOk;
}

int deprecate(const RegistryArgs& a, const Registry& r)
{
    auto e = r.deprecate(a.id, a.reason);
    if (!e)
        return fail(e.error(), exitFor(e.error()));
    if (a.json)
        printJson(with(document("deprecate", true, r), {{"entry", registryEntryToJson(e.value())}}));
    else
        std::cout << "deprecated " << a.id << ": " << e->deprecationReason << '\n';
    return kExitOk;
}

int threshold(const RegistryArgs& a, const Registry& r)
{
    if (a.threshold > 0) {
        if (auto s = r.setThreshold(a.threshold); !s)
            return fail(s.error(), exitFor(s.error()));
    }
    if (!a.compileThreshold.empty()) {
        std::optional<double> value;
        if (a.compileThreshold != "off") {
            char* end = nullptr;
            const double v = std::strtod(a.compileThreshold.c_str(), &end);
            if (end == a.compileThreshold.c_str() || *end) {
                std::cerr << "kforge: --compile " << a.compileThreshold << ": give a factor such as 1.0, or off\n";
                return kExitUsage;
            }
            value = v;
        }
        if (auto s = r.setCompileThreshold(value); !s)
            return fail(s.error(), exitFor(s.error()));
    }
    auto index = r.load();
    if (!index)
        return fail(index.error(), kExitEnvironment);
    if (a.json)
        printJson(with(document("threshold", true, r),
                       {{"speedup_threshold", index->threshold},
                        {"compile_speedup_threshold", index->compileThreshold ? json(*index->compileThreshold) : json()},
                        {"sanitizer_policy", sanitizerPolicyName(index->sanitizerPolicy)}}));
    else
        std::cout << "promotion threshold: geometric-mean speedup ≥ " << times(index->threshold)
                  << "; against torch.compile: " << compileText(index->compileThreshold)
                  << "; sanitizer policy: " << policyText(index->sanitizerPolicy) << '\n';
    return kExitOk;
}

int setSanitizerPolicy(const RegistryArgs& a, const Registry& r)
{
    const auto policy = parseSanitizerPolicy(a.sanitizerPolicy);
    if (!policy) {
        std::cerr << "kforge: registry set-sanitizer-policy: \"" << a.sanitizerPolicy << "\" is not a policy; use "
                  << kSanitizerPolicyChoices << '\n';
        return kExitUsage;
    }
    if (auto s = r.setSanitizerPolicy(*policy); !s)
        return fail(s.error(), exitFor(s.error()));
    if (a.json)
        printJson(with(document("set-sanitizer-policy", true, r), {{"sanitizer_policy", sanitizerPolicyName(*policy)}}));
    else
        std::cout << "sanitizer policy: " << policyText(*policy) << '\n';
    return kExitOk;
}

} // namespace

void addRegistryCommand(CLI::App& app, int& exitCode)
{
    auto args = std::make_shared<RegistryArgs>();
    CLI::App* reg = app.add_subcommand("registry", "List, inspect, check and maintain the registry of verified kernels");
    reg->require_subcommand(1);
    auto common = [&](CLI::App* c) {
        c->add_option("--registry", args->registry,
                      "registry folder (default: $KF_REGISTRY, the workspace's, or ~/.local/share/KernelForge/registry)");
        c->add_flag("--json", args->json, "print JSON");
    };
    CLI::App* l = reg->add_subcommand("list", "One line per kernel version");
    common(l);
    l->add_flag("--all", args->all, "include deprecated kernels");
    l->callback([args, &exitCode] { withRegistry(*args, exitCode, [&](const Registry& r) { return list(*args, r); }); });

    CLI::App* s = reg->add_subcommand("show", "A kernel's evidence: GPU, versions, gates, per-shape timings");
    common(s);
    s->add_option("id", args->id, "registry ID")->required();
    s->callback([args, &exitCode] { withRegistry(*args, exitCode, [&](const Registry& r) { return show(*args, r); }); });

    CLI::App* c = reg->add_subcommand("check", "Verify the index against the files and hashes and re-judge the evidence");
    common(c);
    c->add_flag("--prune", args->prune, "delete folders no entry names (left by an interrupted promote or remove)");
    c->add_flag("--reindex", args->reindex,
                "rebuild a missing or unreadable index from the complete version folders' records, then check");
    c->callback([args, &exitCode] { withRegistry(*args, exitCode, [&](const Registry& r) { return check(*args, r); }); });

    CLI::App* rm = reg->add_subcommand("remove", "Delete a kernel version from the index and the disk");
    common(rm);
    rm->add_option("id", args->id, "registry ID")->required();
    rm->callback([args, &exitCode] { withRegistry(*args, exitCode, [&](const Registry& r) { return removeEntry(*args, r); }); });

    CLI::App* d = reg->add_subcommand("deprecate", "Mark a kernel version deprecated (it stays, with the reason)");
    common(d);
    d->add_option("id", args->id, "registry ID")->required();
    d->add_option("--reason", args->reason, "why, for whoever finds it later");
    d->callback([args, &exitCode] { withRegistry(*args, exitCode, [&](const Registry& r) { return deprecate(*args, r); }); });

    CLI::App* t = reg->add_subcommand("threshold", "Show or set this registry's geometric-mean speedup threshold");
    common(t);
    t->add_option("value", args->threshold, "new threshold (≥ 1.0; default 1.10)");
    t->add_option("--compile", args->compileThreshold,
                  "the last gate: a factor of torch.compile every promotion must reach (e.g. 1.0), or off (the default)");
    t->callback([args, &exitCode] { withRegistry(*args, exitCode, [&](const Registry& r) { return threshold(*args, r); }); });

    CLI::App* sp = reg->add_subcommand("set-sanitizer-policy",
                                       "Set what the sanitizer gate asks of compute-sanitizer: required, if_available (the default) or off");
    common(sp);
    sp->add_option("policy", args->sanitizerPolicy,
                   "required (every promotion needs a clean run), if_available (needs one where the runner's host has "
                   "compute-sanitizer) or off (findings still refuse a kernel)")
        ->required();
    sp->callback([args, &exitCode] { withRegistry(*args, exitCode, [&](const Registry& r) { return setSanitizerPolicy(*args, r); }); });
}

} // namespace kf::cli
