// The spec of a synthesis run: the interview that ends in a frozen task, or an existing task
// frozen as it is (engine/synth/SynthRun.h).
#include "engine/synth/SynthRun.h"

namespace kf::synth::detail {

namespace {

/// The interview's first message: the request, the reference task when there is one, and the
/// task format.
std::string interviewPrompt(const std::string& request, const std::optional<Task>& reference, const json& refJson)
{
    std::string archs = "[\"sm_90\"]";
    if (reference) {
        archs = json(reference->architectures).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    std::string referenceRule =
        reference ? std::string(" The reference, the inputs, the outputs and the parameters are fixed: copy them exactly from the "
                                "reference task below (KernelForge puts them back if they differ).")
                  : std::string();
    std::string prompt = agent::agentProse("synth-interview");
    auto replace = [&](const std::string& key, const std::string& value) {
        for (size_t pos = prompt.find(key); pos != std::string::npos; pos = prompt.find(key, pos + value.size()))
            prompt.replace(pos, key.size(), value);
    };
    replace("{archs}", "`" + archs + "`");
    replace("{reference_rule}", referenceRule);
    prompt += "\n## The request\n\n" + request + "\n";
    if (reference)
        prompt += "\n## The reference task\n\n```json\n" + refJson.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n```\n";
    prompt += "\n## The task format\n\n" + agent::taskSchemaText();
    return prompt;
}

/// A proposal made into a spec: no candidates, and the reference task's fixed parts put back.
void normaliseProposal(json& proposal, const std::optional<Task>& reference, const json& refJson, json& step)
{
    if (proposal.contains("candidates") && !(proposal["candidates"].is_array() && proposal["candidates"].empty()))
        step["note"] = "the proposal's candidates were dropped";
    proposal["candidates"] = json::array();
    if (reference)
        for (const char* key : {"reference", "inputs", "outputs", "parameters"}) {
            if (refJson.contains(key)) {
                if (proposal.value(key, json()) != refJson[key])
                    step["note"] = std::string("the proposal's ") + key + " was replaced by the reference task's";
                proposal[key] = refJson[key];
            } else {
                proposal.erase(key);
            }
        }
}

/// An include folder of the proposal inside the run folder, where model-written files live.
std::string includeInRunFolder(const json& proposal)
{
    std::string inRunFolder;
    if (proposal.contains("compile") && proposal["compile"].is_object() && proposal["compile"].contains("include_dirs")
        && proposal["compile"]["include_dirs"].is_array())
        for (const json& d : proposal["compile"]["include_dirs"])
            if (d.is_string() && underRunFolders(d.get<std::string>()))
                inRunFolder = d.get<std::string>();
    return inRunFolder;
}

} // namespace

std::optional<Stop> Run::interview(bool& accepted)
{
    const Stage S = Stage::Interview;
    setStatus(m_trace, S, "running");
    event(SynthEvent::Type::Stage, S, stageName(S));

    std::optional<Task> reference;
    json refJson;
    if (!m_r.referenceTask.empty()) {
        auto t = loadTask(m_r.referenceTask);
        if (!t)
            return Stop{"refused", "the reference task does not load: " + t.error().message()};
        reference = std::move(*t);
        refJson = taskToJson(*reference);
    }
    std::vector<ChatMessage> messages{{"user", interviewPrompt(m_r.request, reference, refJson)}};
    for (int attempt = 0; attempt < m_r.budget.maxAttempts; ++attempt) {
        if (auto stop = stopNow())
            return stop;
        json step;
        auto reply = ask(S, messages, step);
        if (!reply) {
            addStep(m_trace, S, step);
            save();
            if (reply.error().kind == kModelCancelled)
                return Stop{"cancelled", "cancelled by the user"};
            if (fatalModelError(reply.error()))
                return Stop{"error", reply.error().message()};
            failed(S);
            messages.push_back({"user", "Your reply could not be read: " + reply.error().why + ". Send the task again."});
            continue;
        }
        messages.push_back({"assistant", reply->text});
        auto parsed = specReply(reply->text);
        std::string problem;
        if (!parsed) {
            problem = parsed.error().why;
        } else if (!parsed->taskJson) {
            if (auto stop = answerQuestions(*parsed, step, messages))
                return stop;
            continue;
        } else if (parsed->taskJson->size() > kMaxSpecBytes) {
            problem = "the task is larger than 256 KiB";
        } else {
            json proposal = json::parse(*parsed->taskJson, nullptr, false);
            if (proposal.is_discarded() || !proposal.is_object()) {
                problem = "the ```json block is not a JSON object";
            } else {
                normaliseProposal(proposal, reference, refJson, step);
                auto stop = considerProposal(proposal, *parsed, reference, step, problem, accepted);
                if (stop || accepted)
                    return stop;
            }
        }
        step["result"] = problem;
        addStep(m_trace, S, step);
        save();
        failed(S);
        note(S, "the proposal was refused: " + problem);
        messages.push_back({"user", "Your proposal could not be used: " + problem + "\nSend the corrected task.json in one ```json block."});
    }
    setStatus(m_trace, S, "failed", "no usable task after " + std::to_string(m_r.budget.maxAttempts) + " replies");
    save();
    return Stop{"no_candidate", "the model proposed no usable task in " + std::to_string(m_r.budget.maxAttempts) + " replies"};
}

std::optional<Stop> Run::answerQuestions(const SpecReply& parsed, json& step, std::vector<ChatMessage>& messages)
{
    const Stage S = Stage::Interview;
    // Questions: the user answers, or the model chooses.
    step["questions"] = parsed.questions;
    std::vector<std::string> answers = m_h.answer ? m_h.answer(parsed.questions) : std::vector<std::string>{};
    if (m_cancel.cancelled()) {
        addStep(m_trace, S, step);
        setStatus(m_trace, S, "cancelled");
        save();
        return Stop{"cancelled", "cancelled by the user"};
    }
    std::string text;
    if (answers.empty()) {
        text = "No answers are available. Choose sensible values yourself, list each choice as an ASSUMPTION: line, and send "
               "the task.";
    } else {
        for (size_t i = 0; i < parsed.questions.size(); ++i)
            text += "Q: " + parsed.questions[i] + "\nA: " + (i < answers.size() ? answers[i] : std::string("(no answer)")) + "\n";
        text += "\nNow send the task.";
    }
    step["answers"] = answers;
    step["result"] = "questions";
    addStep(m_trace, S, step);
    save();
    messages.push_back({"user", text});
    return std::nullopt;
}

std::optional<Stop> Run::considerProposal(const json& proposal, const SpecReply& parsed, const std::optional<Task>& reference,
                                          json& step, std::string& problem, bool& accepted)
{
    const Stage S = Stage::Interview;
    // The reference's file goes in first: the task is read as the folder it will be.
    if (reference && !reference->reference.torchscript.empty()) {
        std::error_code ec;
        const fs::path to = m_r.taskDir / reference->reference.torchscript;
        fs::create_directories(to.parent_path(), ec);
        fs::copy_file(reference->directory / reference->reference.torchscript, to, fs::copy_options::overwrite_existing, ec);
        if (ec)
            return Stop{"error", "cannot copy the reference " + to.string() + ": " + ec.message()};
    }
    const std::string inRunFolder = includeInRunFolder(proposal);
    auto task = parseTask(proposal, "the proposed task.json", m_r.taskDir);
    if (!inRunFolder.empty()) {
        problem = "the include folder \"" + inRunFolder + "\" is inside the run folder, which holds model-written files";
        return std::nullopt;
    }
    if (!task) {
        problem = "the task loader refused it: " + task.error().message();
        return std::nullopt;
    }
    write(twoDigits(m_step) + "-interview-task.json", proposal.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    step["proposal"] = twoDigits(m_step) + "-interview-task.json";
    step["assumptions"] = parsed.assumptions;
    ojson ordered = ojson::parse(proposal.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    const bool ok = m_h.accept ? m_h.accept(ordered, parsed.assumptions) : false;
    if (m_cancel.cancelled()) {
        // Cancel while the proposal waited for the user is a cancel, not a refusal.
        step["result"] = "cancelled";
        addStep(m_trace, S, step);
        setStatus(m_trace, S, "cancelled", "cancelled by the user");
        save();
        return Stop{"cancelled", "cancelled by the user"};
    }
    step["result"] = ok ? "accepted" : "not accepted";
    addStep(m_trace, S, step);
    if (!ok) {
        setStatus(m_trace, S, "failed", "the user did not accept the proposed task");
        save();
        return Stop{"refused", "the proposed task was not accepted (it is kept in " +
                                   (m_runDir / step["proposal"].get<std::string>()).string() + ")"};
    }
    // Frozen: written once, hashed; later stages work from this copy only.
    if (auto w = writeFileAtomic(m_r.taskDir / "task.json", ordered.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"); !w)
        return Stop{"error", w.error().message()};
    m_spec = taskToJson(*task);   // canonical, as the end compares it with the file
    m_spec["candidates"] = json::array();
    m_task = std::move(*task);
    m_task->directory = m_r.taskDir;
    m_trace["assumptions"] = parsed.assumptions;
    accepted = true;
    succeeded();
    setStatus(m_trace, S, "done");
    save();
    return std::nullopt;
}

Result<void> Run::freezeExisting()
{
    auto task = loadTask(m_r.taskDir);
    if (!task)
        return task.error();
    m_spec = taskToJson(*task);
    m_spec["candidates"] = json::array();
    // The frozen copy is read back through the loader without candidates.
    auto frozen = parseTask(m_spec, (m_r.taskDir / "task.json").string(), m_r.taskDir);
    if (!frozen)
        return frozen.error();
    m_task = std::move(*frozen);
    m_task->directory = task->directory;
    setStatus(m_trace, Stage::Interview, "skipped", "the task exists: its spec is used as it is");
    return {};
}

} // namespace kf::synth::detail
