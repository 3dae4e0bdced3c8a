#include "engine/protocol/VerifyReport.h"

#include "engine/protocol/ReportJson.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kf::protocol {

namespace jr = kf::json;

nlohmann::json toJson(const Mismatch& m)
{
    return {{"index", m.index}, {"expected", numberJson(m.expected)}, {"actual", numberJson(m.actual)},
            {"abs_error", numberJson(m.absError)}, {"rel_error", numberJson(m.relError)}};
}

nlohmann::json toJson(const OutputCheck& c)
{
    nlohmann::json mm = nlohmann::json::array();
    for (const auto& m : c.firstMismatches)
        mm.push_back(toJson(m));
    nlohmann::json j = {{"output", c.output},
            {"passed", c.passed},
            {"elements", c.elements},
            {"mismatches", c.mismatches},
            {"mismatch_fraction", numberJson(c.mismatchFraction)},
            {"max_abs_error", numberJson(c.maxAbsError)},
            {"max_rel_error", numberJson(c.maxRelError)},
            {"unwritten", c.unwritten},
            {"non_finite_mismatches", c.nonFiniteMismatches},
            {"reference_rms", numberJson(c.referenceRms)},
            {"atol_effective", numberJson(c.atolEffective)},
            {"rtol", numberJson(c.rtol)},
            {"first_mismatches", mm},
            {"first_unwritten", c.firstUnwritten}};
    j["error_histogram"] = toJson(c.histogram);
    j["golden"] = toJson(c.golden);
    if (!c.passed) {
        if (c.rows.count > 0)
            j["row_summary"] = toJson(c.rows);
        if (c.columns.count > 0)
            j["col_summary"] = toJson(c.columns);
    }
    return j;
}

nlohmann::json toJson(const GoldenErrors& g)
{
    if (!g.available)
        return {{"available", false}, {"note", g.note}};
    const double r = g.ratio();
    return {{"available", true},
            {"candidate_max_error", numberJson(g.candidateMaxError)},
            {"candidate_rms_error", numberJson(g.candidateRmsError)},
            {"libtorch_max_error", numberJson(g.libtorchMaxError)},
            {"libtorch_rms_error", numberJson(g.libtorchRmsError)},
            {"error_ratio", numberJson(r)},
            {"rescued", g.rescued}};
}

nlohmann::json toJson(const ErrorHistogram& h)
{
    return {{"log10_ratio_lo", ErrorHistogram::kLo}, {"bin_width", ErrorHistogram::kWidth},
            {"bins", std::vector<std::int64_t>(std::begin(h.bins), std::end(h.bins))},
            {"exact", h.exact}, {"below", h.below}, {"above", h.above},
            {"non_finite", h.nonFinite}, {"unwritten", h.unwritten}};
}

nlohmann::json toJson(const AxisSummary& s)
{
    nlohmann::json ratio = nlohmann::json::array();
    for (double r : s.maxRatio)
        ratio.push_back(numberJson(r));
    return {{"count", s.count}, {"per_entry", s.perEntry}, {"max_ratio", ratio}, {"mismatches", s.mismatches}};
}

nlohmann::json toJson(const NegativeControl& n)
{
    return {{"output", n.output},     {"zeros_pass", n.zerosPass},
            {"constant_pass", n.constantPass}, {"constant_applicable", n.constantApplicable},
            {"constant", numberJson(n.constant)}, {"discriminates", n.discriminates()}};
}


nlohmann::json toJson(const Trial& t)
{
    nlohmann::json guards = nlohmann::json::array();
    for (const GuardViolation& g : t.guardViolations)
        guards.push_back({{"buffer", g.buffer}, {"side", g.side}, {"offset_bytes", g.offsetBytes}});
    nlohmann::json outs = nlohmann::json::array();
    for (const OutputCheck& c : t.outputs)
        outs.push_back(toJson(c));
    nlohmann::json j{{"trial", t.trial},
                     {"seed", t.seed},
                     {"distributions", t.distributions},
                     {"passed", t.passed},
                     {"failure", t.failure},
                     {"launch_error", t.launchError},
                     {"guard_violations", guards},
                     {"modified_inputs", t.modifiedInputs},
                     {"runs_agree", t.runsAgree},
                     {"run_disagreements", t.runDisagreements},
                     {"run_max_abs_diff", numberJson(t.runMaxAbsDiff)},
                     {"outputs", outs}};
    if (!t.caseDir.empty())
        j["case"] = t.caseDir;
    if (!t.caseSkipped.empty())
        j["case_skipped"] = t.caseSkipped;
    return j;
}

namespace {

Mismatch readMismatch(const Fields& f)
{
    Mismatch m;
    m.index = f.integers("index");
    m.expected = f.number("expected", 0);
    m.actual = f.number("actual", 0);
    m.absError = f.number("abs_error", 0);
    m.relError = f.number("rel_error", 0);
    return m;
}

ErrorHistogram readHistogram(const Fields& f)
{
    ErrorHistogram h;
    const std::vector<std::int64_t> bins = f.integers("bins");
    if (!bins.empty() && bins.size() != static_cast<size_t>(ErrorHistogram::kBins))
        jr::fail(f.at("bins"), "expected " + std::to_string(ErrorHistogram::kBins) + " bins, found " + std::to_string(bins.size()));
    std::copy(bins.begin(), bins.end(), h.bins);
    h.exact = f.integer("exact");
    h.below = f.integer("below");
    h.above = f.integer("above");
    h.nonFinite = f.integer("non_finite");
    h.unwritten = f.integer("unwritten");
    return h;
}

AxisSummary readAxis(const Fields& f)
{
    AxisSummary s;
    s.count = f.integer("count");
    s.perEntry = f.integer("per_entry", 1);
    s.maxRatio = f.numbers("max_ratio");
    s.mismatches = f.integers("mismatches");
    if (s.maxRatio.size() != s.mismatches.size() || s.maxRatio.size() > static_cast<size_t>(AxisSummary::kMaxEntries))
        jr::fail(f.pointer(), "max_ratio and mismatches must have the same length, at most " +
                                  std::to_string(AxisSummary::kMaxEntries));
    return s;
}

GoldenErrors readGolden(const Fields& f)
{
    GoldenErrors g;
    g.available = f.boolean("available");
    g.note = f.text("note");
    g.candidateMaxError = f.number("candidate_max_error", 0);
    g.candidateRmsError = f.number("candidate_rms_error", 0);
    g.libtorchMaxError = f.number("libtorch_max_error", 0);
    g.libtorchRmsError = f.number("libtorch_rms_error", 0);
    g.rescued = f.integer("rescued");
    return g;
}

// The worst of several errors: NaN anywhere wins, since it is what a user must see.
void addWorst(std::optional<double>& worst, double v)
{
    if (!worst)
        worst = v;
    else if (!std::isnan(*worst) && (std::isnan(v) || v > *worst))
        worst = v;
}

std::string indexText(const std::vector<std::int64_t>& index)
{
    std::string s = "[";
    for (size_t i = 0; i < index.size(); ++i)
        s += (i ? ", " : "") + std::to_string(index[i]);
    return s + "]";
}

} // namespace

OutputCheck readOutputCheck(const Fields& f)
{
    OutputCheck c;
    c.output = f.text("output");
    c.passed = f.boolean("passed");
    c.elements = f.integer("elements");
    c.mismatches = f.integer("mismatches");
    c.mismatchFraction = f.number("mismatch_fraction", 0);
    c.maxAbsError = f.number("max_abs_error", 0);
    c.maxRelError = f.number("max_rel_error", 0);
    c.unwritten = f.integer("unwritten");
    c.nonFiniteMismatches = f.integer("non_finite_mismatches");
    c.referenceRms = f.number("reference_rms", 0);
    c.atolEffective = f.number("atol_effective", 0);
    c.rtol = f.number("rtol", 0);
    f.forEach("first_mismatches", [&](const Json& v, const std::string& p) { c.firstMismatches.push_back(readMismatch(Fields(v, p))); });
    f.forEach("first_unwritten", [&](const Json& v, const std::string& p) {
        std::vector<std::int64_t> index;
        const Json& a = jr::asArray(v, p);
        for (size_t i = 0; i < a.size(); ++i)
            index.push_back(jr::asInteger(a[i], jr::child(p, i)));
        c.firstUnwritten.push_back(std::move(index));
    });
    if (f.find("error_histogram"))
        c.histogram = readHistogram(f.object("error_histogram"));
    if (f.find("golden"))
        c.golden = readGolden(f.object("golden"));
    if (f.find("row_summary"))
        c.rows = readAxis(f.object("row_summary"));
    if (f.find("col_summary"))
        c.columns = readAxis(f.object("col_summary"));
    return c;
}

Result<OutputCheck> outputCheckFromJson(const nlohmann::json& j)
{
    return readReport<OutputCheck>("read an output's check", [&] { return readOutputCheck(Fields(j, "")); });
}

NegativeControl readNegativeControl(const Fields& f)
{
    NegativeControl n;
    n.output = f.text("output");
    n.zerosPass = f.boolean("zeros_pass");
    n.constantPass = f.boolean("constant_pass");
    n.constantApplicable = f.boolean("constant_applicable", true);
    n.constant = f.number("constant", 0);
    return n;
}

Trial readTrial(const Fields& f)
{
    Trial t;
    t.trial = f.integer("trial");
    t.seed = f.text("seed");
    if (const Json* d = f.find("distributions")) {
        const Fields dist(*d, f.at("distributions"));
        for (auto it = d->begin(); it != d->end(); ++it)
            t.distributions[it.key()] = jr::asString(it.value(), dist.at(it.key()));
    }
    t.passed = f.boolean("passed");
    t.failure = f.text("failure");
    t.launchError = f.text("launch_error");
    f.forEach("guard_violations", [&](const Json& v, const std::string& p) {
        const Fields g(v, p);
        t.guardViolations.push_back({g.text("buffer"), g.text("side"), g.integer("offset_bytes")});
    });
    t.modifiedInputs = f.texts("modified_inputs");
    t.runsAgree = f.boolean("runs_agree", true);
    t.runDisagreements = f.integer("run_disagreements");
    t.runMaxAbsDiff = f.number("run_max_abs_diff", 0);
    f.forEach("outputs", [&](const Json& v, const std::string& p) { t.outputs.push_back(readOutputCheck(Fields(v, p))); });
    t.caseDir = f.text("case");
    t.caseSkipped = f.text("case_skipped");
    return t;
}

FailureKind Trial::failureKind() const
{
    if (passed)
        return FailureKind::None;
    if (!launchError.empty())
        return FailureKind::Launch;
    if (!guardViolations.empty())
        return FailureKind::Guard;
    if (!modifiedInputs.empty())
        return FailureKind::ModifiedInput;
    if (std::any_of(outputs.begin(), outputs.end(), [](const OutputCheck& o) { return o.unwritten > 0; }))
        return FailureKind::Unwritten;
    if (std::any_of(outputs.begin(), outputs.end(), [](const OutputCheck& o) { return o.mismatches > o.unwritten; }))
        return FailureKind::Mismatch;
    if (!runsAgree)
        return FailureKind::Nondeterministic;
    return FailureKind::None;
}

Result<Trial> Trial::fromJson(const nlohmann::json& j)
{
    return readReport<Trial>("read a trial of a report", [&] { return readTrial(Fields(j, "")); });
}

std::string Trial::why() const
{
    if (!failure.empty())
        return failure;
    return launchError.empty() ? "failed" : launchError;
}

std::vector<std::string> Trial::evidence() const
{
    std::vector<std::string> lines;
    if (!launchError.empty())
        lines.push_back("launch error: " + launchError);
    for (const GuardViolation& g : guardViolations)
        lines.push_back("out-of-bounds write: " + g.buffer + ", " + g.side + " the buffer, at byte offset " +
                        std::to_string(g.offsetBytes));
    if (!modifiedInputs.empty()) {
        std::string names;
        for (const std::string& n : modifiedInputs)
            names += (names.empty() ? "" : ", ") + n;
        lines.push_back("inputs modified by the candidate: " + names);
    }
    for (const OutputCheck& o : outputs) {
        for (size_t i = 0; i < o.firstMismatches.size() && i < 5; ++i) {
            const Mismatch& m = o.firstMismatches[i];
            lines.push_back(o.output + indexText(m.index) + ": expected " + formatNumber(m.expected, 6) + ", got " +
                            formatNumber(m.actual, 6) + " (abs error " + formatNumber(m.absError) + ", rel error " +
                            formatNumber(m.relError) + ")");
        }
        if (!o.firstUnwritten.empty()) {
            std::string idx;
            for (size_t i = 0; i < o.firstUnwritten.size() && i < 5; ++i)
                idx += (i ? ", " : "") + indexText(o.firstUnwritten[i]);
            lines.push_back(o.output + ": never written at " + idx + (o.firstUnwritten.size() > 5 ? ", …" : ""));
        }
    }
    if (!runsAgree)
        lines.push_back("two runs of the candidate disagreed on " + std::to_string(runDisagreements) +
                        " element(s) (max difference " + formatNumber(runMaxAbsDiff) + ")");
    return lines;
}

ShapeSummary CorrectnessShape::summary() const
{
    ShapeSummary s;
    s.passed = passed;
    for (const Trial& t : trials) {
        ++s.trials;
        for (const OutputCheck& o : t.outputs) {
            addWorst(s.maxAbsError, o.maxAbsError);
            addWorst(s.maxRelError, o.maxRelError);
            if (o.golden.available)
                addWorst(s.errorRatio, o.golden.ratio());
            else if (s.goldenNote.empty())
                s.goldenNote = o.golden.note;
            s.mismatches += o.mismatches;
            s.elements += o.elements;
            s.unwritten += o.unwritten;
        }
        if (s.firstFailure.empty() && !t.passed)
            s.firstFailure = "trial " + std::to_string(t.trial) + ": " + t.why();
    }
    return s;
}

const Trial* CorrectnessShape::firstFailingTrial() const
{
    for (const Trial& t : trials)
        if (!t.passed)
            return &t;
    return nullptr;
}

nlohmann::json VerifyReport::toJson() const
{
    nlohmann::json r = nlohmann::json::object();
    header.writeTo(r);
    r["trials_per_shape"] = trialsPerShape;
    if (discriminates)
        r["discriminates"] = *discriminates;
    nlohmann::json shapesJson = nlohmann::json::array();
    for (const CorrectnessShape& s : shapes) {
        nlohmann::json e = nlohmann::json::object();
        s.id.writeTo(e);
        e["passed"] = s.passed;
        nlohmann::json nc = nlohmann::json::array();
        for (const NegativeControl& n : s.negativeControl)
            nc.push_back(protocol::toJson(n));
        e["negative_control"] = nc;
        nlohmann::json trials = nlohmann::json::array();
        for (const Trial& t : s.trials)
            trials.push_back(protocol::toJson(t));
        e["trials"] = trials;
        shapesJson.push_back(std::move(e));
    }
    r["shapes"] = shapesJson;
    if (!phaseMs.empty()) {
        nlohmann::json p = nlohmann::json::object();
        for (const auto& [k, v] : phaseMs)
            p[k] = numberJson(v);
        r["phase_ms"] = p;
    }
    if (sanitizer)
        r["sanitizer"] = protocol::toJson(*sanitizer);
    return r;
}

VerifyReport VerifyReport::read(const Fields& f)
{
    VerifyReport r;
    r.header = Header::read(f, ReportKind::Correctness);
    r.trialsPerShape = f.integer("trials_per_shape");
    r.discriminates = f.optionalBoolean("discriminates");
    f.forEach("shapes", [&](const Json& v, const std::string& p) {
        const Fields e(v, p);
        CorrectnessShape s;
        s.id = ShapeId::read(e);
        s.passed = e.boolean("passed");
        e.forEach("negative_control", [&](const Json& n, const std::string& np) { s.negativeControl.push_back(readNegativeControl(Fields(n, np))); });
        e.forEach("trials", [&](const Json& t, const std::string& tp) { s.trials.push_back(readTrial(Fields(t, tp))); });
        r.shapes.push_back(std::move(s));
    });
    if (const Json* p = f.find("phase_ms")) {
        const Fields phases(*p, f.at("phase_ms"));
        for (auto it = p->begin(); it != p->end(); ++it)
            r.phaseMs[it.key()] = readNumber(it.value(), phases.at(it.key()));
    }
    if (f.find("sanitizer"))
        r.sanitizer = readSanitizerSection(f.object("sanitizer"));
    return r;
}

Result<VerifyReport> VerifyReport::fromJson(const nlohmann::json& j)
{
    return readReport<VerifyReport>("read a correctness report", [&] { return read(Fields(j, "")); });
}

} // namespace kf::protocol
