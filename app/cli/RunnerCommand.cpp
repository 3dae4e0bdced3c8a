#include "RunnerCommand.h"

#include "ExitCodes.h"
#include "ProgressLine.h"
#include "ReproCommand.h"
#include "RunnerSession.h"
#include "engine/repro/Repro.h"
#include "ReportText.h"
#include "engine/compile/TaskCompile.h"
#include "engine/core/Clock.h"
#include "engine/core/Files.h"
#include "engine/runner/RunRequest.h"
#include "engine/task/HeldOut.h"
#include "engine/task/Task.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <regex>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kf::cli {

namespace {

const std::vector<ShapeBinding>& shapeSet(const Task& task, const std::string& which)
{
    return which == "benchmarks" ? task.benchmarkShapes : task.testShapes;
}

} // namespace

RunSettings settingsFor(const RunArgs& a, const std::optional<std::uint64_t>& seed)
{
    RunSettings settings;
    settings.shapes = a.shapes;
    settings.trials = a.trials;
    settings.seed = seed;
    settings.launchTimeoutMs = a.launchTimeoutMs;
    settings.timeCapMs = a.timeCapMs;
    settings.minSamples = a.minSamples;
    settings.maxSamples = a.maxSamples;
    settings.targetSpread = a.targetSpread;
    settings.samples = a.samples;
    settings.dumpDir = a.dumpDir;
    settings.dumpMaxBytes = a.dumpMaxMib << 20;
    settings.dumpAllFailing = a.dumpAllFailing;
    return settings;
}

std::optional<Task> loadTaskArgument(const std::string& path)
{
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        std::cerr << "kforge: " << path << ": no such file or folder\n";
        return std::nullopt;
    }
    auto loaded = loadTask(path);
    if (!loaded) {
        std::cerr << "kforge: " << loaded.error().message() << '\n';
        return std::nullopt;
    }
    return std::move(loaded.value());
}

int runOnRunner(const RunArgs& a, json* collect)
{
    const bool bench = a.kind == RunKind::Bench;
    const bool profile = a.kind == RunKind::Profile;
    const char* command = bench ? "bench" : profile ? "profile" : "verify";

    // Everything the command line and the task can get wrong is a usage error (2), found before
    // the runner starts.
    std::optional<std::uint64_t> seed;
    if (!a.seed.empty() && !(seed = parseSeed(a.seed))) {
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
    auto loaded = loadTaskArgument(a.path);
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
        std::cerr << "kforge: task " << task.name << " has no candidates; add one under \"candidates\" in task.json\n";
        return kExitUsage;
    }
    if (!a.exportRepro.empty() && (bench || candidates.size() != 1 || a.repeat > 1)) {
        std::cerr << "kforge: --export-repro exports one failing case: verify one candidate (--candidate), once\n";
        return kExitUsage;
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
    // Read every source now (the architecture is filled in once the runner has named the GPU).
    std::vector<CompileRequest> requests;
    for (const Candidate* c : candidates) {
        auto req = compileRequestFor(task, *c, a.arch.empty() ? "sm_90" : a.arch);
        if (!req) {
            std::cerr << "kforge: " << req.error().message() << '\n';
            return kExitUsage;
        }
        requests.push_back(std::move(req.value()));
    }

    RunnerSession session(a.runnerPath);
    if (auto failed = session.start(a.arch))
        return *failed;
    const std::string& arch = session.arch();
    const TaskPayload payload = taskPayload(task);
    const std::string& taskHash = payload.hash;
    const RunKind runKind = a.kind;
    RunSettings settings = settingsFor(a, seed);
    if (profile) {
        settings.onlyShapes = {*profileShape};
        settings.setName = profileSet;
        settings.profileBaseline = !a.noBaseline;
        if (!runnerHas(session.hello(), "profile")) {
            std::cerr << "kforge: this kforge-runner cannot profile (its hello lacks \"profile\"); rebuild it with this kforge\n";
            return kExitEnvironment;
        }
    }
    if (!a.exportRepro.empty() && settings.dumpDir.empty())
        settings.dumpDir = newRunDumpDir(task.name, candidates.front()->file).string();
    if (!bench && a.heldOut > 0) {
        // Derived with the replay seed when one is given, else with a secret one.
        const std::uint64_t heldOutSeed = seed ? *seed : parseSeed(freshSeeds(1, std::nullopt).front()).value_or(1);
        settings.heldOut = deriveHeldOutShapes(task, heldOutSeed, a.heldOut);
    }
    if (std::string missing = missingRunnerFeature(session.hello(), settingsFor(a, seed)); !missing.empty()) {
        std::cerr << "kforge: this kforge-runner is too old for the options given (it lacks \"" << missing
                  << "\"); rebuild it with this kforge\n";
        return kExitEnvironment;
    }
    const bool withSet = a.shapes == "all" || !settings.heldOut.empty();
    ProgressLine& progress = session.progress();
    json reports = json::array();
    bool allOk = true;
    bool noCounters = false;    // a profile without counters: the machine's limit, not the kernel's

    const int repeats = std::max(1, a.repeat);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      // --repeat N measures edit-to-verdict latency the way the workbench sees it: one process,
      // a warm runner, and each round a real edit (so the compile cache misses), a compile and a
      // full verification. Only the last round's report is printed; every round's times are kept.
      json latency = json::array();
      for (int round = 0; round < repeats; ++round) {
        const Candidate& c = *candidates[i];
        CompileRequest& req = requests[i];
        if (round > 0)
            req.source += "\n// edited by kforge --repeat (round " + std::to_string(round) + ")\n";
        const std::string label = task.name + "/" + c.file;
        const std::string startedAt = utcNow();
        const auto started = std::chrono::steady_clock::now();
        progress.show(label + ": compiling for " + arch, true);

        const auto compileStart = std::chrono::steady_clock::now();
        auto built = session.compile(req);
        const double compileMs = msSince(compileStart);
        double runnerMs = 0;
        progress.clear();
        if (!built) {
            std::cerr << "kforge: " << (session.cancelled() ? std::string("cancelled") : built.error().message()) << '\n';
            return session.cancelled() ? kExitInterrupted : kExitEnvironment;
        }
        const CompileResult& r = built.value();
        const json candidate = candidateHeader(c, req, r);
        json report;
        if (!r.success || r.cubin.empty()) {
            for (const auto& d : r.diagnostics)
                std::cerr << formatDiagnostic(d);
            Error e{"compile " + c.file + " for " + arch,
                    r.success ? "NVRTC produced no cubin for " + arch
                              : "the candidate does not compile: " + std::to_string(r.errorCount()) + " error(s)",
                    r.success ? "" : "fix the errors printed above; `kforge compile` shows them with their source lines",
                    req.fileName,
                    {}};
            report = errorReport(runKind, task, taskHash, candidate, session.hello(), e, startedAt, msSince(started));
        } else {
            RunSettings perCandidate = settings;
            if (!settings.dumpDir.empty() && candidates.size() > 1)
                perCandidate.dumpDir = (fs::path(settings.dumpDir) / fs::path(c.file).stem()).string();
            json request = buildRunRequest(runKind, payload, c, req, r, session.nvrtc(), perCandidate);
            const auto runnerStart = std::chrono::steady_clock::now();
            auto result = session.request(std::move(request), label);
            runnerMs = msSince(runnerStart);
            if (!result && session.cancelled()) {
                std::cerr << "kforge: cancelled\n";
                return kExitInterrupted;
            }
            if (result) {
                report = std::move(result.value());
            } else {
                // The supervisor has put the runner down; the next candidate gets a fresh one.
                if (a.json)
                    std::cerr << "kforge: " << label << ": " << result.error().message() << '\n';
                report = errorReport(runKind, task, taskHash, candidate, session.hello(), result.error(), startedAt,
                                     msSince(started));
            }
        }
        if (repeats > 1) {
            latency.push_back({{"round", round}, {"compile_ms", compileMs}, {"runner_ms", runnerMs},
                               {"total_ms", compileMs + runnerMs}, {"verdict", stringField(report, "verdict")}});
            std::cerr << label << ": round " << round + 1 << "/" << repeats << ": compile " << compileMs
                      << " ms + runner " << runnerMs << " ms = " << compileMs + runnerMs << " ms ("
                      << stringField(report, "verdict") << ")\n";
            if (round + 1 < repeats)
                continue;
            report["edit_to_verdict"] = latency;
        }
        if (stringField(report, "verdict") != (bench || profile ? "ok" : "pass"))
            allOk = false;
        noCounters = noCounters || (profile && stringField(report, "verdict") == "no_counters");
        if (!a.exportRepro.empty() && stringField(report, "verdict") == "fail")
            exportFirstCase(report, task, a.exportRepro);
        else if (!settings.dumpDir.empty() && stringField(report, "verdict") == "fail" && !a.json)
            std::cerr << "failing tensors saved in " << stringField(report, "dump_dir") << '\n';
        if (!a.json) {
            if (i > 0)
                std::cout << '\n';
            if (profile)
                printProfileReport(std::cout, report);
            else if (bench)
                printBenchReport(std::cout, report, withSet);
            else
                printVerifyReport(std::cout, report, withSet);
            std::cout.flush();
        }
        reports.push_back(std::move(report));
      }
    }

    const int failedExit = noCounters ? kExitEnvironment : kExitFailed;
    if (collect) {
        for (json& r : reports)
            collect->push_back(std::move(r));
        return allOk ? kExitOk : failedExit;
    }
    const json all = {{"schema_version", 1}, {"command", command}, {"ok", allOk}, {"reports", reports}};
    const std::string text = all.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
    if (a.json)
        std::cout << text;
    if (!a.reportFile.empty()) {
        if (auto w = writeFileAtomic(a.reportFile, text); !w) {
            std::cerr << "kforge: " << w.error().message() << '\n';
            return kExitEnvironment;
        }
    }
    return allOk ? kExitOk : failedExit;
}

} // namespace kf::cli
