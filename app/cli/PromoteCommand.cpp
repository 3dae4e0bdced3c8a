// `kforge promote`: gather the evidence (run it, or read saved reports), judge the gates, and
// write the kernel into the registry. The registry judges the gates again under its lock, so
// what is printed here is what the registry decided.
#include "PromoteCommand.h"

#include "ExitCodes.h"
#include "RunnerCommand.h"
#include "engine/core/Files.h"
#include "engine/core/JsonReader.h"
#include "engine/registry/Registry.h"
#include "engine/task/Task.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <unistd.h>

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace kf::cli {

namespace {

struct PromoteArgs {
    std::string path;
    std::string candidate;
    std::string registry;
    std::vector<std::string> evidence;
    bool json = false;
    bool allowUnsigned = false;
    std::string runnerPath;
    EndpointArgs endpoint;
    int launchTimeoutMs = 10000;
    double timeCapMs = 2000;
    std::string baseline = "both";      ///< the benchmark's: also torch.compile unless "eager"
};

std::string whoAmI()
{
    const char* user = std::getenv("USER");
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return std::string(user && *user ? user : "unknown") + "@" + host;
}

void printGates(std::ostream& out, const GateVerdict& v)
{
    for (const GateCheck& c : v.checks)
        out << "  " << (c.passed ? "✓ " : c.notRun ? "– " : "✗ ") << c.title << (c.notRun ? " (not run)" : "") << ": " << c.detail
            << '\n';
}

// The candidate to promote, as task.json names it (reports carry that name): the one given, or
// the task's only one. Empty after printing why when there is none to choose.
std::string chooseCandidate(const Task& task, const std::string& given)
{
    if (!given.empty()) {
        if (const Candidate* c = task.findCandidate(given))
            return c->file;
        std::cerr << "kforge: " << given << " is not a candidate of task " << task.name
                  << "; list it with its launch plan under \"candidates\" in task.json\n";
        return {};
    }
    if (task.candidates.empty()) {
        std::cerr << "kforge: task " << task.name << " has no candidates yet; add one with kforge candidate add\n";
        return {};
    }
    if (task.candidates.size() != 1) {
        std::string names;
        for (const Candidate& c : task.candidates)
            names += (names.empty() ? "" : ", ") + c.file;
        std::cerr << "kforge: task " << task.name << " has " << task.candidates.size()
                  << " candidates; name the one to promote with --candidate (" << names << ")\n";
        return {};
    }
    return task.candidates.front().file;
}

// The saved reports given with --evidence. Returns an exit code (kExitOk when all were read).
int readSavedEvidence(const std::vector<std::string>& files, std::vector<Json>& documents)
{
    for (const std::string& file : files) {
        auto j = kf::json::readFile(file);
        if (!j)
            return fail(j.error(), kExitUsage);
        // A report that cannot be read is named with its file and pointer, not mistaken for
        // a missing one by the gates.
        std::vector<Error> unreadable;
        (void)protocol::reportsOfDocument(j.value(), &unreadable);
        if (!unreadable.empty()) {
            Error e = unreadable.front();
            e.file = file;
            std::cerr << "kforge: " << e.message() << "\n  what to do: pass the report as `kforge verify|bench --report` "
                      << "wrote it, or run them again\n";
            return kExitUsage;
        }
        documents.push_back(std::move(j.value()));
    }
    return kExitOk;
}

// A fresh verification (test and held-out shapes) and benchmark of `candidate`. Returns an exit
// code: kExitOk when both ran, whatever they found.
int runFreshEvidence(const PromoteArgs& a, const std::string& candidate, std::vector<Json>& documents)
{
    std::vector<protocol::RunReport> reports;
    RunArgs run;
    run.path = a.path;
    run.candidates = {candidate};
    run.json = a.json;
    run.runnerPath = a.runnerPath;
    run.endpoint = a.endpoint;
    run.launchTimeoutMs = a.launchTimeoutMs;
    run.kind = RunKind::Verify;
    run.shapes = "tests";
    run.trials = kMinTrialsForPromotion;
    run.heldOut = 2;
    // compute-sanitizer too, where the runner's host has it: the sanitizer gate refuses a
    // kernel it finds a bug in, and a report it did not run on where the host has it
    // (docs/registry.md, "The sanitizer policy").
    run.sanitizeIfAvailable = true;
    int rc = runOnRunner(run, &reports);
    if (rc != kExitOk && rc != kExitFailed)
        return rc; // no GPU, no runner, interrupted: nothing to judge
    if (!a.json)
        std::cout << '\n';
    run.kind = RunKind::Bench;
    run.shapes = "benchmarks";
    run.timeCapMs = a.timeCapMs;
    run.baseline = a.baseline;
    rc = runOnRunner(run, &reports);
    if (rc != kExitOk && rc != kExitFailed)
        return rc;
    Json fresh = Json::array();
    for (const protocol::RunReport& r : reports)
        fresh.push_back(r.document());
    documents.push_back(Json{{"reports", fresh}});
    if (!a.json)
        std::cout << '\n';
    return kExitOk;
}

void printOutcome(const PromoteArgs& a, const Registry& registry, const PromotionInput& in, const PromotionOutcome& outcome)
{
    const bool ok = outcome.entry.has_value();
    if (a.json) {
        Json out = {{"schema_version", 1},
                    {"command", "promote"},
                    {"ok", ok},
                    {"registry", registry.directory().string()},
                    {"candidate", in.candidateFile},
                    {"gates", outcome.gates.toJson()},
                    {"verdict", outcome.gates.sentence()}};
        if (ok) {
            out["id"] = outcome.entry->id;
            out["folder"] = registry.entryDirectory(outcome.entry->id).string();
            out["entry"] = registryEntryToJson(*outcome.entry);
        }
        std::cout << out.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
        return;
    }
    std::cout << "Promotion gates for " << in.task.name << "/" << in.candidateFile << ":\n";
    printGates(std::cout, outcome.gates);
    if (ok) {
        std::cout << "promoted " << outcome.entry->id << "\n  folder: " << registry.entryDirectory(outcome.entry->id).string()
                  << "\n  scope: " << evidenceScope(in.task, *in.performance->bench()) << '\n';
    } else {
        const GateCheck* f = outcome.gates.firstFailure();
        std::cerr << "kforge: promotion refused: " << f->title << ": " << f->detail
                  << (f->hint.empty() ? "" : "\n  what to do: " + f->hint) << '\n';
    }
}

int promote(const PromoteArgs& a)
{
    auto loaded = loadTaskArgument(a.path, a.candidate.empty() ? std::vector<std::string>{} : std::vector<std::string>{a.candidate});
    if (!loaded)
        return kExitUsage;
    Task task = std::move(*loaded);
    const std::string candidate = chooseCandidate(task, a.candidate);
    if (candidate.empty())
        return kExitUsage;
    auto dir = Registry::resolveDirectory(a.registry, task.directory);
    if (!dir)
        return fail(dir.error(), kExitUsage);
    const Registry registry(dir.value());

    // The evidence: saved reports, or a fresh verification (test and held-out shapes) and benchmark.
    std::vector<Json> documents;
    const int rc = a.evidence.empty() ? runFreshEvidence(a, candidate, documents) : readSavedEvidence(a.evidence, documents);
    if (rc != kExitOk)
        return rc;
    const Evidence evidence = collectEvidence(documents, candidate);
    for (const Error& e : evidence.unreadable)
        std::cerr << "kforge: not evidence: " << e.message() << '\n';
    PromotionInput in{std::move(task), candidate, evidence.correctness, evidence.performance, whoAmI()};
    in.allowUnsigned = a.allowUnsigned;
    auto outcome = registry.promote(in);
    if (!outcome)
        return fail(outcome.error(), kExitEnvironment);
    printOutcome(a, registry, in, *outcome);
    return outcome->entry ? kExitOk : kExitFailed;
}

} // namespace

void addPromoteCommand(CLI::App& app, int& exitCode)
{
    auto args = std::make_shared<PromoteArgs>();
    CLI::App* cmd = app.add_subcommand(
        "promote", "Verify (test + held-out shapes) and benchmark a candidate, check the gates, add it to the registry");
    cmd->add_option("task", args->path, "task folder or task.json")->required();
    cmd->add_option("--candidate", args->candidate, "the candidate file (required when the task has several)");
    cmd->add_option("--registry", args->registry,
                    "registry folder (default: $KF_REGISTRY, the workspace's, or ~/.local/share/KernelForge/registry)");
    cmd->add_option("--evidence", args->evidence,
                    "use saved reports (`kforge verify|bench --report`) instead of running (repeatable)")
        ->allow_extra_args(false);
    cmd->add_flag("--allow-unsigned", args->allowUnsigned,
                  "accept saved reports that the runner did not sign or that changed since (recorded in the registry)");
    cmd->add_flag("--json", args->json, "print the outcome as JSON");
    addRunnerOptions(cmd, &args->runnerPath, &args->endpoint);
    cmd->add_option("--launch-timeout-ms", args->launchTimeoutMs, "watchdog per launch")->check(CLI::Range(1, 86400000));
    cmd->add_option("--time-cap-ms", args->timeCapMs, "benchmark time cap per shape")->check(CLI::PositiveNumber);
    cmd->add_option("--baseline", args->baseline,
                    "the benchmark's baselines: both (eager and torch.compile, recorded in the registry) or eager")
        ->check(CLI::IsMember({"eager", "both"}));
    cmd->callback([args, &exitCode] { exitCode = promote(*args); });
}

} // namespace kf::cli
