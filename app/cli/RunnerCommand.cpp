#include "RunnerCommand.h"

#include "CommaList.h"
#include "ExitCodes.h"
#include "ProgressLine.h"
#include "ReproCommand.h"
#include "PoolRun.h"
#include "RunnerSession.h"
#include "engine/analysis/SourceScan.h"
#include "engine/repro/Repro.h"
#include "engine/compile/TaskCompile.h"
#include "engine/core/Clock.h"
#include "engine/core/Files.h"
#include "engine/pipeline/RunPipeline.h"
#include "engine/protocol/Signature.h"
#include "engine/protocol/Report.h"
#include "engine/runner/RunSettings.h"
#include "engine/task/HeldOut.h"
#include "engine/task/Task.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <regex>
#include <unistd.h>

namespace fs = std::filesystem;


namespace kf::cli {

std::vector<std::string> sanitizeToolList(const std::string& text)
{
    if (text == "all")
        return protocol::SanitizeSettings::allTools();
    return splitCommaList(text);
}

RunSettings settingsFor(const RunArgs& a, const std::optional<std::uint64_t>& seed)
{
    RunSettings settings;
    settings.shapes = a.shapes;
    settings.trials = a.trials;
    settings.seed = seed;
    settings.launchTimeoutMs = a.launchTimeoutMs;
    settings.bench.timeCapMs = a.timeCapMs;
    settings.bench.minSamples = a.minSamples;
    settings.bench.maxSamples = a.maxSamples;
    settings.bench.targetSpread = a.targetSpread;
    settings.heldOutCount = a.kind == RunKind::Verify ? a.heldOut : 0;
    if (a.kind == RunKind::Verify && !a.sanitize.empty())
        settings.sanitizeTools = sanitizeToolList(a.sanitize);
    // RunSession adds every tool when the runner's hello names compute-sanitizer.
    settings.sanitizeIfAvailable = a.kind == RunKind::Verify && a.sanitizeIfAvailable;
    settings.samples = a.samples;
    // torch.compile beside a benchmark: the pipeline times it after the runner's report.
    settings.compileBaseline = a.kind == RunKind::Bench && a.baseline != "eager";
    settings.compileModes = a.compileModes;
    settings.dumpDir = a.dumpDir;
    settings.dumpMaxBytes = a.dumpMaxMib << 20;
    settings.dumpAllFailing = a.dumpAllFailing;
    return settings;
}

std::optional<Task> loadTaskArgument(const std::string& path, const std::vector<std::string>& onlyCandidates)
{
    std::error_code ec;
    if (!fs::exists(path, ec) && !fs::is_symlink(fs::symlink_status(path, ec))) {
        std::cerr << "kforge: " << path << ": no such file or folder\n";
        return std::nullopt;
    }
    auto loaded = loadTask(path, onlyCandidates);
    if (!loaded) {
        std::cerr << "kforge: " << loaded.error().message() << '\n';
        return std::nullopt;
    }
    return std::move(loaded.value());
}

std::optional<ShapeBinding> shapeArgument(const Task& task, const std::string& text)
{
    auto parsed = parseShapeText(task, text);
    if (!parsed) {
        std::cerr << "kforge: --shape " << text << ": " << parsed.error().why << '\n';
        return std::nullopt;
    }
    return parsed.value();
}

namespace {

/// Everything the command line can get wrong before the task is read: a usage error (exit 2).
std::optional<int> checkArguments(const RunArgs& a, std::optional<std::uint64_t>& seed)
{
    if (!a.seed.empty() && !(seed = protocol::parseSeed(a.seed))) {
        std::cerr << "kforge: --seed " << a.seed << " is not a 64-bit hexadecimal number (e.g. 0x9f3a5c)\n";
        return kExitUsage;
    }
    if (!a.arch.empty() && !std::regex_match(a.arch, std::regex(R"(sm_\d+[a-z]?)"))) {
        std::cerr << "kforge: --arch " << a.arch << ": the runner needs a cubin, so give a real architecture such as sm_90\n";
        return kExitUsage;
    }
    if (a.kind == RunKind::Bench && a.maxSamples < a.minSamples) {
        std::cerr << "kforge: --max-samples " << a.maxSamples << " is below --min-samples " << a.minSamples << '\n';
        return kExitUsage;
    }
    // --report is written at the end: find out now that it cannot be, not after the whole run.
    if (!a.reportFile.empty()) {
        const fs::path folder = fs::absolute(a.reportFile).parent_path();
        std::error_code ec;
        if (fs::is_directory(a.reportFile, ec)) {
            std::cerr << "kforge: --report " << a.reportFile << " is a folder; give a file name\n";
            return kExitUsage;
        }
        if (!fs::is_directory(folder, ec) || ::access(folder.c_str(), W_OK) != 0) {
            std::cerr << "kforge: --report " << a.reportFile << ": the folder " << folder.string()
                      << (fs::is_directory(folder, ec) ? " is not writable" : " does not exist") << '\n';
            return kExitUsage;
        }
    }
    const bool pooled = !a.endpoint.pool.empty();
    if (pooled && (a.repeat > 1 || !a.exportRepro.empty())) {
        std::cerr << "kforge: --pool runs each candidate once; it takes no --repeat or --export-repro\n";
        return kExitUsage;
    }
    if (pooled && !a.endpoint.endpoint.empty()) {
        std::cerr << "kforge: give --pool or --runner-endpoint, not both\n";
        return kExitUsage;
    }
    return std::nullopt;
}

/// What one `kforge verify|bench|profile` runs: the task, its candidates, the settings, where.
struct Prepared {
    Task task;
    std::vector<const Candidate*> candidates;
    RunSettings settings;
    /// verify: the static scan of each source, in candidate order (advice, never the verdict).
    std::vector<std::pair<std::string, std::vector<ScanFinding>>> scans;
    std::optional<Endpoint> endpoint;
    std::vector<Endpoint> pool;
};

/// The checks that need the task: sanitizer tools and shapes, the profile's shape, the shape set.
std::optional<int> checkAgainstTask(const RunArgs& a, Prepared& p)
{
    const Task& task = p.task;
    if (!a.exportRepro.empty() && (a.kind == RunKind::Bench || p.candidates.size() != 1 || a.repeat > 1)) {
        std::cerr << "kforge: --export-repro exports one failing case: verify one candidate (--candidate), once\n";
        return kExitUsage;
    }
    if (!a.sanitize.empty()) {
        const auto& all = protocol::SanitizeSettings::allTools();
        for (const std::string& t : sanitizeToolList(a.sanitize))
            if (std::find(all.begin(), all.end(), t) == all.end()) {
                std::cerr << "kforge: --sanitize: \"" << t << "\" is not one of memcheck, racecheck, initcheck, synccheck\n";
                return kExitUsage;
            }
        if (sanitizeShapes(task).empty()) {
            std::cerr << "kforge: --sanitize runs on the task's test shapes, and " << task.name << " has none\n";
            return kExitUsage;
        }
    }
    if (a.kind == RunKind::Profile) {
        // A profile runs one shape: the one given, else the largest benchmark (or test) shape.
        std::optional<ShapeBinding> shape;
        p.settings.setName = "custom";
        if (!a.shape.empty()) {
            if (!(shape = shapeArgument(task, a.shape)))
                return kExitUsage;
        } else {
            shape = defaultProfileShape(task);
            p.settings.setName = task.benchmarkShapes.empty() ? "tests" : "benchmarks";
        }
        if (!shape) {
            std::cerr << "kforge: task " << task.name << " has no shapes; add some under \"shapes\" in task.json or pass --shape\n";
            return kExitUsage;
        }
        p.settings.onlyShapes = {*shape};
        p.settings.profileBaseline = !a.noBaseline;
    } else if (a.shapes != "all" && (a.shapes == "benchmarks" ? task.benchmarkShapes : task.testShapes).empty()) {
        std::cerr << "kforge: task " << task.name << " has no " << (a.shapes == "tests" ? "test" : "benchmark")
                  << " shapes; add some under \"shapes\" in task.json or pass --shapes all\n";
        return kExitUsage;
    }
    return std::nullopt;
}

/// Loads the task, resolves the candidates and the endpoint(s), reads and scans every source:
/// everything that can be wrong is found before the runner starts.
std::optional<int> prepare(const RunArgs& a, const std::optional<std::uint64_t>& seed, Prepared& p)
{
    auto loaded = loadTaskArgument(a.path, a.candidates);
    if (!loaded)
        return kExitUsage;
    p.task = std::move(*loaded);
    auto candidates = resolveCandidates(p.task, a.candidates);
    if (!candidates) {
        std::cerr << "kforge: " << candidates.error().why << "; " << candidates.error().hint << '\n';
        return kExitUsage;
    }
    p.candidates = std::move(candidates.value());
    p.settings = settingsFor(a, seed);
    if (auto rc = checkAgainstTask(a, p))
        return rc;
    // Every source must be readable before the runner starts (the architecture comes later).
    // A verification also scans each source for patterns that often mean a kernel games the
    // judge: warnings beside the verdict, never part of it (docs/agents.md, "The static scan").
    for (const Candidate* c : p.candidates) {
        auto req = compileRequestFor(p.task, *c, a.arch.empty() ? "sm_90" : a.arch);
        if (!req)
            return fail(req.error(), kExitUsage);
        if (a.kind == RunKind::Verify)
            p.scans.emplace_back(c->file, scanSource(req->source));
    }
    if (!a.endpoint.pool.empty()) {
        if (auto rc = resolvePoolOrExit(a.endpoint, a.runnerPath, p.pool))
            return rc;
    } else if (auto rc = resolveEndpointOrExit(a.endpoint, p.endpoint)) {
        return rc;
    }
    const Endpoint* remote = p.endpoint && p.endpoint->remote() ? &*p.endpoint : nullptr;
    for (const Endpoint& e : p.pool)
        remote = remote ? remote : (e.remote() ? &e : nullptr);
    if (a.kind == RunKind::Bench && a.baseline == "compile" && remote) {
        std::cerr << "kforge: --baseline compile times torch.compile on this machine, but the runs go to " << remote->describe()
                  << "; use --baseline both (recorded as not measured) or run kforge bench on that host\n";
        return kExitUsage;
    }
    if (!a.exportRepro.empty() && p.settings.dumpDir.empty())
        p.settings.dumpDir = newRunDumpDir(p.task.name, p.candidates.front()->file).string();
    return std::nullopt;
}

/// What follows each report, the same for one runner and for a pool: its share in the exit
/// code, a repro export, the printed block.
class ReportSink {
public:
    ReportSink(const RunArgs& a, const Prepared& p) : m_a(a), m_p(p) {}

    void accept(std::size_t i, protocol::RunReport report)
    {
        const Candidate& c = *m_p.candidates[i];
        const protocol::Header& h = report.header();
        if (!h.passed())
            allOk = false;
        const bool measured = report.bench() && report.bench()->compileBaseline && report.bench()->compileBaseline->measured;
        if (m_a.kind == RunKind::Bench && m_a.baseline == "compile" && !measured && h.passed())
            compileMissing = true;
        // A GPU that other processes filled is the machine's state, not the kernel's fault.
        gpuFull = gpuFull || (h.error && h.error->kind == kGpuOutOfMemory);
        noCounters = noCounters || h.verdict == protocol::Verdict::NoCounters;
        const bool failed = h.verdict == protocol::Verdict::Fail;
        if (!m_a.exportRepro.empty() && failed)
            exportFirstCase(report, m_p.task, m_a.exportRepro);
        else if (!m_p.settings.dumpDir.empty() && failed && !m_a.json)
            std::cerr << "failing tensors saved in " << h.dumpDir << '\n';
        if (!m_a.json)
            print(c, report);
        reports.push_back(std::move(report));
    }

    /// Exit 3 (the environment) when the machine, not a kernel, is why a run did not pass.
    int failedExit(bool poolLost) const
    {
        return noCounters || gpuFull || compileMissing || poolLost ? kExitEnvironment : kExitFailed;
    }
    bool ok() const { return allOk && !compileMissing; }
    /// A candidate got no report (a pool lost it twice).
    void markMissing() { allOk = false; }

    std::vector<protocol::RunReport> reports;

private:
    void print(const Candidate& c, const protocol::RunReport& report) const
    {
        const bool withSet = m_a.shapes == "all" || m_p.settings.heldOutCount > 0;
        if (!reports.empty())
            std::cout << '\n';
        if (m_a.kind == RunKind::Profile)
            printProfileReport(std::cout, report);
        else if (m_a.kind == RunKind::Bench)
            printBenchReport(std::cout, report, withSet);
        else {
            for (const auto& [file, findings] : m_p.scans)
                if (file == c.file)
                    std::cout << scanText(findings, (m_p.task.directory / c.file).string());
            printVerifyReport(std::cout, report, withSet);
        }
        std::cout.flush();
    }

    const RunArgs& m_a;
    const Prepared& m_p;
    bool allOk = true;
    bool noCounters = false;     // a profile without counters: the machine's limit, not the kernel's
    bool gpuFull = false;        // a run ended because the GPU had too little free memory
    bool compileMissing = false; // --baseline compile, and torch.compile could not be measured
};

/// Candidate `c`'s settings: its own dump folder when several candidates dump.
RunSettings settingsOf(const Prepared& p, const Candidate& c)
{
    RunSettings s = p.settings;
    if (!p.settings.dumpDir.empty() && p.candidates.size() > 1)
        s.dumpDir = (fs::path(p.settings.dumpDir) / fs::path(c.file).stem()).string();
    return s;
}

/// Every candidate on one runner. --repeat N measures edit-to-verdict latency the way the
/// workbench sees it: one process, a warm runner, and each round a real edit (so the compile
/// cache misses), a compile and a full verification; the last round's report carries every
/// round's times. Returns an exit code when the run must stop.
std::optional<int> runOnOneRunner(const RunArgs& a, const Prepared& p, RunnerSession& session, ReportSink& sink)
{
    const int repeats = std::max(1, a.repeat);
    for (std::size_t i = 0; i < p.candidates.size(); ++i) {
        const Candidate& c = *p.candidates[i];
        const std::string label = p.task.name + "/" + c.file;
        std::vector<protocol::RoundTiming> latency;
        RunPlan plan{a.kind, c.file, settingsOf(p, c), std::nullopt, {}};
        for (int round = 0; round < repeats; ++round) {
            if (round > 0) {
                if (!plan.source)
                    plan.source = compileRequestFor(p.task, c, session.arch()).value().source;
                *plan.source += "\n// edited by kforge --repeat (round " + std::to_string(round) + ")\n";
            }
            auto outcome = session.run(p.task, plan, label);
            if (!outcome || outcome->cancelled) {
                if (session.cancelled()) {
                    std::cerr << "kforge: cancelled\n";
                    return kExitInterrupted;
                }
                std::cerr << "kforge: " << outcome.error().message() << '\n';
                return kExitEnvironment;
            }
            if (outcome->failure && outcome->runnerRestarted && a.json)
                std::cerr << "kforge: " << label << ": " << outcome->failure->message() << '\n';
            if (repeats == 1) {
                sink.accept(i, std::move(outcome->report));
                break;
            }
            const protocol::Verdict verdict = outcome->report.header().verdict;
            const double total = outcome->compileMs + outcome->runnerMs;
            latency.push_back({round, outcome->compileMs, outcome->runnerMs, total, verdict});
            std::cerr << label << ": round " << round + 1 << "/" << repeats << ": compile " << outcome->compileMs << " ms + runner "
                      << outcome->runnerMs << " ms = " << total << " ms (" << protocol::verdictName(verdict) << ")\n";
            if (round + 1 == repeats)
                sink.accept(i, outcome->report.withEditToVerdict(latency));
        }
    }
    return std::nullopt;
}

} // namespace

int runOnRunner(const RunArgs& a, std::vector<protocol::RunReport>* collect)
{
    const char* command = a.kind == RunKind::Bench ? "bench" : a.kind == RunKind::Profile ? "profile" : "verify";
    if (a.taskPaths.size() > 1) {
        if (a.endpoint.pool.empty()) {
            std::cerr << "kforge: " << command << " takes one task, or several with --pool FILE\n";
            return kExitUsage;
        }
        return runPoolOverTasks(a);
    }
    std::optional<std::uint64_t> seed;
    Prepared p;
    if (auto rc = checkArguments(a, seed))
        return *rc;
    if (auto rc = prepare(a, seed, p))
        return *rc;
    ReportSink sink(a, p);
    nlohmann::json poolJson;
    bool poolLost = false;
    if (!p.pool.empty()) {
        std::vector<PoolCandidate> list;
        for (const Candidate* c : p.candidates)
            list.push_back({&p.task, c});
        PoolRun run = runPool(a.kind, list, p.pool, a.runnerPath, a.arch, [&](const Candidate& c) { return settingsOf(p, c); },
                              a.json, [&](std::size_t i, protocol::RunReport report, const Endpoint*) { sink.accept(i, std::move(report)); });
        if (run.cancelled) {
            std::cerr << "kforge: cancelled\n";
            return kExitInterrupted;
        }
        poolLost = run.allLost;
        poolJson = std::move(run.summary);
        if (run.missing > 0)
            sink.markMissing();
    } else {
        RunnerSession session(a.runnerPath, a.arch, p.endpoint);
        if (auto failed = session.start())
            return *failed;
        if (auto rc = runOnOneRunner(a, p, session, sink))
            return *rc;
    }
    const int exitCode = sink.ok() ? kExitOk : sink.failedExit(poolLost);
    if (collect) {
        for (protocol::RunReport& r : sink.reports)
            collect->push_back(std::move(r));
        return exitCode;
    }
    nlohmann::json documents = nlohmann::json::array();
    for (const protocol::RunReport& r : sink.reports)
        documents.push_back(r.document());
    nlohmann::json all = {{"schema_version", 1}, {"command", command}, {"ok", sink.ok()}, {"reports", documents}};
    if (!p.pool.empty())   // outside the signed reports: where each ran is in each report's placement
        all["pool"] = poolJson;
    if (a.kind == RunKind::Verify) {   // outside the signed reports: the scan is advice, not evidence
        nlohmann::json scanned = nlohmann::json::array();
        for (const auto& [file, findings] : p.scans)
            scanned.push_back({{"candidate", file}, {"findings", scanFindingsJson(findings)}});
        all["static_scan"] = scanned;
    }
    return emitRunDocument(a, all, exitCode);
}

nlohmann::json scanFindingsJson(const std::vector<ScanFinding>& findings)
{
    nlohmann::json list = nlohmann::json::array();
    for (const ScanFinding& f : findings)
        list.push_back({{"line", f.line}, {"column", f.column}, {"rule", f.rule}, {"message", f.message}});
    return list;
}

int emitRunDocument(const RunArgs& a, const nlohmann::json& document, int exitCode)
{
    const std::string text = document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (a.json)
        std::cout << text;
    if (!a.reportFile.empty()) {
        if (auto w = writeFileAtomic(a.reportFile, text); !w)
            return fail(w.error(), kExitEnvironment);
    }
    return exitCode;
}

void addTaskRunOptions(CLI::App* cmd, const std::shared_ptr<RunArgs>& args, int& exitCode,
                       std::function<int(const RunArgs&)> run)
{
    cmd->add_flag("--json", args->json, "print the reports as JSON (docs/report-schema.md)");
    cmd->add_option("--report", args->reportFile, "also write the JSON reports to this file (atomically)");
    cmd->add_option("--launch-timeout-ms", args->launchTimeoutMs, "watchdog per launch; a hung kernel is killed after it")
        ->check(CLI::Range(1, 86400000));
    addRunnerOptions(cmd, &args->runnerPath, &args->endpoint);
    addPoolOption(cmd, &args->endpoint);
    cmd->callback([args, &exitCode, run = std::move(run)] {
        args->path = args->taskPaths.empty() ? std::string() : args->taskPaths.front();
        exitCode = run(*args);
    });
}

} // namespace kf::cli
