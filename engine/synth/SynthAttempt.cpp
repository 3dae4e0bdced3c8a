// One model reply in a synthesis run: the codegen prompt it answers, then its blocks, plan,
// NVRTC for every architecture, verify, bench and profile (engine/synth/SynthRun.h).
#include "engine/synth/SynthRun.h"
#include "engine/protocol/Verdict.h"

namespace kf::synth::detail {

std::string Run::codegenPrompt()
{
    agent::PromptOptions options;
    options.candidateName = "kernel.cu";
    options.taskPath = m_r.taskDir.string();
    if (m_r.skills == "none")
        options.skills.mode = agent::SkillRequest::Mode::None;
    else if (m_r.skills != "auto" && !m_r.skills.empty()) {
        options.skills.mode = agent::SkillRequest::Mode::Named;
        size_t pos = 0;
        while (pos <= m_r.skills.size()) {
            size_t comma = m_r.skills.find(',', pos);
            std::string name = m_r.skills.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
            if (!name.empty())
                options.skills.names.push_back(name);
            if (comma == std::string::npos)
                break;
            pos = comma + 1;
        }
    }
    options.skillDirs = m_r.skillDirs;
    std::string text;
    auto facts = agent::gatherPromptFacts(*m_task, options);
    if (facts && facts->registry)
        m_threshold = facts->registry->threshold;   // the registry's promotion threshold ends the performance stage
    if (facts) {
        auto prompt = agent::renderPrompt(*m_task, *facts, options);
        if (prompt) {
            text = prompt->markdown();
            json skills = json::array();
            for (const agent::PromptSkill& s : prompt->skills)
                skills.push_back(s.name);
            m_trace["skills"] = skills;
        } else {
            note(Stage::Codegen, "the prompt's skills: " + prompt.error().message() + "; continuing without them");
        }
    }
    if (text.empty())
        text = "Write a CUDA kernel for this task:\n\n```json\n" + m_spec.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n```\n";
    text += "\n## How to reply\n\n" + agent::agentProse("synth-reply") + "\n";
    if (m_r.request.size())
        text += "\nThe user's request, for context: " + m_r.request + "\n";
    if (m_r.offerGenerated) {
        auto steps = gen::opReferenceSteps(*m_task);
        if (steps) {
            auto generated = gen::generateCandidate(*m_task, *steps);
            if (generated) {
                ojson plan = generated->candidate;
                plan.erase("file");
                text += "\n## A starting point\n\nKernelForge's generator fused the reference into this kernel ("
                        + generated->summary + "). It has not been verified on a GPU. Improve on it or write your own.\n\n"
                                               "```cuda\n"
                        + generated->source + "```\n\n```json\n" + plan.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n```\n";
                m_trace["starting_point"] = generated->summary;
            }
        }
    }
    return text;
}

namespace {

/// `a` as an attempt that did not get through: `feedback` for the model (introduced by the
/// prose `key`) and `line` for the trace.
Attempt failedAttempt(Attempt& a, json& trace, std::string key, std::string feedback, std::string line)
{
    a.feedbackKey = std::move(key);
    a.feedback = std::move(feedback);
    a.line = std::move(line);
    trace["result"] = a.line;
    return a;
}

/// The kernel written into the task folder while the runner reads it, removed afterwards.
struct Placed {
    fs::path file;
    Placed() = default;
    Placed(const Placed&) = delete;
    Placed& operator=(const Placed&) = delete;
    ~Placed()
    {
        std::error_code ec;
        if (!file.empty())
            fs::remove(file, ec);
    }
};

} // namespace

Attempt Run::tryKernel(Stage stage, const std::string& reply, int step, json& trace, std::optional<Stop>& stop)
{
    Attempt a;
    const std::string prefix = twoDigits(step) + "-" + stageName(stage);
    a.file = "synth-" + m_runId + "-" + twoDigits(step) + ".cu";
    a.tier = m_tier;
    a.stage = stage;
    if (stage == Stage::Performance) {
        // "DONE:" with no blocks: the model believes the kernel is at the limit.
        if (fencedBlocks(reply).empty() && reply.find("DONE:") != std::string::npos) {
            a.done = true;
            trace["result"] = "the model says the kernel is at the limit";
            return a;
        }
    }
    std::optional<Task> task = planKernel(reply, prefix, a, trace);
    if (task && compileKernel(*task, prefix, a, trace, stop))
        runKernel(stage, *task, prefix, a, trace, stop);
    return a;
}

std::optional<Task> Run::planKernel(const std::string& reply, const std::string& prefix, Attempt& a, json& trace)
{
    auto fail = [&](std::string key, std::string feedback, std::string line) -> std::optional<Task> {
        failedAttempt(a, trace, std::move(key), std::move(feedback), std::move(line));
        return std::nullopt;
    };
    auto parts = kernelReply(reply);
    if (!parts)
        return fail("synth-plan-failed", parts.error().why, parts.error().why);
    a.source = parts->source;
    write(prefix + ".cu", a.source);
    trace["candidate"] = prefix + ".cu";
    if (auto problem = sourceProblem(a.source, a.file))
        return fail("synth-plan-failed", "the kernel file is unusable: " + problem->message, problem->message);

    // The plan: the ```json block, or a fence in the source's first comment.
    Result<ojson> plan = Error{};
    if (!parts->planJson.empty()) {
        plan = agent::parsePlanJson(parts->planJson, "your ```json block", 1);
    } else {
        auto fence = agent::fencedPlan(a.source, a.file);
        if (!fence)
            return fail("synth-plan-failed", fence.error().why, fence.error().why);
        if (!*fence)
            return fail("synth-plan-failed", "the reply has no launch plan: send it in one ```json block", "no launch plan");
        plan = agent::parsePlanJson((*fence)->json, a.file, (*fence)->line, (*fence)->offsets);
    }
    if (!plan)
        return fail("synth-plan-failed", "the launch plan is not valid JSON: " + plan.error().message(), "invalid plan JSON");
    if (!plan->is_object())
        return fail("synth-plan-failed", "the launch plan must be a JSON object with \"launches\"", "the plan is not an object");
    write(prefix + "-plan.json", plan->dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    trace["plan"] = prefix + "-plan.json";

    ojson entry = candidateEntry(a.file, *plan);
    if (!entry.contains("description") || !entry["description"].is_string())
        entry["description"] = "synthesized";
    json whole = m_spec;
    whole["candidates"] = json::array({json::parse(entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))});
    auto task = parseTask(whole, "the launch plan", {});
    if (!task) {
        Error e = task.error();
        std::string where = e.pointer.rfind("/candidates/0", 0) == 0 ? e.pointer.substr(13) : e.pointer;
        const std::string why = "the launch plan" + (where.empty() ? std::string() : " at " + where) + ": " + e.why
                                + (e.hint.empty() ? std::string() : " (" + e.hint + ")");
        return fail("synth-plan-failed", why, why);
    }
    task->directory = m_task->directory;
    a.entry = entry;
    return std::move(task.value());
}

bool Run::compileKernel(const Task& task, const std::string& prefix, Attempt& a, json& trace, std::optional<Stop>& stop)
{
    const Candidate* candidate = task.findCandidate(a.file);
    // NVRTC, for every architecture of the task.
    auto built = compileForEveryArchitecture(task, *candidate, a.source, a.file, "the launch plan", &m_cancel);
    if (!built) {
        stop = m_cancel.cancelled() ? Stop{"cancelled", "cancelled by the user"}
                                    : Stop{"error", "NVRTC could not run: " + built.error().message()};
        return false;
    }
    json compiled = json::array();
    for (size_t i = 0; i < built->results.size(); ++i) {
        const CompileResult& result = built->results[i];
        compiled.push_back(json{{"arch", task.architectures[i]}, {"success", result.success}, {"errors", result.errorCount()},
                                {"warnings", result.warningCount()}, {"ms", result.compileMs}});
    }
    const std::vector<Diagnostic>& diagnostics = built->diagnostics;
    const bool ok = built->success;
    const std::string diagText = compileFeedback(diagnostics, "kernel.cu");
    write(prefix + "-compile.json", json{{"architectures", compiled}, {"diagnostics", diagText}}.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    trace["compile"] = ok ? "ok" : "failed";
    if (!ok) {
        failedAttempt(a, trace, "synth-compile-failed", diagText, "did not compile: " + diagText.substr(0, diagText.find('\n')));
        return false;
    }
    a.compiled = true;
    ++m_totals.candidates;
    return true;
}

void Run::runKernel(Stage stage, const Task& task, const std::string& prefix, Attempt& a, json& trace, std::optional<Stop>& stop)
{
    // The runner: verify with held-out shapes over every shape set, then bench. The runner reads
    // the task as a task folder, so the kernel sits in it while it runs (under a name no candidate
    // has) and is removed afterwards; its copy stays in the run folder.
    if (!m_h.run) {
        stop = Stop{"error", "no runner is connected"};
        return;
    }
    Placed placed;
    {
        std::error_code ec;
        const fs::path target = m_task->directory / a.file;
        if (fs::exists(target, ec)) {
            stop = Stop{"error", target.string() + " exists already: remove it and run again"};
            return;
        }
        if (auto w = writeFileAtomic(target, a.source); !w) {
            stop = Stop{"error", w.error().message()};
            return;
        }
        placed.file = target;
    }
    RunSettings vs;
    vs.shapes = "all";
    vs.heldOutCount = m_r.heldOut;
    const auto t0 = std::chrono::steady_clock::now();
    auto verified = m_h.run(RunKind::Verify, task, a.file, a.source, vs, m_cancel);
    trace["run_seconds"] = msSince(t0) / 1000.0;
    if (!verified) {
        stop = Stop{m_cancel.cancelled() ? "cancelled" : "error", verified.error().message()};
        return;
    }
    write(prefix + "-verify.json", verified->document().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    trace["verify"] = protocol::verdictName(verified->header().verdict);
    trace["verify_report"] = prefix + "-verify.json";
    if (m_cancel.cancelled()) {
        stop = Stop{"cancelled", "cancelled by the user"};
        return;
    }
    if (!verified->header().passed()) {
        failedAttempt(a, trace, "synth-verify-failed", verifyFeedback(*verified), reportLine(*verified));
        return;
    }
    a.verified = true;
    if (!benchKernel(task, prefix, a, trace, stop))
        return;
    // Counters, where the GPU allows them: the profiler's hints go back with the benchmark. A
    // profile that cannot run (no counter permission, an old runner) is only noted.
    if (m_r.profile && stage != Stage::Polish)
        profileKernel(task, prefix, a, trace);
}

bool Run::benchKernel(const Task& task, const std::string& prefix, Attempt& a, json& trace, std::optional<Stop>& stop)
{
    const auto t1 = std::chrono::steady_clock::now();
    auto benched = m_h.run(RunKind::Bench, task, a.file, a.source, RunSettings{}, m_cancel);
    trace["run_seconds"] = trace["run_seconds"].get<double>() + msSince(t1) / 1000.0;
    if (!benched) {
        stop = Stop{m_cancel.cancelled() ? "cancelled" : "error", benched.error().message()};
        return false;
    }
    write(prefix + "-bench.json", benched->document().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    trace["bench_report"] = prefix + "-bench.json";
    a.feedback = benchFeedback(*benched);
    if (benched->bench() && benched->bench()->geomeanSpeedup) {
        a.benched = true;
        a.speedup = benched->bench()->geomeanSpeedup;
        a.compileSpeedup = benched->bench()->compileSpeedup();
        trace["speedup"] = *a.speedup;
    } else {
        // Correct but not measured (the benchmark crashed or timed out): it cannot be the kernel
        // that is added, since nothing says it is fast.
        trace["bench"] = reportLine(*benched);
        a.verified = false;
        failedAttempt(a, trace, "synth-verify-failed", "The kernel passed verification, but the benchmark failed:\n" + a.feedback,
                      "correct, but the benchmark failed: " + reportLine(*benched));
        return false;
    }
    a.line = "correct; " + reportLine(*benched);
    trace["result"] = a.line;
    return true;
}

void Run::profileKernel(const Task& task, const std::string& prefix, Attempt& a, json& trace)
{
    RunSettings ps;
    ps.profileBaseline = false;   // the candidate's counters are what the hints need
    auto profiled = m_h.run(RunKind::Profile, task, a.file, a.source, ps, m_cancel);
    if (profiled && profiled->profile()) {
        write(prefix + "-profile.json", profiled->document().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
        trace["profile_report"] = prefix + "-profile.json";
        const std::vector<profile::Hint> hints = profile::hintsFor(*profiled->profile());
        if (!hints.empty()) {
            a.feedback += "\nThe profiler's hints (from hardware counters of one benchmark shape):\n";
            for (size_t i = 0; i < hints.size() && i < 5; ++i)
                a.feedback += "- " + hints[i].title + ": " + hints[i].evidence
                              + (hints[i].suggestion.empty() ? std::string() : ". " + hints[i].suggestion) + "\n";
        }
        trace["profile"] = protocol::verdictName(profiled->header().verdict);
    } else {
        trace["profile"] = profiled ? reportLine(*profiled) : profiled.error().message();
    }
}

// Codegen and correctness share one loop: a reply must compile (codegen) and then pass (correctness).

} // namespace kf::synth::detail
