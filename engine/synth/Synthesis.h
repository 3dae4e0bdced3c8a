#pragma once
// Kernel synthesis with a language model (docs/synthesis.md): interview → codegen → correctness
// → performance → polish. The model proposes; the engine decides. The task the model proposes is
// validated by the task loader and frozen once the user accepts it; every kernel goes through
// NVRTC for every architecture of the task, then the runner's verify (held-out shapes included)
// and bench, exactly as a hand-written candidate would; the best correct kernel is added to the
// task at the end, and promotion stays a separate step through the same gates.
//
// Everything the loop needs from outside comes through SynthHooks, so the CLI, the workbench and
// the tests drive the same code: the model call (ModelClient, one per tier), the runner (a
// RunSession), the user's answers and acceptance, and progress events. Every prompt, reply,
// candidate and report is written to the run folder as it happens, so Cancel or a crash keeps
// them all; synthesis.json (docs/synthesis-schema.md) is rewritten after every step.

#include "engine/compile/CompileTypes.h"
#include "engine/core/Result.h"
#include "engine/protocol/RunReport.h"
#include "engine/runner/RunSettings.h"
#include "engine/synth/ModelClient.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kf::synth {

enum class Stage { Interview, Codegen, Correctness, Performance, Polish };
const char* stageName(Stage s);

/// Limits of one run. Zero means no limit where it says so.
struct Budget {
    int maxAttempts = 4;        ///< model replies per stage (interview, codegen, correctness, polish)
    int perfRounds = 3;         ///< performance: faster versions asked for (0: skip the stage)
    bool polish = true;
    double maxUsd = 0;          ///< whole run, from the models' prices (0: no limit)
    long long maxTokens = 0;    ///< whole run, in + out (0: no limit)
    double maxSeconds = 0;      ///< whole run, wall time (0: no limit)
    int escalateAfter = 2;      ///< failed replies in a row before the stronger model takes over
    double plateau = 0.02;      ///< performance: a gain below this twice in a row ends the stage
};

struct SynthRequest {
    std::string request;                    ///< what the user asked for, in their words
    /// The task folder. With a task.json in it, its spec is frozen as it is and the interview is
    /// skipped; otherwise the accepted proposal is written there as a new task.
    std::filesystem::path taskDir;
    /// An existing task whose reference the proposal must keep (interview only): the model may
    /// choose shapes and constraints, never what the kernel is compared against.
    std::filesystem::path referenceTask;
    std::string candidateName;              ///< the added candidate's file; empty: synth-<run>.cu
    std::filesystem::path runDir;           ///< empty: <taskDir>/.synthesis/<run id>
    std::vector<ModelConfig> models;        ///< [0] the model, [1] (optional) the escalation model
    Budget budget;
    std::string skills = "auto";            ///< the prompt's skills: auto | none | a,b
    std::vector<std::filesystem::path> skillDirs;
    int heldOut = 2;                        ///< held-out shapes per verify
    bool offerGenerated = true;             ///< show the op-tape generator's kernel as a starting point
    bool profile = true;                    ///< profile each correct kernel and send the hints back
};

/// One model call as the loop makes it; the default model hook sends it with ModelClient.
struct ModelCall {
    int tier = 0;
    Stage stage = Stage::Codegen;
    std::string system;
    std::vector<ChatMessage> messages;
};

/// Progress for a user interface: the stage, streamed text, each step's result, totals.
struct SynthEvent {
    enum class Type { Stage, Text, Step, Note, Totals };
    Type type = Type::Note;
    Stage stage = Stage::Interview;
    std::string text;                       ///< Text: a delta; Step and Note: a sentence; Stage: its name
    nlohmann::json data;                    ///< Step: the step's trace entry; Totals: the totals
};

struct SynthHooks {
    /// The model. Empty: ModelClient(request.models[call.tier]).complete.
    std::function<Result<ModelReply>(const ModelCall& call, const TextFn& onText, const std::atomic<bool>* cancel)> model;
    /// The runner: verify or bench `file` (an entry of `task`) with `source`. A report whose
    /// verdict is "error" is the kernel's failure (it crashed, timed out); an Error means nothing
    /// could run (no runner, no GPU) and ends the synthesis.
    using RunFn = std::function<Result<protocol::RunReport>(RunKind kind, const Task& task, const std::string& file,
                                                            const std::string& source, const RunSettings& settings,
                                                            const CancelToken& cancel)>;
    RunFn run;
    /// The user's answers to the model's questions (one per question); empty: "choose yourself".
    std::function<std::vector<std::string>(const std::vector<std::string>& questions)> answer;
    /// Whether the user accepts the proposed task (shown with the model's assumptions).
    std::function<bool(const nlohmann::ordered_json& taskJson, const std::vector<std::string>& assumptions)> accept;
    std::function<void(const SynthEvent&)> onEvent;
};

struct Totals {
    long long tokensIn = 0, tokensOut = 0;
    double usd = 0;
    double seconds = 0;
    int modelCalls = 0;
    int candidates = 0;
    nlohmann::json toJson() const;
};

/// How a run ended.
struct SynthResult {
    /// candidate: one was added to the task; no_candidate: no kernel was correct (or no proposal
    /// usable) within the budget; refused: the user did not accept the proposed task, or the
    /// existing task does not load; cancelled; error: the model or the runner could not be
    /// reached, or task.json changed during the run (exit code 3 in the CLI).
    std::string outcome;
    std::string failedStage;                ///< the stage that ended the run, when it did not succeed
    std::string reason;                     ///< one sentence
    std::filesystem::path runDir;
    std::filesystem::path taskDir;
    std::string candidate;                  ///< the file added to the task
    std::optional<double> speedup;          ///< its geometric-mean speedup over eager LibTorch
    std::optional<double> compileSpeedup;   ///< over torch.compile, when the runner measured it
    Totals totals;
};

/// Runs the whole loop. Errors only for a request that cannot start (no model configured, a task
/// folder that is a file); every other ending is a SynthResult with its run folder.
Result<SynthResult> synthesize(const SynthRequest& request, const SynthHooks& hooks, const CancelToken& cancel);

/// Creates `<taskDir>/.synthesis/<UTC yyyymmdd-hhmmss>`, or with "-2", "-3"… when that exists
/// (atomically: two runs started in one second get different folders). A run without
/// SynthRequest::runDir uses it; the workbench calls it first so it can read the trace while the
/// run writes it.
Result<std::filesystem::path> createRunFolder(const std::filesystem::path& taskDir);

/// What synthesis.json (docs/synthesis-schema.md; the run rewrites it after every step) says of
/// the stages and the kernels so far: the part a view of a run in flight shows.
struct SynthProgress {
    struct StageRow {
        std::string stage, status, reason;
    };
    struct KernelRow {
        std::string file;                   ///< relative to the run folder ("01-codegen.cu")
        std::string result;                 ///< one sentence: what became of it
        std::optional<double> speedup;      ///< over eager LibTorch, once benchmarked
    };
    std::vector<StageRow> stages;
    std::vector<KernelRow> kernels;         ///< every step that cut a kernel, in order
};
/// Reads the trace in `runDir` (the reader beside Run::save, its writer). An Error names the file
/// and the JSON pointer of what does not read: a missing file, bad JSON, another schema, a field
/// of the wrong type. Keys this view does not show are not looked at.
Result<SynthProgress> readSynthProgress(const std::filesystem::path& runDir);

/// The cost of `reply` under `model`'s prices, in US dollars.
double costOf(const ModelConfig& model, long long tokensIn, long long tokensOut);

} // namespace kf::synth
