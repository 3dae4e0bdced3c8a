#include "engine/runner/RunSession.h"

#include "engine/compile/CompileCache.h"
#include "engine/compile/Compiler.h"
#include "engine/compile/TaskCompile.h"
#include "engine/core/Clock.h"
#include "engine/runner/DumpReceiver.h"
#include "engine/task/TaskHash.h"

#include <chrono>

namespace kf {

RunSession::RunSession() : RunSession(Options{}) {}

RunSession::RunSession(Options options) : m_options(std::move(options))
{
    RunnerSupervisor::Options o;
    if (m_options.endpoint)
        o = RunnerSupervisor::forEndpoint(*m_options.endpoint, m_options.runnerPath);
    else
        o.runnerPath = m_options.runnerPath;
    o.extraEnv.insert(o.extraEnv.end(), m_options.extraEnv.begin(), m_options.extraEnv.end());
    o.onStartLog = m_options.onStartLog;
    m_runner = std::make_unique<RunnerSupervisor>(o);
    m_cache = std::make_unique<CompileCache>(m_options.cacheDir.empty() ? CompileCache::defaultDirectory() : m_options.cacheDir);
}

RunSession::~RunSession() = default;

Result<protocol::Hello> RunSession::start()
{
    auto hello = m_runner->hello();
    if (!hello)
        return hello.error();
    m_hello = hello.value();
    // An endpoint that does not share this machine's files needs a runner that takes them.
    if (stagesFiles() && !m_hello.has("stage"))
        return Error::failed("run on " + m_options.endpoint->describe(), "the runner there is too old to be sent the task's files (its hello does not list \"stage\"), and the "
                     "endpoint does not share this machine's files (shared_fs is false)", "install the kforge-runner of this KernelForge on that host, or mount the task folders there at the "
                     "same paths and set \"shared_fs\": true in runners.json (docs/runners.md)");
    if (!m_hello.device) {
        // A GPU that other processes filled is there, just full: not "no GPU".
        if (m_hello.deviceErrorKind == kGpuOutOfMemory) {
            Error full = Error::failed("run on the GPU", m_hello.deviceError, "free GPU memory held by other processes, or wait for them; compiling works meanwhile");
            full.kind = kGpuOutOfMemory;
            return full;
        }
        return Error::failed("run on the GPU", "no GPU: " + (m_hello.deviceError.empty() ? std::string("the runner found no CUDA device") : m_hello.deviceError), "verify, benchmark and profile need a CUDA device; compiling and the static analysis work without one");
    }
    m_arch = m_options.archOverride.empty() ? m_hello.arch() : m_options.archOverride;
    if (m_arch.empty())
        return Error::failed("run on the GPU", "the runner did not report the GPU's compute capability", "name the architecture (--arch sm_XX)");
    if (m_nvrtc.empty()) {
        auto v = nvrtcVersion();
        if (!v)
            return v.error();
        m_nvrtc = v.value();
    }
    return m_hello;
}

// What every request of one run shares: the task as sent, the candidate, its build.
struct RunSession::Built {
    RunKind kind;
    Task task;
    const Candidate* candidate = nullptr;
    CompileRequest request;
    std::string taskHash;
    std::optional<std::vector<StageFile>> taskFiles;   // hashed once for every request of the run
};

Result<RunSession::Outcome> RunSession::run(const Task& original, const Plan& plan, const EventFn& onEvent,
                                            const CancelToken* cancel)
{
    const auto started = std::chrono::steady_clock::now();
    const std::string startedAt = utcNow();
    auto say = [&](const std::string& stage) {
        if (onEvent)
            onEvent(protocol::Event::progress(0, 0, stage));
    };
    say("starting the GPU runner");
    if (auto s = start(); !s)
        return s.error();
    Built b{plan.kind, original, nullptr, {}, {}, {}};
    // Extra NVRTC options become part of the task as sent, so the report's task hash says the
    // build differed from task.json: such a run is exploration, not evidence.
    for (const std::string& o : plan.settings.extraNvrtcOptions)
        b.task.compile.extraOptions.push_back(o);
    b.candidate = b.task.findCandidate(plan.candidateFile);
    if (!b.candidate)
        return Error::failed("run " + plan.candidateFile, "the task has no candidate " + plan.candidateFile, "add it under \"candidates\" in task.json");
    // With a `source` the file is never read: it may not exist (synthesis keeps its kernels in
    // memory and in its run folder until one is added to the task).
    auto req = plan.source ? Result<CompileRequest>(compileRequestFor(b.task, *b.candidate, m_arch, *plan.source))
                           : compileRequestFor(b.task, *b.candidate, m_arch);
    if (!req)
        return req.error();
    b.request = std::move(req.value());
    b.request.wantSass = false;

    Outcome out;
    say("compiling for " + m_arch);
    const auto compileStart = std::chrono::steady_clock::now();
    auto compiled = compile(b.request, m_cache.get(), cancel);
    out.compileMs = msSince(compileStart);
    if (!compiled) {
        out.cancelled = cancel && cancel->cancelled();
        return out.cancelled ? Error::failed("compile " + plan.candidateFile, "cancelled") : compiled.error();
    }
    out.compiled = std::move(compiled.value());
    const CompileResult& r = out.compiled;
    // The task hash is of the task as the settings leave it (a tolerance override shows there).
    b.taskHash = taskPayload(b.task).hash;
    auto finishWithError = [&](Error e) {
        out.report = errorReport(plan.kind, b.task, b.taskHash, candidateRef(*b.candidate, b.request, r), m_hello, e, startedAt,
                                 msSince(started));
        out.failure = std::move(e);
        return out;
    };
    if (!r.success || r.cubin.empty())
        return finishWithError(Error::inFile(b.request.fileName, {}, "compile " + plan.candidateFile + " for " + m_arch, r.success ? "NVRTC produced no cubin for " + m_arch
                                               : "the candidate does not compile: " + std::to_string(r.errorCount()) + " error(s)", r.success ? "" : "fix the errors the compiler reported (`kforge compile` lists them)"));

    const Send send = [&](const RunSettings& given) { return this->send(b, given, onEvent, cancel, out); };
    const auto runnerStart = std::chrono::steady_clock::now();
    auto result = plan.job ? plan.job(send) : send(plan.settings);
    out.runnerMs = msSince(runnerStart);
    if (result) {
        out.report = std::move(result.value());
        return out;
    }
    if (cancel && cancel->cancelled()) {
        out.cancelled = true;
        return finishWithError(Error::failed("run " + plan.candidateFile, "cancelled"));
    }
    return finishWithError(result.error());
}

Result<protocol::RunReport> RunSession::send(Built& b, const RunSettings& given, const EventFn& onEvent,
                                             const CancelToken* cancel, Outcome& out)
{
    RunSettings s = given;
    // compute-sanitizer where the runner's host has it (its hello names the tool).
    if (b.kind == RunKind::Verify && s.sanitizeIfAvailable && s.sanitizeTools.empty() && m_hello.sanitizer &&
        m_hello.has("sanitize"))
        s.sanitizeTools = protocol::SanitizeSettings::allTools();
    Task resolved = b.task;
    if (auto ok = resolveSettings(b.kind, resolved, s); !ok)
        return ok.error();
    const TaskPayload payload = taskPayload(resolved);
    b.taskHash = payload.hash;
    protocol::RunRequest request = buildRunRequest(b.kind, payload, *b.candidate, b.request, out.compiled, m_nvrtc, s);
    if (m_options.endpoint)
        request.endpoint = m_options.endpoint->name;
    request.attempt = s.attempt;
    if (stagesFiles() && !b.taskFiles) {
        auto files = taskFilesFor(resolved);
        if (!files)
            return files.error();
        b.taskFiles = std::move(files.value());
    }
    return exchange(request, b, onEvent, cancel, out);
}

Result<protocol::RunReport> RunSession::exchange(const protocol::RunRequest& unstaged, const Built& b, const EventFn& onEvent,
                                                 const CancelToken* cancel, Outcome& out)
{
    protocol::RunRequest request = unstaged;
    // The runner elsewhere gets the task's files by content; before every request, since a
    // runner restarted since the last one may have an empty cache (a warm one receives nothing).
    auto stageFiles = [&]() -> Result<void> {
        if (!stagesFiles())
            return {};
        request = unstaged;
        auto staged = stageWith(request, *b.taskFiles, cancel);
        if (!staged)
            return staged.error();
        return {};
    };
    if (auto staged = stageFiles(); !staged)
        return staged.error();
    if (std::string missing = request.missingFeature(m_hello.features); !missing.empty())
        return Error::failed("run " + b.candidate->file, "this kforge-runner is too old for the options given (it lacks \"" + missing + "\")", "rebuild it with this KernelForge");
    // A streamed dump is written here, with the checks a local dump has.
    std::optional<DumpReceiver> receiver;
    auto once = [&]() {
        RunnerSupervisor::FileSink sink;
        receiver.reset();
        if (request.dump && request.dump->stream) {
            receiver.emplace(request.dump->dir, request.dump->maxBytes);
            sink = [&](const protocol::FileChunk& c) { return receiver->accept(c); };
        }
        return m_runner->request(request, onEvent, cancel, sink);
    };
    auto report = once();
    if (!report && report.error().kind == protocol::kNotStaged && stagesFiles()) {
        // The runner lost a file between staging and the request (a restart on another node,
        // a cache cleared meanwhile): stage again, once.
        if (auto staged = stageFiles(); !staged)
            return staged.error();
        report = once();
    }
    if (!report) {
        out.runnerRestarted = true; // every supervisor failure puts the runner down
        return report.error();
    }
    if (receiver)
        if (auto whole = receiver->finish(); !whole)
            return whole.error();
    return protocol::RunReport::fromJson(report.value(), "the runner's report");
}

Result<StageStats> RunSession::stageRequest(protocol::RunRequest& request, const Task& task, const CancelToken* cancel)
{
    auto files = taskFilesFor(task);
    if (!files)
        return files.error();
    return stageWith(request, files.value(), cancel);
}

Result<StageStats> RunSession::stageWith(protocol::RunRequest& request, const std::vector<StageFile>& taskFiles,
                                         const CancelToken* cancel)
{
    std::vector<StageFile> all = taskFiles;
    std::vector<StageFile> inputs;
    if (!request.inputsDir.empty()) {
        auto in = folderFilesFor(request.inputsDir);
        if (!in)
            return in.error();
        inputs = std::move(in.value());
        all.insert(all.end(), inputs.begin(), inputs.end());
    }
    auto stats = stage(*m_runner, all, cancel);
    if (!stats)
        return stats.error();
    request.taskFiles = fileMap(taskFiles);
    request.taskDir.clear();
    if (!request.inputsDir.empty()) {
        request.inputsFiles = fileMap(inputs);
        request.inputsDir.clear();
    }
    if (request.dump)
        request.dump->stream = true;
    m_lastStage = stats.value();
    return stats;
}

} // namespace kf
