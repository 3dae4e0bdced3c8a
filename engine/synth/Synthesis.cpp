#include "engine/synth/Synthesis.h"

#include "engine/agent/CandidateAdd.h"
#include "engine/agent/Prompt.h"
#include "engine/compile/Compiler.h"
#include "engine/compile/TaskCompile.h"
#include "engine/core/Clock.h"
#include "engine/core/Files.h"
#include "engine/core/Hash.h"
#include "engine/core/Text.h"
#include "engine/generate/Generate.h"
#include "engine/profile/Hints.h"
#include "engine/registry/Gates.h"
#include "engine/synth/Feedback.h"
#include "engine/synth/Http.h"
#include "engine/synth/Reply.h"
#include "engine/task/TaskEdit.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <system_error>

namespace kf::synth {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;
using nlohmann::json;

const char* stageName(Stage s)
{
    switch (s) {
    case Stage::Interview: return "interview";
    case Stage::Codegen: return "codegen";
    case Stage::Correctness: return "correctness";
    case Stage::Performance: return "performance";
    case Stage::Polish: return "polish";
    }
    return "?";
}

double costOf(const ModelConfig& model, long long tokensIn, long long tokensOut)
{
    return (double(tokensIn) * model.priceInPerMTok + double(tokensOut) * model.priceOutPerMTok) / 1e6;
}

json Totals::toJson() const
{
    return json{{"tokens_in", tokensIn}, {"tokens_out", tokensOut}, {"usd", usd}, {"seconds", seconds},
                {"model_calls", modelCalls}, {"candidates", candidates}};
}

namespace {

constexpr size_t kMaxSpecBytes = 256 * 1024;

// How a run stops early: the budget, a cancel, or the model or runner out of reach.
struct Stop {
    std::string outcome;   // no_candidate (budget) | cancelled | error
    std::string reason;
};

// One kernel as the model sent it, and how far it got.
struct Attempt {
    bool compiled = false, verified = false, benched = false;
    std::string file, source;
    ojson entry;                        // the plan as a candidate entry (with "file")
    std::optional<double> speedup, compileSpeedup;
    std::string feedback;               // for the model when it did not get through
    std::string feedbackKey;            // the prose that introduces it
    std::string line;                   // one sentence for the trace
    bool done = false;                  // performance: the model said DONE
    int tier = 0;                       // the model that wrote it
    Stage stage = Stage::Codegen;       // the stage whose reply it was
};

std::string runId()
{
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
    return buf;
}

std::string twoDigits(int n)
{
    char buf[16];
    std::snprintf(buf, sizeof buf, "%02d", n);
    return buf;
}

// Whether a folder of the task (an include folder) lies in .synthesis, where model replies live.
bool underRunFolders(const std::string& dir)
{
    const fs::path p = fs::path(dir).lexically_normal();
    return p.begin() != p.end() && p.begin()->string() == ".synthesis";
}

// The spec's identity: the canonical task without its candidates.
std::string specHash(const json& taskJson)
{
    json t = taskJson;
    t.erase("candidates");
    return hashHex(t.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

class Run {
public:
    Run(const SynthRequest& r, const SynthHooks& h, const CancelToken& c) : m_r(r), m_h(h), m_cancel(c) {}

    Result<SynthResult> go();
    /// An exception escaped a stage (a bug, or memory): the run ends as an error, its trace saved.
    SynthResult crashed(const std::string& what)
    {
        if (m_runDir.empty())
            return SynthResult{"error", stageName(m_current), "internal error: " + what, {}, m_r.taskDir, {}, {}, {}, m_totals};
        return finish("error", m_current, "internal error: " + what + "; everything so far is in the run folder");
    }

private:
    // Artifacts and trace.
    Result<void> openRunFolder();
    void write(const std::string& name, std::string_view bytes);
    void save();
    void event(SynthEvent::Type type, Stage stage, std::string text, json data = {});
    void note(Stage s, const std::string& sentence);

    // Budget and the model.
    std::optional<Stop> stopNow();
    Result<ModelReply> ask(Stage stage, const std::vector<ChatMessage>& messages, json& step);
    void failed(Stage stage);
    void succeeded() { m_failuresInRow = 0; }

    // Stages.
    std::optional<Stop> interview(bool& accepted);
    Result<void> freezeExisting();
    std::string codegenPrompt();
    std::optional<Stop> kernelStage(Stage stage, const std::string& firstPrompt, int attempts, bool& reached);
    std::optional<Stop> performance();
    std::optional<Stop> polish();
    Attempt tryKernel(Stage stage, const std::string& reply, int step, json& trace, std::optional<Stop>& stop);
    SynthResult finish(std::string outcome, Stage stage, std::string reason);

    const SynthRequest& m_r;
    const SynthHooks& m_h;
    const CancelToken& m_cancel;
    std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
    fs::path m_runDir;
    std::string m_runId;
    ojson m_trace;
    Totals m_totals;
    int m_tier = 0;
    int m_failuresInRow = 0;
    int m_step = 0;
    json m_spec;                  // the frozen task, candidates []
    std::string m_specHash;
    std::optional<Task> m_task;   // the frozen task as the loader read it
    std::optional<Attempt> m_best;
    std::string m_lastReply;      // the last kernel reply, for the next round's context
    std::string m_feedbackKey;    // what the model is told about it (carried from codegen into correctness)
    std::string m_feedback;
    std::string codegenPromptCache;
    std::string m_candidateName;  // the file the best kernel is added as
    Stage m_current = Stage::Interview;
    double m_threshold = kDefaultSpeedupThreshold;
};

void Run::write(const std::string& name, std::string_view bytes)
{
    if (auto w = writeFileAtomic(m_runDir / name, bytes); !w)
        event(SynthEvent::Type::Note, Stage::Interview, "could not write " + (m_runDir / name).string() + ": " + w.error().why);
}

void Run::save()
{
    m_totals.seconds = msSince(m_start) / 1000.0;
    m_trace["totals"] = m_totals.toJson();
    m_trace["updated_at"] = utcNow();
    write("synthesis.json", m_trace.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    event(SynthEvent::Type::Totals, Stage::Interview, {}, m_totals.toJson());
}

void Run::event(SynthEvent::Type type, Stage stage, std::string text, json data)
{
    if (type == SynthEvent::Type::Stage)
        m_current = stage;
    if (m_h.onEvent)
        m_h.onEvent(SynthEvent{type, stage, std::move(text), std::move(data)});
}

void Run::note(Stage s, const std::string& sentence)
{
    event(SynthEvent::Type::Note, s, sentence);
}

Result<void> Run::openRunFolder()
{
    std::error_code ec;
    const std::string stamp = runId();
    if (!m_r.runDir.empty()) {
        m_runDir = m_r.runDir;
        m_runId = stamp;
        fs::create_directories(m_runDir, ec);
        if (!fs::is_directory(m_runDir, ec) || !fs::is_empty(m_runDir, ec))
            return Error{"start the synthesis", "the run folder must be new or empty", "give another --run-dir", m_runDir.string(), {}, {}};
        return {};
    }
    // create_directory is atomic: of two runs started in the same second, one gets "-2".
    const fs::path base = m_r.taskDir / ".synthesis";
    fs::create_directories(base, ec);
    for (int n = 1; n < 1000; ++n) {
        m_runId = n == 1 ? stamp : stamp + "-" + std::to_string(n);
        m_runDir = base / m_runId;
        if (fs::create_directory(m_runDir, ec))
            return {};
        if (ec)
            break;
    }
    return Error{"start the synthesis", "cannot create the run folder" + (ec ? ": " + ec.message() : std::string()),
                 "check the permissions", m_runDir.string(), {}, {}};
}

std::optional<Stop> Run::stopNow()
{
    if (m_cancel.cancelled())
        return Stop{"cancelled", "cancelled by the user"};
    const Budget& b = m_r.budget;
    if (b.maxUsd > 0 && m_totals.usd >= b.maxUsd)
        return Stop{"no_candidate", "the budget of $" + std::to_string(b.maxUsd).substr(0, 6) + " is spent"};
    if (b.maxTokens > 0 && m_totals.tokensIn + m_totals.tokensOut >= b.maxTokens)
        return Stop{"no_candidate", "the budget of " + std::to_string(b.maxTokens) + " tokens is spent"};
    if (b.maxSeconds > 0 && msSince(m_start) / 1000.0 >= b.maxSeconds)
        return Stop{"no_candidate", "the time budget of " + std::to_string(int(b.maxSeconds)) + " s is spent"};
    return std::nullopt;
}

void Run::failed(Stage stage)
{
    ++m_failuresInRow;
    if (m_tier == 0 && m_r.models.size() > 1 && m_failuresInRow >= m_r.budget.escalateAfter) {
        m_tier = 1;
        m_failuresInRow = 0;
        m_trace["escalations"].push_back(ojson{{"stage", stageName(stage)}, {"after_step", m_step}, {"to", m_r.models[1].model}});
        note(stage, "escalating to " + m_r.models[1].model + " after " + std::to_string(m_r.budget.escalateAfter)
                        + " failed replies in a row");
    }
}

Result<ModelReply> Run::ask(Stage stage, const std::vector<ChatMessage>& messages, json& step)
{
    ++m_step;
    const std::string prefix = twoDigits(m_step) + "-" + stageName(stage);
    ModelCall call{m_tier, stage, agent::agentProse("synth-system"), messages};
    std::string promptText = "<!-- system -->\n" + call.system + "\n";
    for (const ChatMessage& m : messages)
        promptText += "\n<!-- " + m.role + " -->\n" + m.content + "\n";
    write(prefix + "-prompt.md", promptText);
    ModelConfig model = m_r.models[size_t(m_tier)];
    if (m_r.budget.maxTokens > 0) {
        // One reply must not run past the token budget on its own.
        const long long left = m_r.budget.maxTokens - m_totals.tokensIn - m_totals.tokensOut;
        model.maxTokens = int(std::max<long long>(1, std::min<long long>(model.maxTokens, left)));
    }
    step = json{{"step", m_step}, {"stage", stageName(stage)}, {"tier", m_tier}, {"model", model.model},
                {"prompt", prefix + "-prompt.md"}};
    event(SynthEvent::Type::Step, stage, "asking " + model.model, step);
    auto onText = [&](std::string_view delta) { event(SynthEvent::Type::Text, stage, std::string(delta)); };
    Result<ModelReply> reply = m_h.model ? m_h.model(call, onText, m_cancel.flag())
                                         : ModelClient(model).complete(call.system, call.messages, onText, m_cancel.flag());
    ++m_totals.modelCalls;
    if (!reply) {
        step["error"] = reply.error().message();
        step["error_kind"] = reply.error().kind;
        return reply;
    }
    write(prefix + "-reply.md", reply->text);
    const double usd = costOf(model, reply->tokensIn, reply->tokensOut);
    m_totals.tokensIn += reply->tokensIn;
    m_totals.tokensOut += reply->tokensOut;
    m_totals.usd += usd;
    step["reply"] = prefix + "-reply.md";
    step["tokens_in"] = reply->tokensIn;
    step["tokens_out"] = reply->tokensOut;
    step["usage_estimated"] = reply->usageEstimated;
    step["usd"] = usd;
    step["seconds"] = reply->seconds;
    step["http_attempts"] = reply->attempts;
    return reply;
}

// Adds a step to its stage's trace and the stage's sums.
void addStep(ojson& trace, Stage stage, const json& step)
{
    for (auto& st : trace["stages"])
        if (st["stage"] == stageName(stage)) {
            st["steps"].push_back(ojson(step));
            st["attempts"] = st["attempts"].get<int>() + 1;
            st["tokens_in"] = st["tokens_in"].get<long long>() + step.value("tokens_in", 0LL);
            st["tokens_out"] = st["tokens_out"].get<long long>() + step.value("tokens_out", 0LL);
            st["usd"] = st["usd"].get<double>() + step.value("usd", 0.0);
            st["seconds"] = st["seconds"].get<double>() + step.value("seconds", 0.0) + step.value("run_seconds", 0.0);
            return;
        }
}

void setStatus(ojson& trace, Stage stage, const std::string& status, const std::string& reason = {})
{
    for (auto& st : trace["stages"])
        if (st["stage"] == stageName(stage)) {
            st["status"] = status;
            if (!reason.empty())
                st["reason"] = reason;
        }
}

// A model error that ends the run: the endpoint cannot be used. Malformed and oversized replies
// are the model's fault and count as a failed attempt instead.
bool fatalModelError(const Error& e)
{
    return e.kind != kModelMalformed && e.kind != kModelTooLarge;
}

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
    prompt += "\n## The request\n\n" + m_r.request + "\n";
    if (reference)
        prompt += "\n## The reference task\n\n```json\n" + refJson.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n```\n";
    prompt += "\n## The task format\n\n" + agent::taskSchemaText();

    std::vector<ChatMessage> messages{{"user", prompt}};
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
            // Questions: the user answers, or the model chooses.
            step["questions"] = parsed->questions;
            std::vector<std::string> answers = m_h.answer ? m_h.answer(parsed->questions) : std::vector<std::string>{};
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
                for (size_t i = 0; i < parsed->questions.size(); ++i)
                    text += "Q: " + parsed->questions[i] + "\nA: " + (i < answers.size() ? answers[i] : std::string("(no answer)")) + "\n";
                text += "\nNow send the task.";
            }
            step["answers"] = answers;
            step["result"] = "questions";
            addStep(m_trace, S, step);
            save();
            messages.push_back({"user", text});
            continue;
        } else if (parsed->taskJson->size() > kMaxSpecBytes) {
            problem = "the task is larger than 256 KiB";
        } else {
            json proposal = json::parse(*parsed->taskJson, nullptr, false);
            if (proposal.is_discarded() || !proposal.is_object()) {
                problem = "the ```json block is not a JSON object";
            } else {
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
                // The reference's file goes in first: the task is read as the folder it will be.
                if (reference && !reference->reference.torchscript.empty()) {
                    std::error_code ec;
                    const fs::path to = m_r.taskDir / reference->reference.torchscript;
                    fs::create_directories(to.parent_path(), ec);
                    fs::copy_file(reference->directory / reference->reference.torchscript, to, fs::copy_options::overwrite_existing, ec);
                    if (ec)
                        return Stop{"error", "cannot copy the reference " + to.string() + ": " + ec.message()};
                }
                std::string inRunFolder;
                if (proposal.contains("compile") && proposal["compile"].is_object() && proposal["compile"].contains("include_dirs")
                    && proposal["compile"]["include_dirs"].is_array())
                    for (const json& d : proposal["compile"]["include_dirs"])
                        if (d.is_string() && underRunFolders(d.get<std::string>()))
                            inRunFolder = d.get<std::string>();
                auto task = parseTask(proposal, "the proposed task.json", m_r.taskDir);
                if (!inRunFolder.empty()) {
                    problem = "the include folder \"" + inRunFolder + "\" is inside the run folder, which holds model-written files";
                } else if (!task) {
                    problem = "the task loader refused it: " + task.error().message();
                } else {
                    write(twoDigits(m_step) + "-interview-task.json", proposal.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
                    step["proposal"] = twoDigits(m_step) + "-interview-task.json";
                    step["assumptions"] = parsed->assumptions;
                    ojson ordered = ojson::parse(proposal.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
                    const bool ok = m_h.accept ? m_h.accept(ordered, parsed->assumptions) : false;
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
                    m_trace["assumptions"] = parsed->assumptions;
                    accepted = true;
                    succeeded();
                    setStatus(m_trace, S, "done");
                    save();
                    return std::nullopt;
                }
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

Attempt Run::tryKernel(Stage stage, const std::string& reply, int step, json& trace, std::optional<Stop>& stop)
{
    Attempt a;
    const std::string prefix = twoDigits(step) + "-" + stageName(stage);
    a.file = "synth-" + m_runId + "-" + twoDigits(step) + ".cu";
    a.tier = m_tier;
    a.stage = stage;
    auto fail = [&](std::string key, std::string feedback, std::string line) {
        a.feedbackKey = std::move(key);
        a.feedback = std::move(feedback);
        a.line = std::move(line);
        trace["result"] = a.line;
        return a;
    };
    if (stage == Stage::Performance) {
        // "DONE:" with no blocks: the model believes the kernel is at the limit.
        if (fencedBlocks(reply).empty() && reply.find("DONE:") != std::string::npos) {
            a.done = true;
            trace["result"] = "the model says the kernel is at the limit";
            return a;
        }
    }
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

    ojson entry = ojson::object();
    entry["file"] = a.file;
    for (auto it = plan->begin(); it != plan->end(); ++it)
        if (it.key() != "file")
            entry[it.key()] = it.value();
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
    const Candidate* candidate = task->findCandidate(a.file);

    // NVRTC, for every architecture of the task.
    json compiled = json::array();
    std::vector<Diagnostic> diagnostics;
    bool ok = true;
    for (const std::string& arch : task->architectures) {
        if (m_cancel.cancelled()) {
            stop = Stop{"cancelled", "cancelled by the user"};
            return a;
        }
        CompileRequest req = compileRequestFor(*task, *candidate, arch, a.source);
        req.fileName = a.file;
        for (size_t li = 0; li < candidate->launches.size(); ++li)
            req.nameExpressionOrigins[candidate->launches[li].kernel] = "the launch plan at /launches/" + std::to_string(li) + "/kernel";
        auto result = compile(req, nullptr, &m_cancel);
        if (!result) {
            stop = m_cancel.cancelled() ? Stop{"cancelled", "cancelled by the user"}
                                        : Stop{"error", "NVRTC could not run: " + result.error().message()};
            return a;
        }
        compiled.push_back(json{{"arch", arch}, {"success", result->success}, {"errors", result->errorCount()},
                                {"warnings", result->warningCount()}, {"ms", result->compileMs}});
        for (Diagnostic d : result->diagnostics) {
            if (task->architectures.size() > 1)
                d.message = "[" + arch + "] " + d.message;
            diagnostics.push_back(std::move(d));
        }
        if (!result->success) {
            ok = false;
            break;
        }
    }
    const std::string diagText = compileFeedback(diagnostics, "kernel.cu");
    write(prefix + "-compile.json", json{{"architectures", compiled}, {"diagnostics", diagText}}.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    trace["compile"] = ok ? "ok" : "failed";
    if (!ok)
        return fail("synth-compile-failed", diagText, "did not compile: " + diagText.substr(0, diagText.find('\n')));
    a.compiled = true;
    ++m_totals.candidates;

    // The runner: verify with held-out shapes over every shape set, then bench. The runner reads
    // the task as a task folder, so the kernel sits in it while it runs (under a name no candidate
    // has) and is removed afterwards; its copy stays in the run folder.
    if (!m_h.run) {
        stop = Stop{"error", "no runner is connected"};
        return a;
    }
    struct Placed {
        fs::path file;
        ~Placed()
        {
            std::error_code ec;
            if (!file.empty())
                fs::remove(file, ec);
        }
    } placed;
    {
        std::error_code ec;
        const fs::path target = m_task->directory / a.file;
        if (fs::exists(target, ec)) {
            stop = Stop{"error", target.string() + " exists already: remove it and run again"};
            return a;
        }
        if (auto w = writeFileAtomic(target, a.source); !w) {
            stop = Stop{"error", w.error().message()};
            return a;
        }
        placed.file = target;
    }
    RunSettings vs;
    vs.shapes = "all";
    vs.heldOutCount = m_r.heldOut;
    const auto t0 = std::chrono::steady_clock::now();
    auto verified = m_h.run(RunKind::Verify, *task, a.file, a.source, vs, m_cancel);
    trace["run_seconds"] = msSince(t0) / 1000.0;
    if (!verified) {
        stop = Stop{m_cancel.cancelled() ? "cancelled" : "error", verified.error().message()};
        return a;
    }
    write(prefix + "-verify.json", verified->json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    trace["verify"] = verified->header.verdict;
    trace["verify_report"] = prefix + "-verify.json";
    if (m_cancel.cancelled()) {
        stop = Stop{"cancelled", "cancelled by the user"};
        return a;
    }
    if (verified->header.verdict != "pass")
        return fail("synth-verify-failed", verifyFeedback(*verified), reportLine(*verified));
    a.verified = true;

    const auto t1 = std::chrono::steady_clock::now();
    auto benched = m_h.run(RunKind::Bench, *task, a.file, a.source, RunSettings{}, m_cancel);
    trace["run_seconds"] = trace["run_seconds"].get<double>() + msSince(t1) / 1000.0;
    if (!benched) {
        stop = Stop{m_cancel.cancelled() ? "cancelled" : "error", benched.error().message()};
        return a;
    }
    write(prefix + "-bench.json", benched->json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    trace["bench_report"] = prefix + "-bench.json";
    a.feedback = benchFeedback(*benched);
    if (benched->bench && benched->bench->geomeanSpeedup) {
        a.benched = true;
        a.speedup = benched->bench->geomeanSpeedup;
        a.compileSpeedup = benched->bench->compileSpeedup();
        trace["speedup"] = *a.speedup;
    } else {
        // Correct but not measured (the benchmark crashed or timed out): it cannot be the kernel
        // that is added, since nothing says it is fast.
        trace["bench"] = reportLine(*benched);
        a.verified = false;
        return fail("synth-verify-failed", "The kernel passed verification, but the benchmark failed:\n" + a.feedback,
                    "correct, but the benchmark failed: " + reportLine(*benched));
    }
    a.line = "correct; " + reportLine(*benched);
    trace["result"] = a.line;

    // Counters, where the GPU allows them: the profiler's hints go back with the benchmark. A
    // profile that cannot run (no counter permission, an old runner) is only noted.
    if (m_r.profile && stage != Stage::Polish) {
        RunSettings ps;
        ps.profileBaseline = false;   // the candidate's counters are what the hints need
        auto profiled = m_h.run(RunKind::Profile, *task, a.file, a.source, ps, m_cancel);
        if (profiled && profiled->profile) {
            write(prefix + "-profile.json", profiled->json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
            trace["profile_report"] = prefix + "-profile.json";
            const std::vector<profile::Hint> hints = profile::hintsFor(*profiled->profile);
            if (!hints.empty()) {
                a.feedback += "\nThe profiler's hints (from hardware counters of one benchmark shape):\n";
                for (size_t i = 0; i < hints.size() && i < 5; ++i)
                    a.feedback += "- " + hints[i].title + ": " + hints[i].evidence
                                  + (hints[i].suggestion.empty() ? std::string() : ". " + hints[i].suggestion) + "\n";
            }
            trace["profile"] = profiled->header.verdict;
        } else {
            trace["profile"] = profiled ? reportLine(*profiled) : profiled.error().message();
        }
    }
    return a;
}

// Codegen and correctness share one loop: a reply must compile (codegen) and then pass (correctness).
std::optional<Stop> Run::kernelStage(Stage stage, const std::string& firstPrompt, int attempts, bool& reached)
{
    reached = false;
    setStatus(m_trace, stage, "running");
    event(SynthEvent::Type::Stage, stage, stageName(stage));
    std::string& feedbackKey = m_feedbackKey;
    std::string& feedback = m_feedback;
    for (int attempt = 0; attempt < attempts; ++attempt) {
        if (auto stop = stopNow()) {
            setStatus(m_trace, stage, stop->outcome == "cancelled" ? "cancelled" : "failed", stop->reason);
            save();
            return stop;
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
            if (reply.error().kind == kModelCancelled || fatalModelError(reply.error())) {
                const bool c = reply.error().kind == kModelCancelled;
                setStatus(m_trace, stage, c ? "cancelled" : "failed", reply.error().message());
                save();
                return Stop{c ? "cancelled" : "error", c ? std::string("cancelled by the user") : reply.error().message()};
            }
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
            setStatus(m_trace, stage, stop->outcome == "cancelled" ? "cancelled" : "failed", stop->reason);
            save();
            return stop;
        }
        note(stage, step.value("result", std::string()));
        const bool passed = stage == Stage::Codegen ? a.compiled : a.verified;
        if (a.verified && (!m_best || (a.speedup && (!m_best->speedup || *a.speedup > *m_best->speedup)))) {
            m_best = a;
            m_trace["best_step"] = m_step;
            m_trace["best_step_file"] = twoDigits(m_step) + "-" + stageName(m_best->stage) + ".cu";
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
            setStatus(m_trace, S, "done", "the best kernel reaches the promotion threshold of " + std::to_string(target).substr(0, 4) + "x");
            save();
            return std::nullopt;
        }
        if (auto stop = stopNow()) {
            setStatus(m_trace, S, stop->outcome == "cancelled" ? "cancelled" : "stopped", stop->reason);
            save();
            return stop;
        }
        const std::string goal = "The promotion threshold is " + std::to_string(target).substr(0, 4)
                                 + "x over eager LibTorch (geometric mean); a kernel near the bandwidth peak cannot go much further.";
        std::string perf = agent::agentProse("synth-performance");
        const size_t g = perf.find("{goal}");
        if (g != std::string::npos)
            perf.replace(g, 6, goal);
        std::vector<ChatMessage> messages{{"user", codegenPromptCache},
                                          {"assistant", "```cuda\n" + m_best->source + "```\n\n```json\n" + [&] {
                                               ojson p = m_best->entry;
                                               p.erase("file");
                                               return p.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
                                           }() + "\n```\n"},
                                          {"user", perf + "\n" + m_best->feedback}};
        if (!failedReply.empty()) {
            // The last round's reply did not get through: the model sees it and why.
            messages.push_back({"assistant", failedReply});
            messages.push_back({"user", failedFeedback + "\nThe best correct kernel is still the first one above. Send a faster, "
                                                         "correct version in the same two blocks."});
        }
        json step;
        auto reply = ask(S, messages, step);
        if (!reply) {
            addStep(m_trace, S, step);
            if (reply.error().kind == kModelCancelled || fatalModelError(reply.error())) {
                const bool c = reply.error().kind == kModelCancelled;
                setStatus(m_trace, S, c ? "cancelled" : "failed", reply.error().message());
                save();
                return Stop{c ? "cancelled" : "error", c ? std::string("cancelled by the user") : reply.error().message()};
            }
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
            setStatus(m_trace, S, stop->outcome == "cancelled" ? "cancelled" : "failed", stop->reason);
            save();
            return stop;
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
                m_best = a;
                m_trace["best_step"] = m_step;
                m_trace["best_step_file"] = twoDigits(m_step) + "-" + stageName(m_best->stage) + ".cu";
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
        setStatus(m_trace, S, stop->outcome == "cancelled" ? "cancelled" : "stopped", stop->reason);
        save();
        return stop;
    }
    ojson plan = m_best->entry;
    plan.erase("file");
    std::vector<ChatMessage> messages{{"user", codegenPromptCache},
                                      {"assistant", "```cuda\n" + m_best->source + "```\n\n```json\n" + plan.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n```\n"},
                                      {"user", agent::agentProse("synth-polish")}};
    json step;
    auto reply = ask(S, messages, step);
    if (!reply) {
        addStep(m_trace, S, step);
        const bool c = reply.error().kind == kModelCancelled;
        setStatus(m_trace, S, c ? "cancelled" : "failed", reply.error().message());
        save();
        if (c)
            return Stop{"cancelled", "cancelled by the user"};
        return fatalModelError(reply.error()) ? std::optional<Stop>(Stop{"error", reply.error().message()}) : std::nullopt;
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
        m_best = a;
        m_trace["best_step"] = m_step;
        m_trace["best_step_file"] = twoDigits(m_step) + "-" + stageName(m_best->stage) + ".cu";
        setStatus(m_trace, S, "done", "the tidied kernel is correct and no more than 2 % slower");
    } else {
        setStatus(m_trace, S, "done",
                  "the tidied kernel was not kept: " + (a.verified ? std::string("it was more than 2 % slower") : step.value("result", std::string("it failed"))));
    }
    save();
    return std::nullopt;
}

SynthResult Run::finish(std::string outcome, Stage stage, std::string reason)
{
    SynthResult out;
    out.outcome = std::move(outcome);
    out.runDir = m_runDir;
    out.taskDir = m_r.taskDir;
    if (out.outcome != "candidate")
        out.failedStage = stageName(stage);
    out.reason = std::move(reason);
    m_trace["outcome"] = out.outcome;
    m_trace["failed_stage"] = out.failedStage.empty() ? json() : json(out.failedStage);
    m_trace["reason"] = out.reason;
    m_trace["finished_at"] = utcNow();
    if (m_best && out.outcome == "candidate") {
        out.candidate = m_trace["candidate"]["file"].get<std::string>();
        out.speedup = m_best->speedup;
        out.compileSpeedup = m_best->compileSpeedup;
    }
    save();
    out.totals = m_totals;
    return out;
}

Result<SynthResult> Run::go()
{
    if (m_r.models.empty())
        return Error{"start the synthesis", "no model is configured", "give --model and --base-url, or set them in the settings", {}, {}, {}};
    std::error_code ec;
    const bool existing = fs::is_regular_file(m_r.taskDir / "task.json", ec);
    if (fs::exists(m_r.taskDir, ec) && !fs::is_directory(m_r.taskDir, ec))
        return Error{"start the synthesis", "the task folder is a file", "give a folder", m_r.taskDir.string(), {}, {}};
    if (existing && !m_r.referenceTask.empty())
        return Error{"start the synthesis", "the task folder already has a task.json; --reference is for a new task",
                     "leave out --reference, or give a new --task-dir", m_r.taskDir.string(), {}, {}};
    if (!m_r.candidateName.empty()) {
        // Checked before anything is spent: a name the end would refuse wastes the whole budget.
        m_candidateName = m_r.candidateName;
        if (m_candidateName.size() < 3 || m_candidateName.substr(m_candidateName.size() - 3) != ".cu")
            m_candidateName += ".cu";
        if (!isPlainCandidateName(m_candidateName))
            return Error{"start the synthesis", "\"" + m_candidateName + "\" is not a plain file name",
                         "use letters, digits, '_', '-' and '.', ending in .cu", {}, {}, {}};
        if (fs::exists(m_r.taskDir / m_candidateName, ec))
            return Error{"start the synthesis", m_candidateName + " already exists in the task folder", "give another --name",
                         (m_r.taskDir / m_candidateName).string(), {}, {}};
    }
    if (auto opened = openRunFolder(); !opened)
        return opened.error();
    if (m_candidateName.empty())
        m_candidateName = "synth-" + m_runId + ".cu";

    m_trace = ojson::object();
    m_trace["schema_version"] = 1;
    m_trace["kind"] = "synthesis";
    m_trace["run_id"] = m_runDir.filename().string();
    m_trace["started_at"] = utcNow();
    m_trace["request"] = m_r.request;
    m_trace["task_dir"] = m_r.taskDir.string();
    ojson models = ojson::array();
    for (size_t i = 0; i < m_r.models.size(); ++i) {
        const ModelConfig& m = m_r.models[i];
        // The variable's name only: the key itself never reaches a file.
        models.push_back(ojson{{"tier", i}, {"provider", providerName(m.provider)}, {"base_url", displayUrl(m.baseUrl)}, {"model", m.model},
                               {"api_key_env", m.apiKeyEnv}, {"price_in_per_mtok", m.priceInPerMTok},
                               {"price_out_per_mtok", m.priceOutPerMTok}});
    }
    m_trace["models"] = models;
    const Budget& b = m_r.budget;
    m_trace["budget"] = ojson{{"max_attempts", b.maxAttempts}, {"perf_rounds", b.perfRounds}, {"polish", b.polish},
                              {"max_usd", b.maxUsd}, {"max_tokens", b.maxTokens}, {"max_seconds", b.maxSeconds},
                              {"escalate_after", b.escalateAfter}};
    m_trace["stages"] = ojson::array();
    for (Stage s : {Stage::Interview, Stage::Codegen, Stage::Correctness, Stage::Performance, Stage::Polish})
        m_trace["stages"].push_back(ojson{{"stage", stageName(s)}, {"status", "pending"}, {"attempts", 0}, {"tokens_in", 0LL},
                                          {"tokens_out", 0LL}, {"usd", 0.0}, {"seconds", 0.0}, {"steps", ojson::array()}});
    m_trace["outcome"] = "running";
    write("request.md", m_r.request + "\n");
    save();

    // 1. The spec: the existing task, or the interview's accepted proposal.
    if (existing) {
        if (auto frozen = freezeExisting(); !frozen)
            return finish("refused", Stage::Interview, frozen.error().message());
        m_trace["spec_source"] = "existing task";
    } else {
        bool accepted = false;
        if (auto stop = interview(accepted))
            return finish(stop->outcome, Stage::Interview, stop->reason);
        m_trace["spec_source"] = "interview";
    }
    m_specHash = specHash(m_spec);
    write("spec.json", m_spec.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    m_trace["spec"] = ojson{{"file", "spec.json"}, {"hash", m_specHash}, {"task", m_task->name}};
    save();

    // 2.–3. Codegen (a reply that compiles), then correctness (one that passes).
    codegenPromptCache = codegenPrompt();
    bool reached = false;
    if (auto stop = kernelStage(Stage::Codegen, codegenPromptCache, b.maxAttempts, reached))
        return finish(stop->outcome, Stage::Codegen, stop->reason);
    if (!reached)
        return finish("no_candidate", Stage::Codegen, "no kernel compiled in " + std::to_string(b.maxAttempts) + " attempts");
    if (!m_best) {
        if (auto stop = kernelStage(Stage::Correctness, codegenPromptCache, b.maxAttempts, reached))
            return finish(stop->outcome, Stage::Correctness, stop->reason);
        if (!reached)
            return finish("no_candidate", Stage::Correctness,
                          "no kernel passed the verifier in " + std::to_string(b.maxAttempts) + " attempts");
    } else {
        setStatus(m_trace, Stage::Correctness, "done", "the first kernel that compiled also passed");
    }

    // 4.–5. Performance and polish work on the best correct kernel; a stop keeps it.
    // A stop there (a budget, a server or runner failure) still adds the best correct kernel;
    // only Cancel adds nothing, and says where the kernel is.
    std::string stopNote;
    std::optional<Stop> late = performance();
    Stage lateStage = Stage::Performance;
    if (!late) {
        late = polish();
        lateStage = Stage::Polish;
    }
    const std::string bestFile = (m_runDir / m_trace["best_step_file"].get<std::string>()).string();
    if (late) {
        if (late->outcome == "cancelled")
            return finish("cancelled", lateStage, "cancelled by the user; the best correct kernel so far is " + bestFile);
        stopNote = late->reason;
    }

    // The best kernel joins the task, if the spec is still the one frozen.
    auto now = loadTask(m_r.taskDir);
    if (!now)
        return finish("error", Stage::Polish, "task.json does not load any more (" + now.error().message()
                                                  + "); the best kernel is " + bestFile);
    if (specHash(taskToJson(*now)) != m_specHash)
        return finish("error", Stage::Polish, "task.json changed during the synthesis; the best kernel is " + bestFile);
    const std::string name = m_candidateName;
    ojson entry = m_best->entry;
    entry.erase("file");
    ojson named = ojson::object();
    named["file"] = name;
    for (auto it = entry.begin(); it != entry.end(); ++it)
        named[it.key()] = it.value();
    named["description"] = entry.value("description", std::string("synthesized")) + " (synthesized with "
                           + m_r.models[size_t(m_best->tier)].model + ", run " + m_runId + ")";
    auto added = appendCandidate(m_r.taskDir, name, m_best->source, named, "add the synthesized candidate",
                                 "give another name with --name");
    if (!added)
        return finish("error", Stage::Polish, added.error().message() + "; the kernel stays in the run folder");
    m_trace["candidate"] = ojson{{"file", name}, {"from_step", m_trace["best_step"]}, {"speedup", m_best->speedup ? json(*m_best->speedup) : json()},
                                 {"compile_speedup", m_best->compileSpeedup ? json(*m_best->compileSpeedup) : json()}};
    std::string reason = "added " + name + (m_best->speedup ? ", " + std::to_string(*m_best->speedup).substr(0, 4) + "x over eager LibTorch" : "");
    if (!stopNote.empty())
        reason += " (stopped early: " + stopNote + ")";
    return finish("candidate", Stage::Polish, reason);
}

} // namespace

Result<SynthResult> synthesize(const SynthRequest& request, const SynthHooks& hooks, const CancelToken& cancel)
{
    Run run(request, hooks, cancel);
    try {
        return run.go();
    } catch (const std::exception& e) {
        return run.crashed(e.what());
    }
}

} // namespace kf::synth
