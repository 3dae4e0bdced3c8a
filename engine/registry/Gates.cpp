#include "engine/registry/Gates.h"
#include "engine/protocol/Verdict.h"

#include "engine/core/Files.h"
#include "engine/protocol/CompileBaseline.h"
#include "engine/task/HeldOut.h"

#include <cmath>
#include <set>
#include <cstdio>
#include <sstream>

namespace kf {

using Json = nlohmann::json;

namespace {

using protocol::BenchReport;
using protocol::RunReport;
using protocol::ShapeId;
using protocol::VerifyReport;

std::string fixed(double v, int digits = 2)
{
    char b[32];
    std::snprintf(b, sizeof b, "%.*f", digits, v);
    return b;
}

template <class Shape>
const Shape* findShape(const std::vector<Shape>& shapes, const ShapeBinding& b, const char* set)
{
    for (const Shape& s : shapes)
        if (s.id.set == set && s.id.sameDims(b.values))
            return &s;
    return nullptr;
}

// A shape of the report (tests or benchmarks set) that failed, e.g. with `--shapes all`.
std::string failedOutsideHeldOut(const VerifyReport& report)
{
    for (const auto& s : report.shapes)
        if (s.id.set != "held_out" && !s.passed)
            return s.id.dimsText();
    return {};
}

// The report's summary fields are claims; the gates believe only what the recorded data shows.
// A report whose claims and data disagree (edited, cut down, or written by someone else than the
// runner) is refused as a whole: these say where it contradicts itself, or nothing.
std::string verifyContradiction(const VerifyReport& r, const Task& task)
{
    bool anyFailed = false;
    for (const auto& s : r.shapes) {
        const std::string where = "shape " + s.id.dimsText() + (s.id.set.empty() ? "" : " [" + s.id.set + "]");
        if (static_cast<std::int64_t>(s.trials.size()) != r.trialsPerShape)
            return where + " lists " + std::to_string(s.trials.size()) + " trial(s) but the report claims " +
                   std::to_string(r.trialsPerShape) + " per shape";
        std::set<std::string> seeds;
        bool allPassed = !s.trials.empty();
        for (const protocol::Trial& t : s.trials) {
            const std::string at = where + " trial " + std::to_string(t.trial);
            if (t.seed.empty() || !seeds.insert(t.seed).second)
                return at + " has no seed of its own (" + (t.seed.empty() ? "none" : "repeats " + t.seed) + ")";
            allPassed = allPassed && t.passed;
            if (!t.passed)
                continue;
            // A passing trial has a record for every output, none of them failing.
            if (t.outputs.size() != task.outputs.size())
                return at + " is marked passed with " + std::to_string(t.outputs.size()) + " output record(s) for " +
                       std::to_string(task.outputs.size()) + " output(s)";
            if (t.failureKind() != FailureKind::None || !t.launchError.empty())
                return at + " is marked passed but its data shows a failure (" + std::string(failureKindName(t.failureKind())) + ")";
            for (const OutputCheck& o : t.outputs)
                if (!o.passed || o.mismatches > 0 || o.unwritten > 0)
                    return at + " is marked passed but output " + o.output + " has " + std::to_string(o.mismatches) + " mismatches";
        }
        if (s.passed && !allPassed)
            return where + " is marked passed but " + (s.trials.empty() ? std::string("has no trials") : "a trial failed");
        anyFailed = anyFailed || !s.passed;
        if (r.discriminates == true) {
            // "Discriminates" is a claim about every shape's negative control: one per output.
            if (s.negativeControl.size() < task.outputs.size())
                return where + " has no negative control for every output, yet the report claims it discriminates";
            for (const NegativeControl& n : s.negativeControl)
                if (!n.discriminates())
                    return where + ": the negative control of " + n.output + " passes, yet the report claims it discriminates";
        }
    }
    if (r.header.verdict == protocol::Verdict::Pass && anyFailed)
        return "the verdict is pass but a shape failed";
    // compute-sanitizer's findings make the runner's verdict "fail" (docs/verification.md).
    if (r.header.verdict == protocol::Verdict::Pass && r.sanitizer && r.sanitizer->ran && !r.sanitizer->clean())
        return "the verdict is pass but compute-sanitizer reports: " + r.sanitizer->firstProblem();
    return {};
}

// The speedup a shape's medians give (baseline ÷ candidate), or NaN when they are not there.
double derivedSpeedup(const protocol::BenchShape& s)
{
    if (!s.candidate.medianMs || !s.baseline.medianMs || !(*s.candidate.medianMs > 0) || !(*s.baseline.medianMs > 0))
        return NAN;
    return *s.baseline.medianMs / *s.candidate.medianMs;
}

std::string benchContradiction(const BenchReport& r)
{
    for (const auto& s : r.shapes) {
        const std::string where = "shape " + s.id.dimsText();
        const double derived = derivedSpeedup(s);
        if (s.speedup && !std::isnan(*s.speedup) &&
            !(std::isfinite(derived) && std::fabs(*s.speedup - derived) <= 0.01 * derived + 1e-9))
            return where + " claims " + fixed(*s.speedup) + "× but its medians give " + fixed(derived) + "×";
        if (r.header.verdict == protocol::Verdict::Ok && s.belowFloor)
            return where + " is below the roofline floor, yet the verdict is ok";
        if (r.header.verdict == protocol::Verdict::Ok && s.recheck.passed != true)
            return where + (s.recheck.passed ? " failed its re-check" : " has no re-check result") + ", yet the verdict is ok";
    }
    return {};
}

GateCheck gate(const char* key, const char* title) { return {key, title, false, {}, {}, false}; }

std::string joined(const std::vector<std::string>& items, const char* sep = ", ")
{
    std::string out;
    for (const std::string& i : items)
        out += (out.empty() ? "" : sep) + i;
    return out;
}

std::string secondsText(std::int64_t ms)
{
    return fixed(static_cast<double>(ms) / 1000.0, 1) + " s";
}

// "memcheck, racecheck, initcheck, synccheck clean (compute-sanitizer 2025.3.1.0, 2 shapes, 2.4 s)"
std::string cleanDetail(const protocol::SanitizerSection& s)
{
    std::vector<std::string> ran, skipped;
    for (const protocol::SanitizerToolRun& t : s.tools)
        if (t.ran)
            ran.push_back(t.tool);
        else
            skipped.push_back(t.tool + " skipped: " + t.skipped);
    const size_t shapes = s.shapes.size();
    std::string d = joined(ran) + " clean (compute-sanitizer " + (s.toolVersion.empty() ? std::string("?") : s.toolVersion) + ", " +
                    std::to_string(shapes) + (shapes == 1 ? " shape, " : " shapes, ") + secondsText(s.durationMs) + ")";
    if (!skipped.empty())
        d += "; " + joined(skipped, "; ");
    return d;
}

// Why a section that ran is not clean, when it names no finding and no tool error: a tool that
// neither ran nor said why it was skipped, a tool stopped at its print limit, or no tools at all.
std::string uncleanWhy(const protocol::SanitizerSection& s)
{
    if (std::string p = s.firstProblem(); !p.empty())
        return p;
    if (s.tools.empty())
        return "the compute-sanitizer section lists no tools";
    for (const protocol::SanitizerToolRun& t : s.tools) {
        if (t.truncated)
            return "compute-sanitizer " + t.tool + " stopped reporting at its print limit";
        if (!t.ran && t.skipped.empty())
            return "compute-sanitizer " + t.tool + " did not run and says no reason";
        if (t.findings > 0)
            return "compute-sanitizer " + t.tool + " counts " + std::to_string(t.findings) + " finding(s) the section does not list";
    }
    return "the compute-sanitizer section is not clean";
}

// The sanitizer gate (docs/registry.md, "The sanitizer policy"). Findings and tool errors fail
// under every policy: a known bug is never promoted. A report the tools did not run on passes
// nothing; the policy decides whether that blocks.
GateCheck sanitizerGate(const VerifyReport& c, SanitizerPolicy policy, GateVerdict& v)
{
    GateCheck g = gate("sanitizer", "Clean under compute-sanitizer");
    const protocol::SanitizerSection* s = c.sanitizer ? &*c.sanitizer : nullptr;
    GateVerdict::Sanitizer record;
    record.policy = policy;
    if (s) {
        record.toolVersion = s->ran ? s->toolVersion : std::string();
        if (s->ran) {
            for (const protocol::SanitizerToolRun& t : s->tools)
                if (t.ran)
                    record.toolsRun.push_back(t.tool);
            record.shapes = s->shapes;
        }
    }
    v.sanitizer = record;
    const std::string fixHint = "fix the kernel at that line; `kforge verify --sanitize` shows every finding";
    if (s && s->ran) {
        if (s->clean()) {
            g.passed = true;
            g.detail = cleanDetail(*s);
        } else if (policy == SanitizerPolicy::Off && s->findings.empty()) {
            // No finding, a tool that did not finish: nothing known against the kernel.
            g.notRun = true;
            g.detail = "the registry's sanitizer policy is off; " + uncleanWhy(*s);
        } else {
            g.detail = uncleanWhy(*s);
            g.hint = s->findings.empty() ? "verify with --sanitize again; `kforge verify --sanitize` shows the tool's error"
                                         : fixHint;
        }
        return g;
    }
    if (s && !s->findings.empty()) {
        // A section that says it did not run yet lists findings: judged as findings.
        g.detail = s->findings.front().summary();
        g.hint = fixHint;
        return g;
    }
    if (policy == SanitizerPolicy::Off) {
        g.notRun = true;
        g.detail = "the registry's sanitizer policy is off";
        return g;
    }
    const std::string setIfAvailable = "kforge registry set-sanitizer-policy if_available";
    if (!s) {
        // A report from a runner that wrote the section only when asked: whether its host had the
        // tool is not known.
        g.detail = "the correctness report has no compute-sanitizer section (a report from an older runner): "
                   "whether its host has compute-sanitizer is not known";
        if (policy == SanitizerPolicy::Required) {
            g.detail = "not run: " + g.detail;
            g.hint = "verify again with --sanitize on a host with compute-sanitizer (`kforge promote` does this itself), "
                     "or `" + setIfAvailable + "`";
        } else {
            g.notRun = true;
        }
        return g;
    }
    if (s->toolFound()) {
        // The host has the tool: a run that did not use it is not evidence enough, whatever the policy.
        const std::string tool = "compute-sanitizer" + (s->toolVersion.empty() ? std::string() : " " + s->toolVersion);
        if (!s->requested || s->reason == protocol::kSanitizerNotRequested) {
            g.detail = "not run although the runner's host has " + tool + ": the verification did not ask for it";
            g.hint = "verify with --sanitize (kforge promote does this itself)";
        } else {
            g.detail = "not run although the runner's host has " + tool + ": " + (s->reason.empty() ? "no reason given" : s->reason);
            g.hint = "verify with --sanitize again (kforge promote does this itself)";
        }
        return g;
    }
    g.detail = s->reason.empty() ? std::string("the runner's host has no compute-sanitizer") : s->reason;
    if (policy == SanitizerPolicy::Required) {
        g.detail = "not run: " + g.detail;
        g.hint = "verify on a host with compute-sanitizer (set KF_COMPUTE_SANITIZER to its path, or a runner endpoint's "
                 "\"sanitizer\"), or `" + setIfAvailable + "`";
    } else {
        g.notRun = true;
    }
    return g;
}

// The hashes tie a report to the files being promoted: an edit after the run voids it.
std::string evidenceProblem(const GateInput& in, const protocol::Header& r, const char* what)
{
    if (r.isError())
        return std::string("the ") + what + " run ended in an error: " + r.summary;
    if (r.candidate.file != in.candidateFile)
        return std::string("the ") + what + " report is for " + r.candidate.file + ", not " + in.candidateFile;
    if (r.candidate.sourceHash != in.sourceHash)
        return std::string("the ") + what + " report was made from another version of " + in.candidateFile +
               " (source hash " + r.candidate.sourceHash.substr(0, 8) + " ≠ " + in.sourceHash.substr(0, 8) + ")";
    // A repro or shrink run replays saved inputs or chosen shapes: it says nothing about fresh,
    // secret inputs on the task's shapes, so it is never evidence.
    if (r.inputs == "file")
        return std::string("the ") + what + " report replayed inputs saved in files (a repro run), not fresh secret inputs";
    if (r.mode == "custom" || r.mode == "repro" || r.mode == "shrink")
        return std::string("the ") + what + " report ran chosen shapes only (a " + r.mode + " run), not the task's shapes";
    if (r.task.hash != in.taskHash)
        return std::string("the ") + what + " report was made with another version of task.json or of its headers, "
               "or with a tolerance override or extra NVRTC options from Settings (task hash " +
               r.task.hash.substr(0, 8) + " ≠ " + in.taskHash.substr(0, 8) + ")";
    return {};
}

} // namespace

const char* sanitizerPolicyName(SanitizerPolicy policy)
{
    switch (policy) {
    case SanitizerPolicy::Required:
        return "required";
    case SanitizerPolicy::Off:
        return "off";
    case SanitizerPolicy::IfAvailable:
        break;
    }
    return "if_available";
}

std::optional<SanitizerPolicy> parseSanitizerPolicy(std::string_view name)
{
    for (SanitizerPolicy p : {SanitizerPolicy::Required, SanitizerPolicy::IfAvailable, SanitizerPolicy::Off})
        if (name == sanitizerPolicyName(p))
            return p;
    return std::nullopt;
}

bool GateVerdict::passed() const { return !checks.empty() && firstFailure() == nullptr; }

const GateCheck* GateVerdict::firstFailure() const
{
    for (const GateCheck& c : checks)
        if (c.blocks())
            return &c;
    return nullptr;
}

int GateVerdict::passedCount() const
{
    int n = 0;
    for (const GateCheck& c : checks)
        n += c.passed ? 1 : 0;
    return n;
}

const GateCheck* GateVerdict::firstNotRun() const
{
    for (const GateCheck& c : checks)
        if (c.notRun)
            return &c;
    return nullptr;
}

std::string GateVerdict::sentence() const
{
    if (const GateCheck* f = firstFailure())
        return "refused: " + f->title + ": " + f->detail + (f->hint.empty() ? "" : " (" + f->hint + ")");
    const int passedGates = passedCount();
    if (const GateCheck* n = firstNotRun())
        return std::to_string(passedGates) + " gates passed; not run: " + n->title + " (" + n->detail + ")";
    return "all " + std::to_string(passedGates) + " gates passed";
}

Json GateVerdict::toJson() const
{
    Json a = Json::array();
    for (const GateCheck& c : checks)
        a.push_back({{"gate", c.gate}, {"title", c.title}, {"passed", c.passed}, {"not_run", c.notRun}, {"detail", c.detail},
                     {"hint", c.hint}});
    return a;
}

int heldOutRequiredFor(const Task& task)
{
    // Fixed seeds, several draws: "none" must mean the ranges leave no room, not one unlucky draw.
    for (std::uint64_t seed = 1; seed <= 8; ++seed)
        if (!deriveHeldOutShapes(task, 0x6b666f726765ull + seed, 1).empty())
            return 1;
    return 0;
}

/// The geometric mean over torch.compile from each benchmark shape's own medians (faster mode
/// over candidate, both the harness's), never the report's claimed fields; NaN unless every
/// benchmark shape was compared. `missing` and `flagged` name the shapes not compared and those
/// whose harness candidate median is over 3 % from the runner's.
double compileGeomean(const Task& task, const BenchReport& b, std::string& missing, std::string& flagged)
{
    double logSum = 0;
    int n = 0;
    for (const ShapeBinding& sb : task.benchmarkShapes) {
        const auto* s = findShape(b.shapes, sb, "benchmarks");
        const kf::protocol::CompileComparison* c = s && s->compile ? &*s->compile : nullptr;
        const double ratio = c && c->measured && c->bestMs && c->candidateMs && *c->candidateMs > 0 ? *c->bestMs / *c->candidateMs
                                                                                                 : NAN;
        if (!(ratio > 0) || !std::isfinite(ratio)) {
            missing += (missing.empty() ? "" : ", ") + sb.describe();
            continue;
        }
        if (c->candidateGapPct && std::abs(*c->candidateGapPct) > kf::protocol::kHarnessFidelityPct)
            flagged += (flagged.empty() ? "" : ", ") + sb.describe() + " (" + fixed(*c->candidateGapPct, 1) + " %)";
        logSum += std::log(ratio);
        ++n;
    }
    return missing.empty() && n > 0 ? std::exp(logSum / n) : NAN;
}

GateVerdict evaluateGates(const GateInput& in)
{
    GateVerdict v;
    const Task& task = *in.task;
    const VerifyReport* c = in.correctness && in.correctness->verify() ? &*in.correctness->verify() : nullptr;
    const BenchReport* p = in.performance && in.performance->bench() ? &*in.performance->bench() : nullptr;

    // 1. Evidence: both reports exist and belong to these exact files, on one GPU.
    GateCheck ev = gate("evidence", "Evidence matches the current kernel and task");
    if (!c) {
        ev.detail = "there is no correctness report for " + in.candidateFile;
        ev.hint = "verify it first (F5, or `kforge verify`)";
    } else if (!p) {
        ev.detail = "there is no performance report for " + in.candidateFile;
        ev.hint = "benchmark it first (F6, or `kforge bench`)";
    } else if (std::string e = evidenceProblem(in, c->header, "correctness"); !e.empty()) {
        ev.detail = e;
        ev.hint = "verify the kernel as it is now, without a tolerance override or extra NVRTC options";
    } else if (std::string e2 = evidenceProblem(in, p->header, "performance"); !e2.empty()) {
        ev.detail = e2;
        ev.hint = "benchmark the kernel as it is now";
    } else if (std::string e3 = verifyContradiction(*c, task); !e3.empty()) {
        ev.detail = "the correctness report contradicts itself: " + e3;
        ev.hint = "use the report as kforge wrote it; verify again to get one";
    } else if (std::string e4 = benchContradiction(*p); !e4.empty()) {
        ev.detail = "the performance report contradicts itself: " + e4;
        ev.hint = "use the report as kforge wrote it; benchmark again to get one";
    } else if (c->header.environment.gpu != p->header.environment.gpu || c->header.candidate.arch != p->header.candidate.arch) {
        ev.detail = "correctness was shown on " + c->header.environment.gpu + " (" + c->header.candidate.arch +
                    ") but speed on " + p->header.environment.gpu + " (" + p->header.candidate.arch + ")";
        ev.hint = "verify and benchmark on the same GPU";
    } else {
        ev.passed = true;
        ev.detail = in.candidateFile + " " + in.sourceHash.substr(0, 8) + ", task " + in.taskHash.substr(0, 8) + ", " +
                    c->header.environment.gpu;
    }
    v.checks.push_back(ev);
    if (!ev.passed)
        return v; // the other gates would judge somebody else's numbers

    // 1b. Signed: the runner wrote these reports and nobody changed them since.
    GateCheck sg = gate("signed", "Evidence signed by this user's runner");
    {
        std::string problem, hint = "use the reports exactly as kforge wrote them, or verify and benchmark again; "
                                    "`--allow-unsigned` accepts them at your own risk";
        // A key inside the task folder is readable by whoever writes the task's candidates: what
        // it signs proves nothing (the runner refuses to sign with it, device/runner/Runner.cpp).
        if (in.signingKey && !in.task->directory.empty() && isInsideFolder(in.signingKey->file, in.task->directory)) {
            problem = "the reports are checked with the key " + in.signingKey->file.string() +
                      ", which lies inside the task folder, where a candidate's author can read it and sign anything";
            hint = "move the key out of the task folder and point KF_REPORT_KEY at it, then verify and benchmark again";
        }
        for (const auto& [what, report] : {std::pair{"correctness", in.correctness}, std::pair{"performance", in.performance}}) {
            const protocol::SignatureCheck s = protocol::checkSignature(report->document(), in.signingKey, in.signingKeyProblem);
            if (s.valid() || !problem.empty())
                continue;
            problem = std::string("the ") + what + " report is " + s.detail;
            if (const auto r = report->document().find("unsigned_reason"); s.state == protocol::SignatureState::Unsigned &&
                                                                    r != report->document().end() && r->is_string())
                problem += " (the runner said: " + r->get<std::string>() + ")";
        }
        if (problem.empty()) {
            sg.passed = true;
            sg.detail = "both reports signed with key " + (in.signingKey ? in.signingKey->id : std::string("?"));
        } else if (in.allowUnsigned) {
            sg.passed = true;
            sg.detail = "accepted without a valid signature (--allow-unsigned): " + problem;
            v.unsignedAccepted = true;
        } else {
            sg.detail = problem;
            sg.hint = hint;
        }
    }
    v.checks.push_back(sg);
    if (!sg.passed)
        return v; // numbers nobody vouches for are not judged

    // 2. Correct on every test shape, with enough trials.
    GateCheck co = gate("correctness", "Correct on every test shape");
    {
        int passed = 0;
        std::string missing, failed;
        for (const ShapeBinding& b : task.testShapes) {
            const auto* s = findShape(c->shapes, b, "tests");
            if (!s)
                missing = missing.empty() ? b.describe() : missing;
            else if (!s->passed)
                failed = failed.empty() ? b.describe() : failed;
            else
                ++passed;
        }
        const std::int64_t trials = c->trialsPerShape;
        const std::string counted = std::to_string(passed) + " of " + std::to_string(task.testShapes.size()) + " test shapes passed";
        if (!failed.empty()) {
            co.detail = counted + "; " + failed + " failed";
            co.hint = "fix the kernel; the Runs panel and `kforge verify` show the failing elements";
        } else if (!missing.empty()) {
            co.detail = counted + "; " + missing + " was not verified";
            co.hint = "verify on the task's test shapes (`kforge verify --shapes tests` or all)";
        } else if (std::string other = failedOutsideHeldOut(*c); !other.empty()) {
            co.detail = counted + "; " + other + " failed";
            co.hint = "fix the kernel; the Runs panel and `kforge verify` show the failing elements";
        } else if (trials < kMinTrialsForPromotion) {
            co.detail = counted + " with " + std::to_string(trials) + " trial(s) per shape";
            co.hint = "promotion needs at least " + std::to_string(kMinTrialsForPromotion) + " trials (fresh seeds) per shape";
        } else {
            co.passed = true;
            co.detail = counted + ", " + std::to_string(trials) + " trials each";
        }
    }
    v.checks.push_back(co);

    // 2b. Clean under compute-sanitizer: every shape may give the right answer while a tool sees
    // the bug (a race, a read past the end). The policy says what a report without a run means.
    v.checks.push_back(sanitizerGate(*c, in.sanitizerPolicy, v));

    // 3. Held-out shapes the author never listed.
    GateCheck ho = gate("held_out", "Correct on held-out shapes");
    {
        int count = 0, passed = 0;
        std::string failed;
        for (const auto& s : c->shapes)
            if (s.id.set == "held_out") {
                ++count;
                if (s.passed)
                    ++passed;
                else if (failed.empty())
                    failed = s.id.dimsText();
            }
        if (!failed.empty()) {
            ho.detail = "held-out shape " + failed + " failed (" + std::to_string(passed) + " of " + std::to_string(count) + " passed)";
            ho.hint = "the kernel is wrong on a size the tests do not list; add that size to the test shapes and fix it";
        } else if (count < in.heldOutRequired) {
            ho.detail = "the correctness report has no held-out shapes";
            ho.hint = "verify for promotion: `kforge promote` does it, or `kforge verify --held-out 2`; the workbench's F5 includes them";
        } else {
            ho.passed = true;
            ho.detail = count ? std::to_string(passed) + " of " + std::to_string(count) + " held-out shapes passed"
                              : "no shape beside the test shapes fits the symbols' ranges, constraints and the tests' sizes";
        }
    }
    v.checks.push_back(ho);

    // 4. The tolerance can tell a wrong kernel from a right one.
    GateCheck nc = gate("negative_control", "Task discriminates (negative control)");
    if (c->discriminates == true) {
        nc.passed = true;
        nc.detail = "all-zero and constant outputs fail on every shape";
    } else {
        std::string where;
        for (const auto& s : c->shapes)
            for (const NegativeControl& n : s.negativeControl)
                if (!n.discriminates() && where.empty())
                    where = n.output + " on " + s.id.dimsText() + (n.zerosPass ? " (all zeros pass)" : " (a constant passes)");
        nc.detail = "a kernel writing nothing useful would pass" + (where.empty() ? std::string() : ": " + where);
        nc.hint = "tighten the output's tolerance or choose input distributions whose outputs are not near zero";
    }
    v.checks.push_back(nc);

    // 5. Every benchmark shape was measured, without errors.
    GateCheck bs = gate("benchmarks", "Measured on every benchmark shape");
    std::vector<double> speedups;
    {
        std::string missing;
        for (const ShapeBinding& b : task.benchmarkShapes) {
            const auto* s = findShape(p->shapes, b, "benchmarks");
            if (!s)
                missing = missing.empty() ? b.describe() : missing;
            else
                speedups.push_back(derivedSpeedup(*s)); // from the medians, never the claimed field
        }
        if (task.benchmarkShapes.empty()) {
            bs.detail = "the task has no benchmark shapes";
            bs.hint = "add sizes users care about under shapes.benchmarks in task.json";
        } else if (!missing.empty()) {
            bs.detail = missing + " was not benchmarked";
            bs.hint = "benchmark on the task's benchmark shapes (`kforge bench`)";
        } else if (p->header.verdict != protocol::Verdict::Ok) {
            bs.detail = "the benchmark's verdict is " + std::string(protocol::verdictName(p->header.verdict)) + ": " + p->header.summary;
            bs.hint = "a time below the roofline floor or a failed re-check means the timing cannot be trusted";
        } else {
            bs.passed = true;
            bs.detail = std::to_string(speedups.size()) + " benchmark shape(s), " + p->header.environment.gpu;
        }
    }
    v.checks.push_back(bs);

    // 6. Never slower than LibTorch on a benchmark shape.
    GateCheck ps = gate("per_shape_speedup", "At least 1.00× on every benchmark shape");
    {
        double worst = INFINITY;
        std::string worstShape;
        size_t i = 0;
        for (const ShapeBinding& b : task.benchmarkShapes) {
            // A NaN speedup (a timing that failed) is the worst there is.
            if (i < speedups.size() && (std::isnan(speedups[i]) || speedups[i] < worst) && !std::isnan(worst)) {
                worst = speedups[i];
                worstShape = b.describe();
            }
            ++i;
        }
        if (!bs.passed) {
            ps.detail = "no complete benchmark";
            ps.hint = bs.hint;
        } else if (!(worst >= 1.0)) {
            ps.detail = fixed(worst) + "× on " + worstShape + " (slower than LibTorch)";
            ps.hint = "a kernel must not lose to the baseline on any benchmark shape; improve that shape";
        } else {
            ps.passed = true;
            ps.detail = "slowest shape " + fixed(worst) + "× (" + worstShape + ")";
        }
        if (bs.passed)
            v.minSpeedup = worst;
    }
    v.checks.push_back(ps);

    // 7. Faster on average by the registry's threshold.
    GateCheck gm = gate("geomean_speedup", "Geometric-mean speedup at or above the threshold");
    {
        double logSum = 0;
        bool finite = !speedups.empty();
        for (double s : speedups) {
            if (!(s > 0) || !std::isfinite(s))
                finite = false;
            else
                logSum += std::log(s);
        }
        const double geomean = finite ? std::exp(logSum / double(speedups.size())) : NAN;
        if (bs.passed)
            v.geomeanSpeedup = geomean;
        if (!bs.passed) {
            gm.detail = "no complete benchmark";
            gm.hint = bs.hint;
        } else if (!(geomean >= in.threshold)) {
            gm.detail = "geometric mean " + fixed(geomean) + "× is below the threshold " + fixed(in.threshold) + "×";
            gm.hint = "make the kernel faster, or lower this registry's threshold if it is the wrong bar";
        } else {
            gm.passed = true;
            gm.detail = "geometric mean " + fixed(geomean) + "× ≥ " + fixed(in.threshold) + "×";
        }
    }
    v.checks.push_back(gm);

    // 8. Optional: at least the registry's factor of torch.compile.
    if (in.compileThreshold) {
        const double want = *in.compileThreshold;
        GateCheck cg = gate("compile_speedup", "");
        cg.title = "At least " + fixed(want) + "× torch.compile (this registry's setting)";
        const BenchReport* b = bs.passed ? p : nullptr;
        std::string missing, flagged;
        const double geomean = b ? compileGeomean(task, *b, missing, flagged) : NAN;
        const std::string off = "or turn the setting off: kforge registry threshold --compile off";
        if (!b) {
            cg.detail = "no complete benchmark";
            cg.hint = bs.hint;
        } else if (!b->compileBaseline) {
            cg.detail = "the benchmark was not timed against torch.compile";
            cg.hint = "benchmark with `kforge bench --baseline compile` (`kforge promote` does when this is set), " + off;
        } else if (!b->compileBaseline->measured) {
            cg.detail = "torch.compile was not measured: " + b->compileBaseline->reason;
            cg.hint = "give the harness a Python with torch and Triton ($KF_BASELINE_PYTHON), " + off;
        } else if (!missing.empty()) {
            cg.detail = "not compared with torch.compile on " + missing;
            cg.hint = "every benchmark shape needs the comparison; see the report's reasons";
        } else {
            v.compileSpeedup = geomean;
            const std::string note = flagged.empty() ? std::string()
                                                     : "; the harness's candidate time is off the runner's on " + flagged;
            if (!(geomean >= want)) {
                cg.detail = "geometric mean " + fixed(geomean) + "× torch.compile is below " + fixed(want) + "×" + note;
                cg.hint = "a kernel that does not beat what one line of Python gives is not worth shipping here; " + off;
            } else {
                cg.passed = true;
                cg.detail = "geometric mean " + fixed(geomean) + "× torch.compile ≥ " + fixed(want) + "×" + note;
            }
        }
        v.checks.push_back(cg);
    } else if (p && bs.passed && p->compileBaseline && p->compileBaseline->measured) {
        // Recorded only when every benchmark shape was compared (NaN otherwise).
        std::string missing, flagged;
        v.compileSpeedup = compileGeomean(task, *p, missing, flagged);
    }
    return v;
}

Evidence collectEvidence(const std::vector<Json>& documents, const std::string& candidateFile)
{
    Evidence e;
    for (const Json& d : documents)
        for (RunReport& r : protocol::reportsOfDocument(d, &e.unreadable)) {
            if (r.header().candidate.file != candidateFile)
                continue;
            if (r.verify())
                e.correctness = std::move(r);
            else if (r.bench())
                e.performance = std::move(r);
        }
    return e;
}

} // namespace kf
