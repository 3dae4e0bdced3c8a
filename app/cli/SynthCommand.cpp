// `kforge synth "<request>"`: kernel synthesis with a language model (engine/synth/Synthesis.h,
// docs/synthesis.md). The model comes from models.json (engine/synth/ModelsConfig.h) or from
// --provider/--base-url/--model; every kernel it writes goes through NVRTC, the runner's verify
// and bench like any candidate, and the best correct one is added to the task.
#include "SynthCommand.h"
#include "EndpointOption.h"

#include "ExitCodes.h"
#include "RunnerSession.h"
#include "engine/synth/ModelsConfig.h"
#include "engine/synth/Synthesis.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdio>
#include <iostream>
#include <memory>
#include <unistd.h>

namespace kf::cli {

namespace {

struct SynthArgs {
    std::string request, taskDir, reference, name, runDir;
    std::string model, escalate, provider, baseUrl, apiKeyEnv;
    double priceIn = -1, priceOut = -1;
    double budgetUsd = 0, budgetSeconds = 0;
    long long budgetTokens = 0;
    int maxAttempts = 4, perfRounds = 3, heldOut = 2, escalateAfter = 2;
    bool noPolish = false, noProfile = false, yes = false, json = false, quiet = false;
    std::string skills = "auto";
    std::vector<std::string> skillDirs;
    std::string runnerPath, arch;
    EndpointArgs endpoint;
};

// The model of a run: a name in models.json, or one given on the command line.
// Command-line settings (--base-url, --provider, --api-key-env, prices) apply to the primary model
// only (`overrides`); an escalation model keeps its models.json entry.
Result<synth::ModelConfig> modelFor(const SynthArgs& a, const synth::ModelsConfig& config, const std::string& name, bool overrides)
{
    synth::ModelConfig m;
    if (const synth::NamedModel* named = config.find(name)) {
        m = named->config;
        if (!overrides)
            return m;
    } else if (!a.baseUrl.empty() && overrides) {
        m.model = name;
    } else {
        std::string known;
        for (const synth::NamedModel& n : config.models)
            known += (known.empty() ? "" : ", ") + n.name;
        return Error::inFile(synth::modelsConfigPath().string(), {}, "choose the model", name.empty() ? "no model given and models.json names no default" : "models.json has no model \"" + name + "\"", known.empty() ? "give --base-url and --model (and --provider anthropic for Claude), or add models in the "
                                     "workbench's settings (" + synth::modelsConfigPath().string() + ")"
                                   : "one of: " + known + "; or give --base-url with --model");
    }
    if (!a.provider.empty() && !synth::parseProvider(a.provider, m.provider))
        return Error::failed("choose the model", "--provider must be openai or anthropic");
    if (!a.baseUrl.empty())
        m.baseUrl = a.baseUrl;
    if (!a.apiKeyEnv.empty()) {
        if (!synth::isKeyVariableName(a.apiKeyEnv))
            return Error::failed("choose the model", "--api-key-env names the environment variable that holds the key (upper-case letters, "
                                             "digits and _), never the key itself", "export the key, e.g. export MY_API_KEY=..., and pass --api-key-env MY_API_KEY");
        m.apiKeyEnv = a.apiKeyEnv;
    }
    if (a.priceIn >= 0)
        m.priceInPerMTok = a.priceIn;
    if (a.priceOut >= 0)
        m.priceOutPerMTok = a.priceOut;
    if (m.model.empty())
        return Error::failed("choose the model", "no model name", "give --model");
    return m;
}

// What a model wrote, made safe for a terminal: control characters (escape sequences that could
// retitle the window, write the clipboard or clear the screen) become '?', except newline and tab.
std::string printable(std::string_view text)
{
    std::string out(text);
    for (char& c : out) {
        const unsigned char u = static_cast<unsigned char>(c);
        if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f)
            c = '?';
    }
    return out;
}

std::string money(double usd)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "$%.4f", usd);
    return buf;
}

// The synthesis request of the command line, with its primary model and, when it differs, the
// escalation model.
Result<synth::SynthRequest> requestFor(const SynthArgs& a, const synth::ModelsConfig& config)
{
    synth::SynthRequest r;
    r.request = a.request;
    r.taskDir = a.taskDir;
    r.referenceTask = a.reference;
    r.candidateName = a.name;
    r.runDir = a.runDir;
    r.skills = a.skills;
    for (const std::string& d : a.skillDirs)
        r.skillDirs.emplace_back(d);
    r.heldOut = a.heldOut;
    r.profile = !a.noProfile;
    r.budget.maxAttempts = a.maxAttempts;
    r.budget.perfRounds = a.perfRounds;
    r.budget.polish = !a.noPolish;
    r.budget.maxUsd = a.budgetUsd;
    r.budget.maxTokens = a.budgetTokens;
    r.budget.maxSeconds = a.budgetSeconds;
    r.budget.escalateAfter = a.escalateAfter;
    auto primary = modelFor(a, config, a.model.empty() ? config.defaultModel : a.model, true);
    if (!primary)
        return primary.error();
    r.models.push_back(*primary);
    const std::string escalation = a.escalate.empty() ? config.escalationModel : a.escalate;
    if (!escalation.empty() && escalation != (a.model.empty() ? config.defaultModel : a.model)) {
        auto stronger = modelFor(a, config, escalation, false);
        if (!stronger)
            return stronger.error();
        r.models.push_back(*stronger);
    }
    return r;
}

// The terminal side of a run: the model's questions, the acceptance of its task and the progress
// lines. Questions are asked only on a terminal without --yes.
struct SynthConsole {
    const SynthArgs& a;
    bool tty = isatty(STDIN_FILENO) && isatty(STDERR_FILENO);
    bool chatty = !a.json && !a.quiet;
    bool midLine = false;   ///< streamed model text left the cursor mid-line

    std::vector<std::string> answer(const std::vector<std::string>& questions) const
    {
        std::vector<std::string> answers;
        if (!tty || a.yes) {
            if (chatty)
                for (const std::string& q : questions)
                    std::cerr << "  the model asks: " << printable(q) << "\n";
            if (chatty)
                std::cerr << "  (no terminal or --yes: the model chooses and lists its assumptions)\n";
            return answers;
        }
        for (const std::string& q : questions) {
            std::cerr << "\nThe model asks: " << printable(q) << "\n> " << std::flush;
            std::string line;
            if (!std::getline(std::cin, line))
                return std::vector<std::string>{};
            answers.push_back(line);
        }
        return answers;
    }

    bool accept(const nlohmann::ordered_json& task, const std::vector<std::string>& assumptions) const
    {
        // Shown whenever the user is asked, even with --quiet or --json: nobody accepts unseen.
        if (chatty || (!a.yes && tty)) {
            std::cerr << "\nThe proposed task (" << printable(task.value("name", std::string("?"))) << "):\n"
                      << printable(task.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)) << "\n";
            for (const std::string& s : assumptions)
                std::cerr << "  assumption: " << printable(s) << '\n';
        }
        if (a.yes)
            return true;
        if (!tty) {
            std::cerr << "kforge: the proposed task needs your acceptance: run on a terminal, or pass --yes to accept it\n";
            return false;
        }
        std::cerr << "Accept this task? [y/N] " << std::flush;
        std::string line;
        return std::getline(std::cin, line) && (line == "y" || line == "Y" || line == "yes");
    }

    void onEvent(const synth::SynthEvent& e)
    {
        if (!chatty)
            return;
        using T = synth::SynthEvent::Type;
        switch (e.type) {
        case T::Stage:
            std::cerr << (midLine ? "\n" : "") << "== " << e.text << '\n';
            midLine = false;
            break;
        case T::Step:
            std::cerr << (midLine ? "\n" : "") << "  [" << e.data.value("step", 0) << "] " << e.text << "...\n";
            midLine = false;
            break;
        case T::Note:
            if (!e.text.empty()) {
                std::cerr << (midLine ? "\n" : "") << "  " << printable(e.text) << '\n';
                midLine = false;
            }
            break;
        case T::Text:
            if (tty) {   // streamed text only where someone watches; the run folder has every reply
                std::cerr << printable(e.text);
                midLine = !e.text.empty() && e.text.back() != '\n';
            }
            break;
        case T::Totals: break;
        }
    }
};

void printResult(const SynthArgs& a, const synth::SynthResult& s, bool midLine)
{
    if (a.json) {
        nlohmann::ordered_json j{{"outcome", s.outcome}, {"failed_stage", s.failedStage.empty() ? nlohmann::json() : nlohmann::json(s.failedStage)},
                                 {"reason", s.reason}, {"run_dir", s.runDir.string()}, {"task_dir", s.taskDir.string()},
                                 {"candidate", s.candidate.empty() ? nlohmann::json() : nlohmann::json(s.candidate)},
                                 {"speedup", s.speedup ? nlohmann::json(*s.speedup) : nlohmann::json()},
                                 {"totals", s.totals.toJson()}};
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        return;
    }
    std::cout << (midLine ? "\n" : "") << "synth: " << s.outcome << (s.failedStage.empty() ? "" : " (in " + s.failedStage + ")") << ": "
              << s.reason << "\n  run folder: " << s.runDir.string() << "\n  " << s.totals.modelCalls << " model call(s), "
              << s.totals.tokensIn << " tokens in, " << s.totals.tokensOut << " out, " << money(s.totals.usd) << ", "
              << int(s.totals.seconds) << " s\n";
    if (s.outcome == "candidate")
        std::cout << "  next: kforge promote " << s.taskDir.string() << " --candidate " << s.candidate << '\n';
}

int exitCodeFor(const std::string& outcome)
{
    if (outcome == "candidate")
        return kExitOk;
    if (outcome == "cancelled")
        return kExitInterrupted;
    if (outcome == "error")
        return kExitEnvironment;
    if (outcome == "refused")
        return kExitUsage;
    return kExitFailed;
}

int runSynth(const SynthArgs& a)
{
    auto config = synth::readModelsConfig(synth::modelsConfigPath());
    if (!config)
        return fail(config.error(), kExitUsage);
    auto r = requestFor(a, *config);
    if (!r)
        return fail(r.error(), kExitUsage);

    // The runner starts when the first kernel compiles: the interview and codegen need no GPU.
    std::optional<Endpoint> endpoint;
    if (auto rc = resolveEndpointOrExit(a.endpoint, endpoint))
        return *rc;
    auto runner = std::make_unique<RunnerSession>(a.runnerPath, a.arch, endpoint);
    std::optional<int> runnerFailed;
    bool started = false;
    SynthConsole console{a};

    synth::SynthHooks hooks;
    hooks.run = [&](RunKind kind, const Task& task, const std::string& file, const std::string& source, const RunSettings& settings,
                    const CancelToken&) -> Result<protocol::RunReport> {
        if (!started) {
            started = true;
            runnerFailed = runner->start();
        }
        if (runnerFailed)
            return Error::failed("run the kernel", "the runner did not start (its reason is printed above)", "verify and bench need a GPU: run kforge doctor");
        auto outcome = runner->run(task, RunPlan{kind, file, settings, source, {}}, file + (kind == RunKind::Verify ? " verify" : " bench"));
        runner->progress().clear();
        if (!outcome)
            return outcome.error();
        return std::move(outcome->report);
    };
    hooks.answer = [&](const std::vector<std::string>& questions) { return console.answer(questions); };
    hooks.accept = [&](const nlohmann::ordered_json& task, const std::vector<std::string>& assumptions) {
        return console.accept(task, assumptions);
    };
    hooks.onEvent = [&](const synth::SynthEvent& e) { console.onEvent(e); };

    auto result = synth::synthesize(*r, hooks, runner->cancel());
    if (!result)
        return fail(result.error(), kExitUsage);
    printResult(a, *result, console.midLine);
    return exitCodeFor(result->outcome);
}

} // namespace

void addSynthCommand(CLI::App& app, int& exitCode)
{
    auto a = std::make_shared<SynthArgs>();
    CLI::App* cmd = app.add_subcommand("synth", "Write a kernel with a language model: every kernel it sends is verified and benchmarked "
                                                "like yours (docs/synthesis.md)");
    cmd->add_option("request", a->request, "what to build, in words")->required();
    cmd->add_option("--task-dir", a->taskDir, "the task folder: an existing task (its spec is used as it is) or a new folder for the "
                                              "task the model proposes")
        ->required();
    cmd->add_option("--reference", a->reference, "a task whose reference, inputs and outputs the proposed task must keep");
    cmd->add_option("--model", a->model, "a model named in models.json (default: its \"default\"), or any model name with --base-url");
    cmd->add_option("--escalate-to", a->escalate, "the stronger model to switch to after failures (default: models.json's \"escalation\")");
    cmd->add_option("--provider", a->provider, "the wire format with --base-url: openai (Chat Completions) or anthropic (Messages)")
        ->check(CLI::IsMember({"openai", "anthropic"}));
    cmd->add_option("--base-url", a->baseUrl, "the endpoint, e.g. http://127.0.0.1:8000/v1 or https://api.anthropic.com");
    cmd->add_option("--api-key-env", a->apiKeyEnv, "the environment variable that holds the API key (the key itself is never logged)");
    cmd->add_option("--price-in", a->priceIn, "US dollars per million input tokens (for --budget-usd)")->check(CLI::Range(0.0, 1e6));
    cmd->add_option("--price-out", a->priceOut, "US dollars per million output tokens")->check(CLI::Range(0.0, 1e6));
    cmd->add_option("--budget-usd", a->budgetUsd, "stop when the run has cost this much")->check(CLI::Range(0.0, 1e6));
    cmd->add_option("--budget-tokens", a->budgetTokens, "stop after this many tokens in and out")->check(CLI::Range(0LL, 1000000000LL));
    cmd->add_option("--budget-seconds", a->budgetSeconds, "stop after this much wall time")->check(CLI::Range(0.0, 1e7));
    cmd->add_option("--max-attempts", a->maxAttempts, "model replies per stage")->check(CLI::Range(1, 50));
    cmd->add_option("--perf-rounds", a->perfRounds, "faster versions to ask for once a kernel is correct (0: none)")->check(CLI::Range(0, 50));
    cmd->add_option("--escalate-after", a->escalateAfter, "failed replies in a row before the stronger model takes over")
        ->check(CLI::Range(1, 50));
    cmd->add_flag("--no-polish", a->noPolish, "skip the final tidy-up");
    cmd->add_flag("--no-profile", a->noProfile, "do not profile correct kernels (their counter hints go back to the model)");
    cmd->add_option("--held-out", a->heldOut, "held-out shapes per verify (at least 1: no kernel is added unseen)")->check(CLI::Range(1, 16));
    cmd->add_option("--name", a->name, "the added candidate's file name (default: synth-<run>.cu)");
    cmd->add_option("--run-dir", a->runDir, "where the run's prompts, replies and reports go (default: <task>/.synthesis/<run>)");
    cmd->add_option("--skills", a->skills, "skills in the prompt: auto, none, or names separated by commas");
    cmd->add_option("--skills-dir", a->skillDirs, "more skill folders (repeatable; later ones win by name)");
    cmd->add_flag("--yes", a->yes, "accept the proposed task and let the model choose where it would ask");
    cmd->add_flag("--json", a->json, "print the outcome as JSON");
    cmd->add_flag("-q,--quiet", a->quiet, "print only the outcome");
    addRunnerOptions(cmd, &a->runnerPath, &a->endpoint);
    cmd->add_option("--arch", a->arch, "run for this architecture instead of the GPU's");
    cmd->callback([a, &exitCode] { exitCode = runSynth(*a); });
}

} // namespace kf::cli
