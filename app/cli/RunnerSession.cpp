#include "RunnerSession.h"

#include "ExitCodes.h"
#include "ReportText.h"
#include "engine/compile/CompileCache.h"
#include "engine/compile/Compiler.h"
#include "engine/compile/TaskCompile.h"
#include "engine/runner/RunRequest.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <regex>

using nlohmann::json;

namespace kf::cli {

namespace {

// Ctrl-C cancels the run through the supervisor, which kills the runner's process group: a
// runner left spinning on the GPU after we exit would hold the device for nobody.
std::atomic<CancelToken*> g_interruptToken{nullptr};

void onInterrupt(int)
{
    if (CancelToken* t = g_interruptToken.load())
        t->cancel();
}

} // namespace

struct RunnerSession::Guard {
    explicit Guard(CancelToken& token)
    {
        g_interruptToken.store(&token);
        struct sigaction sa {};
        sa.sa_handler = &onInterrupt;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART | SA_RESETHAND; // a second Ctrl-C ends us the hard way
        ::sigaction(SIGINT, &sa, &oldInt);
        ::sigaction(SIGTERM, &sa, &oldTerm);
    }
    ~Guard()
    {
        ::sigaction(SIGINT, &oldInt, nullptr);
        ::sigaction(SIGTERM, &oldTerm, nullptr);
        g_interruptToken.store(nullptr);
    }
    struct sigaction oldInt {};
    struct sigaction oldTerm {};
};

RunnerSession::RunnerSession(const std::string& runnerPath)
    : m_cancel(std::make_unique<CancelToken>()), m_guard(std::make_unique<Guard>(*m_cancel)),
      m_cache(std::make_unique<CompileCache>(CompileCache::defaultDirectory()))
{
    RunnerSupervisor::Options options;
    options.runnerPath = runnerPath;
    m_runner = std::make_unique<RunnerSupervisor>(options);
}

RunnerSession::~RunnerSession() = default;

bool RunnerSession::cancelled() const { return m_cancel->cancelled(); }

std::optional<int> RunnerSession::start(const std::string& archOverride)
{
    auto hello = m_runner->hello();
    if (!hello) {
        std::cerr << "kforge: " << hello.error().message() << '\n';
        return cancelled() ? kExitInterrupted : kExitEnvironment;
    }
    if (cancelled()) { // Ctrl-C while the runner was starting: start-up cannot be interrupted
        std::cerr << "kforge: cancelled\n";
        return kExitInterrupted;
    }
    m_hello = hello.value();
    if (!field(m_hello, "device").is_object()) {
        std::string why = stringField(m_hello, "device_error", "the runner found no CUDA device");
        std::cerr << "kforge: no GPU: " << why << "; verify and bench need a CUDA device (compile works without one)\n";
        return kExitEnvironment;
    }
    m_arch = archOverride.empty() ? archFromHello(m_hello) : archOverride;
    if (m_arch.empty()) {
        std::cerr << "kforge: the runner did not report the GPU's compute capability; pass --arch sm_XX\n";
        return kExitEnvironment;
    }
    auto nvrtc = nvrtcVersion();
    if (!nvrtc) {
        std::cerr << "kforge: " << nvrtc.error().message() << '\n';
        return kExitEnvironment;
    }
    m_nvrtc = nvrtc.value();
    return std::nullopt;
}

Result<CompileResult> RunnerSession::compile(CompileRequest& req)
{
    req.options.arch = m_arch;
    req.wantSass = false;
    return kf::compile(req, m_cache.get(), m_cancel.get());
}

Result<json> RunnerSession::request(json request, const std::string& label)
{
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
        m_progress.show(label + ": " + pct + " " + stage + (launch.empty() ? "" : " · " + launch));
    };
    m_progress.show(label + ": starting", true);
    auto result = m_runner->request(std::move(request), onEvent, m_cancel.get());
    m_progress.clear();
    return result;
}

Result<json> RunnerSession::verify(const Task& task, const Candidate& candidate, const RunSettings& settings,
                                   const std::string& label, const std::optional<std::string>& source)
{
    auto req = compileRequestFor(task, candidate, m_arch);
    if (!req)
        return req.error();
    if (source)
        req->source = *source;
    m_progress.show(label + ": compiling for " + m_arch, true);
    auto built = compile(req.value());
    m_progress.clear();
    if (!built)
        return built.error();
    if (!built->success || built->cubin.empty()) {
        for (const auto& d : built->diagnostics)
            std::cerr << formatDiagnostic(d);
        return Error{"compile " + candidate.file + " for " + m_arch,
                     "the candidate does not compile: " + std::to_string(built->errorCount()) + " error(s)",
                     "fix the errors printed above", req->fileName, {}};
    }
    json request = buildRunRequest(RunKind::Verify, taskPayload(task), candidate, req.value(), built.value(), m_nvrtc, settings);
    return this->request(std::move(request), label);
}

} // namespace kf::cli
