#include "RunnerSession.h"

#include "ExitCodes.h"
#include "Interrupt.h"
#include "engine/compile/Diagnostic.h"

#include <cstdio>
#include <iostream>

namespace kf::cli {

namespace {

RunPipeline::Options sessionOptions(const std::string& runnerPath, const std::string& archOverride,
                                   const std::optional<Endpoint>& endpoint)
{
    RunPipeline::Options o;
    o.runnerPath = runnerPath;
    o.archOverride = archOverride;
    o.endpoint = endpoint;
    if (endpoint && endpoint->remote()) {
        // What a slow start waits for ("srun: job 42 queued and waiting for resources").
        const std::string name = endpoint->name;
        o.onStartLog = [name](const std::string& line) { std::cerr << "kforge: " << name << ": " << line << '\n'; };
    }
    return o;
}

} // namespace

// Ctrl-C cancels the run through the supervisor, which kills the runner's process group: a
// runner left spinning on the GPU after we exit would hold the device for nobody.
struct RunnerSession::Guard {
    explicit Guard(CancelToken& token) : interrupt(&token) {}
    InterruptGuard interrupt;
};

RunnerSession::RunnerSession(const std::string& runnerPath, const std::string& archOverride, const std::optional<Endpoint>& endpoint)
    : m_cancel(std::make_unique<CancelToken>()), m_guard(std::make_unique<Guard>(*m_cancel)),
      m_session(sessionOptions(runnerPath, archOverride, endpoint))
{
}

RunnerSession::~RunnerSession() = default;

bool RunnerSession::cancelled() const { return m_cancel->cancelled(); }

std::optional<int> RunnerSession::start()
{
    auto hello = m_session.start();
    if (cancelled()) { // Ctrl-C while the runner was starting: start-up cannot be interrupted
        std::cerr << "kforge: cancelled\n";
        return kExitInterrupted;
    }
    for (const std::string& w : m_session.session().supervisor().startWarnings())
        std::cerr << "kforge: warning: " << w << '\n';
    if (!hello)
        return fail(hello.error(), kExitEnvironment);
    return std::nullopt;
}

Result<RunOutcome> RunnerSession::run(const Task& task, const RunPlan& plan, const std::string& label)
{
    std::string stage = "starting";
    std::string launch;
    int permille = 0;
    auto onEvent = [&](const protocol::Event& e) {
        switch (e.kind) {
        case protocol::Event::Kind::Progress:
            stage = e.stage.empty() ? stage : e.stage;
            permille = e.permille;
            break;
        case protocol::Event::Kind::LaunchBegin: launch = e.label; break;
        case protocol::Event::Kind::LaunchEnd: launch.clear(); break;
        case protocol::Event::Kind::Log:
            m_progress.clear();
            std::cerr << label << ": " << protocol::levelName(e.level) << ": " << e.text << '\n';
            return;
        }
        char pct[16];
        std::snprintf(pct, sizeof pct, "%5.1f%%", permille / 10.0);
        m_progress.show(label + ": " + pct + " " + stage + (launch.empty() ? "" : " · " + launch));
    };
    m_progress.show(label + ": starting", true);
    auto outcome = m_session.run(task, plan, onEvent, m_cancel.get());
    m_progress.clear();
    if (outcome && outcome->failure && !outcome->compiled.success)
        for (const auto& d : outcome->compiled.diagnostics)
            std::cerr << formatDiagnostic(d);
    return outcome;
}

Result<protocol::RunReport> RunnerSession::verify(const Task& task, const Candidate& candidate, const RunSettings& settings,
                                                  const std::string& label, const std::optional<std::string>& source)
{
    auto outcome = run(task, RunPlan{RunKind::Verify, candidate.file, settings, source, {}}, label);
    if (!outcome)
        return outcome.error();
    if (outcome->failure)
        return *outcome->failure;
    return std::move(outcome->report);
}

} // namespace kf::cli
