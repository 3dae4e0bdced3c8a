#include "engine/runner/RunSettings.h"
#include "engine/protocol/Verdict.h"

#include "engine/core/Hash.h"
#include "engine/task/HeldOut.h"

#include <filesystem>
#include <random>

namespace kf {

std::optional<ShapeBinding> defaultProfileShape(const Task& task)
{
    for (const auto* set : {&task.benchmarkShapes, &task.testShapes}) {
        const ShapeBinding* best = nullptr;
        std::int64_t most = -1;
        for (const auto& b : *set)
            if (const std::int64_t n = task.totalElements(b); n > most) {
                most = n;
                best = &b;
            }
        if (best)
            return *best;
    }
    return std::nullopt;
}

std::vector<ShapeBinding> sanitizeShapes(const Task& task)
{
    const ShapeBinding* smallest = nullptr;
    const ShapeBinding* partial = nullptr;
    std::int64_t least = -1, leastPartial = -1;
    for (const ShapeBinding& b : task.testShapes) {
        const std::int64_t n = task.totalElements(b);
        if (!smallest || n < least) {
            smallest = &b;
            least = n;
        }
        bool ragged = false;
        for (const auto& [name, value] : b.values)
            ragged = ragged || value % 32 != 0;
        if (ragged && (!partial || n < leastPartial)) {
            partial = &b;
            leastPartial = n;
        }
    }
    std::vector<ShapeBinding> out;
    if (smallest)
        out.push_back(*smallest);
    if (partial && partial != smallest)
        out.push_back(*partial);
    return out;
}

Result<void> resolveSettings(RunKind kind, Task& task, RunSettings& s)
{
    if (kind == RunKind::Verify && !s.sanitizeTools.empty() && s.sanitizeShapes.empty())
        s.sanitizeShapes = sanitizeShapes(task);
    if (s.rtol || s.atol) {
        // The override becomes part of the task as sent, so the report's task hash says the run
        // differed from task.json: exploration, not evidence.
        for (TensorSpec& out : task.outputs) {
            if (s.rtol)
                out.tolerance.rtol = *s.rtol;
            if (s.atol)
                out.tolerance.atol = *s.atol;
            out.toleranceGiven = true;
        }
    }
    if (kind == RunKind::Verify && s.heldOutCount > 0 && s.heldOut.empty()) {
        // Shapes nobody listed, drawn with the replay seed when one is given, else a secret one.
        const std::uint64_t seed = s.seed ? *s.seed : freshSeeds(1, std::nullopt).front();
        s.heldOut = deriveHeldOutShapes(task, seed, s.heldOutCount);
    }
    if (kind == RunKind::Profile && s.onlyShapes.empty()) {
        const auto shape = defaultProfileShape(task);
        if (!shape)
            return Error::failed("profile task " + task.name, "the task has no shapes to profile", "add some under \"shapes\" in task.json, or name one");
        s.onlyShapes = {*shape};
        s.setName = task.benchmarkShapes.empty() ? "tests" : "benchmarks";
    }
    return {};
}

protocol::CandidateRef candidateRef(const Candidate& candidate, const CompileRequest& request, const CompileResult& result)
{
    protocol::CandidateRef c;
    c.file = candidate.file;
    c.sourceHash = hashHex(request.source);
    c.arch = request.options.arch;
    c.compileOptions = request.options.nvrtcArguments();
    c.loweredNames = {result.loweredNames.begin(), result.loweredNames.end()};
    return c;
}

protocol::RunRequest buildRunRequest(RunKind kind, const TaskPayload& task, const Candidate& candidate,
                                     const CompileRequest& request, const CompileResult& result,
                                     const std::string& nvrtcVersion, const RunSettings& s)
{
    const bool oneTrial = kind != RunKind::Verify;
    const protocol::CandidateRef ref = candidateRef(candidate, request, result);
    protocol::RunRequest r;
    r.kind = kind;
    r.taskJson = task.json;
    r.taskDir = task.directory;
    r.candidateFile = candidate.file;
    r.cubin = result.cubin;
    r.loweredNames = ref.loweredNames;
    r.arch = ref.arch;
    r.sourceHash = ref.sourceHash;
    r.taskHash = task.hash;
    r.compileOptions = ref.compileOptions;
    r.nvrtcVersion = nvrtcVersion;
    r.trials = oneTrial ? 1 : s.trials;
    r.seeds = freshSeeds(r.trials, s.seed);
    r.shapes = s.shapes;
    r.launchTimeoutMs = s.launchTimeoutMs;
    if (kind == RunKind::Profile) {
        // One shape, chosen by the policy (defaultProfileShape when the user named none).
        r.onlyShapes = s.onlyShapes;
        r.setName = s.setName;
        r.profile.baseline = s.profileBaseline;
    } else if (kind == RunKind::Bench) {
        r.bench = s.bench;
    } else {
        r.onlyShapes = s.onlyShapes;
        r.setName = s.setName;
        r.heldOut = s.heldOut;
        r.firstTrial = s.firstTrial;
        r.samples = s.samples;
        if (!s.dumpDir.empty())
            r.dump = protocol::DumpSettings{std::filesystem::absolute(s.dumpDir).lexically_normal().string(), s.dumpMaxBytes,
                                            s.dumpAllFailing};
        if (!s.inputsDir.empty())
            r.inputsDir = std::filesystem::absolute(s.inputsDir).lexically_normal().string();
        if (!s.sanitizeTools.empty() && !s.sanitizeShapes.empty())
            r.sanitize = protocol::SanitizeSettings{s.sanitizeTools, s.sanitizeShapes};
    }
    return r;
}

protocol::RunReport errorReport(RunKind kind, const Task& task, const std::string& taskHash, const protocol::CandidateRef& candidate,
                           const protocol::Hello& hello, const Error& e, const std::string& startedAt, double durationMs)
{
    protocol::Header h;
    h.kind = kind == RunKind::Bench     ? protocol::ReportKind::Performance
             : kind == RunKind::Profile ? protocol::ReportKind::Profile
                                        : protocol::ReportKind::Correctness;
    h.verdict = protocol::Verdict::Error;
    h.summary = e.why;
    h.task = {task.name, taskHash};
    h.candidate = candidate;
    h.environment = hello.environment();
    h.startedAt = startedAt;
    h.durationMs = durationMs;
    h.error = Error::failed(e.what, e.why, e.hint);
    return protocol::RunReport::ofError(std::move(h));
}

std::vector<std::uint64_t> freshSeeds(int count, const std::optional<std::uint64_t>& fixed)
{
    std::vector<std::uint64_t> seeds;
    std::random_device rd;
    for (int i = 0; i < count; ++i)
        seeds.push_back(fixed ? *fixed + static_cast<std::uint64_t>(i) : (std::uint64_t(rd()) << 32) ^ rd());
    return seeds;
}

} // namespace kf
