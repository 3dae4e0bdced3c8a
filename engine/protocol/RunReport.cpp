#include "engine/protocol/RunReport.h"

#include "engine/protocol/ReportJson.h"
#include "engine/protocol/Signature.h"

namespace kf::protocol {

void RunReport::amend(const std::function<void(nlohmann::json&)>& change)
{
    auto key = loadSigningKey(false);
    const bool wasSigned = key && checkSignature(json, &key.value()).valid();
    try {
        change(json);
    } catch (...) {
        json.erase("signature");   // half changed: it must not keep a signature it no longer has
        throw;
    }
    if (wasSigned) {
        if (auto s = signDocument(json, key.value()); !s)
            json.erase("signature");
    } else {
        json.erase("signature");
    }
    if (auto reread = fromJson(json)) {
        nlohmann::json kept = std::move(json);
        *this = std::move(reread.value());
        json = std::move(kept);
    }
}

Result<RunReport> RunReport::fromJson(const nlohmann::json& j, const std::string& source)
{
    auto result = readReport<RunReport>("read a report", [&] {
        RunReport r;
        const Fields f(j, "");
        // The kind decides the reader; each reader reads the header as part of its report.
        const std::string kind = f.text("kind");
        if (kind == reportKindName(ReportKind::Correctness)) {
            r.verify = VerifyReport::read(f);
            r.header = r.verify->header;
        } else if (kind == reportKindName(ReportKind::Performance)) {
            r.bench = BenchReport::read(f);
            r.header = r.bench->header;
        } else {
            r.header = Header::read(f);
        }
        r.json = j;
        return r;
    });
    if (!result) {
        Error e = result.error();
        e.file = source;
        return e;
    }
    if (result->header.kind == ReportKind::Profile) {
        auto p = profile::ProfileReport::fromJson(j, source);
        if (!p)
            return p.error();
        result->profile = std::move(p.value());
    }
    return result;
}

std::vector<RunReport> reportsOfDocument(const nlohmann::json& document, std::vector<Error>* errors)
{
    std::vector<RunReport> out;
    auto take = [&](const nlohmann::json& r, const std::string& at) {
        auto read = RunReport::fromJson(r);
        if (read) {
            out.push_back(std::move(read.value()));
        } else if (errors) {
            Error e = read.error();
            e.pointer = at + e.pointer; // where in the document, not only in the report
            errors->push_back(std::move(e));
        }
    };
    if (document.is_object() && document.contains("reports") && document["reports"].is_array()) {
        for (std::size_t i = 0; i < document["reports"].size(); ++i)
            take(document["reports"][i], "/reports/" + std::to_string(i));
    } else {
        take(document, "");
    }
    return out;
}

} // namespace kf::protocol
