#pragma once
// Internal to engine/synth: one synthesis run (engine/synth/Synthesis.h) as a class whose parts
// live in four files: Synthesis.cpp (the run folder, the trace, budgets, model calls, the end),
// SynthInterview.cpp (the spec: interview or an existing task), SynthAttempt.cpp (one reply
// from its blocks to NVRTC, verify, bench and profile) and SynthStages.cpp (the codegen and
// correctness loop, performance, polish). Nothing outside engine/synth includes it.

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

namespace kf::synth::detail {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

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

/// "20261127-153555": the run's UTC start, to the second.
std::string runId();
std::string twoDigits(int n);
/// `v` with `decimals` digits after the point, rounded ("1.15", "$0.50").
std::string fixed(double v, int decimals);
/// Whether a folder of the task (an include folder) lies in .synthesis, where model replies live.
bool underRunFolders(const std::string& dir);
/// The spec's identity: the canonical task without its candidates.
std::string specHash(const json& taskJson);
/// Adds a step to its stage's trace and the stage's sums.
void addStep(ojson& trace, Stage stage, const json& step);
void setStatus(ojson& trace, Stage stage, const std::string& status, const std::string& reason = {});
/// A model error that ends the run: the endpoint cannot be used. Malformed and oversized replies
/// are the model's fault and count as a failed attempt instead.
bool fatalModelError(const Error& e);

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
    /// A failed model call in `stage` that ends the run (Cancel, an endpoint that cannot be
    /// used), with the stage's status set; nullopt for a malformed or oversized reply, which is
    /// a failed attempt.
    std::optional<Stop> endsTheRun(Stage stage, const Error& e);
    void failed(Stage stage);
    void succeeded() { m_failuresInRow = 0; }

    // Stages.
    std::optional<Stop> interview(bool& accepted);
    /// The model asked questions: the user's answers (or leave to choose) go back to it.
    std::optional<Stop> answerQuestions(const SpecReply& parsed, json& step, std::vector<ChatMessage>& messages);
    /// A proposed task: loaded, shown to the user and, when accepted, frozen (`accepted` set).
    /// A Stop ends the run; otherwise a non-empty `problem` is what the model is told.
    std::optional<Stop> considerProposal(const json& proposal, const SpecReply& parsed, const std::optional<Task>& reference,
                                         json& step, std::string& problem, bool& accepted);
    Result<void> freezeExisting();
    std::string codegenPrompt();
    /// `a` becomes the best kernel, and the trace says which step wrote it.
    void keepBest(const Attempt& a);
    /// `stage` ends with `stop`: its status "cancelled" for a cancel, `status` otherwise.
    std::optional<Stop> stopStage(Stage stage, const Stop& stop, const char* status);
    std::optional<Stop> kernelStage(Stage stage, const std::string& firstPrompt, int attempts, bool& reached);
    std::optional<Stop> performance();
    /// A performance round's conversation: the prompt, the best kernel with its feedback, and the
    /// last round's reply that did not get through.
    std::vector<ChatMessage> performanceMessages(double target, const std::string& failedReply,
                                                 const std::string& failedFeedback) const;
    std::optional<Stop> polish();
    Attempt tryKernel(Stage stage, const std::string& reply, int step, json& trace, std::optional<Stop>& stop);
    // tryKernel's steps. A false (or nullopt) ends the attempt: `a` says why, or `stop` is set.
    /// The reply's kernel and launch plan, written to the run folder, as a task with one candidate.
    std::optional<Task> planKernel(const std::string& reply, const std::string& prefix, Attempt& a, json& trace);
    /// NVRTC, for every architecture of the task.
    bool compileKernel(const Task& task, const std::string& prefix, Attempt& a, json& trace, std::optional<Stop>& stop);
    /// The runner: verify with held-out shapes over every shape set, bench, then profile; the
    /// kernel sits in the task folder meanwhile.
    void runKernel(Stage stage, const Task& task, const std::string& prefix, Attempt& a, json& trace, std::optional<Stop>& stop);
    bool benchKernel(const Task& task, const std::string& prefix, Attempt& a, json& trace, std::optional<Stop>& stop);
    /// The profiler's hints, added to the feedback; a profile that cannot run is only noted.
    void profileKernel(const Task& task, const std::string& prefix, Attempt& a, json& trace);
    SynthResult finish(std::string outcome, Stage stage, std::string reason);
    // go()'s steps. A SynthResult from one of them ends the run.
    /// The request's checks that come before anything is spent.
    Result<void> checkStart(bool existing);
    /// The trace's header (request, models, budget, stages pending) and request.md.
    void startTrace();
    /// 1. The spec: the existing task, or the interview's accepted proposal.
    std::optional<SynthResult> freezeSpec(bool existing);
    /// 2.-3. Codegen (a reply that compiles), then correctness (one that passes).
    std::optional<SynthResult> firstCorrectKernel();
    /// The best kernel joins the task, if the spec is still the one frozen.
    SynthResult addBest(const std::string& stopNote, const std::string& bestFile);

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


} // namespace kf::synth::detail
