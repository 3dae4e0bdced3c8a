#include "RunnerCommand.h"

#include "ExitCodes.h"
#include "ProgressLine.h"
#include "ReportText.h"
#include "engine/cache/CompileCache.h"
#include "engine/compile/Compiler.h"
#include "engine/compile/TaskCompile.h"
#include "engine/core/Base64.h"
#include "engine/core/Files.h"
#include "engine/core/Hash.h"
#include "engine/runner/Supervisor.h"
#include "engine/task/Task.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <random>
#include <regex>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kf::cli {

namespace {

constexpr int kExitInterrupted = 130; // the shell's convention for SIGINT

// Ctrl-C cancels the run through the supervisor, which kills the runner's process group: a
// runner left spinning on the GPU after we exit would hold the device for nobody.
std::atomic<CancelToken*> g_interruptToken{nullptr};

void onInterrupt(int)
{
    if (CancelToken* t = g_interruptToken.load())
        t->cancel();
}

class InterruptGuard {
public:
    explicit InterruptGuard(CancelToken& token)
    {
        g_interruptToken.store(&token);
        struct sigaction sa {};
        sa.sa_handler = &onInterrupt;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART | SA_RESETHAND; // a second Ctrl-C ends us the hard way
        ::sigaction(SIGINT, &sa, &m_oldInt);
        ::sigaction(SIGTERM, &sa, &m_oldTerm);
    }
    ~InterruptGuard()
    {
        ::sigaction(SIGINT, &m_oldInt, nullptr);
        ::sigaction(SIGTERM, &m_oldTerm, nullptr);
        g_interruptToken.store(nullptr);
    }
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;

private:
    struct sigaction m_oldInt {};
    struct sigaction m_oldTerm {};
};

std::string utcNow()
{
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char b[32];
    std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return b;
}

double msSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The report environment for reports we make ourselves: the hello's device and versions.
json environmentFromHello(const json& hello)
{
    json env = json::object();
    if (const json& d = field(hello, "device"); d.is_object())
        env.update(d);
    if (const json& v = field(hello, "versions"); v.is_object())
        env.update(v);
    return env;
}

// A report for a candidate the runner never reported on (it did not compile, or the runner
// crashed, hung or failed): same header as the runner's, verdict "error", no shapes.
json errorReport(bool bench, const Task& task, const std::string& taskHash, const json& candidate, const json& hello,
                 const Error& e, const std::string& startedAt, double durationMs)
{
    return {{"schema_version", 1},
            {"kind", bench ? "performance" : "correctness"},
            {"verdict", "error"},
            {"summary", e.why},
            {"task", {{"name", task.name}, {"hash", taskHash}}},
            {"candidate", candidate},
            {"environment", environmentFromHello(hello)},
            {"started_at", startedAt},
            {"duration_ms", durationMs},
            {"error", {{"what", e.what}, {"why", e.why}, {"hint", e.hint}}},
            {"shapes", json::array()}};
}

std::vector<std::string> freshSeeds(int trials, const std::optional<std::uint64_t>& fixed)
{
    std::vector<std::string> seeds;
    std::random_device rd;
    for (int i = 0; i < trials; ++i) {
        // Consecutive from --seed so a failure replays exactly; otherwise secret and independent.
        std::uint64_t s = fixed ? *fixed + static_cast<std::uint64_t>(i) : (std::uint64_t(rd()) << 32) ^ rd();
        seeds.push_back(seedText(s));
    }
    return seeds;
}

const std::vector<ShapeBinding>& shapeSet(const Task& task, const std::string& which)
{
    return which == "benchmarks" ? task.benchmarkShapes : task.testShapes;
}

} // namespace

std::optional<std::uint64_t> parseSeed(const std::string& text)
{
    std::string digits = text;
    if (digits.rfind("0x", 0) == 0 || digits.rfind("0X", 0) == 0)
        digits = digits.substr(2);
    if (digits.empty() || digits.size() > 16)
        return std::nullopt;
    std::uint64_t v = 0;
    for (char c : digits) {
        int d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return std::nullopt;
        v = (v << 4) | static_cast<std::uint64_t>(d);
    }
    return v;
}

std::string seedText(std::uint64_t seed)
{
    char b[24];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(seed));
    return b;
}

std::string archFromHello(const json& hello)
{
    const json& d = field(hello, "device");
    if (!d.is_object())
        return {};
    // The runner names the architecture ("arch": "sm_90"); a compute capability ("9.0") or
    // integer major/minor pairs are accepted too.
    if (std::string a = stringField(d, "arch"); std::regex_match(a, std::regex(R"(sm_\d+[a-z]?)")))
        return a;
    if (std::string cc = stringField(d, "compute_capability"); !cc.empty()) {
        std::smatch m;
        if (std::regex_match(cc, m, std::regex(R"((\d+)\.(\d+))")))
            return "sm_" + m[1].str() + m[2].str();
    }
    for (auto [maj, min] : {std::pair{"major", "minor"}, std::pair{"cc_major", "cc_minor"}})
        if (field(d, maj).is_number_integer() && field(d, min).is_number_integer())
            return "sm_" + std::to_string(field(d, maj).get<int>()) + std::to_string(field(d, min).get<int>());
    return {};
}

int runOnRunner(const RunArgs& a)
{
    const bool bench = a.kind == RunKind::Bench;
    const char* command = bench ? "bench" : "verify";

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
    std::error_code ec;
    if (!fs::exists(a.path, ec)) {
        std::cerr << "kforge: " << a.path << ": no such file or folder\n";
        return kExitUsage;
    }
    auto loaded = loadTask(a.path);
    if (!loaded) {
        std::cerr << "kforge: " << loaded.error().message() << '\n';
        return kExitUsage;
    }
    const Task task = std::move(loaded.value());
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
    if (a.shapes != "all" && shapeSet(task, a.shapes).empty()) {
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

    CancelToken cancel;
    InterruptGuard interruptGuard(cancel);
    RunnerSupervisor::Options options;
    options.runnerPath = a.runnerPath;
    RunnerSupervisor runner(options);
    auto hello = runner.hello();
    if (!hello) {
        std::cerr << "kforge: " << hello.error().message() << '\n';
        return cancel.cancelled() ? kExitInterrupted : kExitEnvironment;
    }
    if (cancel.cancelled()) { // Ctrl-C while the runner was starting: start-up cannot be interrupted
        std::cerr << "kforge: cancelled\n";
        return kExitInterrupted;
    }
    if (!field(*hello, "device").is_object()) {
        std::string why = stringField(*hello, "device_error", "the runner found no CUDA device");
        std::cerr << "kforge: no GPU: " << why << "; verify and bench need a CUDA device (compile works without one)\n";
        return kExitEnvironment;
    }
    const std::string arch = a.arch.empty() ? archFromHello(*hello) : a.arch;
    if (arch.empty()) {
        std::cerr << "kforge: the runner did not report the GPU's compute capability; pass --arch sm_XX\n";
        return kExitEnvironment;
    }
    auto nvrtc = nvrtcVersion();
    if (!nvrtc) {
        std::cerr << "kforge: " << nvrtc.error().message() << '\n';
        return kExitEnvironment;
    }

    CompileCache cache(CompileCache::defaultDirectory());
    const json taskJson = taskToJson(task);
    const std::string taskHash = hashHex(taskJson.dump());
    const std::string taskDir = fs::absolute(task.directory).lexically_normal().string();
    const bool withSet = a.shapes == "all";
    ProgressLine progress;
    json reports = json::array();
    bool allOk = true;

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
        req.options.arch = arch;
        req.wantSass = false;
        const std::string label = task.name + "/" + c.file;
        const std::string startedAt = utcNow();
        const auto started = std::chrono::steady_clock::now();
        progress.show(label + ": compiling for " + arch, true);

        const auto compileStart = std::chrono::steady_clock::now();
        auto built = compile(req, &cache, &cancel);
        const double compileMs = msSince(compileStart);
        double runnerMs = 0;
        progress.clear();
        if (!built) {
            std::cerr << "kforge: " << (cancel.cancelled() ? std::string("cancelled") : built.error().message()) << '\n';
            return cancel.cancelled() ? kExitInterrupted : kExitEnvironment;
        }
        const CompileResult& r = built.value();
        json candidate = {{"file", c.file},
                          {"source_hash", hashHex(req.source)},
                          {"arch", arch},
                          {"compile_options", req.options.nvrtcArguments()},
                          {"lowered_names", r.loweredNames}};
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
            report = errorReport(bench, task, taskHash, candidate, *hello, e, startedAt, msSince(started));
        } else {
            json request = {{"type", command},
                            {"task", taskJson},
                            {"task_dir", taskDir},
                            {"candidate", c.file},
                            {"cubin", base64Encode(r.cubin)},
                            {"lowered_names", r.loweredNames},
                            {"arch", arch},
                            {"source_hash", candidate["source_hash"]},
                            {"task_hash", taskHash},
                            {"compile_options", candidate["compile_options"]},
                            {"nvrtc", nvrtc.value()},
                            {"seeds", freshSeeds(bench ? 1 : a.trials, seed)},
                            {"trials", bench ? 1 : a.trials},
                            {"shapes", a.shapes},
                            {"launch_timeout_ms", a.launchTimeoutMs}};
            if (bench) {
                request["time_cap_ms"] = a.timeCapMs;
                request["min_samples"] = a.minSamples;
                request["max_samples"] = a.maxSamples;
                request["target_spread"] = a.targetSpread;
                request["recheck_fraction"] = 0.05;
                request["warmup"] = 3;
            }
            std::string stage = "starting";
            std::string launch;
            int permille = 0;
            auto onEvent = [&](const json& m) {
                const std::string type = stringField(m, "type");
                if (type == "progress") {
                    stage = stringField(m, "stage", stage);
                    if (field(m, "permille").is_number())
                        permille = std::clamp(field(m, "permille").get<int>(), 0, 1000);
                } else if (type == "launch_begin") {
                    launch = stringField(m, "label");
                } else if (type == "launch_end") {
                    launch.clear();
                }
                char pct[16];
                std::snprintf(pct, sizeof pct, "%5.1f%%", permille / 10.0);
                progress.show(label + ": " + pct + " " + stage + (launch.empty() ? "" : " · " + launch));
            };
            progress.show(label + ": starting", true);
            const auto runnerStart = std::chrono::steady_clock::now();
            auto result = runner.request(std::move(request), onEvent, &cancel);
            runnerMs = msSince(runnerStart);
            progress.clear();
            if (!result && cancel.cancelled()) {
                std::cerr << "kforge: cancelled\n";
                return kExitInterrupted;
            }
            if (result) {
                report = std::move(result.value());
            } else {
                // The supervisor has put the runner down; the next candidate gets a fresh one.
                if (a.json)
                    std::cerr << "kforge: " << label << ": " << result.error().message() << '\n';
                report = errorReport(bench, task, taskHash, candidate, *hello, result.error(), startedAt, msSince(started));
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
        if (stringField(report, "verdict") != (bench ? "ok" : "pass"))
            allOk = false;
        if (!a.json) {
            if (i > 0)
                std::cout << '\n';
            if (bench)
                printBenchReport(std::cout, report, withSet);
            else
                printVerifyReport(std::cout, report, withSet);
            std::cout.flush();
        }
        reports.push_back(std::move(report));
      }
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
    return allOk ? kExitOk : kExitFailed;
}

} // namespace kf::cli
