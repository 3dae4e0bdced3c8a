#include "engine/registry/Gates.h"

#include "engine/registry/GateFamilies.h"
#include "engine/task/HeldOut.h"

#include <cmath>
#include <cstdio>

namespace kf {

using Json = nlohmann::json;

namespace gates {

std::string fixed(double v, int digits)
{
    char b[32];
    std::snprintf(b, sizeof b, "%.*f", digits, v);
    return b;
}

GateCheck gate(const char* key, const char* title) { return {key, title, false, {}, {}, false}; }

double derivedSpeedup(const protocol::BenchShape& s)
{
    if (!s.candidate.medianMs || !s.baseline.medianMs || !(*s.candidate.medianMs > 0) || !(*s.baseline.medianMs > 0))
        return NAN;
    return *s.baseline.medianMs / *s.candidate.medianMs;
}

} // namespace gates

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

GateVerdict evaluateGates(const GateInput& in)
{
    GateVerdict v;
    const protocol::VerifyReport* c = in.correctness && in.correctness->verify() ? &*in.correctness->verify() : nullptr;
    const protocol::BenchReport* p = in.performance && in.performance->bench() ? &*in.performance->bench() : nullptr;

    // 1. Evidence: both reports exist and belong to these exact files, on one GPU.
    v.checks.push_back(gates::evidenceGate(in, c, p));
    if (!v.checks.back().passed)
        return v; // the other gates would judge somebody else's numbers
    // 1b. Signed: the runner wrote these reports and nobody changed them since.
    v.checks.push_back(gates::signedGate(in, v));
    if (!v.checks.back().passed)
        return v; // numbers nobody vouches for are not judged
    // 2. Correct on every test shape, with enough trials.
    v.checks.push_back(gates::correctnessGate(*in.task, *c));
    // 2b. Clean under compute-sanitizer: every shape may give the right answer while a tool sees
    // the bug (a race, a read past the end). The policy says what a report without a run means.
    v.checks.push_back(gates::sanitizerGate(*c, in.sanitizerPolicy, v));
    // 3. Held-out shapes the author never listed.
    v.checks.push_back(gates::heldOutGate(*c, in.heldOutRequired));
    // 4. The tolerance can tell a wrong kernel from a right one.
    v.checks.push_back(gates::negativeControlGate(*c));
    // 5-8. Speed: measured everywhere, never slower, fast enough on average, and torch.compile.
    gates::speedGates(in, *p, v);
    return v;
}

Evidence collectEvidence(const std::vector<Json>& documents, const std::string& candidateFile)
{
    Evidence e;
    for (const Json& d : documents)
        for (protocol::RunReport& r : protocol::reportsOfDocument(d, &e.unreadable)) {
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
