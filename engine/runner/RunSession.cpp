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
        return Error{"run on " + m_options.endpoint->describe(),
                     "the runner there is too old to be sent the task's files (its hello does not list \"stage\"), and the "
                     "endpoint does not share this machine's files (shared_fs is false)",
                     "install the kforge-runner of this KernelForge on that host, or mount the task folders there at the "
                     "same paths and set \"shared_fs\": true in runners.json (docs/runners.md)",
                     {}, {}};
    if (!m_hello.device) {
        // A GPU that other processes filled is there, just full: not "no GPU".
        if (m_hello.deviceErrorKind == kGpuOutOfMemory) {
            Error full{"run on the GPU", m_hello.deviceError,
                       "free GPU memory held by other processes, or wait for them; compiling works meanwhile", {}, {}};
            full.kind = kGpuOutOfMemory;
            return full;
        }
        return Error{"run on the GPU",
                     "no GPU: " + (m_hello.deviceError.empty() ? std::string("the runner found no CUDA device") : m_hello.deviceError),
                     "verify, benchmark and profile need a CUDA device; compiling and the static analysis work without one", {}, {}};
    }
    m_arch = m_options.archOverride.empty() ? m_hello.arch() : m_options.archOverride;
    if (m_arch.empty())
        return Error{"run on the GPU", "the runner did not report the GPU's compute capability", "name the architecture (--arch sm_XX)",
                     {}, {}};
    if (m_nvrtc.empty()) {
        auto v = nvrtcVersion();
        if (!v)
            return v.error();
        m_nvrtc = v.value();
    }
    return m_hello;
}

Result<RunSession::Outcome> RunSession::run(RunKind kind, const Task& task, const std::string& candidateFile,
                                            RunSettings settings, const EventFn& onEvent, const CancelToken* cancel,
                                            const std::optional<std::string>& source)
{
    Job one = [&](const Send& send) { return send(settings); };
    return runJob(kind, task, candidateFile, one, onEvent, cancel, source);
}

Result<RunSession::Outcome> RunSession::runJob(RunKind kind, const Task& original, const std::string& candidateFile,
                                               const Job& job, const EventFn& onEvent, const CancelToken* cancel,
                                               const std::optional<std::string>& source)
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
    Task task = original;
    // Extra NVRTC options become part of the task as sent, so the report's task hash says the
    // build differed from task.json: such a run is exploration, not evidence.
    for (const std::string& o : m_options.extraNvrtcOptions)
        task.compile.extraOptions.push_back(o);
    const Candidate* candidate = task.findCandidate(candidateFile);
    if (!candidate)
        return Error{"run " + candidateFile, "the task has no candidate " + candidateFile, "add it under \"candidates\" in task.json",
                     {}, {}};
    // With `source` given the file is never read: it may not exist (synthesis keeps its kernels in
    // memory and in its run folder until one is added to the task).
    auto req = source ? Result<CompileRequest>(compileRequestFor(task, *candidate, m_arch, *source))
                      : compileRequestFor(task, *candidate, m_arch);
    if (!req)
        return req.error();
    req->wantSass = false;

    Outcome out;
    say("compiling for " + m_arch);
    const auto compileStart = std::chrono::steady_clock::now();
    auto built = compile(req.value(), m_cache.get(), cancel);
    out.compileMs = msSince(compileStart);
    if (!built) {
        out.cancelled = cancel && cancel->cancelled();
        return out.cancelled ? Error{"compile " + candidateFile, "cancelled", "", {}, {}} : built.error();
    }
    out.compiled = built.value();
    const CompileResult& r = out.compiled;
    const protocol::CandidateRef ref = candidateRef(*candidate, req.value(), r);

    // The task hash is of the task as the settings leave it (a tolerance override shows there).
    std::string taskHash = taskPayload(task).hash;
    auto finishWithError = [&](Error e) -> Result<Outcome> {
        auto report = protocol::RunReport::fromJson(errorReport(kind, task, taskHash, ref, m_hello, e, startedAt, msSince(started)));
        if (!report)
            return report.error();
        out.report = std::move(report.value());
        out.failure = std::move(e);
        return out;
    };
    if (!r.success || r.cubin.empty())
        return finishWithError(Error{"compile " + candidateFile + " for " + m_arch,
                                     r.success ? "NVRTC produced no cubin for " + m_arch
                                               : "the candidate does not compile: " + std::to_string(r.errorCount()) + " error(s)",
                                     r.success ? "" : "fix the errors the compiler reported (`kforge compile` lists them)",
                                     req->fileName, {}});

    std::optional<Error> runFailure;
    std::optional<std::vector<StageFile>> taskFiles;   // hashed once for every request of this job
    const Send send = [&](const RunSettings& given) -> Result<protocol::RunReport> {
        RunSettings s = given;
        // compute-sanitizer where the runner's host has it (its hello names the tool).
        if (kind == RunKind::Verify && s.sanitizeIfAvailable && s.sanitizeTools.empty() && m_hello.sanitizer &&
            m_hello.has("sanitize"))
            s.sanitizeTools = protocol::SanitizeSettings::allTools();
        Task resolved = task;
        if (auto ok = resolveSettings(kind, resolved, s); !ok)
            return ok.error();
        const TaskPayload payload = taskPayload(resolved);
        taskHash = payload.hash;
        protocol::RunRequest request = buildRunRequest(kind, payload, *candidate, req.value(), r, m_nvrtc, s);
        if (m_options.endpoint)
            request.endpoint = m_options.endpoint->name;
        request.attempt = s.attempt;
        // The runner elsewhere gets the task's files by content; before every request, since a
        // runner restarted since the last one may have an empty cache (a warm one receives nothing).
        const protocol::RunRequest unstaged = request;
        auto stageFiles = [&]() -> Result<void> {
            if (!stagesFiles())
                return {};
            if (!taskFiles) {
                auto files = taskFilesFor(resolved);
                if (!files)
                    return files.error();
                taskFiles = std::move(files.value());
            }
            request = unstaged;
            auto staged = stageWith(request, *taskFiles, cancel);
            if (!staged)
                return staged.error();
            return {};
        };
        if (auto staged = stageFiles(); !staged)
            return staged.error();
        if (std::string missing = request.missingFeature(m_hello.features); !missing.empty())
            return Error{"run " + candidateFile, "this kforge-runner is too old for the options given (it lacks \"" + missing + "\")",
                         "rebuild it with this KernelForge", {}, {}};
        // A streamed dump is written here, with the checks a local dump has.
        std::optional<DumpReceiver> receiver;
        auto exchange = [&]() {
            RunnerSupervisor::FileSink sink;
            receiver.reset();
            if (request.dump && request.dump->stream) {
                receiver.emplace(request.dump->dir, request.dump->maxBytes);
                sink = [&](const protocol::FileChunk& c) { return receiver->accept(c); };
            }
            return m_runner->request(request, onEvent, cancel, sink);
        };
        auto report = exchange();
        if (!report && report.error().kind == protocol::kNotStaged && stagesFiles()) {
            // The runner lost a file between staging and the request (a restart on another node,
            // a cache cleared meanwhile): stage again, once.
            if (auto staged = stageFiles(); !staged)
                return staged.error();
            report = exchange();
        }
        if (!report) {
            runFailure = report.error();
            out.runnerRestarted = true; // every supervisor failure puts the runner down
            return report.error();
        }
        if (receiver)
            if (auto whole = receiver->finish(); !whole)
                return whole.error();
        return protocol::RunReport::fromJson(report.value(), "the runner's report");
    };
    const auto runnerStart = std::chrono::steady_clock::now();
    auto result = job(send);
    out.runnerMs = msSince(runnerStart);
    if (result) {
        out.report = std::move(result.value());
        return out;
    }
    if (cancel && cancel->cancelled()) {
        out.cancelled = true;
        return finishWithError(Error{"run " + candidateFile, "cancelled", "", {}, {}});
    }
    return finishWithError(result.error());
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
