// runPoolOverTasks (RunnerCommand.h): `kforge verify|bench TASK TASK… --pool FILE`. A team with a
// server of several GPUs checks a whole set of tasks at once: every candidate of every task goes
// to the pool, and the reports come back in the order the tasks and their candidates were given.
#include "ExitCodes.h"
#include "PoolRun.h"
#include "RunnerCommand.h"
#include "RunnerSession.h"
#include "engine/analysis/SourceScan.h"
#include "engine/compile/TaskCompile.h"
#include "engine/protocol/Signature.h"

#include <filesystem>
#include <iostream>
#include <memory>

namespace fs = std::filesystem;

namespace kf::cli {

namespace {

// What the pool runs: every candidate of every task, with the static scan of its source.
struct PoolTasks {
    std::vector<std::unique_ptr<Task>> tasks;
    std::vector<PoolCandidate> list;
    std::vector<std::pair<std::string, std::vector<ScanFinding>>> scans;   // per list entry (verify)
};

// The options that a run over several tasks refuses, and the seed. Returns an exit code.
int checkArguments(const RunArgs& a, const char* command, std::optional<std::uint64_t>& seed)
{
    if (!a.candidates.empty() || a.repeat > 1 || !a.exportRepro.empty() || !a.sanitize.empty()) {
        std::cerr << "kforge: with several tasks, " << command
                  << " runs every candidate of each once: leave out --candidate, --repeat, --export-repro and --sanitize\n";
        return kExitUsage;
    }
    if (a.kind == RunKind::Bench && a.baseline != "eager") {
        std::cerr << "kforge: with several tasks, bench measures against eager LibTorch only; use --baseline eager\n";
        return kExitUsage;
    }
    if (!a.seed.empty() && !(seed = protocol::parseSeed(a.seed))) {
        std::cerr << "kforge: --seed " << a.seed << " is not a 64-bit hexadecimal number (e.g. 0x9f3a5c)\n";
        return kExitUsage;
    }
    return kExitOk;
}

// Every task, and every candidate's source, must read before any runner starts. Returns an exit code.
int loadTasks(const RunArgs& a, PoolTasks& out)
{
    const bool bench = a.kind == RunKind::Bench;
    for (const std::string& path : a.taskPaths) {
        auto loaded = loadTaskArgument(path);
        if (!loaded)
            return kExitUsage;
        out.tasks.push_back(std::make_unique<Task>(std::move(*loaded)));
        const Task& task = *out.tasks.back();
        if (task.candidates.empty()) {
            std::cerr << "kforge: task " << task.name << " (" << path << ") has no candidates yet\n";
            return kExitUsage;
        }
        if (a.shapes != "all" && (a.shapes == "benchmarks" ? task.benchmarkShapes : task.testShapes).empty()) {
            std::cerr << "kforge: task " << task.name << " has no " << (a.shapes == "tests" ? "test" : "benchmark")
                      << " shapes; add some under \"shapes\" in task.json or pass --shapes all\n";
            return kExitUsage;
        }
        for (const Candidate& c : task.candidates) {
            auto req = compileRequestFor(task, c, a.arch.empty() ? "sm_90" : a.arch);
            if (!req)
                return fail(req.error(), kExitUsage);
            out.list.push_back({&task, &c});
            out.scans.emplace_back((task.directory / c.file).string(), bench ? std::vector<ScanFinding>{} : scanSource(req->source));
        }
    }
    return kExitOk;
}

// The document of the whole run: the reports in order, the pool's summary and (verify) the scans.
nlohmann::json runDocument(const char* command, bool bench, bool allOk, const PoolTasks& p,
                           const std::vector<protocol::RunReport>& reports, const nlohmann::json& poolSummary)
{
    nlohmann::json documents = nlohmann::json::array();
    for (const protocol::RunReport& r : reports)
        documents.push_back(r.document());
    nlohmann::json all = {{"schema_version", 1}, {"command", command}, {"ok", allOk}, {"reports", documents}, {"pool", poolSummary}};
    if (!bench) {   // outside the signed reports: the scan is advice, not evidence
        nlohmann::json scanned = nlohmann::json::array();
        for (std::size_t i = 0; i < p.list.size(); ++i)
            scanned.push_back({{"task", p.list[i].task->name}, {"candidate", p.list[i].candidate->file},
                               {"findings", scanFindingsJson(p.scans[i].second)}});
        all["static_scan"] = scanned;
    }
    return all;
}

} // namespace

int runPoolOverTasks(const RunArgs& a)
{
    const bool bench = a.kind == RunKind::Bench;
    const char* command = bench ? "bench" : "verify";
    std::optional<std::uint64_t> seed;
    if (int rc = checkArguments(a, command, seed); rc != kExitOk)
        return rc;
    PoolTasks p;
    if (int rc = loadTasks(a, p); rc != kExitOk)
        return rc;
    std::vector<Endpoint> endpoints;
    if (auto rc = resolvePoolOrExit(a.endpoint, a.runnerPath, endpoints))
        return *rc;

    const RunSettings settings = settingsFor(a, seed);
    const bool withSet = a.shapes == "all" || settings.heldOutCount > 0;
    bool allOk = true;
    bool gpuFull = false;
    std::vector<protocol::RunReport> reports;
    auto settingsOf = [&](const Candidate& c) {
        RunSettings s = settings;
        // Dumps of several tasks: one folder per task and candidate.
        for (const PoolCandidate& pc : p.list)
            if (pc.candidate == &c && !settings.dumpDir.empty())
                s.dumpDir = (fs::path(settings.dumpDir) / pc.task->name / fs::path(c.file).stem()).string();
        return s;
    };
    PoolRun run = runPool(a.kind, p.list, endpoints, a.runnerPath, a.arch, settingsOf, a.json,
                          [&](std::size_t i, protocol::RunReport report, const Endpoint*) {
                              if (!report.passed())
                                  allOk = false;
                              gpuFull = gpuFull || (report.header().error && report.header().error->kind == kGpuOutOfMemory);
                              if (!a.json) {
                                  if (!reports.empty())
                                      std::cout << '\n';
                                  if (bench) {
                                      printBenchReport(std::cout, report, withSet);
                                  } else {
                                      std::cout << scanText(p.scans[i].second, p.scans[i].first);
                                      printVerifyReport(std::cout, report, withSet);
                                  }
                                  std::cout.flush();
                              }
                              reports.push_back(std::move(report));
                          });
    if (run.cancelled) {
        std::cerr << "kforge: cancelled\n";
        return kExitInterrupted;
    }
    if (run.missing > 0)
        allOk = false;
    const int failedExit = gpuFull || run.allLost ? kExitEnvironment : kExitFailed;
    return emitRunDocument(a, runDocument(command, bench, allOk, p, reports, run.summary), allOk ? kExitOk : failedExit);
}

} // namespace kf::cli
