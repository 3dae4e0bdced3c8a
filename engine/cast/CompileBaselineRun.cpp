#include "engine/cast/CompileBaselineRun.h"

#include "engine/cast/CastExport.h"
#include "engine/cast/ReferenceSteps.h"
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

/// A TorchScript reference goes to the harness as the op tape the generator reads from it
/// (engine/cast/ScriptTape.h): torch.compile traces Python, and a scripted module runs under it
/// uncompiled. The tape, not the problem's own Python, so nothing imported runs beside the
/// GPU's harness (docs/decisions.md). A module the reader refuses is not measured, with why.
void addScriptTape(Json& spec, const Task& task)
{
    if (task.reference.kind != Reference::Kind::TorchScript)
        return;
    auto steps = referenceSteps(task);
    if (!steps) {
        spec["reference_tape_refused"] = steps.error().why;
        return;
    }
    Json tape = Json::array();
    for (const OpStep& s : steps->steps)
        tape.push_back({{"op", s.op}, {"inputs", s.inputs}, {"attrs", s.attrs}, {"output", s.output}});
    spec["reference_tape"] = std::move(tape);
}

/// What the harness is asked to time: the shapes the runner timed, the modes, the sampling, and
/// the candidate as a .cast op whose image is `cubin`.
Result<Json> harnessSpec(const protocol::RunReport& report, const Task& task, const fs::path& taskFile,
                         const Candidate& candidate, const CompileResult& built, const CompileBaselineOptions& options,
                         const fs::path& cubin)
{
    Json shapes = Json::array();
    for (const protocol::BenchShape& s : report.bench()->shapes)
        shapes.push_back({{"label", s.id.text(true)}, {"dims", s.id.dimsJson()}});
    if (shapes.empty())
        return Error::failed("time torch.compile", "the benchmark timed no shape");
    const protocol::BenchSettings& b = options.sampling;
    std::error_code ec;
    Json spec{
        {"task", fs::absolute(taskFile, ec).string()},
        {"shapes", shapes},
        {"modes", options.modes.empty() ? std::vector<std::string>{"default", "max-autotune-no-cudagraphs"} : options.modes},
        {"device", "cuda"},
        {"sampling", {{"warmup", b.warmup}, {"min_samples", b.minSamples}, {"max_samples", b.maxSamples},
                      {"target_spread", b.targetSpread}, {"time_cap_ms", b.timeCapMs}}},
        {"seed", options.seed},
        {"candidate", {{"op", candidateOpJson(task.name, task, candidate, built.loweredNames)},
                       {"arch", report.header().candidate.arch},
                       {"image", cubin.string()}}}};
    addScriptTape(spec, task);
    return spec;
}

/// The harness's environment: PYTHONSAFEPATH, and PYTHONPATH with the harness first.
std::vector<std::string> harnessEnvironment(const CompileBaselineOptions& options)
{
    // PYTHONSAFEPATH and the private folder as the working directory: `python -m` must not
    // import a kernelforge_baseline planted in the folder kforge was started from (a task
    // folder is untrusted, docs/verification.md), only the harness on PYTHONPATH.
    std::vector<std::string> env = {"PYTHONSAFEPATH=1"};
    std::vector<std::string> pythonPath = options.pythonPath;
#if defined(KF_BASELINE_PYTHONPATH) && defined(KF_CAST_PYTHONPATH)
    std::error_code ec;
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
    return env;
}

Error notMeasured(std::string why) { return Error::failed("time torch.compile", std::move(why)); }

Result<protocol::HarnessResult> runHarness(const protocol::RunReport& report, const Task& task, const fs::path& taskFile,
                                           const Candidate& candidate, const CompileResult& built,
                                           const CompileBaselineOptions& options, std::string* log)
{
    if (report.header().verdict != protocol::Verdict::Ok || !report.bench())
        return notMeasured(std::string("the benchmark did not finish (verdict ") + protocol::verdictName(report.header().verdict) +
                           "), so there is nothing to compare with");
    if (!built.success || built.cubin.empty())
        return notMeasured("the candidate has no cubin for " + report.header().candidate.arch);
    TempFolder tmp("kforge-compile-baseline-");
    if (tmp.path().empty())
        return notMeasured("cannot make a temporary folder for the harness");
    const fs::path cubin = tmp.path() / (report.header().candidate.arch + ".cubin");
    const fs::path specFile = tmp.path() / "spec.json";
    const fs::path resultFile = tmp.path() / "result.json";
    auto spec = harnessSpec(report, task, taskFile, candidate, built, options, cubin);
    if (!spec)
        return notMeasured(spec.error().why);
    if (auto w = writeFileAtomic(cubin, built.cubin); !w)
        return notMeasured(w.error().message());
    if (auto w = writeFileAtomic(specFile, spec->dump(2, ' ', false, Json::error_handler_t::replace)); !w)
        return notMeasured(w.error().message());

    const std::string python = baselinePython(options);
    auto ran = runProcess({python, "-m", "kernelforge_baseline", "bench", specFile.string(), "--out", resultFile.string()},
                          options.timeoutMs, harnessEnvironment(options), options.stop, tmp.path().string());
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
    return result;
}

} // namespace

Result<protocol::HarnessResult> measureCompileBaseline(const protocol::RunReport& report, const Task& task,
                                                       const fs::path& taskFile, const Candidate& candidate,
                                                       const CompileResult& built, const CompileBaselineOptions& options,
                                                       std::string* log)
{
    // A file system or JSON surprise is a reason, not an exception in the caller (the workbench's
    // run worker, kforge's report loop).
    try {
        return runHarness(report, task, taskFile, candidate, built, options, log);
    } catch (const std::exception& e) {
        return notMeasured(std::string("the comparison failed: ") + e.what());
    }
}

} // namespace kf::cast
