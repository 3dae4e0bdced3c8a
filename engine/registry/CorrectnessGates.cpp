// The correctness gates (docs/registry.md, "Gates"): every test shape correct with enough trials,
// clean under compute-sanitizer as the registry's policy asks, correct on held-out shapes, and a
// tolerance that tells a wrong kernel from a right one.
#include "engine/registry/GateFamilies.h"

namespace kf::gates {

namespace {

// A shape of the report (tests or benchmarks set) that failed, e.g. with `--shapes all`.
std::string failedOutsideHeldOut(const VerifyReport& report)
{
    for (const auto& s : report.shapes)
        if (s.id.set != "held_out" && !s.passed)
            return s.id.dimsText();
    return {};
}

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

// What the sanitizer gate judged, for the promotion record: the policy, and the tools that ran
// with their version and shapes.
GateVerdict::Sanitizer sanitizerRecord(const protocol::SanitizerSection* s, SanitizerPolicy policy)
{
    GateVerdict::Sanitizer record;
    record.policy = policy;
    if (s && s->ran) {
        record.toolVersion = s->toolVersion;
        for (const protocol::SanitizerToolRun& t : s->tools)
            if (t.ran)
                record.toolsRun.push_back(t.tool);
        record.shapes = s->shapes;
    }
    return record;
}

// A report the tools did not run on: blocks under the "required" policy, saying what to do;
// otherwise the gate did not run.
void notRunUnder(SanitizerPolicy policy, GateCheck& g, std::string hint)
{
    if (policy == SanitizerPolicy::Required) {
        g.detail = "not run: " + g.detail;
        g.hint = std::move(hint);
    } else {
        g.notRun = true;
    }
}

} // namespace

GateCheck correctnessGate(const Task& task, const VerifyReport& c)
{
    GateCheck co = gate("correctness", "Correct on every test shape");
    int passed = 0;
    std::string missing, failed;
    for (const ShapeBinding& b : task.testShapes) {
        const auto* s = findShape(c.shapes, b, "tests");
        if (!s)
            missing = missing.empty() ? b.describe() : missing;
        else if (!s->passed)
            failed = failed.empty() ? b.describe() : failed;
        else
            ++passed;
    }
    const std::int64_t trials = c.trialsPerShape;
    const std::string counted = std::to_string(passed) + " of " + std::to_string(task.testShapes.size()) + " test shapes passed";
    if (!failed.empty()) {
        co.detail = counted + "; " + failed + " failed";
        co.hint = "fix the kernel; the Runs panel and `kforge verify` show the failing elements";
    } else if (!missing.empty()) {
        co.detail = counted + "; " + missing + " was not verified";
        co.hint = "verify on the task's test shapes (`kforge verify --shapes tests` or all)";
    } else if (std::string other = failedOutsideHeldOut(c); !other.empty()) {
        co.detail = counted + "; " + other + " failed";
        co.hint = "fix the kernel; the Runs panel and `kforge verify` show the failing elements";
    } else if (trials < kMinTrialsForPromotion) {
        co.detail = counted + " with " + std::to_string(trials) + " trial(s) per shape";
        co.hint = "promotion needs at least " + std::to_string(kMinTrialsForPromotion) + " trials (fresh seeds) per shape";
    } else {
        co.passed = true;
        co.detail = counted + ", " + std::to_string(trials) + " trials each";
    }
    return co;
}

// The sanitizer gate (docs/registry.md, "The sanitizer policy"). Findings and tool errors fail
// under every policy: a known bug is never promoted. A report the tools did not run on passes
// nothing; the policy decides whether that blocks.
GateCheck sanitizerGate(const VerifyReport& c, SanitizerPolicy policy, GateVerdict& v)
{
    GateCheck g = gate("sanitizer", "Clean under compute-sanitizer");
    const protocol::SanitizerSection* s = c.sanitizer ? &*c.sanitizer : nullptr;
    v.sanitizer = sanitizerRecord(s, policy);
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
        notRunUnder(policy, g,
                    "verify again with --sanitize on a host with compute-sanitizer (`kforge promote` does this itself), "
                    "or `" + setIfAvailable + "`");
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
    notRunUnder(policy, g,
                "verify on a host with compute-sanitizer (set KF_COMPUTE_SANITIZER to its path, or a runner endpoint's "
                "\"sanitizer\"), or `" + setIfAvailable + "`");
    return g;
}

GateCheck heldOutGate(const VerifyReport& c, int heldOutRequired)
{
    GateCheck ho = gate("held_out", "Correct on held-out shapes");
    int count = 0, passed = 0;
    std::string failed;
    for (const auto& s : c.shapes)
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
    } else if (count < heldOutRequired) {
        ho.detail = "the correctness report has no held-out shapes";
        ho.hint = "verify for promotion: `kforge promote` does it, or `kforge verify --held-out 2`; the workbench's F5 includes them";
    } else {
        ho.passed = true;
        ho.detail = count ? std::to_string(passed) + " of " + std::to_string(count) + " held-out shapes passed"
                          : "no shape beside the test shapes fits the symbols' ranges, constraints and the tests' sizes";
    }
    return ho;
}

GateCheck negativeControlGate(const VerifyReport& c)
{
    GateCheck nc = gate("negative_control", "Task discriminates (negative control)");
    if (c.discriminates == true) {
        nc.passed = true;
        nc.detail = "all-zero and constant outputs fail on every shape";
    } else {
        std::string where;
        for (const auto& s : c.shapes)
            for (const NegativeControl& n : s.negativeControl)
                if (!n.discriminates() && where.empty())
                    where = n.output + " on " + s.id.dimsText() + (n.zerosPass ? " (all zeros pass)" : " (a constant passes)");
        nc.detail = "a kernel writing nothing useful would pass" + (where.empty() ? std::string() : ": " + where);
        nc.hint = "tighten the output's tolerance or choose input distributions whose outputs are not near zero";
    }
    return nc;
}

} // namespace kf::gates
