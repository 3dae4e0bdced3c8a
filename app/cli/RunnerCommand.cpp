#include "RunnerCommand.h"

#include "ExitCodes.h"
#include "ProgressLine.h"
#include "ReproCommand.h"
#include "PoolRun.h"
#include "RunnerSession.h"
#include "engine/analysis/SourceScan.h"
#include "engine/repro/Repro.h"
#include "engine/cast/CompileBaselineRun.h"
#include "engine/compile/TaskCompile.h"
#include "engine/core/Clock.h"
#include "engine/core/Files.h"
#include "engine/protocol/CompileBaseline.h"
#include "engine/protocol/Signature.h"
#include "engine/protocol/Report.h"
#include "engine/runner/RunSettings.h"
#include "engine/task/HeldOut.h"
#include "engine/task/Task.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <regex>
#include <unistd.h>

namespace fs = std::filesystem;


namespace kf::cli {

namespace {

const std::vector<ShapeBinding>& shapeSet(const Task& task, const std::string& which)
{
    return which == "benchmarks" ? task.benchmarkShapes : task.testShapes;
}

} // namespace

std::vector<std::string> sanitizeToolList(const std::string& text)
{
    if (text == "all")
        return protocol::SanitizeSettings::allTools();
    std::vector<std::string> tools;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t comma = text.find(',', pos);
        std::string t = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        if (!t.empty())
            tools.push_back(t);
        if (comma == std::string::npos)
            break;
        pos = comma + 1;
    }
    return tools;
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

int runOnRunner(const RunArgs& a, std::vector<protocol::RunReport>* collect)
{
    const bool bench = a.kind == RunKind::Bench;
    const bool profile = a.kind == RunKind::Profile;
    const char* command = bench ? "bench" : profile ? "profile" : "verify";
    if (a.taskPaths.size() > 1) {
        if (a.endpoint.pool.empty()) {
            std::cerr << "kforge: " << command << " takes one task, or several with --pool FILE\n";
            return kExitUsage;
        }
        return runPoolOverTasks(a);
    }

    // Everything the command line and the task can get wrong is a usage error (2), found before
    // the runner starts.
    std::optional<std::uint64_t> seed;
    if (!a.seed.empty() && !(seed = protocol::parseSeed(a.seed))) {
        std::cerr << "kforge: --seed " << a.seed << " is not a 64-bit hexadecimal number (e.g. 0x9f3a5c)\n";
        return kExitUsage;
    }
    if (!a.arch.empty() && !std::regex_match(a.arch, std::regex(R"(sm_\d+[a-z]?)"))) {
        std::cerr << "kforge: --arch " << a.arch << ": the runner needs a cubin, so give a real architecture such as sm_90\n";
        return kExitUsage;
    }
    if (bench && a.maxSamples < a.minSamples) {
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
    auto loaded = loadTaskArgument(a.path, a.candidates);
    if (!loaded)
        return kExitUsage;
    const Task task = std::move(*loaded);
    std::vector<const Candidate*> candidates;
    for (const auto& name : a.candidates) {
        const Candidate* c = task.findCandidate(name);
        if (!c) {
            std::cerr << "kforge: " << name << " is not a candidate of task " << task.name
                      << "; list it with its launch plan under \"candidates\" in task.json\n";
            return kExitUsage;
        }
        if (std::find(candidates.begin(), candidates.end(), c) == candidates.end())
            candidates.push_back(c);
    }
    if (a.candidates.empty())
        for (const auto& c : task.candidates)
            candidates.push_back(&c);
    if (candidates.empty()) {
        std::cerr << "kforge: task " << task.name << " has no candidates yet; add one with `kforge candidate add " << a.path
                  << " <file.cu>` (or kforge generate)\n";
        return kExitUsage;
    }
    if (!a.exportRepro.empty() && (bench || candidates.size() != 1 || a.repeat > 1)) {
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
    // A profile runs one shape: the one given, else the largest benchmark (or test) shape.
    std::optional<ShapeBinding> profileShape;
    std::string profileSet = "custom";
    if (profile) {
        if (!a.shape.empty()) {
            auto parsed = parseShapeText(task, a.shape);
            if (!parsed) {
                std::cerr << "kforge: --shape " << a.shape << ": " << parsed.error().why << '\n';
                return kExitUsage;
            }
            profileShape = parsed.value();
        } else {
            profileShape = defaultProfileShape(task);
            profileSet = task.benchmarkShapes.empty() ? "tests" : "benchmarks";
        }
        if (!profileShape) {
            std::cerr << "kforge: task " << task.name << " has no shapes; add some under \"shapes\" in task.json or pass --shape\n";
            return kExitUsage;
        }
    }
    if (!profile && a.shapes != "all" && shapeSet(task, a.shapes).empty()) {
        std::cerr << "kforge: task " << task.name << " has no " << (a.shapes == "tests" ? "test" : "benchmark")
                  << " shapes; add some under \"shapes\" in task.json or pass --shapes all\n";
        return kExitUsage;
    }
    // Every source must be readable before the runner starts (the architecture comes later).
    // A verification also scans each source for patterns that often mean a kernel games the
    // judge: warnings beside the verdict, never part of it (docs/agents.md, "The static scan").
    std::vector<std::pair<std::string, std::vector<ScanFinding>>> scans;   // in candidate order
    for (const Candidate* c : candidates) {
        auto req = compileRequestFor(task, *c, a.arch.empty() ? "sm_90" : a.arch);
        if (!req) {
            std::cerr << "kforge: " << req.error().message() << '\n';
            return kExitUsage;
        }
        if (!bench && !profile)
            scans.emplace_back(c->file, scanSource(req->source));
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
    std::optional<Endpoint> endpoint;
    std::vector<Endpoint> poolEndpoints;
    if (pooled) {
        if (auto rc = resolvePoolOrExit(a.endpoint, a.runnerPath, poolEndpoints))
            return *rc;
    } else if (auto rc = resolveEndpointOrExit(a.endpoint, endpoint)) {
        return *rc;
    }
    auto remoteOne = [&]() -> const Endpoint* {
        if (endpoint && endpoint->remote())
            return &*endpoint;
        for (const Endpoint& e : poolEndpoints)
            if (e.remote())
                return &e;
        return nullptr;
    };
    if (bench && a.baseline == "compile" && remoteOne()) {
        std::cerr << "kforge: --baseline compile times torch.compile on this machine, but the runs go to "
                  << remoteOne()->describe() << "; use --baseline both (recorded as not measured) or run kforge bench on that host\n";
        return kExitUsage;
    }
    std::optional<RunnerSession> session;
    if (!pooled) {
        session.emplace(a.runnerPath, a.arch, endpoint);
        if (auto failed = session->start())
            return *failed;
    }
    RunSettings settings = settingsFor(a, seed);
    if (profile) {
        settings.onlyShapes = {*profileShape};
        settings.setName = profileSet;
        settings.profileBaseline = !a.noBaseline;
    }
    if (!a.exportRepro.empty() && settings.dumpDir.empty())
        settings.dumpDir = newRunDumpDir(task.name, candidates.front()->file).string();
    const bool withSet = a.shapes == "all" || settings.heldOutCount > 0;
    std::vector<protocol::RunReport> reports;
    bool allOk = true;
    bool noCounters = false;    // a profile without counters: the machine's limit, not the kernel's
    bool gpuFull = false;       // a run ended because the GPU had too little free memory
    bool compileMissing = false; // --baseline compile, and torch.compile could not be measured
    auto perCandidateSettings = [&](const Candidate& c) {
        RunSettings perCandidate = settings;
        if (!settings.dumpDir.empty() && candidates.size() > 1)
            perCandidate.dumpDir = (fs::path(settings.dumpDir) / fs::path(c.file).stem()).string();
        return perCandidate;
    };

    // Everything after a report comes back, the same for one runner and for a pool: the
    // torch.compile baseline, the verdict's share in the exit code, the printed block.
    auto accept = [&](std::size_t i, protocol::RunReport report, const Endpoint* ranOn) {
        const Candidate& c = *candidates[i];
        const std::string label = task.name + "/" + c.file;
        if (bench && a.baseline != "eager") {
            if (!a.json)
                std::cerr << label << ": timing against torch.compile (the first compile of a shape takes a while)\n";
            cast::CompileBaselineOptions opts;
            opts.modes = a.compileModes;
            opts.sampling = settings.bench;
            const fs::path taskFile = fs::is_directory(a.path) ? fs::path(a.path) / "task.json" : fs::path(a.path);
            report.amend([&](nlohmann::json& j) {
                // torch.compile is timed by Python on this machine: beside a kernel timed on another
                // host's GPU the ratio would compare two machines.
                if (ranOn && ranOn->remote())
                    protocol::markCompileNotMeasured(j, "torch.compile is timed on this machine and the candidate ran on " +
                                                            ranOn->describe() + "; run `kforge bench` on that host for this baseline");
                else
                    cast::addCompileBaseline(j, task, taskFile, c, report.header.candidate.arch, opts);
            });
            const bool measured = report.bench && report.bench->compileBaseline && report.bench->compileBaseline->measured;
            if (a.baseline == "compile" && !measured && report.header.verdict == "ok")
                compileMissing = true;
        }
        const std::string& verdict = report.header.verdict;
        if (verdict != (bench || profile ? "ok" : "pass"))
            allOk = false;
        // A GPU that other processes filled is the machine's state, not the kernel's fault.
        gpuFull = gpuFull || (report.header.error && report.header.error->kind == kGpuOutOfMemory);
        noCounters = noCounters || (profile && verdict == "no_counters");
        if (!a.exportRepro.empty() && verdict == "fail")
            exportFirstCase(report, task, a.exportRepro);
        else if (!settings.dumpDir.empty() && verdict == "fail" && !a.json)
            std::cerr << "failing tensors saved in " << report.header.dumpDir << '\n';
        if (!a.json) {
            if (!reports.empty())
                std::cout << '\n';
            if (profile)
                printProfileReport(std::cout, report);
            else if (bench)
                printBenchReport(std::cout, report, withSet);
            else {
                for (const auto& [file, findings] : scans)
                    if (file == c.file)
                        std::cout << scanText(findings, (task.directory / c.file).string());
                printVerifyReport(std::cout, report, withSet);
            }
            std::cout.flush();
        }
        reports.push_back(std::move(report));
    };

    nlohmann::json poolJson;
    bool poolLost = false;
    if (pooled) {
        std::vector<PoolCandidate> list;
        for (const Candidate* c : candidates)
            list.push_back({&task, c});
        PoolRun run = runPool(a.kind, list, poolEndpoints, a.runnerPath, a.arch, perCandidateSettings, a.json,
                              [&](std::size_t i, protocol::RunReport report, const Endpoint* ranOn) {
                                  accept(i, std::move(report), ranOn);
                              });
        if (run.cancelled) {
            std::cerr << "kforge: cancelled\n";
            return kExitInterrupted;
        }
        if (run.missing > 0)
            allOk = false;
        poolLost = run.allLost;
        poolJson = std::move(run.summary);
    }

    const int repeats = std::max(1, a.repeat);
    for (std::size_t i = 0; !pooled && i < candidates.size(); ++i) {
      // --repeat N measures edit-to-verdict latency the way the workbench sees it: one process,
      // a warm runner, and each round a real edit (so the compile cache misses), a compile and a
      // full verification. Only the last round's report is printed; every round's times are kept.
      std::vector<protocol::RoundTiming> latency;
      std::optional<std::string> source;
      for (int round = 0; round < repeats; ++round) {
        const Candidate& c = *candidates[i];
        if (round > 0) {
            if (!source)
                source = compileRequestFor(task, c, session->arch()).value().source;
            *source += "\n// edited by kforge --repeat (round " + std::to_string(round) + ")\n";
        }
        const std::string label = task.name + "/" + c.file;
        auto outcome = session->run(a.kind, task, c.file, perCandidateSettings(c), label, source);
        if (!outcome || outcome->cancelled) {
            if (session->cancelled()) {
                std::cerr << "kforge: cancelled\n";
                return kExitInterrupted;
            }
            std::cerr << "kforge: " << outcome.error().message() << '\n';
            return kExitEnvironment;
        }
        if (outcome->failure && outcome->runnerRestarted && a.json)
            std::cerr << "kforge: " << label << ": " << outcome->failure->message() << '\n';
        protocol::RunReport report = std::move(outcome->report);
        if (repeats > 1) {
            const std::string& verdict = report.header.verdict;
            latency.push_back({round, outcome->compileMs, outcome->runnerMs, outcome->compileMs + outcome->runnerMs, verdict});
            std::cerr << label << ": round " << round + 1 << "/" << repeats << ": compile " << outcome->compileMs
                      << " ms + runner " << outcome->runnerMs << " ms = " << outcome->compileMs + outcome->runnerMs << " ms ("
                      << verdict << ")\n";
            if (round + 1 < repeats)
                continue;
            report.amend([&](nlohmann::json& j) {
                report.header.editToVerdict = latency;
                report.header.writeTo(j);
            });
        }
        accept(i, std::move(report), endpoint ? &*endpoint : nullptr);
      }
    }

    const int failedExit = noCounters || gpuFull || compileMissing || poolLost ? kExitEnvironment : kExitFailed;
    if (compileMissing)
        allOk = false;
    if (collect) {
        for (protocol::RunReport& r : reports)
            collect->push_back(std::move(r));
        return allOk ? kExitOk : failedExit;
    }
    nlohmann::json documents = nlohmann::json::array();
    for (const protocol::RunReport& r : reports)
        documents.push_back(r.json);
    nlohmann::json all = {{"schema_version", 1}, {"command", command}, {"ok", allOk}, {"reports", documents}};
    if (pooled)   // outside the signed reports: where each ran is in each report's placement
        all["pool"] = poolJson;
    if (!bench && !profile) {   // outside the signed reports: the scan is advice, not evidence
        nlohmann::json scanned = nlohmann::json::array();
        for (const auto& [file, findings] : scans)
            scanned.push_back({{"candidate", file}, {"findings", scanFindingsJson(findings)}});
        all["static_scan"] = scanned;
    }
    return emitRunDocument(a, all, allOk ? kExitOk : failedExit);
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
        if (auto w = writeFileAtomic(a.reportFile, text); !w) {
            std::cerr << "kforge: " << w.error().message() << '\n';
            return kExitEnvironment;
        }
    }
    return exitCode;
}

} // namespace kf::cli
