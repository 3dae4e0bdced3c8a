// The evidence gates (docs/registry.md, "Gates"): the reports are about these exact files and
// task, they agree with themselves, and this user's runner signed them. Nothing else is judged
// until these pass.
#include "engine/registry/GateFamilies.h"

#include "engine/core/Files.h"

#include <set>

namespace kf::gates {

namespace {

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

GateCheck evidenceGate(const GateInput& in, const VerifyReport* c, const BenchReport* p)
{
    const Task& task = *in.task;
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
    return ev;
}

GateCheck signedGate(const GateInput& in, GateVerdict& v)
{
    GateCheck sg = gate("signed", "Evidence signed by this user's runner");
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
    return sg;
}

} // namespace kf::gates
