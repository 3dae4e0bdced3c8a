// The run itself (engine/synth/SynthRun.h): its folder, trace, budgets and model calls, and how it
// ends; synthesize(), the entry point.
#include "engine/synth/SynthRun.h"

namespace kf::synth {

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

namespace detail {

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

std::string fixed(double v, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

bool underRunFolders(const std::string& dir)
{
    const fs::path p = fs::path(dir).lexically_normal();
    return p.begin() != p.end() && p.begin()->string() == ".synthesis";
}

std::string specHash(const json& taskJson)
{
    json t = taskJson;
    t.erase("candidates");
    return hashHex(t.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

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

void setStatus(ojson& trace, Stage stage, const std::string& status, const std::string& reason)
{
    for (auto& st : trace["stages"])
        if (st["stage"] == stageName(stage)) {
            st["status"] = status;
            if (!reason.empty())
                st["reason"] = reason;
        }
}

bool fatalModelError(const Error& e)
{
    return e.kind != kModelMalformed && e.kind != kModelTooLarge;
}

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
            return Error::inFile(m_runDir.string(), {}, "start the synthesis", "the run folder must be new or empty", "give another --run-dir");
        return {};
    }
    auto created = createRunFolder(m_r.taskDir);
    if (!created)
        return created.error();
    m_runDir = *created;
    m_runId = m_runDir.filename().string();
    return {};
}

std::optional<Stop> Run::stopNow()
{
    if (m_cancel.cancelled())
        return Stop{"cancelled", "cancelled by the user"};
    const Budget& b = m_r.budget;
    if (b.maxUsd > 0 && m_totals.usd >= b.maxUsd)
        return Stop{"no_candidate", "the budget of $" + fixed(b.maxUsd, 2) + " is spent"};
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
        return Error::failed("start the synthesis", "no model is configured", "give --model and --base-url, or set them in the settings");
    std::error_code ec;
    const bool existing = fs::is_regular_file(m_r.taskDir / "task.json", ec);
    if (auto checked = checkStart(existing); !checked)
        return checked.error();
    if (auto opened = openRunFolder(); !opened)
        return opened.error();
    if (m_candidateName.empty())
        m_candidateName = "synth-" + m_runId + ".cu";
    startTrace();

    if (auto ended = freezeSpec(existing))
        return *ended;
    if (auto ended = firstCorrectKernel())
        return *ended;

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
    return addBest(stopNote, bestFile);
}

Result<void> Run::checkStart(bool existing)
{
    std::error_code ec;
    if (fs::exists(m_r.taskDir, ec) && !fs::is_directory(m_r.taskDir, ec))
        return Error::inFile(m_r.taskDir.string(), {}, "start the synthesis", "the task folder is a file", "give a folder");
    if (existing && !m_r.referenceTask.empty())
        return Error::inFile(m_r.taskDir.string(), {}, "start the synthesis", "the task folder already has a task.json; --reference is for a new task", "leave out --reference, or give a new --task-dir");
    if (!m_r.candidateName.empty()) {
        // Checked before anything is spent: a name the end would refuse wastes the whole budget.
        m_candidateName = m_r.candidateName;
        if (m_candidateName.size() < 3 || m_candidateName.substr(m_candidateName.size() - 3) != ".cu")
            m_candidateName += ".cu";
        if (!isPlainCandidateName(m_candidateName))
            return Error::failed("start the synthesis", "\"" + m_candidateName + "\" is not a plain file name", "use letters, digits, '_', '-' and '.', ending in .cu");
        if (fs::exists(m_r.taskDir / m_candidateName, ec))
            return Error::inFile((m_r.taskDir / m_candidateName).string(), {}, "start the synthesis", m_candidateName + " already exists in the task folder", "give another --name");
    }
    return {};
}

void Run::startTrace()
{
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
}

std::optional<SynthResult> Run::freezeSpec(bool existing)
{
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
    return std::nullopt;
}

std::optional<SynthResult> Run::firstCorrectKernel()
{
    const Budget& b = m_r.budget;
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
    return std::nullopt;
}

SynthResult Run::addBest(const std::string& stopNote, const std::string& bestFile)
{
    // The best kernel joins the task, if the spec is still the one frozen.
    auto now = loadTask(m_r.taskDir);
    if (!now)
        return finish("error", Stage::Polish, "task.json does not load any more (" + now.error().message()
                                                  + "); the best kernel is " + bestFile);
    if (specHash(taskToJson(*now)) != m_specHash)
        return finish("error", Stage::Polish, "task.json changed during the synthesis; the best kernel is " + bestFile);
    const std::string name = m_candidateName;
    ojson named = candidateEntry(name, m_best->entry);
    named["description"] = m_best->entry.value("description", std::string("synthesized")) + " (synthesized with "
                           + m_r.models[size_t(m_best->tier)].model + ", run " + m_runId + ")";
    auto added = appendCandidate(m_r.taskDir, name, m_best->source, named, "add the synthesized candidate",
                                 "give another name with --name");
    if (!added)
        return finish("error", Stage::Polish, added.error().message() + "; the kernel stays in the run folder");
    m_trace["candidate"] = ojson{{"file", name}, {"from_step", m_trace["best_step"]}, {"speedup", m_best->speedup ? json(*m_best->speedup) : json()},
                                 {"compile_speedup", m_best->compileSpeedup ? json(*m_best->compileSpeedup) : json()}};
    std::string reason = "added " + name + (m_best->speedup ? ", " + fixed(*m_best->speedup, 2) + "x over eager LibTorch" : "");
    if (!stopNote.empty())
        reason += " (stopped early: " + stopNote + ")";
    return finish("candidate", Stage::Polish, reason);
}

} // namespace detail

Result<std::filesystem::path> createRunFolder(const std::filesystem::path& taskDir)
{
    // create_directory is atomic: of two runs started in the same second, one gets "-2".
    namespace fs = std::filesystem;
    std::error_code ec;
    const std::string stamp = detail::runId();
    const fs::path base = taskDir / ".synthesis";
    fs::create_directories(base, ec);
    fs::path dir;
    for (int n = 1; n < 1000; ++n) {
        dir = base / (n == 1 ? stamp : stamp + "-" + std::to_string(n));
        if (fs::create_directory(dir, ec))
            return dir;
        if (ec)
            break;
    }
    return Error::inFile(dir.string(), {}, "start the synthesis", "cannot create the run folder" + (ec ? ": " + ec.message() : std::string()), "check the permissions");
}

Result<SynthResult> synthesize(const SynthRequest& request, const SynthHooks& hooks, const CancelToken& cancel)
{
    detail::Run run(request, hooks, cancel);
    try {
        return run.go();
    } catch (const std::exception& e) {
        return run.crashed(e.what());
    }
}

} // namespace kf::synth
