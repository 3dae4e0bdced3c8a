// The stages after the spec: codegen and correctness (one loop), performance and polish
// (engine/synth/SynthRun.h).
#include "engine/synth/SynthRun.h"

namespace kf::synth::detail {

namespace {

// The best kernel as the model would have sent it (its two blocks), for the next round's context.
std::string asReply(const Attempt& a)
{
    ojson plan = a.entry;
    plan.erase("file");
    return "```cuda\n" + a.source + "```\n\n```json\n" + plan.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n```\n";
}

} // namespace

std::optional<Stop> Run::endsTheRun(Stage stage, const Error& e)
{
    const bool cancelled = e.kind == kModelCancelled;
    if (!cancelled && !fatalModelError(e))
        return std::nullopt;
    setStatus(m_trace, stage, cancelled ? "cancelled" : "failed", e.message());
    save();
    return Stop{cancelled ? "cancelled" : "error", cancelled ? std::string("cancelled by the user") : e.message()};
}

void Run::keepBest(const Attempt& a)
{
    m_best = a;
    m_trace["best_step"] = m_step;
    m_trace["best_step_file"] = twoDigits(m_step) + "-" + stageName(m_best->stage) + ".cu";
}

std::optional<Stop> Run::stopStage(Stage stage, const Stop& stop, const char* status)
{
    setStatus(m_trace, stage, stop.outcome == "cancelled" ? "cancelled" : status, stop.reason);
    save();
    return stop;
}

std::optional<Stop> Run::kernelStage(Stage stage, const std::string& firstPrompt, int attempts, bool& reached)
{
    reached = false;
    setStatus(m_trace, stage, "running");
    event(SynthEvent::Type::Stage, stage, stageName(stage));
    std::string& feedbackKey = m_feedbackKey;
    std::string& feedback = m_feedback;
    for (int attempt = 0; attempt < attempts; ++attempt) {
        if (auto stop = stopNow()) {
            return stopStage(stage, *stop, "failed");
        }
        std::vector<ChatMessage> messages{{"user", firstPrompt}};
        if (!m_lastReply.empty() && !feedback.empty()) {
            messages.push_back({"assistant", m_lastReply});
            messages.push_back({"user", agent::agentProse(feedbackKey) + "\n" + feedback});
        }
        json step;
        auto reply = ask(stage, messages, step);
        if (!reply) {
            addStep(m_trace, stage, step);
            if (auto stop = endsTheRun(stage, reply.error()))
                return stop;
            failed(stage);
            feedbackKey = "synth-plan-failed";
            feedback = reply.error().why;
            m_lastReply = "(the reply was refused: " + reply.error().why + ")";
            note(stage, reply.error().message());
            save();
            continue;
        }
        m_lastReply = reply->text;
        std::optional<Stop> stop;
        Attempt a = tryKernel(stage, reply->text, m_step, step, stop);
        addStep(m_trace, stage, step);
        save();
        if (stop) {
            return stopStage(stage, *stop, "failed");
        }
        note(stage, step.value("result", std::string()));
        const bool passed = stage == Stage::Codegen ? a.compiled : a.verified;
        if (a.verified && (!m_best || (a.speedup && (!m_best->speedup || *a.speedup > *m_best->speedup)))) {
            keepBest(a);
        }
        if (passed) {
            feedbackKey = a.feedbackKey;
            feedback = a.feedback;
            succeeded();
            reached = true;
            setStatus(m_trace, stage, "done");
            save();
            return std::nullopt;
        }
        failed(stage);
        feedbackKey = a.feedbackKey;
        feedback = a.feedback;
    }
    setStatus(m_trace, stage, "failed", "no reply got through in " + std::to_string(attempts) + " attempts: " + text::clipUtf8(feedback, 300));
    save();
    return std::nullopt;
}

std::vector<ChatMessage> Run::performanceMessages(double target, const std::string& failedReply,
                                                  const std::string& failedFeedback) const
{
    const std::string goal = "The promotion threshold is " + fixed(target, 2)
                             + "x over eager LibTorch (geometric mean); a kernel near the bandwidth peak cannot go much further.";
    std::string perf = agent::agentProse("synth-performance");
    const size_t g = perf.find("{goal}");
    if (g != std::string::npos)
        perf.replace(g, 6, goal);
    std::vector<ChatMessage> messages{{"user", codegenPromptCache},
                                      {"assistant", asReply(*m_best)},
                                      {"user", perf + "\n" + m_best->feedback}};
    if (!failedReply.empty()) {
        // The last round's reply did not get through: the model sees it and why.
        messages.push_back({"assistant", failedReply});
        messages.push_back({"user", failedFeedback + "\nThe best correct kernel is still the first one above. Send a faster, "
                                                     "correct version in the same two blocks."});
    }
    return messages;
}

std::optional<Stop> Run::performance()
{
    const Stage S = Stage::Performance;
    const double target = m_threshold;
    if (m_r.budget.perfRounds <= 0) {
        setStatus(m_trace, S, "skipped", "no performance rounds in the budget");
        return std::nullopt;
    }
    setStatus(m_trace, S, "running");
    event(SynthEvent::Type::Stage, S, stageName(S));
    int flat = 0;
    std::string failedReply, failedFeedback;
    for (int round = 0; round < m_r.budget.perfRounds; ++round) {
        if (m_best->speedup && *m_best->speedup >= target) {
            setStatus(m_trace, S, "done", "the best kernel reaches the promotion threshold of " + fixed(target, 2) + "x");
            save();
            return std::nullopt;
        }
        if (auto stop = stopNow()) {
            return stopStage(S, *stop, "stopped");
        }
        json step;
        auto reply = ask(S, performanceMessages(target, failedReply, failedFeedback), step);
        if (!reply) {
            addStep(m_trace, S, step);
            if (auto stop = endsTheRun(S, reply.error()))
                return stop;
            failed(S);
            save();
            continue;
        }
        std::optional<Stop> stop;
        Attempt a = tryKernel(S, reply->text, m_step, step, stop);
        addStep(m_trace, S, step);
        save();
        failedReply.clear();
        failedFeedback.clear();
        if (!a.verified && !a.done) {
            failedReply = reply->text;
            failedFeedback = agent::agentProse(a.feedbackKey) + "\n" + a.feedback;
        }
        if (stop) {
            return stopStage(S, *stop, "failed");
        }
        if (a.done) {
            setStatus(m_trace, S, "done", "the model says the kernel is at the hardware's limit");
            save();
            return std::nullopt;
        }
        note(S, step.value("result", std::string()));
        if (a.verified && a.speedup) {
            const double before = m_best->speedup.value_or(0);
            if (*a.speedup > before) {
                flat = *a.speedup < before * (1 + m_r.budget.plateau) ? flat + 1 : 0;
                keepBest(a);
            } else {
                ++flat;
            }
            succeeded();
            if (flat >= 2) {
                setStatus(m_trace, S, "done", "a plateau: two rounds gained less than " + std::to_string(int(m_r.budget.plateau * 100)) + " %");
                save();
                return std::nullopt;
            }
        } else {
            failed(S);
        }
    }
    setStatus(m_trace, S, "done", "the performance rounds of the budget are used");
    save();
    return std::nullopt;
}

std::optional<Stop> Run::polish()
{
    const Stage S = Stage::Polish;
    if (!m_r.budget.polish) {
        setStatus(m_trace, S, "skipped", "polish is off");
        return std::nullopt;
    }
    setStatus(m_trace, S, "running");
    event(SynthEvent::Type::Stage, S, stageName(S));
    if (auto stop = stopNow()) {
        return stopStage(S, *stop, "stopped");
    }
    std::vector<ChatMessage> messages{{"user", codegenPromptCache},
                                      {"assistant", asReply(*m_best)},
                                      {"user", agent::agentProse("synth-polish")}};
    json step;
    auto reply = ask(S, messages, step);
    if (!reply) {
        addStep(m_trace, S, step);
        if (auto stop = endsTheRun(S, reply.error()))
            return stop;
        setStatus(m_trace, S, "failed", reply.error().message());   // the best kernel stays as it is
        save();
        return std::nullopt;
    }
    std::optional<Stop> stop;
    Attempt a = tryKernel(S, reply->text, m_step, step, stop);
    if (stop) {
        addStep(m_trace, S, step);
        save();
        return stop;
    }
    const double before = m_best->speedup.value_or(0);
    const bool keep = a.verified && a.speedup && *a.speedup >= before * 0.98;
    step["kept"] = keep;
    addStep(m_trace, S, step);
    if (keep) {
        keepBest(a);
        setStatus(m_trace, S, "done", "the tidied kernel is correct and no more than 2 % slower");
    } else {
        setStatus(m_trace, S, "done",
                  "the tidied kernel was not kept: " + (a.verified ? std::string("it was more than 2 % slower") : step.value("result", std::string("it failed"))));
    }
    save();
    return std::nullopt;
}

} // namespace kf::synth::detail
