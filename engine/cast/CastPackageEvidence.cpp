#include "engine/cast/CastPackageEvidence.h"

#include "engine/core/Hash.h"
#include "engine/core/JsonReader.h"
#include "engine/protocol/Report.h"

#include <algorithm>
#include <cmath>

namespace kf::cast {

using Json = nlohmann::json;

namespace {

// "ops/x/registry/promotion.json" -> "ops/x/registry/"
std::string folderOf(const std::string& path)
{
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

bool sameNumber(const Json* summary, const std::optional<double>& record)
{
    if (!summary || summary->is_null())
        return !record;
    return record && summary->is_number() && std::abs(summary->get<double>() - *record) <= 1e-9 * std::max(1.0, std::abs(*record));
}

// The manifest's summary against the record: what differs was edited after export.
std::vector<std::string> editedSummary(const Json& ev, const PromotionRecord& r)
{
    std::vector<std::string> out;
    auto find = [&](const char* key) -> const Json* {
        const auto it = ev.find(key);
        return it == ev.end() ? nullptr : &*it;
    };
    const std::pair<const char*, const std::optional<double>*> numbers[] = {
        {"geomean_speedup", &r.geomeanSpeedup}, {"min_speedup", &r.minSpeedup}, {"threshold", &r.threshold},
        {"compile_speedup", &r.compileSpeedup}, {"compile_threshold", &r.compileThreshold}};
    for (const auto& [key, value] : numbers)
        if (!sameNumber(find(key), *value))
            out.push_back(key);
    const std::pair<const char*, const std::string*> texts[] = {
        {"gpu", &r.environment.gpu}, {"arch", &r.candidate.arch}, {"torch", &r.environment.torch},
        {"promoted_at", &r.promotedAt}, {"scope", &r.evidenceScope}};
    for (const auto& [key, value] : texts)
        if (const Json* v = find(key); v && !(v->is_string() && v->get<std::string>() == *value))
            out.push_back(key);
    if (const Json* v = find("unsigned_evidence_accepted"); v && !(v->is_boolean() && v->get<bool>() == r.unsignedEvidenceAccepted))
        out.push_back("unsigned_evidence_accepted");
    if (const Json* v = find("per_shape"); v && (!v->is_array() || v->size() != r.perShape.size()))
        out.push_back("per_shape");
    return out;
}

// Every registry file the record names must be in the package with the record's hash: the
// reports and the kernel the numbers came from are then the ones the signature covers.
void checkCarriedFiles(const Package& pkg, const std::string& folder, const PromotionRecord& r, OpEvidence& out)
{
    for (const RegistryFile& f : r.files) {
        const ArchiveEntry* e = pkg.file(folder + f.path);
        if (!e)
            out.problems.push_back("the record names " + f.path + ", which the package does not carry");
        else if (hashHex(e->bytes) != f.hash)
            out.problems.push_back(folder + f.path + " differs from the file the record names (edited after promotion)");
    }
}

} // namespace

OpEvidence readOpEvidence(const Package& pkg, const PackageOp& op, const protocol::SigningKey* key, const std::string& keyProblem)
{
    OpEvidence out;
    static const Json none = Json::object();
    const auto found = op.json.find("evidence");   // checkPackage made it an object with string paths
    const Json& ev = found != op.json.end() && found->is_object() ? *found : none;
    const auto promotion = ev.find("promotion");
    const std::string path = promotion != ev.end() && promotion->is_string() ? promotion->get<std::string>() : std::string();
    const ArchiveEntry* entry = pkg.file(path);
    if (!entry) {
        out.problems.push_back("the package carries no promotion record for this op");
        return out;
    }
    auto doc = json::parseText(entry->bytes, pkg.origin + ":" + path);
    if (!doc) {
        out.problems.push_back(path + " does not parse: " + doc.error().why);
        return out;
    }
    out.signature = protocol::checkSignature(doc.value(), key, keyProblem);
    auto record = PromotionRecord::fromJson(doc.value(), pkg.origin + ":" + path);
    if (!record) {
        out.problems.push_back(path + " is not a promotion record: " + record.error().why);
        return out;
    }
    if (record->id != op.registryId)
        out.problems.push_back("the record is " + record->id + "'s, not " + op.registryId + "'s");
    checkCarriedFiles(pkg, folderOf(path), record.value(), out);
    out.summaryEdited = editedSummary(ev, record.value());
    out.record = std::move(record.value());
    return out;
}

std::string OpEvidence::trustText() const
{
    std::string s = record || signature.state != protocol::SignatureState::Unsigned ? signatureTrustText(signature.state)
                                                                                     : "no readable record";
    if (unsignedEvidence())
        s += "; ⚠ " + std::string(kUnsignedEvidenceMarker);
    return s;
}

Json OpEvidence::toJson() const
{
    auto num = [](const std::optional<double>& v) { return v ? Json(*v) : Json(); };
    Json j = {{"verified", verified()},
              {"record_signature", protocol::signatureStateName(signature.state)},
              {"signature", trustText()},
              {"unsigned_evidence", unsignedEvidence()},
              {"problems", problems},
              {"manifest_summary_differs", summaryEdited}};
    if (record)
        j.update({{"gpu", record->environment.gpu}, {"arch", record->candidate.arch},
                  {"geomean_speedup", num(record->geomeanSpeedup)}, {"min_speedup", num(record->minSpeedup)},
                  {"compile_speedup", num(record->compileSpeedup)}, {"threshold", num(record->threshold)}});
    return j;
}

} // namespace kf::cast
