#include "engine/cast/CompileBaselineRun.h"

#include "engine/cast/CastExport.h"
#include "engine/compile/Compiler.h"
#include "engine/compile/TaskCompile.h"
#include "engine/core/Files.h"
#include "engine/core/InstallLayout.h"
#include "engine/core/TempFolder.h"
#include "engine/core/Process.h"
#include "engine/protocol/CompileBaseline.h"
#include "engine/protocol/Report.h"
#include "engine/protocol/ReportJson.h"

#include <cstdlib>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kf::cast {

namespace {

using Json = nlohmann::json;

std::string lastLine(const std::string& text)
{
    std::string t = text;
    while (!t.empty() && (t.back() == '\n' || t.back() == '\r'))
        t.pop_back();
    const auto nl = t.rfind('\n');
    return nl == std::string::npos ? t : t.substr(nl + 1);
}

} // namespace

std::string baselinePython(const CompileBaselineOptions& options)
{
    if (!options.python.empty())
        return options.python;
    for (const char* var : {"KF_BASELINE_PYTHON", "KF_CAST_PYTHON"})
        if (const char* v = std::getenv(var); v && *v)
            return v;
    return "python3";
}

namespace {

void runHarness(Json& report, const Task& original, const fs::path& taskFile, const Candidate& candidate,
                const std::string& arch, const CompileBaselineOptions& options, std::string* log)
{
    auto notMeasured = [&](const std::string& why) { protocol::markCompileNotMeasured(report, why); };
    const Json* verdict = report.is_object() && report.contains("verdict") ? &report["verdict"] : nullptr;
    if (!verdict || !verdict->is_string() || verdict->get<std::string>() != "ok")
        return notMeasured("the benchmark did not finish (verdict " +
                           (verdict ? (verdict->is_string() ? verdict->get<std::string>() : verdict->dump()) : std::string("none")) +
                           "), so there is nothing to compare with");
    // The candidate's cubin for the GPU the runner used, built as the runner built it.
    Task task = original;
    for (const std::string& o : options.extraNvrtcOptions)
        task.compile.extraOptions.push_back(o);
    auto request = compileRequestFor(task, candidate, arch);
    if (!request)
        return notMeasured("the candidate cannot be compiled for " + arch + ": " + request.error().message());
    auto built = compile(request.value());
    if (!built || !built->success || built->cubin.empty())
        return notMeasured("the candidate does not compile for " + arch + (built ? "" : ": " + built.error().message()));

    Json shapes = Json::array();
    if (report.contains("shapes") && report["shapes"].is_array())
        for (const Json& s : report["shapes"]) {
            try {
                const protocol::ShapeId id = protocol::ShapeId::read(protocol::Fields(s, ""));
                shapes.push_back({{"label", id.text(true)}, {"dims", id.dimsJson()}});
            } catch (...) {
                // A shape the report cannot name is not sent; merge leaves it without "compile".
            }
        }
    if (shapes.empty())
        return notMeasured("the benchmark timed no shape");

    TempFolder tmp("kforge-compile-baseline-");
    if (tmp.path().empty())
        return notMeasured("cannot make a temporary folder for the harness");
    const fs::path cubin = tmp.path() / (arch + ".cubin");
    const fs::path specFile = tmp.path() / "spec.json";
    const fs::path resultFile = tmp.path() / "result.json";
    const protocol::BenchSettings& b = options.sampling;
    std::error_code ec;
    const Json spec = {
        {"task", fs::absolute(taskFile, ec).string()},
        {"shapes", shapes},
        {"modes", options.modes.empty() ? std::vector<std::string>{"default", "max-autotune-no-cudagraphs"} : options.modes},
        {"device", "cuda"},
        {"sampling", {{"warmup", b.warmup}, {"min_samples", b.minSamples}, {"max_samples", b.maxSamples},
                      {"target_spread", b.targetSpread}, {"time_cap_ms", b.timeCapMs}}},
        {"seed", options.seed},
        {"candidate", {{"op", candidateOpJson(task.name, task, candidate, built->loweredNames)},
                       {"arch", arch},
                       {"image", cubin.string()}}}};
    if (auto w = writeFileAtomic(cubin, built->cubin); !w)
        return notMeasured(w.error().message());
    if (auto w = writeFileAtomic(specFile, spec.dump(2, ' ', false, Json::error_handler_t::replace)); !w)
        return notMeasured(w.error().message());

    // PYTHONSAFEPATH and the private folder as the working directory: `python -m` must not
    // import a kernelforge_baseline planted in the folder kforge was started from (a task
    // folder is untrusted, docs/verification.md), only the harness on PYTHONPATH.
    std::vector<std::string> env = {"PYTHONSAFEPATH=1"};
    std::vector<std::string> pythonPath = options.pythonPath;
#if defined(KF_BASELINE_PYTHONPATH) && defined(KF_CAST_PYTHONPATH)
    if (pythonPath.empty())
        for (const auto& [installed, built] : {std::pair{"python/baseline", KF_BASELINE_PYTHONPATH},
                                               std::pair{"python/cast", KF_CAST_PYTHONPATH}})
            if (const fs::path p = installedPath(InstallDir::Data, installed, built); fs::exists(p, ec))
                pythonPath.push_back(p.string());
#endif
    if (!pythonPath.empty()) {
        std::string path;
        for (const std::string& p : pythonPath)
            path += (path.empty() ? "" : ":") + p;
        if (const char* old = std::getenv("PYTHONPATH"); old && *old)
            path += std::string(":") + old;
        env.push_back("PYTHONPATH=" + path);
    }
    const std::string python = baselinePython(options);
    auto ran = runProcess({python, "-m", "kernelforge_baseline", "bench", specFile.string(), "--out", resultFile.string()},
                          options.timeoutMs, env, options.stop, tmp.path().string());
    if (!ran && options.stop && options.stop())
        return notMeasured("cancelled before the harness finished");
    if (!ran) {
        const bool started = ran.error().why.find("did not finish") != std::string::npos;
        return notMeasured(started ? "the harness " + ran.error().why
                                   : "cannot start " + python + " (set $KF_BASELINE_PYTHON to a Python with torch and Triton): " +
                                         ran.error().message());
    }
    if (log)
        *log = ran->err;
    auto bytes = readFileBytes(resultFile);
    if (!bytes) {
        const std::string why = ran->exitCode < 0 ? "the harness was killed (a crash or the time limit)"
                                                  : "the harness wrote no result (exit " + std::to_string(ran->exitCode) + ")";
        const std::string tail = lastLine(ran->err);
        return notMeasured(why + (tail.empty() ? "" : ": " + tail.substr(0, 400)));
    }
    auto result = protocol::readHarnessResult(bytes.value(), "the harness's result");
    if (!result)
        return notMeasured(result.error().message());
    protocol::mergeCompileBaseline(report, result.value());
}

} // namespace

void addCompileBaseline(Json& report, const Task& task, const fs::path& taskFile, const Candidate& candidate,
                        const std::string& arch, const CompileBaselineOptions& options, std::string* log)
{
    // Never fails: a file system or JSON surprise is a reason, not an exception in the caller
    // (the workbench's run worker, kforge's report loop).
    try {
        runHarness(report, task, taskFile, candidate, arch, options, log);
    } catch (const std::exception& e) {
        if (report.is_object())
            protocol::markCompileNotMeasured(report, std::string("the comparison failed: ") + e.what());
    }
}

} // namespace kf::cast
