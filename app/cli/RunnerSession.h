#pragma once
// One warm runner for a command: start it, learn the GPU's architecture and NVRTC's version,
// compile candidates for that GPU, send requests with a progress line on stderr. `kforge
// verify`, `bench`, `--repro` and `--shrink` share it, so all of them start, fail and cancel
// the same way. Ctrl-C cancels through the supervisor (the runner's process group dies).

#include "ProgressLine.h"
#include "engine/compile/CompileTypes.h"
#include "engine/core/Result.h"
#include "engine/runner/RunRequest.h"
#include "engine/runner/Supervisor.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>

namespace kf {
class CompileCache;
}

namespace kf::cli {

class RunnerSession {
public:
    explicit RunnerSession(const std::string& runnerPath);
    ~RunnerSession();
    RunnerSession(const RunnerSession&) = delete;
    RunnerSession& operator=(const RunnerSession&) = delete;

    /// Starts the runner and checks it has a GPU. On failure prints why on stderr and returns
    /// the exit code to end with. `archOverride` replaces the GPU's architecture when set.
    std::optional<int> start(const std::string& archOverride = {});

    const nlohmann::json& hello() const { return m_hello; }
    const std::string& arch() const { return m_arch; }
    const std::string& nvrtc() const { return m_nvrtc; }
    CancelToken& cancel() { return *m_cancel; }
    bool cancelled() const;

    /// Compiles `req` for the session's architecture through the compile cache.
    Result<CompileResult> compile(CompileRequest& req);
    /// Sends `request`, drawing "label: 42.0% stage · launch" on stderr while it runs.
    Result<nlohmann::json> request(nlohmann::json request, const std::string& label);

    /// Compiles `candidate` of `task` (from `source` when given, else its file) and verifies
    /// it with `settings`. A compile failure is an Error whose why counts the errors; the
    /// diagnostics are printed on stderr.
    Result<nlohmann::json> verify(const Task& task, const Candidate& candidate, const RunSettings& settings,
                                  const std::string& label, const std::optional<std::string>& source = std::nullopt);

    ProgressLine& progress() { return m_progress; }

private:
    struct Guard;
    std::unique_ptr<CancelToken> m_cancel;
    std::unique_ptr<Guard> m_guard;
    std::unique_ptr<RunnerSupervisor> m_runner;
    std::unique_ptr<CompileCache> m_cache;
    ProgressLine m_progress;
    nlohmann::json m_hello;
    std::string m_arch;
    std::string m_nvrtc;
};

/// The process exit code for an interrupted command (the shell's convention for SIGINT).
inline constexpr int kExitInterrupted = 130;

} // namespace kf::cli
