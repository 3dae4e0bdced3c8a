#include "engine/registry/Promotion.h"

#include "engine/protocol/ReportJson.h"

namespace kf {

namespace {

using protocol::Fields;
using protocol::numberJson;

nlohmann::json optionalNumber(const std::optional<double>& v) { return v ? numberJson(*v) : nlohmann::json(nullptr); }

/// The record's "sanitizer": the policy it was promoted under and what the tools found.
PromotionRecord::Sanitizer readSanitizer(const Fields& san)
{
    const std::string policy = san.text("policy", sanitizerPolicyName(kDefaultSanitizerPolicy));
    const auto parsed = parseSanitizerPolicy(policy);
    if (!parsed)
        kf::json::fail(san.at("policy"), "\"" + policy + "\" is not a sanitizer policy: use " + kSanitizerPolicyChoices);
    // Read in the order of the members (a braced list is evaluated left to right).
    return PromotionRecord::Sanitizer{.policy = *parsed,
                                      .outcome = san.text("outcome"),
                                      .detail = san.text("detail"),
                                      .toolVersion = san.text("tool_version"),
                                      .tools = san.texts("tools"),
                                      .shapes = san.texts("shapes")};
}

} // namespace

nlohmann::json PromotionRecord::toJson() const
{
    nlohmann::json tol = nlohmann::json::array();
    for (const ToleranceUsed& t : tolerances)
        tol.push_back({{"output", t.output},
                       {"rtol", numberJson(t.rtol)},
                       {"atol", numberJson(t.atol)},
                       {"atol_mode", t.atolRelativeToRms ? "rms" : "absolute"}});
    nlohmann::json held = nlohmann::json::array();
    for (const protocol::ShapeId& s : heldOutShapes)
        held.push_back(s.dimsJson());
    nlohmann::json gateList = nlohmann::json::array();
    for (const GateCheck& g : gates) {
        nlohmann::json one = {{"gate", g.gate}, {"title", g.title}, {"passed", g.passed}, {"detail", g.detail}, {"hint", g.hint}};
        if (g.notRun)
            one["not_run"] = true;
        gateList.push_back(std::move(one));
    }
    nlohmann::json sanitizerJson = nullptr;
    if (sanitizer)
        sanitizerJson = {{"policy", sanitizerPolicyName(sanitizer->policy)},
                         {"outcome", sanitizer->outcome},
                         {"detail", sanitizer->detail},
                         {"tool_version", sanitizer->toolVersion},
                         {"tools", sanitizer->tools},
                         {"shapes", sanitizer->shapes}};
    nlohmann::json shapes = nlohmann::json::array();
    for (const ShapeSpeedup& s : perShape)
        shapes.push_back({{"shape", s.shape.dimsJson()},
                          {"label", s.shape.label},
                          {"speedup", optionalNumber(s.speedup)},
                          {"candidate_median_ms", optionalNumber(s.candidateMedianMs)},
                          {"baseline_median_ms", optionalNumber(s.baselineMedianMs)}});
    nlohmann::json fileList = nlohmann::json::array();
    for (const RegistryFile& f : files)
        fileList.push_back({{"path", f.path}, {"hash", f.hash}, {"bytes", f.bytes}});
    return {{"schema_version", schemaVersion},
            {"id", id},
            {"version", version},
            {"promoted_at", promotedAt},
            {"promoted_by", promotedBy},
            {"task", {{"name", task.name}, {"hash", task.hash}, {"file", "task.json"}}},
            {"candidate", candidate.toJson()},
            {"seeds", {{"correctness", correctnessSeeds}, {"performance", performanceSeeds}}},
            {"trials_per_shape", trialsPerShape},
            {"held_out_shapes", held},
            {"tolerances", tol},
            {"environment", environment.toJson()},
            {"threshold", optionalNumber(threshold)},
            {"compile_threshold", optionalNumber(compileThreshold)},
            {"compile_speedup", optionalNumber(compileSpeedup)},
            {"gates", gateList},
            {"sanitizer", sanitizerJson},
            {"speedup", {{"geomean", optionalNumber(geomeanSpeedup)}, {"min", optionalNumber(minSpeedup)}, {"per_shape", shapes}}},
            {"evidence_scope", evidenceScope},
            {"unsigned_evidence_accepted", unsignedEvidenceAccepted},
            {"files", fileList}};
}

Result<PromotionRecord> PromotionRecord::fromJson(const nlohmann::json& j, const std::string& source)
{
    auto r = protocol::readReport<PromotionRecord>("read promotion.json", [&] {
        PromotionRecord p;
        const Fields f(j, "");
        p.schemaVersion = static_cast<int>(f.integer("schema_version", 1));
        p.id = f.text("id");
        p.version = f.integer("version");
        p.promotedAt = f.text("promoted_at");
        p.promotedBy = f.text("promoted_by");
        const Fields task = f.object("task");
        p.task = {task.text("name"), task.text("hash")};
        p.candidate = protocol::CandidateRef::read(f.object("candidate"));
        const Fields seeds = f.object("seeds");
        p.correctnessSeeds = seeds.texts("correctness");
        p.performanceSeeds = seeds.texts("performance");
        p.trialsPerShape = f.integer("trials_per_shape");
        f.forEach("held_out_shapes", [&](const nlohmann::json& v, const std::string& ptr) { p.heldOutShapes.push_back(protocol::ShapeId::readDims(v, ptr)); });
        f.forEach("tolerances", [&](const nlohmann::json& v, const std::string& ptr) {
            const Fields t(v, ptr);
            p.tolerances.push_back({t.text("output"), t.number("rtol", 0), t.number("atol", 0), t.text("atol_mode", "rms") == "rms"});
        });
        p.environment = protocol::Environment::read(f.object("environment"));
        p.threshold = f.optionalNumber("threshold");
        p.compileThreshold = f.optionalNumber("compile_threshold");
        p.compileSpeedup = f.optionalNumber("compile_speedup");
        f.forEach("gates", [&](const nlohmann::json& v, const std::string& ptr) {
            const Fields g(v, ptr);
            p.gates.push_back({g.text("gate"), g.text("title"), g.boolean("passed"), g.text("detail"), g.text("hint"),
                               g.boolean("not_run")});
        });
        if (f.find("sanitizer"))
            p.sanitizer = readSanitizer(f.object("sanitizer"));
        const Fields speed = f.object("speedup");
        p.geomeanSpeedup = speed.optionalNumber("geomean");
        p.minSpeedup = speed.optionalNumber("min");
        speed.forEach("per_shape", [&](const nlohmann::json& v, const std::string& ptr) {
            const Fields s(v, ptr);
            ShapeSpeedup e;
            e.shape = protocol::ShapeId::read(s);
            e.shape.set = "benchmarks";
            e.speedup = s.optionalNumber("speedup");
            e.candidateMedianMs = s.optionalNumber("candidate_median_ms");
            e.baselineMedianMs = s.optionalNumber("baseline_median_ms");
            p.perShape.push_back(std::move(e));
        });
        p.evidenceScope = f.text("evidence_scope");
        p.unsignedEvidenceAccepted = f.boolean("unsigned_evidence_accepted", false);
        f.forEach("files", [&](const nlohmann::json& v, const std::string& ptr) {
            const Fields file(v, ptr);
            p.files.push_back({file.text("path"), file.text("hash"), file.integer("bytes")});
        });
        p.json = j;
        return p;
    });
    if (!r) {
        Error e = r.error();
        e.file = source;
        return e;
    }
    return r;
}

const char* signatureTrustText(protocol::SignatureState state)
{
    using S = protocol::SignatureState;
    switch (state) {
    case S::Valid:
        return "signature holds (this user's key)";
    case S::OtherKey:
        return "signed with another key: cannot be checked here";
    case S::Altered:
        return "signature does NOT hold: edited after signing";
    case S::Malformed:
        return "signature does NOT hold: not what a signer writes";
    case S::Unsigned:
        return "unsigned";
    case S::NoKey:
        return "cannot be checked here: this user has no signing key";
    }
    return "unknown";
}

} // namespace kf
